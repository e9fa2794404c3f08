"""RMiner's paper run toward a minute (issue 33, fourth round): less work per RM decision and per event.

Measured on a quiet machine, the full SmartRM paper run took 81 s of CPU, spread over the per-task work. Two
parts were larger than their share: an RM decision (3% of the decisions, a tenth of the time: "fits" was a
numpy reduction along the rows' two resources, a loop of length 2 per machine) and the shadow meter (a
fifth of the time: every CSV commit and release advanced its integral and refreshed a machine's term in
Python). These tests count work (calls), not time; the digests of test_issue33_speed show that no result
changed."""

import sys

import numpy as np
import pytest

from cluster_sim.rminer.rm_scheduler import rm_choice
from counting import calls_made


def paper_sized_shadow(seed=0):
    """1,500 machines, 80 of them with some shadow: what an RM decision looks at in a paper-scale run."""
    rng = np.random.default_rng(seed)
    shadow = np.zeros((1500, 2), dtype=np.int64)
    shadow[rng.choice(1500, 80, replace=False)] = rng.integers(1, 20, (80, 2))
    free = rng.integers(0, 64, (1500, 2)) * np.array([1, 16])
    return shadow, free


def test_an_rm_decision_tests_fit_column_by_column():
    """rm_choice tested "fits" with np.logical_and.reduce(shadow >= demand, axis=1) and np.flatnonzero: 24
    calls and 38 us a decision at 1,500 machines (61 us when no shadow fits and it scans the free resources
    too); column by column, as the engine's placement does, it is 14 calls and 13 us, with the same choice
    (test_pure's brute-force comparison)."""
    shadow, free = paper_sized_shadow()
    for demand in (np.array([1, 16]), np.array([30, 16])):  # one the shadow fits, one it does not
        assert calls_made(rm_choice, shadow, free, demand, "smart") <= 16


def test_the_shadow_meter_is_fed_once_per_view_update_not_once_per_event(monkeypatch):
    """The probe fed every CSV commit and release to the meter as it happened (release or allocate, each
    advancing the integral: two Python calls and a few dozen operations per task). It now logs them in C
    arrays and feeds them in one batch at each view update (ShadowMeter.feed): count the meter's calls."""
    from cluster_sim.rminer.measure import ShadowMeter
    from cluster_sim.rminer.model import RMinerModel
    from cluster_sim.rminer import RMinerConfig

    calls = {"per_event": 0, "batches": 0}
    for name in ("release", "allocate", "advance"):
        real = getattr(ShadowMeter, name)
        monkeypatch.setattr(ShadowMeter, name, lambda self, *a, _real=real: (calls.__setitem__(
            "per_event", calls["per_event"] + 1), _real(self, *a))[1])
    feed = ShadowMeter.feed
    monkeypatch.setattr(ShadowMeter, "feed", lambda self, *a: (calls.__setitem__(
        "batches", calls["batches"] + 1), feed(self, *a))[1])
    cfg = RMinerConfig.ci().replace(mode="smart", horizon=5.0)
    model = RMinerModel(cfg, record_series=False)
    model.run_until(cfg.horizon)
    model.probe.integral(cfg.horizon)
    syncs = cfg.horizon / cfg.update_delay
    events = model.csv.commits + model.probe.meter._release_t.__len__()
    assert events > 1000
    assert calls["batches"] <= syncs + 1 and calls["per_event"] <= 2 * syncs + 2, calls


