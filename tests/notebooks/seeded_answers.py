"""A seeded wrong answer and a delegating answer for every answer cell of the exercises (by its grade id).

The nbgrader round trip (test_nbgrader.py) types them into the release as a student would. ``WRONG`` edits the
solution's code (old -> new, each a known misconception or a plain slip); ``DELEGATING`` is the one-line answer
that calls the library's reference instead, which must score 0 with :data:`cluster_sim.checking.DELEGATED`'s
message. A prediction cell (``prediction_<id> = ...``) needs neither: its wrong answer is made from its
:class:`~cluster_sim.predict.Prediction`, and there is no library function for it to delegate to.
A new answer cell without an entry here fails the round trip: add one.
"""

from __future__ import annotations

WRONG: dict[str, tuple[str, str]] = {
    # 00: worst fit instead of best fit; utilisation not divided by the horizon
    "best_fit": ("leftover[~fits] = np.inf\n    return int(leftover.argmin())",
                 "leftover[~fits] = -np.inf\n    return int(leftover.argmax())"),
    "utilisation": ("/ (capacity * horizon)", "/ capacity"),
    # 01: ties by position, not with rng; max of the children where Algorithm 2 adds them
    "treeify_solution": ("victim = tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]", "victim = tied[0]"),
    "remaining_peak_solution": ("sum(value[c] for c in t.children[s])",
                                "max((value[c] for c in t.children[s]), default=0)"),
    # 02: no (.)+; debt with credit; A_u averaged over the steps; no D_i,k-1 in the rows
    "over_allocation": ("np.maximum(s[None, :] - runs, 0.0).sum()", "(s[None, :] - runs).sum()"),
    "debt_table": ("d = np.maximum(d + runs[:, step] - s[step], 0.0)", "d = d + runs[:, step] - s[step]"),
    "J": ("under = float(debt_table(s, runs)[:, -1].mean())",
          "under = float(debt_table(s, runs)[:, -1].sum() / runs.shape[1])"),
    "debt_rows": ("                A[r, layout.d(i, step - 1)] = 1.0", "                pass"),
    "deadline": ("runs.t_out_read.to_numpy(float) - runs.period_start.to_numpy(float)",
                 "runs.t_out_read.to_numpy(float)"),  # the read time, not its offset in the period
    # 02: surplus before the deficit (credit): the lazy allocation reserves at step 0 what the first run needs then
    "lazy_case": ('"lazy": [0.0, 2.0]', '"lazy": [2.0, 0.0]'),
    # 03: time shared over the total demand; holes (every step of the interval eligible)
    "stage_interval": ("remaining = sum(demands[: k + 1])", "remaining = sum(demands)"),
    "place_stage_gangs": ("max(cur - 1, tau_l) - 1", "tau_l - 1"),
    "folded_load": ("[:, offsets].max(axis=0)", "[:, offsets].mean(axis=0)"),  # the mean period, not the peak
    # 04: weights over downstream edges; set semantics; the job's own value forgotten
    "owl_weights": ('deps.groupby("job")["depOn"]', 'deps.groupby("depOn")["job"]'),
    "extend_reach": ('return paths.groupby(["job", "depOn"], as_index=False)["wt"].sum()',
                     'return paths.drop_duplicates(["job", "depOn"])'),
    "aggregate_value": ("return k + downstream.reindex(k.index, fill_value=0.0)",
                        "return downstream.reindex(k.index, fill_value=0.0)"),
    "self_join": ('    m = m[m["time_w"] == m.groupby(["job", "file", "time"])["time_w"].transform("max")]  # rule 2\n', ""),
    "efficiencies": ('"A": (0 + 5) /', '"A": 0 /'),  # A's job-local value only: the downstream 5 forgotten
    # 05: the aggregate value without the compute (means instead of medians would pass the replay: a defensible
    # variant that attains more value, tests/wing/test_lab05.py)
    "wing_agg_priority": ('frame["agg_value"].median() / frame["agg_compute"].median()', 'frame["agg_value"].median()'),
    # 05: C does not come, but B's download stays at 3 h: Wing-Agg is misled and the delay costs nothing
    "agg_loses": ('loses_case["B_download_at"] = 75 ', 'loses_case["B_download_at"] = 180 '),
    # 06: ties to the lower instance index; 07: the front in ascending order
    "stageopt_06_my_ipa": ("i = int(cand[np.argmax(rowsum[cand])])", "i = int(cand[0])"),
    "stageopt_07_my_raa_path": ("return np.array(front)", "return np.array(front)[::-1]"),
    # 08: d_u / l without the 2; the shadow without the min with F_m; the average over the wrong span
    "model": ("return update_delay / (2.0 * mean_task_duration)", "return update_delay / mean_task_duration"),
    "shadow_after_events": ("out.append(int(np.minimum(released[:, 0], free[:, 0]).sum()))",
                            "out.append(int(released[:, 0].sum()))"),
    "time_average": ("return area / t_end", "return area / (t_end - times[0])"),
    # 09: SmartRM ordered as SafeRM; the normal path sees free - shadow
    "traverse_order": ("    return sorted(has, key=lambda m: (-free[m][0], -shadow[m][0], m))",
                       "    return sorted(has, key=lambda m: (-shadow[m][0], m))"),
    "rm_choose": ("if all(free[m][r] >= demand[r]", "if all(free[m][r] - shadow[m][r] >= demand[r]"),
    "gain_split": ('"mining": float(np.mean(rm - plus1))', '"mining": float(np.mean(rm - none))'),  # the total again
    # 10: the naive rule (tokens stay with the reservation)
    "my_release_rule": ('return "organisations"', 'return "reservation"'),
}

