"""Figures of Lab 02 (matplotlib Figures made without pyplot): Fig. 2a, 3, 4, 5, 9a-c and R* over time."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.ticker import NullLocator

from ...ui import new_figure
from ...ui.figures import legend_beside, plain_log_ticks
from .fleet import FleetEvaluation
from .penalty import debt

USER = "tab:gray"
RSTAR = "tab:blue"
ALPHA_COLOURS = ("tab:blue", "tab:green", "tab:orange", "tab:red", "tab:purple", "tab:brown")


def _alpha_colour(policy: str, policies) -> str:
    alphas = [p for p in policies if p != "user"]
    return USER if policy == "user" else ALPHA_COLOURS[alphas.index(policy) % len(ALPHA_COLOURS)]


def _box(ax, x, y, w, h, text, colour, ls="-"):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", fc=colour, ec="k", lw=0.8, ls=ls))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=7.5)


def _arrow(ax, a, b, label="", ls="-", colour="k"):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, lw=0.9, ls=ls, color=colour))
    if label:
        ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, label, fontsize=8, fontweight="bold", color="tab:red",
                ha="center", va="center", bbox=dict(fc="white", ec="none", pad=0.5))


def plot_life():
    """Fig. 3: the life of a periodic job under Morpheus; the steps this lab rebuilds are solid,
    the ones packing and reprovisioning add (§6-§7) are dashed."""
    fig, ax = new_figure(size=(10.5, 4.0))
    ax.set_xlim(0, 20), ax.set_ylim(0, 10), ax.axis("off")
    here, later = "#cde", "#eee"
    _box(ax, 0.3, 7.4, 3.6, 1.8, "user submits JobX\nevery period\n(manual provisioning)", "#fdc")
    _box(ax, 5.4, 7.4, 4.4, 1.8, "cluster (YARN)\nruns R1, R2, R3, ...", "#eee")
    _box(ax, 11.4, 8.3, 3.9, 1.2, "Provenance Graph\n(the four times of Fig. 4)", here)
    _box(ax, 11.4, 6.6, 3.9, 1.2, "Telemetry History\n(skylines R1..Rn)", here)
    _box(ax, 16.3, 7.0, 3.4, 2.4, "SLO inference\n§4: periodic? a_j, d_j\n§5: R* (the LP)", here)
    _box(ax, 16.3, 3.4, 3.4, 1.8, "user signs off\nor overrides", later, ls="--")
    _box(ax, 10.3, 3.4, 4.6, 1.8, "recurring reservation\nin the cluster agenda\n(LowCost, §6)", later, ls="--")
    _box(ax, 4.6, 3.4, 4.4, 1.8, "new runs inside the\nreservation; dynamic\nreprovisioning (§7)", later, ls="--")
    _arrow(ax, (3.9, 8.3), (5.4, 8.3), "1")
    _arrow(ax, (9.8, 8.7), (11.4, 8.9), "1a")
    _arrow(ax, (9.8, 7.9), (11.4, 7.2), "1b")
    _arrow(ax, (15.3, 8.9), (16.3, 8.6), "")
    _arrow(ax, (15.3, 7.2), (16.3, 7.6), "2")
    _arrow(ax, (18.0, 7.0), (18.0, 5.2), "3", ls="--")
    _arrow(ax, (16.3, 4.3), (14.9, 4.3), "4a", ls="--")
    _arrow(ax, (10.3, 4.3), (9.0, 4.3), "4b", ls="--")
    _arrow(ax, (6.8, 5.2), (7.4, 7.4), "5", ls="--")
    ax.add_patch(FancyArrowPatch((6.8, 3.4), (18.0, 6.9), connectionstyle="arc3,rad=0.35", arrowstyle="-|>",
                                 mutation_scale=10, lw=0.9, color="tab:blue"))
    ax.text(12.6, 0.9, "6: every new run feeds back: the contract is refitted", fontsize=8, color="tab:blue",
            ha="center")
    ax.text(0.3, 2.4, "solid: this lab (steps 1, 2, 6)\ndashed: packing and reprovisioning (§6-§7)",
            fontsize=7.5, va="top")
    ax.set_title("Fig. 3: the life of a periodic job under Morpheus", fontsize=10)
    return fig


def plot_fig2a(result):
    """Fig. 2a: CDF of provisioned / used over the periodic jobs' runs, at the peak and over the area."""
    u = result.user_ratios()
    fig, ax = new_figure(size=(9.0, 3.6))  # wide: the legend sits beside the curves
    for col, label, colour in (("peak_ratio", "peak: containers / peak used", "tab:purple"),
                               ("area_ratio", "area: containers x minutes / container-minutes used", "tab:olive")):
        x = np.sort(u[col].to_numpy())
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color=colour, label=label)
    ax.axvline(1.0, color="k", ls=":", lw=0.9)
    # the paper's Fig. 2a at the peak: 25% at or below 1x, and 75% x 20% = 15% at 10x or more (85% below 10x)
    ax.plot([1.0, 10.0], [0.25, 0.85], "kD", ms=6, mfc="none", label="the paper's Fig. 2a (peak): 25% ≤ 1x, 85% < 10x")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("provisioned / used (log scale; 1 = exact)")
    ax.set_ylabel("share of runs ≤ x")
    ax.set_ylim(0, 1.02)
    over = float((u.peak_ratio > 1).mean())
    tenfold = float((u.peak_ratio[u.peak_ratio > 1] >= 10).mean()) if over > 0 else 0.0
    ax.set_title(f"Fig. 2a: users' provisioning: {over:.0%} of runs over-provisioned at their peak,\n{tenfold:.0%} of "
                 "those 10x or more\n(the paper: 75% and 20%; one seed's fleet scatters around them)", fontsize=9)
    legend_beside(ax)  # inside, it covered the peak curve
    return fig