@pytest.mark.parametrize("seed", range(4))
def test_a_batch_fed_to_the_meter_gives_what_feeding_each_event_gives(seed):
    """ShadowMeter.feed against release/allocate one by one, on random batches (ties in time, zero amounts,
    machines without releases, several batches between view updates): the same state, bit for bit."""
    from cluster_sim.rminer.measure import ShadowMeter

    rng = np.random.default_rng(seed)
    for _ in range(60):
        n_m, n_r = int(rng.integers(1, 6)), int(rng.integers(1, 3))
        one, batch = ShadowMeter(n_m, n_r), ShadowMeter(n_m, n_r)
        t = 0.0
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(0, 30))
            ts = (np.cumsum(rng.choice([0.0, 0.1, 0.013, 1 / 3], n)) + t).tolist()
            ms, amount, free = rng.integers(0, n_m, n), rng.integers(0, 5, (n, n_r)), rng.integers(0, 9, (n, n_r))
            released = rng.random(n) < 0.5
            for i in range(n):
                if released[i]:
                    one.release(ts[i], int(ms[i]), amount[i].tolist(), free[i].tolist())
                else:
                    one.allocate(ts[i], int(ms[i]), free[i].tolist())
            shadow = batch.feed(ts, ms, amount, free, released)
            if n:
                t = ts[-1]
                assert shadow[-1].tolist() == one.shadow.tolist()
            for name in ("released", "shadow", "peak"):
                assert getattr(one, name).tolist() == getattr(batch, name).tolist(), name
            assert one._integral == batch._integral and one.last_t == batch.last_t
            assert one._release_t == batch._release_t and one._release_amt == batch._release_amt
            if rng.random() < 0.6:
                t += 0.25
                one.sync(t)
                batch.sync(t)
                assert one.survival_sum == batch.survival_sum and (one.survival_hist == batch.survival_hist).all()


def test_the_probe_refuses_a_ledger_changed_behind_its_back():
    """The probe works out each machine's free row from the commits and releases it is told of: a change the CSV
    did not announce (a direct ledger.allocate) would make it measure wrong shadow, so it stops, naming the
    machine."""
    from cluster_sim.rminer.model import RMinerModel
    from cluster_sim.rminer import RMinerConfig

    model = RMinerModel(RMinerConfig.ci().replace(horizon=1.0))
    model.run_until(0.2)
    model.csv.ledger.allocate(3, (1, 1))
    with pytest.raises(AssertionError, match="machine 3's free resources changed"):
        model.run_until(1.0)


def test_the_ledger_keeps_its_holds_in_a_heap_of_their_own_times():
    """The ledger's heap held bare release times, with a dict from each time to its holds: at 40,000 running tasks
    that dict's look-ups (at every commit and every release) cost as much as the heap itself. A hold is now a float
    subclass, its own release time, so the heap holds the holds and compares them in C. Holds due at the same time
    still come out in the order they were made, released ones are skipped, and a ledger still copies."""
    import copy
    import pickle

    from cluster_sim.engine.ledger import Hold, ResourceLedger

    ledger = ResourceLedger(np.array([[8, 8], [8, 8]]))
    first = ledger.hold(0, (1, 1), until=2.0, owner="a")
    assert ledger._heap[0] is first and isinstance(first, Hold) and float(first) == first.finish == 2.0
    for owner, until in (("b", 1.0), ("c", 2.0), ("d", 2.0), ("e", 3.0)):
        ledger.hold(1, (1, 1), until=until, owner=owner)
    ledger.release_hold("c")
    twin = pickle.loads(pickle.dumps(ledger))
    again = copy.deepcopy(ledger)
    for led in (ledger, twin, again):
        assert led.next_release_time() == 1.0 and type(led.next_release_time()) is float
        assert [h.owner for h in led.pop_due(2.0)] == ["b", "a", "d"]
        assert led.row(0) == [8, 8] and led.row(1) == [7, 7] and [h.owner for h in led.holds()] == ["e"]


def profiled(fn, *args):
    """(Python functions called, C functions called) by ``fn(*args)``, as (file, name) and name lists."""
    python, c = [], []

    def record(frame, event, arg):
        if event == "call":
            python.append((frame.f_code.co_filename, frame.f_code.co_name))
        elif event == "c_call":
            c.append(getattr(arg, "__name__", ""))

    sys.setprofile(record)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return python, c


