"""Fig. 12 as a constructed case: a run held back that misses its deadline without DRA and meets it with DRA.

The job (hourly) reserves ``w`` containers for exactly ``K`` minutes, its window ``[a, a + K]`` is as long
as its reservation (so LowCost has one place to put it and the deadline is the reservation's end), and
its one stage can run ``2w`` tasks at once (a framework's parallelism above what was reserved: §7's
"elastic job that uses extra parallelism to catch up"). Its work is ``w * K`` container-minutes, so on
its reservation alone it needs all ``K`` minutes. Held back ``K / 4`` minutes it has ``3K / 4`` minutes of
its reservation left: without DRA it cannot finish (the worst case gives nothing outside the
reservation), with DRA its demand ``2w`` exceeds its reservation ``w`` from its first minute, DRA grants
``min(w, rho * w)`` more each minute the plan has room, and it needs about ``K / 2`` minutes. The rescue
happens inside the reservation, so it does not depend on how ``R_recent`` is read (``recent_counts_grants``:
ours, the reservation alone, and the other reading, grants counted; both are run).

The seed draws the run's task lengths (``run_noise`` of the config, no straggler) and the ad hoc jobs
(the config's ``adhoc_load`` on the config's cluster), so the case is a property of the mechanism, not of
one draw: a test runs it at seeds 0-9 at ``ci`` and ``default``.

:func:`rescue_rate` is the same question asked of the simulated cycles: of the runs held back on purpose,
how many static Morpheus misses and DRA meets, over a pool of seeds.

Example
-------
>>> from cluster_sim.morpheus import MorpheusConfig
>>> case = rescue_case(MorpheusConfig.ci())
>>> case.missed_without, case.met_with
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...sweep import run_grid, start_ahead
from .config import MorpheusConfig
from .jobs import PeriodicJob
from .model import MorpheusModel, Provisioning
from .periodic import STEP, Template, draw_run
from .plan import ReservationPlan
from .reprovision import ReprovisionRule

__all__ = ["RescueCase", "rescue_case", "rescue_rate", "start_rescues_ahead", "FIG12"]

#: the constructed job: reserved containers per machine's worth (w = 2 machines' containers), the window
#: (minutes from the period start) and the hold-back as a share of the window
FIG12 = dict(a=5, minutes=20, hold_share=0.25, task_minutes=2.0)
#: the arms :func:`rescue_rate` compares
RESCUE_ARMS = ("morpheus", "morpheus_dra")


@dataclass(frozen=True)
class RescueCase:
    """The held-back run's finish with and without DRA (seconds), its deadline, and DRA's decisions."""

    config: MorpheusConfig
    deadline: float
    finish_without: float  # NaN: it never finished
    finish_with: float
    finish_with_grants_counted: float  # the other R_recent reading
    decisions: pd.DataFrame  # DRA's evaluations in our reading

    @property
    def missed_without(self) -> bool:
        return not self.finish_without <= self.deadline + 1e-6

    @property
    def met_with(self) -> bool:
        return self.finish_with <= self.deadline + 1e-6

    @property
    def met_with_grants_counted(self) -> bool:
        return self.finish_with_grants_counted <= self.deadline + 1e-6


def _case_run(config: MorpheusConfig):
    from .simulation import adhoc_jobs, cluster_config

    w = 2 * config.containers_per_machine
    if config.containers < 2 * w:
        raise ValueError(f"machines={config.machines} is out of range for the Fig. 12 case: need at least 4 machines "
                         f"(its job reserves {w} containers and DRA needs as many again)")
    a, K = FIG12["a"], FIG12["minutes"]
    t = Template("fig12", 60, float(a), float(a), ((2 * w, K / 2),), FIG12["task_minutes"], w, float(a + K))
    hold = FIG12["hold_share"] * K * STEP
    run = draw_run(np.random.default_rng([config.seed, 12]), t, 0, run_noise=config.run_noise, straggler_rate=0.0,
                   input_delay_rate=0.0, late_start=hold)
    # its work is w * K container-minutes whatever the noise drew: scale the tasks to it
    work = sum(float(d.sum()) for d in run.durations)
    run.durations = [d * (w * K * STEP / work) for d in run.durations]
    run.widths = [2 * w]
    plan = ReservationPlan(config.containers, config.cycle_minutes)
    alloc = plan.place(PeriodicJob(60, a, a + K, [w] * K, name="fig12"))
    if alloc is None:
        raise AssertionError(f"the Fig. 12 job no longer fits: {plan.last_refusal}")
    end = (a + K) * STEP + 30 * STEP
    steps = int(math.ceil(end / STEP)) + 1
    base = np.tile(alloc.containers(plan.horizon), -(-steps // plan.horizon))[:steps]
    return run, plan, alloc, base, (a + K) * STEP, end, adhoc_jobs(config, end), cluster_config(config, end)


def _finish(config: MorpheusConfig, dra: bool, counts_grants: bool):
    run, plan, alloc, base, deadline, end, adhoc, cluster = _case_run(config)
    rule = ReprovisionRule(rho=config.rho, hold_seconds=config.hold_seconds, recent_seconds=config.recent_seconds,
                           recent_counts_grants=counts_grants)
    model = MorpheusModel(cluster, [run], adhoc, {"fig12": Provisioning(base=base)},
                          reprovision_with=(plan, {"fig12": alloc.job_id}, rule) if dra else None,
                          literal=config.worst_case in ("literal", "resume"), resume=config.worst_case == "resume")
    model.run_until(end)
    model.check_invariants()
    job = next(j for j in model.jobs if j.tag is run)
    decisions = pd.DataFrame(model.reprovisioner.decisions if dra else [])
    return float(job.finish), deadline, decisions


def rescue_case(config: MorpheusConfig) -> RescueCase:
    """The constructed Fig. 12 case on ``config``'s cluster, ad hoc load, DRA parameters and seed."""
    if not isinstance(config, MorpheusConfig):
        raise ValueError(f"config={type(config).__name__} is not allowed: need a MorpheusConfig")
    without, deadline, _ = _finish(config, False, False)
    with_, _, decisions = _finish(config, True, False)
    counted, _, _ = _finish(config, True, True)
    return RescueCase(config, deadline, without, with_, counted, decisions)


