"""What a student cannot read in a figure: text cut off at the figure's edge, text on top of other text, a legend
on top of the data, a tick label written as a formula (2×10⁰).

:func:`layout_problems` draws a Figure and returns one sentence per problem (empty when the figure is readable);
tests/notebooks/test_figures.py runs it on every figure every notebook draws.

Example
-------
>>> from cluster_sim.ui import new_figure
>>> fig, ax = new_figure(size=(3, 2))
>>> _ = ax.plot([0, 1], [0, 1], label="data")
>>> layout_problems(fig)
[]
>>> _ = ax.set_title("a title far too long for a figure this narrow, so the edge cuts it off on both sides")
>>> layout_problems(fig)[0].startswith("text outside the figure: title 'a title far too long")
True
"""

from __future__ import annotations

import itertools
import re

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cbook import STEP_LOOKUP_MAP
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import StepPatch
from matplotlib.text import Text

#: pixels two boxes may share before they count as overlapping (anti-aliasing, a glyph's side bearing)
TOLERANCE = 1.0


def _texts(fig: Figure) -> list[tuple[str, Text]]:
    """Every visible, non-empty text of the figure with what it is (title, tick label, legend entry, ...).

    An axis keeps spare tick objects with stale labels beyond its view; only the ticks it draws count."""
    drawn_ticks, all_ticks = set(), set()
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            shown = axis._update_ticks()  # first: it makes the tick objects an axis that was not drawn lacks
            for tick in axis.majorTicks + axis.minorTicks:
                all_ticks |= {id(tick.label1), id(tick.label2)}
            if not (ax.get_visible() and ax.axison and axis.get_visible()):
                continue  # ax.axis("off"): no tick is drawn
            for tick in shown:
                drawn_ticks |= {id(t) for t in (tick.label1, tick.label2) if t.get_visible()}
    found = []
    seen = set()
    for artist in fig.findobj(Text):
        if id(artist) in seen or not artist.get_visible() or not artist.get_text().strip():
            continue
        if id(artist) in all_ticks and id(artist) not in drawn_ticks:
            continue
        seen.add(id(artist))
        found.append((_describe(fig, artist, id(artist) in drawn_ticks), artist))
    return found


def _describe(fig: Figure, t: Text, tick_label: bool) -> str:
    """What ``t`` is; ``tick_label``: it is the label of a tick its axis draws (found by :func:`_texts`, which
    updated each axis's ticks once: asking ``get_ticklabels`` here updated them again for every text, the check's
    main cost)."""
    text = t.get_text().replace("\n", " ")
    short = text if len(text) <= 60 else text[:57] + "..."
    for ax in fig.axes:
        if t is ax.title or t is ax._left_title or t is ax._right_title:
            return f"title {short!r}"
        if t is ax.xaxis.label or t is ax.yaxis.label:
            return f"axis label {short!r}"
    if tick_label:
        return f"tick label {short!r}"
    if fig._suptitle is t:
        return f"title {short!r}"
    return f"text {short!r}"


def _visible_in_clip(t: Text, renderer) -> bool:
    """False for a text its axes clip away entirely (an annotation scrolled out of view is not a problem)."""
    if not t.get_clip_on() or t.get_clip_box() is None:
        return True
    box, clip = t.get_window_extent(renderer), t.get_clip_box()
    return box.overlaps(clip)


def _boxes_overlap(a, b) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > TOLERANCE) and (min(a.y1, b.y1) - max(a.y0, b.y0) > TOLERANCE)