def test_a_random_probe_reads_the_machine_s_entries_without_a_numpy_row():
    """probe_random_fit made a numpy row and its tolist() for every probed machine (1.9 us a probe); it reads the
    entries through a memoryview now (1.0 us), the same comparisons, the same choices (test_pure, digests)."""
    from cluster_sim.rminer.placement import UniformBuffer, probe_random_fit

    free = np.asfortranarray(np.random.default_rng(1).integers(0, 4, (1500, 2)))  # as a local view keeps it
    uniforms = UniformBuffer(np.random.default_rng(2))
    rng = np.random.default_rng(3)
    uniforms.next()  # its first block drawn (and listed) before counting
    _, c_calls = profiled(lambda: [probe_random_fit(free, (3, 3), rng, uniforms=uniforms) for _ in range(50)])
    assert "tolist" not in c_calls


def test_a_batched_call_does_not_read_the_priority_s_value_property():
    """Mesa's Priority is an IntEnum whose .value is a Python-level property: reading it was a fifth of
    schedule_batched, once per scheduling decision. int(priority) is the same number, in C."""
    from cluster_sim.rminer.model import RMinerModel
    from cluster_sim.rminer import RMinerConfig

    model = RMinerModel(RMinerConfig.ci().replace(horizon=1.0))
    call = model.callback(lambda: None)
    model.schedule_batched(call, after=0.5)  # the first one arms the Mesa event that stands for the batch
    python_calls, _ = profiled(lambda: model.schedule_batched(call, after=0.7))
    import enum

    assert not [name for file, name in python_calls if file == enum.__file__], python_calls


def test_the_model_keeps_no_count_for_jobs_whose_tasks_have_all_started():
    """RMinerModel counted every job's tasks still to start in a dict that kept every job ever started (200,000 at
    the paper's scale, a larger table to look up at every first start); a job leaves it when its last task starts."""
    from cluster_sim.rminer.model import RMinerModel
    from cluster_sim.rminer import RMinerConfig

    model = RMinerModel(RMinerConfig.ci().replace(mode="smart", horizon=5.0))
    model.run_until(5.0)
    assert len(model.job_scheduled_at) > 50
    assert set(model._unstarted).isdisjoint(model.job_scheduled_at)


def test_admission_tests_a_job_s_shared_demand_once_without_generators():
    """At every job's arrival unplaceable() made the capacity row's list, a set of the job's demands and a
    generator in all() (2-3% of a paper-scale run); it now walks the tasks and tests a demand only when it is not
    the tuple just tested (the workload shares one tuple per distinct demand). The same first task is named."""
    from cluster_sim.engine import ClusterConfig, ClusterModel
    from cluster_sim.engine.workload import Job, Stage, Task

    model = ClusterModel(ClusterConfig.ci())
    cap = model._capacity_rows[0].tolist()
    shared = (1, 1)
    job = Job(0, 0.0, [Stage(0, [Task(i, None, 0, shared, 1.0) for i in range(12)])])
    python_calls, c_calls = profiled(model.unplaceable, job)
    assert model.unplaceable(job) is None and len(python_calls) + len(c_calls) <= 3, (python_calls, c_calls)
    rng = np.random.default_rng(0)
    for k in range(200):  # against the plain definition: the first task with a demand above the machine's
        tasks = [Task(i, None, 0, (int(rng.integers(0, cap[0] + 2)), int(rng.integers(0, cap[1] + 2))), 1.0)
                 for i in range(int(rng.integers(1, 6)))]
        job = Job(k, 0.0, [Stage(0, tasks[:2]), Stage(1, tasks[2:])] if len(tasks) > 2 else [Stage(0, tasks)])
        first = next((t for s in job.stages for t in s.tasks if any(d > c for d, c in zip(t.demand, cap))), None)
        found = model.unplaceable(job)
        assert (found is None) == (first is None) and (found is None or found[0] is first)


