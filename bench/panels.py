"""How long each notebook panel takes to redraw, at its preset and at every slider's two ends.

A slider should cover what redraws in about a second at the interactive (``default``) preset
(larger values go through the notebook's ``parameters`` cell). This builds every notebook's panels
in-process (no kernel), then for each control moves it to its slider's lowest and highest value
(one at a time, from the panel's start) and times the redraw (run + plot + PNG), as a student
would see it. Each row's ratio is against the panel's own start, measured in the same process.

    python bench/panels.py                 # every notebook at preset "default"
    python bench/panels.py --preset ci 00  # notebooks whose name starts with 00
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cluster_sim.ui.inprocess import notebook_panels  # noqa: E402


def time_panel(panel, repeat: int = 1) -> list[tuple]:
    rows = []
    start = {name: c.value for name, c in panel.controls.items()}

    def redraw(**change):
        best = float("inf")
        for _ in range(repeat):
            panel.set(**start)
            t0 = time.perf_counter()
            ok = panel._apply(change)
            best = min(best, time.perf_counter() - t0)
        return best, ok

    base, _ = redraw(**{next(iter(start)): start[next(iter(start))]})
    panel.set(**start)
    t0 = time.perf_counter()
    panel._redraw(panel.config, "start")
    base = time.perf_counter() - t0
    rows.append(("(start)", "", base, 1.0, ""))
    for name, control in panel.controls.items():
        if control.range is None:
            continue
        for end in control.range:
            if end == start[name]:
                continue
            seconds, ok = redraw(**{name: end})
            rows.append((name, end, seconds, seconds / base, "" if ok else f"refused: {panel.error[:90]}"))
    panel.set(**start)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="name prefixes (default: all)")
    parser.add_argument("--preset", default="default")
    parser.add_argument("--quick", action="store_true", help="preset ci, notebook 00 only")
    args = parser.parse_args(argv)
    if args.quick:
        args.preset, args.notebooks = "ci", ["00"]
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    if args.notebooks:
        paths = [p for p in paths if any(p.name.startswith(n) for n in args.notebooks)]
    worst = 0.0
    for path in paths:
        t0 = time.perf_counter()
        panels = notebook_panels(path, preset=args.preset)
        print(f"\n== {path.name} (preset {args.preset}; notebook cells ran in {time.perf_counter() - t0:.1f} s)")
        for k, panel in enumerate(panels):
            print(f"  panel {k}: {type(panel.config).__name__}, run = {getattr(panel._run, '__name__', panel._run)}")
            for name, value, seconds, ratio, note in time_panel(panel):
                if not note:
                    worst = max(worst, seconds)
                print(f"    {name:>20} {str(value):>10}  {seconds:6.2f} s  {ratio:5.1f}x start  {note}")
    print(f"\nslowest redraw that ran: {worst:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