KIND_COLOURS = {"periodic": "tab:blue", "off_kilter": "tab:cyan", "aperiodic": "tab:orange", "adhoc": "tab:gray"}


def plot_periodicity(result):
    """Inter-arrival CV per template against the threshold, and the periods found vs the truth."""
    d = result.detected
    fig, axes = new_figure(1, 2, size=(10.5, 3.4))
    ax = axes[0]
    known = d[d.cv.notna()].sort_values("cv")
    floor = 1e-4
    for kind, g in known.groupby("kind"):
        idx = [known.index.get_loc(t) for t in g.index]
        ax.scatter(idx, np.maximum(g.cv, floor), s=14, color=KIND_COLOURS.get(kind, "k"), label=kind)
    ax.axhline(result.config.cv_threshold, color="k", ls="--", lw=0.9, label=f"threshold {result.config.cv_threshold:g}")
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel(f"templates with 3+ submissions, by CV of their inter-arrivals (CV 0 drawn at {floor:g})")
    ax.set_ylabel("CV = MAD / median (log)")
    ax.set_title("Which templates are periodic?", fontsize=9)
    ax.legend()
    ax = axes[1]
    found = d[d.periodic]
    ax.scatter(found.true_period / 3600, found.period / 3600, s=18,
               c=[KIND_COLOURS.get(k, "k") for k in found.kind])
    top = max(24.0, float(np.nanmax(found.period)) / 3600 if len(found) else 24.0)
    ax.plot([0.5, top], [0.5, top], color="k", lw=0.6, ls=":")
    ax.set_xscale("log"), ax.set_yscale("log")
    plain_log_ticks(ax.xaxis), plain_log_ticks(ax.yaxis)
    ax.set_xlabel("true period (h)")
    ax.set_ylabel("period found (h)")
    ax.set_title(f"{len(found)} templates found periodic; period = median inter-arrival", fontsize=9)
    return fig