def test_a_view_update_clears_the_shadow_of_all_machines_at_once():
    """At every view update Algorithm 1 clears each live index's shadow and drops those with nothing occupied: a
    loop of row operations over nearly all 1,500 machines (a paper-scale run releases on most of them between two
    updates), about 2% of the run. Now a few array operations, with the same indexes left (test_pure's cases)."""
    from cluster_sim.rminer.shadow_view import ShadowResourceManager

    srm = ShadowResourceManager(1500, 2)
    srm.view_update(0.0, 0.5)
    for m in range(1500):
        srm.echo_release(0.1, m, np.array([2, 2]))
    srm.allocate_rm(7, np.array([1, 1]))
    python_calls, c_calls = profiled(srm.view_update, 0.5, 1.0)
    assert len(python_calls) + len(c_calls) < 50, (len(python_calls), len(c_calls))
    assert srm.live == {7} and srm.available.sum() == 0 and srm.shadow_id[7] >= 0 and (srm.shadow_id[:7] < 0).all()


def test_the_survival_histogram_is_numpys():
    """A view update bins the survival times of the fragments it closes (amount-weighted) by searchsorted and
    bincount instead of np.histogram (a tenth of the cost on the short logs of frequent updates): the same bins,
    [edge i, edge i+1) with the last one closed, on times at the edges, past the span and in between."""
    from cluster_sim.rminer.measure import ShadowMeter

    rng = np.random.default_rng(3)
    for _ in range(40):
        meter = ShadowMeter(4, 1, survival_span=2.0, survival_bins=int(rng.integers(1, 25)))
        span = meter.edges[-1]
        sync_at = 5.0
        ages = np.concatenate([rng.uniform(0, 3.0, 30), meter.edges, [span, 0.0, 4.0]])
        amounts = rng.integers(0, 9, len(ages))
        for age, a in sorted(zip(sync_at - ages, amounts)):
            meter.release(float(age), int(rng.integers(0, 4)), [int(a)], [9])
        surv, w = sync_at - np.asarray(meter._release_t), np.asarray(meter._release_amt, dtype=np.float64)
        want, _ = np.histogram(np.clip(surv, 0.0, span), bins=meter.edges, weights=w)
        meter.sync(sync_at)
        assert meter.survival_hist.tolist() == want.tolist()
        assert meter.survival_hist.sum() == amounts.sum()


def _probe_state(model):
    probe = model.probe
    meter = probe.meter
    series = [np.asarray(part).tolist() for part in probe.series.steps()] if probe.series is not None else None
    return (meter._integral, meter._shadow, meter._peak, meter.last_t, meter.survival_sum, meter.survival_weight,
            meter.survival_hist.tolist(), meter._released_rows.tolist(), meter._term_rows.tolist(), meter._release_t,
            meter._release_amt, series)


@pytest.mark.parametrize("lab", ["capstone", "rminer"])
def test_a_short_log_fed_event_by_event_gives_what_one_batch_gives(lab, monkeypatch):
    """The probe feeds a log of at most SMALL_BATCH events to the meter event by event, a longer one in a batch:
    every log fed each way gives the same meter, series and run, bit for bit (the capstone's views are refreshed
    every ten or so events, RMiner's every few hundred; both ways are forced here on both)."""
    from cluster_sim.rminer import model as rminer_model

    def run(small_batch):
        monkeypatch.setattr(rminer_model, "SMALL_BATCH", small_batch)
        if lab == "capstone":
            from cluster_sim.capstone import CapstoneConfig, run_model

            model = run_model(CapstoneConfig.ci().replace(rminer=True))
        else:
            cfg = rminer_model.RMinerConfig.ci().replace(mode="smart", horizon=8.0)
            model = rminer_model.RMinerModel(cfg, record_series=True)
            model.run_until(cfg.horizon)
        model.check_invariants()
        tasks = [(t.id, t.machine, t.start, t.finish, t.state) for j in model.arrived for t in j.tasks]
        return _probe_state(model), tasks

    each, batch = run(10**9), run(0)
    assert each == batch
    assert each[0][6] and sum(each[0][6]) > 0  # fragments were closed and binned