DELEGATING: dict[str, str | None] = {  # None: no library answer exists (a delegating student answers it right)
    "best_fit": "def best_fit(free, demand, rng=None):\n    return placement.best_fit(free, demand, rng)\n",
    "utilisation": (
        "from cluster_sim.engine.metrics import work_accounting\n\n"
        "def utilisation_from_tasks(cpu, start, finish, capacity, horizon):\n"
        "    n = len(cpu)\n"
        "    tasks = {'cpu': cpu, 'start': start, 'finish': np.minimum(finish, horizon), 'machine': np.zeros(n, dtype=int),\n"
        "             'duration': np.ones(n), 'state': np.array(['done'] * n)}\n"
        "    return work_accounting(tasks, horizon, capacity, [1.0])['done']\n"),
    "treeify_solution": ("from cluster_sim.shaper import treeify as library_treeify\n\n"
                         "def treeify(graph, rng):\n    return library_treeify(graph, rng)\n"),
    "remaining_peak_solution": ("from cluster_sim.shaper import remaining_peak as library_peak\n\n"
                                "def remaining_peak(trees, completed):\n    return library_peak(trees, completed)\n"),
    "over_allocation": "def over_allocation(s, runs):\n    return penalty(s, runs, 1.0).over\n",
    "debt_table": ("from cluster_sim.morpheus.slo.penalty import debt\n\n"
                   "def debt_table(s, runs):\n    return debt(s, runs)\n"),
    "J": "def J(s, runs, alpha):\n    return penalty(s, runs, alpha).objective\n",
    "debt_rows": ("from cluster_sim.morpheus.slo.lp import debt_constraints\n\n"
                  "def debt_rows(runs, layout):\n    return debt_constraints(runs, layout)\n"),
    "deadline": ("from cluster_sim.morpheus.slo.deadline_cases import deadline\n\n"
                 "def my_deadline(runs, d_percentile=50.0):\n    return deadline(runs, d_percentile)\n"),
    "folded_load": ("from cluster_sim.morpheus.packing.lowcost_cases import folded_load\n\n"
                    "def my_folded_load(load, period, a, window):\n    return folded_load(load, period, a, window)\n"),
    "stage_interval": "def my_stage_interval(demands, k, tau_r, a=0):\n    return stage_interval(demands, k, tau_r, a)\n",
    "place_stage_gangs": ("def my_place_stage_gangs(load, capacity, tau_l, tau_r, demand, gang=1, container=1.0):\n"
                          "    return place_stage_gangs(load, capacity, tau_l, tau_r, demand, gang, container)\n"),
    "owl_weights": ("from cluster_sim.wing.multihop import owl_weights as library_weights\n\n"
                    "def owl_weights(deps):\n    return library_weights(deps)\n"),
    "extend_reach": ("from cluster_sim.wing.multihop import extend_reach as library_extend\n\n"
                     "def extend_reach(t1, t2):\n    return library_extend(t1, t2)\n"),
    "aggregate_value": ("from cluster_sim.wing.value import _downstream_value\n\n"
                        "def aggregate_value(table, k):\n"
                        "    return k + _downstream_value(table, k).reindex(k.index, fill_value=0.0)\n"),
    "self_join": ("from cluster_sim.wing.provenance import single_hop\n\n"
                  "def self_join(prov, window):\n    return single_hop(prov, window)\n"),
    "wing_agg_priority": ("from cluster_sim.wing.scheduling.workload import value_efficiency\n\n"
                          "def wing_agg_priority(history, jobs):\n    return value_efficiency(history, jobs)\n"),
    "stageopt_06_my_ipa": ("from cluster_sim.stageopt import ipa_placement\n\n"
                           "def my_ipa(L, capacity):\n    return ipa_placement(L, capacity)\n"),
    "stageopt_07_my_raa_path": ("from cluster_sim.stageopt.raa import raa_path\n\n"
                                "def my_raa_path(pareto_sets):\n    return raa_path(pareto_sets)[0]\n"),
    "model": ("def shadow_ratio_model(update_delay, mean_task_duration):\n"
              "    return theory_shadow_ratio(update_delay, mean_task_duration)\n"),
    "shadow_after_events": "def shadow_after_events(events, capacity):\n    return replay_shadow(events, capacity)\n",
    "time_average": "def time_average_of_steps(events, values, t_end):\n    return time_average(events, values, t_end)\n",
    "traverse_order": ("def traverse_order(shadow, free, mode):\n"
                       "    return [int(m) for m in shadow_order(np.asarray(shadow), np.asarray(free), mode)]\n"),
    "rm_choose": ("def rm_choose(shadow, free, demand, mode):\n"
                  "    return rm_choice(np.asarray(shadow), np.asarray(free), np.asarray(demand), mode)\n"),
    "my_release_rule": None,
    "agg_loses": None,
    "lazy_case": None,  # a case built by hand: nothing in the library to delegate to  # a case built by hand: nothing in the library to delegate to
    "efficiencies": None,  # computed by hand from the example: nothing in the library to delegate to  # open-ended: the library holds no answer to delegate to
    "gain_split": ("from cluster_sim.rminer.baseline import gain_split as library_split\n\n"
                   "def gain_split(util_none, util_plus1, util_rm):\n"
                   "    return library_split(util_none, util_plus1, util_rm)\n"),
}