def plot_fig4(result, template: str | None = None):
    """Fig. 4: the four times of each run of one job, relative to its period start, with a_j and d_j."""
    name = template or result.focus
    runs = result.history.runs_of(name)
    runs = runs[~runs.failed]
    period = float(result.history.templates.period[name])
    scale, unit = (3600.0, "h") if period >= 4 * 3600 else (60.0, "min")
    fig, ax = new_figure(size=(9.0, 3.6))
    x = runs.run.to_numpy()
    rel = {c: (runs[c] - runs.period_start).to_numpy() / scale for c in ("t_in_avail", "t_start", "t_end", "t_out_read")}
    ax.vlines(x, rel["t_start"], rel["t_end"], color="tab:blue", lw=2.5, label="running: T_start → T_end")
    ax.scatter(x, rel["t_in_avail"], marker="v", s=14, color="tab:green", label="T_inAvail (inputs written)")
    ax.scatter(x, rel["t_out_read"], marker="^", s=14, color="tab:red", label="T_outRead (first read)")
    slo = result.slo
    if name in slo.index and bool(slo.actionable[name]):
        a_j, d_j = float(slo.a_j[name]) / scale, float(slo.d_j[name]) / scale
        ax.axhline(a_j, color="tab:green", ls="--", lw=1, label=f"a_j = {result.config.a_percentile:g}th pct of T_inAvail")
        ax.axhline(d_j, color="tab:red", ls="--", lw=1, label=f"d_j = {result.config.d_percentile:g}th pct of T_outRead")
        n_train = int(result.config.train_fraction * (result.history.runs_of(name).run.max() + 1))
        ax.axvline(n_train - 0.5, color="k", lw=0.6, ls=":")
        ax.text(n_train - 0.3, ax.get_ylim()[1], " held out →", fontsize=7, va="top")
    ax.set_xlabel("run (one per period)")
    ax.set_ylabel(f"{unit} after the period start")
    ax.set_title(f"Fig. 4 for {name} (period {period / 3600:g} h)", fontsize=9)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def plot_fig9a(result):
    """Fig. 9a: CDF over the actionable jobs of the slack ratio (T_outRead - T_end) / (T_end - T_start)."""
    cdf = result.slack()
    fig, ax = new_figure(size=(6.0, 3.2))
    ax.step(cdf.slack_ratio, cdf.cdf, where="post", color="tab:red")
    ax.axvline(2.0, color="k", ls=":", lw=0.9)
    share = float((cdf.slack_ratio >= 2).mean()) if len(cdf) else float("nan")
    ax.text(2.05, 0.05, f"{share:.0%} of jobs could\nrun twice more", fontsize=7)
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("slack ratio (T_outRead − T_end) / (T_end − T_start), median per job")
    ax.set_ylabel("share of jobs ≤ x")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Fig. 9a: slack of {len(cdf)} jobs with an actionable SLO", fontsize=9)
    return fig


def plot_penalty_terms(runs, skyline, alpha: float = 0.5):
    """J(s) term by term for one allocation: each run against s (over-allocation shaded) and its debt."""
    runs = np.asarray(runs, float)
    s = np.asarray(skyline, float)
    n, k = runs.shape
    d = debt(s, runs)
    fig, axes = new_figure(2, n, size=(3.2 * n, 4.6))
    axes = np.asarray(axes).reshape(2, n)
    steps = np.arange(k + 1)
    for i in range(n):
        ax = axes[0, i]
        ax.stairs(runs[i], steps, color="k", lw=1.2, label=f"run {i}: s_{i}k")
        ax.stairs(s, steps, color=RSTAR, lw=1.8, ls="--", label="allocation s_k")
        over, short = s > runs[i], runs[i] > s
        ax.bar(steps[:-1][over] + 0.5, (s - runs[i])[over], bottom=runs[i][over], width=1.0, color="tab:orange",
               alpha=0.35, label="over-allocated (wasted)")
        ax.bar(steps[:-1][short] + 0.5, (runs[i] - s)[short], bottom=s[short], width=1.0, color="tab:red", alpha=0.3,
               label="short (owed, the debt grows)")
        ax.set_title(f"run {i}: over-allocated {np.maximum(s - runs[i], 0).sum():g}", fontsize=9)
        ax.set_xticks(np.arange(k) + 0.5, [str(j) for j in range(k)])
        ax.set_ylim(0, 1.3 * max(float(runs.max()), float(s.max())))
        ax.set_xlabel("step k")
        ax = axes[1, i]
        ax.bar(range(k), d[i], color="tab:red", alpha=0.7)
        for j, v in enumerate(d[i]):
            ax.text(j, v, f"{v:g}", ha="center", va="bottom", fontsize=8)
        ax.set_ylim(0, max(1.0, float(d.max()) * 1.3))
        ax.set_xticks(range(k))
        ax.set_xlabel("step k")
        ax.set_ylabel(f"debt D_{i}k")
        ax.set_title(f"final debt D_{i}K = {d[i, -1]:g}", fontsize=9)
    # below the panels: inside the first one, the legend covered its run
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    fig.suptitle(f"J(s) = α·A_o + (1−α)·A_u with A_o = {np.maximum(s - runs, 0).sum() / n:g}, "
                 f"A_u = {d[:, -1].mean():g} (α = {alpha:g})", fontsize=10)
    return fig


