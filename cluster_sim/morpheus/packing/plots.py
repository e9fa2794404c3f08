"""Figures of Lab 03 (matplotlib Figures made without pyplot): Fig. 6, 7, the packed plan, the ad hoc
residual, a simulated cycle with Fig. 12's rescued run, and the Fig. 10 comparison and footprint."""

from __future__ import annotations

import numpy as np

from ...ui import new_figure, policy_colour
from ...ui.figures import legend_beside, step_curve
from .lowcost import WindowResult
from .plan import ReservationPlan

STAGE_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink")
# each arm in the colour of its role, the same in every lab (cluster_sim.ui.style)
ARM_COLOURS = {arm: policy_colour(arm) for arm in ("user", "packing_only", "model_only", "morpheus", "morpheus_dra")}


def plot_lcm(plan: ReservationPlan, names=None, cycles: int = 2):
    """Fig. 6: each periodic job's instances over ``cycles`` LCM cycles (one offset, repeated), and the
    plan's cost c(t), which repeats with the cycle."""
    fig, (top, bottom) = new_figure(2, 1, size=(7.5, 4.2))
    H = plan.horizon
    ids = sorted(plan.allocations)
    for row, jid in enumerate(ids):
        x = plan.allocations[jid].containers(H)
        steps = np.flatnonzero(x)
        for c in range(cycles):
            for s in steps:
                top.broken_barh([(c * H + s, 1)], (row - 0.35, 0.7), color=STAGE_COLOURS[row % len(STAGE_COLOURS)])
    top.set_yticks(range(len(ids)), [names[i] if names else f"job {jid} (P={plan.allocations[jid].job.period})"
                                     for i, jid in enumerate(ids)], fontsize=8)
    for c in range(1, cycles):
        top.axvline(c * H, color="k", ls="--", lw=1)
        bottom.axvline(c * H, color="k", ls="--", lw=1)
    top.set_xlim(0, cycles * H)
    top.set_title(f"every instance keeps its job's offset: the plan is one LCM cycle of {H} steps, repeated",
                  fontsize=9)
    cost = np.tile(plan.cost(), cycles)
    bottom.step(np.arange(cycles * H + 1), np.append(cost, cost[-1]), where="post", color="k")
    bottom.set_xlim(0, cycles * H)
    bottom.set_ylim(0, max(1.0, cost.max() * 1.1))
    bottom.set_xlabel("step (minutes)")
    bottom.set_ylabel("c(t)")
    return fig


def plot_fig7(result: WindowResult, demands, gangs=None, k: int | None = None, title: str = ""):
    """Fig. 7: LowCost's allocation of one job, stage by stage, with each stage's interval; ``k`` marks
    the stage whose interval the paper works out."""
    fig, ax = new_figure(size=(7.5, 3.2))
    x = np.asarray(result.x)
    W = x.size
    for s, (lo, hi) in enumerate(result.stage_steps()):
        if hi < lo:
            continue
        steps = np.arange(lo, hi + 1)
        ax.bar(steps, x[steps], width=0.9, color=STAGE_COLOURS[s % len(STAGE_COLOURS)],
               label=f"stage {s}: {demands[s]} container-steps" + (f", gangs of {gangs[s]}" if gangs else ""))
        ax.axvspan(lo - 0.45, hi + 0.45, color=STAGE_COLOURS[s % len(STAGE_COLOURS)], alpha=0.08)
    if k is not None:
        lo, hi = result.stage_steps()[k]
        top = x.max() * 1.15
        ax.annotate("", (lo - 0.45, top), (hi + 0.45, top), arrowprops=dict(arrowstyle="<->"))
        ax.text((lo + hi) / 2, top * 1.02, f"I_{k} = [{lo}, {hi}]: {hi - lo + 1} steps", ha="center", fontsize=8)
        ax.set_ylim(0, top * 1.2)
    ax.set_xlim(-0.6, W - 0.4)
    ax.set_xlabel("step of the window [a, d)")
    ax.set_ylabel("containers")
    ax.legend(loc="upper left")
    ax.set_title(title or "LowCost places stages right to left, each in its share of the time left", fontsize=9)
    return fig


def plot_packing(lowcost: ReservationPlan, greedy: ReservationPlan, peaks, period: int = 60):
    """The packed plan as a heat map (rows of ``period`` steps) for LowCost and earliest-first, and the
    plan's peak c(t) as jobs arrive (``peaks``: DataFrame with columns jobs, lowcost, greedy)."""
    fig, axes = new_figure(1, 3, size=(10.5, 3.4))
    vmax = max(lowcost.peak(), greedy.peak(), 1e-9)
    for ax, plan, name in ((axes[0], lowcost, "LowCost"), (axes[1], greedy, "earliest-first")):
        im = ax.imshow(plan.heatmap(period), aspect="auto", vmin=0, vmax=vmax, cmap="viridis", interpolation="nearest")
        ax.set_title(f"{name}: peak c(t) = {plan.peak():.2f}", fontsize=9)
        ax.set_xlabel(f"minute of the {period}-step row")
        ax.set_ylabel("row (hour of the cycle)")
    fig.colorbar(im, ax=axes[:2], label="c(t)", shrink=0.9)
    ax = axes[2]
    ax.plot(peaks["jobs"], peaks["lowcost"], label="LowCost", color="tab:blue")
    ax.plot(peaks["jobs"], peaks["greedy"], label="earliest-first", color="tab:gray")
    ax.plot(peaks["jobs"], peaks["mean"], label="mean load (a lower bound)", color="k", ls=":")
    ax.set_xlabel("jobs placed")
    ax.set_ylabel("peak c(t)")
    legend_beside(ax)
    return fig