def _data_points(ax: Axes) -> list[tuple[str, np.ndarray]]:
    """Display coordinates of what each data artist of ``ax`` draws (lines densely sampled along their segments)."""
    out = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_transform() is not ax.transData:
            continue  # a reference line across the axes (axhline) is not data a legend hides
        xy = np.asarray(line.get_xydata(), float)
        if len(xy) == 0:
            continue
        style = line.get_drawstyle()
        if style in STEP_LOOKUP_MAP and style != "default" and len(xy) > 1:
            xy = np.column_stack(STEP_LOOKUP_MAP[style](xy[:, 0], xy[:, 1]))
        pts = ax.transData.transform(xy)
        if line.get_linestyle() not in ("None", "", " ") and len(pts) > 1:
            pts = _densify(pts)
        out.append((f"line {line.get_label()!r}", pts))
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):
            out.append((f"markers {coll.get_label()!r}", coll.get_offset_transform().transform(coll.get_offsets())))
        elif isinstance(coll, LineCollection):
            segs = [coll.get_transform().transform(np.asarray(s, float)) for s in coll.get_segments() if len(s)]
            if segs:
                out.append((f"lines {coll.get_label()!r}", np.vstack([_densify(s) for s in segs])))
    for patch in ax.patches:
        if isinstance(patch, StepPatch) and patch.get_visible():
            verts = patch.get_path().vertices
            out.append((f"steps {patch.get_label()!r}", _densify(patch.get_transform().transform(verts))))
    return out


def _densify(pts: np.ndarray, spacing: float = 2.0) -> np.ndarray:
    """Points every ``spacing`` pixels along the polyline ``pts`` (a segment crossing a legend has no vertex in it)."""
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    if len(pts) < 2:
        return pts
    parts = [pts[:1]]
    for a, b in zip(pts[:-1], pts[1:]):
        n = int(min(max(np.hypot(*(b - a)) / spacing, 1), 2000))
        parts.append(a + (b - a) * (np.arange(1, n + 1)[:, None] / n))
    return np.vstack(parts)


def layout_problems(fig: Figure) -> list[str]:
    """Draw ``fig`` and return each text outside it, each pair of overlapping texts, each legend over data."""
    if fig.canvas is None or not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    problems = []
    texts = [(what, t, t.get_window_extent(renderer)) for what, t in _texts(fig) if _visible_in_clip(t, renderer)]
    for what, t, box in texts:
        if box.x0 < -TOLERANCE or box.y0 < -TOLERANCE or box.x1 > width + TOLERANCE or box.y1 > height + TOLERANCE:
            problems.append(f"text outside the figure: {what} spans x {box.x0:.0f}..{box.x1:.0f}, "
                            f"y {box.y0:.0f}..{box.y1:.0f} of a {width:.0f} x {height:.0f} figure")
    for what, t, box in texts:
        if what.startswith("tick label") and re.search(r"\\times\s*\d*\^?\{?\s*10", t.get_text()):
            problems.append(f"a tick label written as a formula: {what} (label the axis with plain numbers, "
                            "cluster_sim.ui.figures.plain_log_ticks)")
    for (wa, a, ba), (wb, b, bb) in itertools.combinations(texts, 2):
        if _boxes_overlap(ba, bb):
            problems.append(f"text on text: {wa} overlaps {wb}")
    legends = [(lg, ax) for ax in fig.axes for lg in [ax.get_legend()] if lg is not None and lg.get_visible()]
    legends += [(lg, None) for lg in fig.legends if lg.get_visible()]
    for legend, owner in legends:
        box = legend.get_window_extent(renderer)
        for ax in ([owner] if owner is not None else fig.axes):
            for what, pts in _data_points(ax):
                inside = ((pts[:, 0] > box.x0 + TOLERANCE) & (pts[:, 0] < box.x1 - TOLERANCE)
                          & (pts[:, 1] > box.y0 + TOLERANCE) & (pts[:, 1] < box.y1 - TOLERANCE))
                clip = ax.bbox  # data drawn outside the axes is clipped away, not hidden by the legend
                inside &= (pts[:, 0] >= clip.x0) & (pts[:, 0] <= clip.x1) & (pts[:, 1] >= clip.y0) & (pts[:, 1] <= clip.y1)
                if inside.any():
                    title = ax.get_title() or ""
                    problems.append(f"legend over data: the legend of axes {title[:40]!r} covers {int(inside.sum())} "
                                    f"drawn point(s) of {what}")
                    break
    return problems