def plot_lazy(example):
    """§5's lazy solution: the runs, R* without the regulariser, and with it."""
    runs = example.runs
    n, k = runs.shape
    fig, axes = new_figure(1, 2, size=(10.0, 3.2))
    steps = np.arange(k + 1)
    for ax, fit, title in ((axes[0], example.lazy, "without the regulariser (one solve)"),
                           (axes[1], example.regularised, f"with β = {example.regularised.beta_fraction:g}·V")):
        for i in range(n):
            ax.stairs(np.minimum(runs[i], 3.0), steps, lw=1, alpha=0.8, label=f"run {i}" + (" (200 at the end)" if runs[i].max() > 3 else ""))
        ax.stairs(fit.skyline, steps, color="k", lw=2.2, ls="--", label="R*")
        ax.set_ylim(0, 3.2)
        ax.set_xticks(range(k))
        ax.set_xlabel("step k")
        ax.set_ylabel("containers (clipped at 3)")
        ax.set_title(f"{title}\nR* = {np.round(fit.skyline, 3).tolist()}, ε = {fit.epsilon:.3f}", fontsize=9)
        ax.legend(loc="upper left")
    return fig


def _focus_axes(ax, result):
    runs = result.focus_runs
    n, k = runs.shape
    steps = np.arange(k + 1)
    # every run as one line (NaN between runs): one artist instead of N keeps a panel redraw quick
    x = np.tile(np.append(np.repeat(steps, 2)[1:-1], np.nan), n)
    y = np.concatenate([np.append(np.repeat(r, 2), np.nan) for r in runs])
    ax.plot(x, y, color="k", lw=0.5, alpha=0.25, label=f"{n} training runs")
    base = result.focus_baselines()
    for name, style in (("max envelope", dict(color="tab:purple", ls=":", lw=1.2)),
                        ("user", dict(color=USER, ls="-.", lw=1.2))):
        ax.stairs(base[name], steps, label=name, **style)
    fit = result.focus_fit
    ax.stairs(fit.skyline, steps, color=RSTAR, lw=2.0, label=f"R* (α = {fit.alpha:g}, β = {fit.beta_fraction:g}·V)")
    top = 1.25 * max(float(runs.max()), float(fit.skyline.max()), float(base["max envelope"].max()))
    user = float(base["user"][0])
    if user <= 2 * top:
        top = max(top, 1.1 * user)
    else:
        ax.text(0.02, 0.97, f"user: {user:,.0f} containers (off the top)", transform=ax.transAxes, fontsize=7,
                va="top", color=USER)
    ax.set_ylim(0, top)
    ax.set_xlabel("minutes since the run started")
    ax.set_ylabel("containers")
    ax.set_title(f"{result.focus}: R* fitted on its last {n} training runs\nper run: {fit.over:,.0f} over-allocated, "
                 f"{fit.under:,.1f} owed at the end\n(container-minutes)", fontsize=9)
    # beside the axes: inside, it covered the user's provisioning
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))


def plot_fig5(result):
    """Fig. 5 style: R* against the focus job's training runs, with the max envelope and the user's provisioning."""
    fig, ax = new_figure(size=(8.0, 3.6))
    _focus_axes(ax, result)
    return fig


def _cdf_axes(ax, per_run, column="area_ratio"):
    policies = list(dict.fromkeys(per_run.policy))
    for p in policies:
        x = np.sort(per_run[per_run.policy == p][column].to_numpy())
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color=_alpha_colour(p, policies),
                lw=1.8 if p != "user" else 1.4, label=p if p != "user" else "user (manual)")
    ax.axvline(1.0, color="k", ls=":", lw=0.9)
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.xaxis.set_minor_locator(NullLocator())  # log minor ticks cost a panel redraw more than the data
    ax.set_xlabel("provisioned / used, area (1 = ideal)")
    ax.set_ylabel("share of held-out runs ≤ x")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right")