def rescue_rate(config: MorpheusConfig, seeds, *, client=None, cache=None) -> pd.DataFrame:
    """Of the runs held back on purpose in the simulated cycles (one per seed), which static Morpheus misses
    and DRA meets: one row per seed (``static_met``, ``dra_met``, ``outcome`` one of 'rescued', 'met
    without DRA', 'missed with DRA too', 'lost with DRA'). The cycles are one sweep
    (:func:`cluster_sim.sweep.run_grid`, ``client`` and ``cache`` go to it) with the rows of the notebook's other
    sweeps (:func:`~.simulation.sweep_row`), so ``compare`` and the claims read these cycles back from its cache."""
    from .simulation import run as simulate_run, sweep_row

    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds=[] is not allowed: need at least one seed")
    # the run function first, as every lab's sweep (tests/test_sweep.py reads it); _rescue_sweep is the same sweep
    df = run_grid(simulate_run, config, {"arm": list(RESCUE_ARMS)}, seeds=seeds, metrics=sweep_row, client=client,
                  cache=cache)
    met = {arm: df.held_back_met.to_numpy()[k * len(seeds):(k + 1) * len(seeds)]  # the seed varies fastest
           for k, arm in enumerate(RESCUE_ARMS)}
    rows = []
    for i, s in enumerate(seeds):
        static, dra = bool(met["morpheus"][i]), bool(met["morpheus_dra"][i])
        outcome = {(False, True): "rescued", (True, True): "met without DRA", (False, False): "missed with DRA too",
                   (True, False): "lost with DRA"}[(static, dra)]
        rows.append(dict(seed=s, static_met=static, dra_met=dra, outcome=outcome))
    return pd.DataFrame(rows)


def _rescue_sweep(config: MorpheusConfig, seeds) -> dict:
    """:func:`rescue_rate`'s sweep (``run_grid``'s arguments): static and DRA Morpheus at each seed."""
    from .simulation import run as simulate_run, sweep_row

    return dict(run=simulate_run, base_config=config, grid={"arm": list(RESCUE_ARMS)}, seeds=list(seeds),
                metrics=sweep_row)


def start_rescues_ahead(config: MorpheusConfig, seeds, *, cache=None):
    """At ``paper``, start now on a Dask worker the cycles :func:`rescue_rate` will need of ``seeds`` other than the
    config's own (whose static and DRA cycles the notebook's cells simulate in the kernel first, and remember), while
    the kernel runs the notebook's first cells on one core. Each point lands in the sweep cache; ``rescue_rate``
    then reads them (waiting for those still running) and takes the config's seed from the kernel's memory, so no
    cycle of the sweep is simulated twice and every number is the one it would have computed itself. Returns
    :func:`cluster_sim.sweep.start_ahead`'s handle, or None where nothing is worth starting (``ci`` and
    ``default``: the cycles take seconds; the test suite; no sweep cache)."""
    others = [int(s) for s in seeds if int(s) != config.seed]
    if not others:
        return None
    from .simulation import estimated_seconds

    return start_ahead([dict(_rescue_sweep(config, others), estimate=estimated_seconds)], cache=cache)
