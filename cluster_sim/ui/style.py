"""One look for every figure of the suite: type sizes a student can read, and one colour per policy role.

:data:`STYLE` is applied to matplotlib's settings when :mod:`cluster_sim.ui` is imported (every lab's plotting
imports it), so no plotting function sets its own legend or tick size. :func:`policy_colour` gives a policy the
colour of its role, the same in every lab: the baseline the paper compares against is grey, the paper's whole
mechanism blue, a partial or simpler form of it orange, a control given the mechanism's extra capacity purple,
oracles light versions of the policy they know the truth for; the paper's own numbers are black diamonds
(:data:`PAPER`).

>>> policy_colour("PRIO") == policy_colour("user") == policy_colour("none") == BASELINE
True
>>> policy_colour("Wing-Agg") == policy_colour("morpheus_dra") == policy_colour("smart") == MECHANISM
True
"""

from __future__ import annotations

#: legend and tick labels at 8.5 pt (they were 6-7 pt: hard to read at a notebook's zoom), titles at 10 pt
STYLE = {
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "legend.fontsize": 8.5,
    "legend.title_fontsize": 8.5,
    "figure.titlesize": 10.5,
    "legend.framealpha": 0.9,
}

BASELINE = "#7f7f7f"    # grey: what the paper compares against (users' own requests, PRIO, NoRM, no shaper)
MECHANISM = "#1f77b4"   # blue: the paper's whole mechanism
PARTIAL = "#ff7f0e"     # orange: a partial or simpler form of it
CONTROL = "#9467bd"     # purple: a control given the mechanism's extra capacity, or another variant
PAPER = "#000000"       # black: the paper's own numbers (drawn as diamonds)

POLICY_COLOURS = {
    # Lab 03 (Morpheus arms)
    "user": BASELINE, "packing_only": "#bcbd22", "model_only": "#17becf", "morpheus": PARTIAL,
    "morpheus_dra": MECHANISM,
    # Lab 05 (Wing policies)
    "PRIO": BASELINE, "Wing-Direct": PARTIAL, "Wing-Agg": MECHANISM, "Wing-MIL": CONTROL,
    "Oracle Wing-Direct": "#ffbb78", "Oracle Wing-Agg": "#aec7e8",
    # Labs 08-09 (RMiner modes)
    "none": BASELINE, "plus1": CONTROL, "safe": PARTIAL, "smart": MECHANISM,
}


def policy_colour(name: str) -> str:
    """The colour of policy ``name`` in every lab's figures (see the module's docstring for the roles)."""
    try:
        return POLICY_COLOURS[name]
    except KeyError:
        raise ValueError(f"policy_colour: no colour for policy {name!r}; known: {', '.join(POLICY_COLOURS)}") from None


def apply() -> None:
    """Put :data:`STYLE` into matplotlib's settings (figures made afterwards use it)."""
    import matplotlib

    matplotlib.rcParams.update(STYLE)