def _miss_axes(ax, per_run):
    policies = list(dict.fromkeys(per_run.policy))
    rates = per_run.groupby("policy", sort=False).missed.mean().reindex(policies)
    ax.bar(range(len(policies)), 100 * rates.to_numpy(), color=[_alpha_colour(p, policies) for p in policies])
    for i, v in enumerate(rates.to_numpy()):
        ax.text(i, 100 * v, f"{100 * v:.1f}%", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(policies)), policies, fontsize=8, rotation=20)
    ax.set_ylabel("held-out runs missing d_j (%)")
    ax.set_title("Fig. 9c: worst-case SLO misses\n(exactly the allocation, no opportunistic capacity)", fontsize=9)


def plot_fig9bc(evaluation: FleetEvaluation):
    """Fig. 9b (provisioned/used CDF per policy) and Fig. 9c (worst-case SLO misses per policy)."""
    per_run = evaluation.per_run if isinstance(evaluation, FleetEvaluation) else evaluation
    fig, axes = new_figure(1, 2, size=(11.0, 3.6))
    _cdf_axes(axes[0], per_run)
    axes[0].set_title("Fig. 9b: provisioning of the held-out runs", fontsize=9)
    _miss_axes(axes[1], per_run)
    return fig


def plot_history_sweep(df):
    """R* against the runs: worst-case misses and provisioning as R* learns from more runs."""
    fig, axes = new_figure(1, 2, size=(10.0, 3.3))
    x = df.index.to_numpy()
    ax = axes[0]
    ax.plot(x, 100 * df.miss_rate, "o-", color=RSTAR, label="R*")
    ax.axhline(100 * df.user_miss_rate.iloc[0], color=USER, ls="--", label="user (manual)")
    ax.set_xlabel("runs of history R* is fitted on")
    ax.set_ylabel("held-out runs missing d_j (%)")
    ax.set_title("worst-case misses fall as R* sees more runs", fontsize=9)
    ax.legend()
    ax = axes[1]
    ax.plot(x, df.median_area_ratio, "o-", color=RSTAR, label="R*")
    ax.axhline(df.user_median_area_ratio.iloc[0], color=USER, ls="--", label="user (manual)")
    ax.axhline(1.0, color="k", ls=":", lw=0.8)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel("runs of history R* is fitted on")
    ax.set_ylabel("median provisioned / used (area)")
    ax.set_title("... and R* grows a little to cover them", fontsize=9)
    ax.legend()
    return fig


def plot_drift(drift):
    """R* refitted every day while the job slows down: its area, and the next day's runs that miss d_j."""
    tl = drift.timeline
    fig, axes = new_figure(1, 2, size=(11.0, 3.4))
    colours = {"window": "tab:blue", "history": "tab:orange"}
    labels = {"window": f"last {drift.config.drift_window} runs", "history": f"last {drift.config.history_runs} runs"}
    for p, g in tl.groupby("policy"):
        axes[0].step(g.day, g.area, where="post", color=colours[p], label=labels[p])
        axes[1].bar(g.day + (-0.2 if p == "window" else 0.2), g.next_day_misses, 0.4, color=colours[p], label=labels[p])
    for ax in axes:
        ax.axvline(drift.drift_time / 86400, color="tab:red", ls="--", lw=1, label="the job slows down")
        ax.set_xlabel("day (the contract is refitted every midnight)")
    axes[0].set_ylabel("R* area (container-minutes)")
    axes[0].set_title(f"{drift.template}: R* re-adapts (runs {drift.config.drift_factor:g}x longer after the change)",
                      fontsize=9)
    axes[0].legend()
    axes[1].set_ylabel("runs of the next day missing d_j")
    axes[1].set_title("worst-case misses under the contract in force", fontsize=9)
    axes[1].legend()
    return fig


def plot_result(result):
    """The panel's figure: R* against the focus job's runs, and the fleet's Fig. 9b and 9c at this alpha."""
    fig, axes = new_figure(1, 3, size=(14.0, 3.8))
    _focus_axes(axes[0], result)
    per_run = result.fleet.per_run
    _cdf_axes(axes[1], per_run)
    s = result.summary()
    axes[1].set_title(f"Fig. 9b: median provisioned/used {s.median_area_ratio.iloc[0]:.2f} (user) vs "
                      f"{s.median_area_ratio.iloc[-1]:.2f} (R*)", fontsize=9)
    _miss_axes(axes[2], per_run)
    return fig