def plot_residual(plan: ReservationPlan):
    """Production reservations and ad hoc jobs planned in the residual (§6.3), over the cycle."""
    fig, ax = new_figure(size=(7.5, 3.0))
    H = plan.horizon
    t = np.arange(H + 1)
    cap = plan.capacity[0]
    prod = plan.load[0]
    adhoc = plan.adhoc_load[0]
    ax.fill_between(t, 0, np.append(prod, prod[-1]), step="post", color="tab:blue", alpha=0.7,
                    label="periodic reservations")
    ax.fill_between(t, np.append(prod, prod[-1]), np.append(prod + adhoc, (prod + adhoc)[-1]), step="post",
                    color="tab:orange", alpha=0.7, label="ad hoc, planned in the residual")
    ax.step(t, np.append(cap, cap[-1]), where="post", color="k", label="capacity")
    ax.set_xlim(0, H)
    ax.set_xlabel("step (minutes)")
    ax.set_ylabel(plan.resources[0])
    legend_beside(ax)
    ax.set_title(f"{len(plan.adhoc)} ad hoc jobs placed, {len(plan.dropped_adhoc)} dropped", fontsize=9)
    return fig


def _focus(ax, result):
    f = result.focus
    if not f:
        ax.text(0.5, 0.5, "no run was held back", ha="center", transform=ax.transAxes)
        return
    row = f["run"]
    times, caps = zip(*f["capacity"])
    t0 = row["period_start"]
    end = min(result.end, max(row["deadline"], row["finish"] if row["finish"] == row["finish"] else result.end) + 300)
    step_curve(ax, (np.asarray(times) - t0) / 60, caps, (end - t0) / 60, color="tab:green", label="queue capacity")
    ut, uv = f["usage"]
    step_curve(ax, (np.asarray(ut) - t0) / 60, uv, (end - t0) / 60, color="k", label="containers used")
    ax.axvline((row["submit"] - t0) / 60, color="tab:red", ls=":", label="submitted (held back)")
    ax.axvline((row["deadline"] - t0) / 60, color="tab:red", ls="--", label="deadline d_j")
    if row["finish"] == row["finish"]:
        ax.axvline((row["finish"] - t0) / 60, color="tab:purple", ls="-.", label="finished")
    ax.set_xlim(0, (end - t0) / 60)
    ax.set_xlabel("minutes after its period start")
    ax.set_ylabel("containers")
    verdict = "met" if not row["violated"] else "missed"
    ax.set_title(f"{f['template']} (held back): SLO {verdict}", fontsize=9)
    legend_beside(ax)


def plot_cycle(result):
    """One simulated cycle: containers provisioned to periodic jobs (their queues' counts added up, which may
    exceed the cluster: users' counts come once per active run), used by them and by ad hoc jobs over time
    (left), and the held-back run of Fig. 12 (right)."""
    fig, (left, right) = new_figure(1, 2, size=(12.0, 3.6))
    end = result.end
    C = result.config.containers
    pt, pv = result.series["provisioned"]
    step_curve(left, np.asarray(pt) / 60, pv, end / 60, color="tab:blue", label="provisioned to periodic jobs")
    ut, uv = result.series["used"]
    step_curve(left, np.asarray(ut) / 60, uv, end / 60, color="k", lw=0.8, label="used (all)")
    at, av = result.series["adhoc"]
    step_curve(left, np.asarray(at) / 60, av, end / 60, color="tab:orange", lw=0.8, label="used by ad hoc jobs")
    left.axhline(C, color="k", ls="--", lw=0.8, label=f"the cluster: {C} containers")
    left.set_xlim(0, end / 60)
    left.set_xlabel("minutes")
    left.set_ylabel("containers")
    s = result.summary()
    left.set_title(f"{result.arm}: {s['violations']}/{s['runs']} runs miss their SLO, "
                   f"utilisation {s['utilisation']:.0%}", fontsize=9)
    legend_beside(left)
    _focus(right, result)
    return fig


def plot_comparison(table, footprints=None):
    """Fig. 10: worst-case SLO violations and the share of the cluster reserved for periodic jobs per
    arm (pooled over seeds), and (optionally) the footprint curve: attainment against cluster size."""
    n = 3 if footprints else 2
    fig, axes = new_figure(1, n, size=(4.2 * n if footprints else 3.6 * n, 3.3))  # room for the legend beside
    arms = list(table.index)
    colours = [ARM_COLOURS.get(a, "k") for a in arms]
    axes[0].bar(arms, table["slo_violation_rate"], color=colours)
    axes[0].set_ylabel("worst-case SLO violation rate")
    axes[1].bar(arms, table["reserved_share"], color=colours, label="reserved for periodic jobs")
    axes[1].plot(arms, table["utilisation"], "kD", label="utilisation (all jobs)")
    axes[1].set_ylabel("share of the cluster")
    axes[1].legend()
    for ax in axes[:2]:  # names on two lines, not rotated: rotated labels need twice the room
        ax.set_xticks(range(len(arms)), [a.replace("_", "\n") for a in arms])
        ax.tick_params(axis="x", labelsize=7)
    if footprints:
        ax = axes[2]
        for arm, (size, tried) in footprints["arms"].items():
            ms = sorted(tried)
            ax.plot(ms, [tried[m] for m in ms], "o-", color=ARM_COLOURS.get(arm, "k"), label=f"{arm}: {size}")
        ax.axhline(footprints["target"], color="k", ls=":", label="target attainment")
        ax.set_xlabel("machines")
        ax.set_ylabel("SLO attainment (pooled)")
        legend_beside(ax, title="smallest cluster")
    return fig
