"""``make reproduce [SCALE=ci|default|paper]``: every lab at one scale, one static HTML report.

Each notebook in ``notebooks/`` is executed headless with papermill at the preset (``interactive=False``,
no panels), and the report gathers, per lab, the section that puts our numbers beside the paper's
(the "What the paper reports vs what we see" section; the tour's "What theory says vs what we see"):
its prose, tables and figures as the notebook computed them, then the notebook's closing cell (its
claims, checked, and its headline metrics), then every figure the notebook drew outside its panel, each
under the heading of the section that drew it (the headings cite the paper's figures). Each lab's entry says the preset,
the wall time and how many of its claims were reproduced, within noise, reversed and reported only, counted from the
claims table its closing cell displayed (:func:`cluster_sim.claims.record`), never written by hand; the same rows go to
``claims.csv`` beside the report (``lab, claim, paper, ours, low, high, n, verdict``). The top of the report records
the environment (Python, packages, cores, git commit). The executed notebooks are kept next to the report, each also as HTML, so every number
can be traced to the cell that computed it.

    python -m cluster_sim.reproduce --scale ci                 # reports/reproduce/ci/report.html
    python -m cluster_sim.reproduce --scale paper --labs 08 09 # some labs only

Seeds and spread are what each notebook reports (its tables pool or list seeds where counts are small;
see each lab's claims). A lab whose notebook fails is reported as failed, with the error, and the
others still run; the command exits non-zero if any failed.
"""

from __future__ import annotations

import argparse
import copy
import csv
import datetime as _dt
import html
import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SCALES = ("ci", "default", "paper")
KERNEL = "cluster_sim"
#: the heading of the section holding a lab's "paper vs ours" table
SECTION = re.compile(r"^#+ .*What (the papers? reports?|theory says) vs what we see", re.M)  # the capstone: "papers report"
HEADING = re.compile(r"^## ", re.M)
PACKAGES = ("cluster_sim", "mesa", "numpy", "scipy", "pandas", "matplotlib", "scikit-learn", "pymoo",
            "dask", "distributed", "papermill", "nbconvert")


@dataclass
class LabRun:
    notebook: Path
    scale: str
    seconds: float = 0.0
    cpu_seconds: float | None = None  # the kernel's CPU time (and its children's): a busy machine's wall time is not
    load: tuple[float, float] | None = None  # the 1-minute load average at the start and at the end
    error: str | None = None
    executed: Path | None = None
    cells: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    claims: list = field(default_factory=list)  # the rows of the claims table the closing cell displayed

    @property
    def lab(self) -> str:
        return self.notebook.stem


def notebooks(labs: list[str] | None = None) -> list[Path]:
    """The notebooks to run: all of ``notebooks/``, or those whose number is in ``labs``."""
    every = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if not labs:
        return every
    numbers = {p.name[:2]: p for p in every}
    unknown = [lab for lab in labs if lab not in numbers]
    if unknown:
        raise ValueError(f"labs={unknown} are not notebooks: the labs are {', '.join(sorted(numbers))}")
    return [numbers[lab] for lab in labs]


def report_cells(nb) -> list:
    """The cells of the "paper vs ours" section (to the next ``## `` heading) and the closing cell."""
    start = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and SECTION.search(c.source)), None)
    if start is None:
        raise ValueError("no 'What the paper(s) report(s) vs what we see' section")
    first = copy.deepcopy(nb.cells[start])
    first.source = first.source[SECTION.search(first.source).start():]  # from the heading on
    cells = [first]
    heading = HEADING.search(first.source, 1)  # the section may end inside its own cell
    if heading:
        first.source = first.source[:heading.start()]
    else:
        for c in nb.cells[start + 1:]:
            heading = HEADING.search(c.source) if c.cell_type == "markdown" else None
            if heading:  # the prose before the next heading (e.g. an honest reading) belongs to the section
                if c.source[:heading.start()].strip():
                    head = copy.deepcopy(c)
                    head.source = c.source[:heading.start()]
                    cells.append(head)
                break
            cells.append(copy.deepcopy(c))
    closing = next((c for c in reversed(nb.cells) if c.cell_type == "code" and "assert" in c.source), None)
    if closing is not None and all(closing.source != c.source for c in cells):
        cells.append(copy.deepcopy(closing))
    for c in cells:  # the section's heading becomes a sub-heading under the lab's
        if c.cell_type == "markdown":
            c.source = re.sub(r"^#+ ", "### ", c.source, flags=re.M)
    return cells


def figure_cells(nb) -> list:
    """Every figure the executed notebook drew outside its panel section ("Try it"), each group under
    a caption naming the notebook section that drew it (its heading, which cites the paper's figure)."""
    import nbformat

    cells, heading, captioned = [], "", None
    for c in nb.cells:
        if c.cell_type == "markdown":
            found = re.findall(r"^## +(.+)$", c.source, flags=re.M)
            heading = found[-1].strip() if found else heading
            continue
        if c.cell_type != "code" or re.search(r"\bTry it\b", heading):
            continue
        images = [o for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
        if not images:
            continue
        if captioned != heading:
            cells.append(nbformat.v4.new_markdown_cell(f"#### {heading}" if heading else "#### Before the first section"))
            captioned = heading
        figure = copy.deepcopy(c)
        figure.outputs = copy.deepcopy(images)
        cells.append(figure)
    return cells


#: kernels started again when one dies before replying to kernel_info, before any cell ran. jupyter_client picks
#: free TCP ports for a kernel and the kernel binds them a moment later; on a busy machine another process (a Dask
#: worker, another kernel) can take one in between, and the kernel dies with "ZMQError: Address already in use"
#: (seen once in about 80 kernel starts of a `make test` at load 4). Nothing of the notebook ran, so a new kernel
#: is the same execution; any other error is the notebook's and is raised.
KERNEL_START_RETRIES = 2


def kernel_never_started(err: BaseException) -> bool:
    """Did ``err`` end an execution before its kernel started (so before any cell ran)?"""
    return isinstance(err, RuntimeError) and "Kernel died before replying to kernel_info" in str(err)


def execute_notebook(path, out, **kwargs) -> None:
    """``papermill.execute_notebook(path, out, **kwargs)``, with a new kernel when one died before it started
    (:data:`KERNEL_START_RETRIES` times at most); the last error is raised."""
    import papermill as pm

    for attempt in range(KERNEL_START_RETRIES + 1):
        try:
            pm.execute_notebook(str(path), str(out), **kwargs)
            return
        except Exception as err:
            if not kernel_never_started(err) or attempt == KERNEL_START_RETRIES:
                raise
            print(f"{Path(path).name}: the kernel died before it started ({err}); starting another", file=sys.stderr)


def execute(path: Path, scale: str, out_dir: Path, timeout: int) -> LabRun:
    import nbformat

    run = LabRun(path, scale)
    out = out_dir / path.name
    load0, cpu0 = os.getloadavg()[0], _cpu_seconds()
    t0 = time.perf_counter()
    try:
        execute_notebook(path, out, parameters={"interactive": False, "preset": scale}, kernel_name=KERNEL,
                         execution_timeout=timeout, cwd=str(path.parent), progress_bar=False)
    except Exception as err:  # a failed lab is reported, the others still run
        run.error = f"{type(err).__name__}: {str(err).strip()[-2000:]}"
    run.seconds = time.perf_counter() - t0
    run.cpu_seconds, run.load = _cpu_seconds() - cpu0, (load0, os.getloadavg()[0])
    if out.exists():
        run.executed = out
        nb = nbformat.read(out, as_version=4)
        try:
            run.cells = report_cells(nb)
        except ValueError as err:
            run.error = run.error or str(err)
        run.figures = figure_cells(nb)
        run.claims = claim_rows(nb)
    return run


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (the kernel ends when its notebook has run,
    and its own children, e.g. Dask workers, count once the kernel reaped them): on a shared machine this, not the
    wall time, is what a lab costs."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


def timing(run: LabRun) -> str:
    """'612.3 s wall, 598.1 s CPU, load 1.2-1.4': wall time alone misleads when other work shares the cores."""
    text = f"{run.seconds:.1f} s wall"
    if run.cpu_seconds is not None:
        text += f", {run.cpu_seconds:.1f} s CPU"
    if run.load is not None:
        text += f", load {run.load[0]:.1f}-{run.load[1]:.1f}"
    return text


def claim_rows(nb) -> list[dict]:
    """The claims tables an executed notebook displayed (:func:`cluster_sim.claims.record`), in order."""
    from .claims import MIME

    rows = []
    for c in nb.cells:
        for out in c.get("outputs", []) if c.cell_type == "code" else []:
            if MIME in out.get("data", {}):
                rows.extend(out["data"][MIME])
    return rows


def claim_counts(run: LabRun) -> str:
    """The lab's status line: failed, or its claims counted by verdict."""
    from .claims import VERDICTS

    if run.error:
        return "**failed**"
    if not run.claims:
        return "no claims table"
    counts = {v: sum(r["verdict"] == v for r in run.claims) for v in VERDICTS}
    return ", ".join(f"{n} {'reported only' if v == 'reported' else v}" for v, n in counts.items() if n)


def write_claims_csv(runs: list[LabRun], path: Path) -> Path:
    """Every lab's claims, one row each: ``lab`` (the notebook's number), ``claim``, ``paper`` (the paper's
    value, else its words), ``ours``, ``low``/``high`` (the interval of the paired difference; empty for a
    claim that is only reported), ``n`` (seeds) and ``verdict``."""
    from .claims import COLUMNS

    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(COLUMNS)
        for r in runs:
            for row in r.claims:
                paper = row.get("paper")
                out.writerow([r.lab[:2], row["claim"], row.get("paper_text") if paper is None else paper,
                              row["ours"], *("" if row.get(k) is None else row[k] for k in ("low", "high")),
                              row["n"], row["verdict"]])
    return path


def environment() -> dict[str, str]:
    env = {"python": sys.version.split()[0], "platform": platform.platform(),
           "cores": str(os.cpu_count()), "date": _dt.datetime.now().isoformat(timespec="seconds")}
    for name in PACKAGES:
        try:
            env[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            env[name] = "not installed"
    try:
        env["git commit"] = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                                           capture_output=True, text=True, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        env["git commit"] = "unknown"
    return env


def _title(path: Path) -> str:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    first = next((c.source for c in nb.cells if c.cell_type == "markdown"), path.stem)
    return first.splitlines()[0].lstrip("# ").strip()


def build_report(runs: list[LabRun], scale: str, out_dir: Path, total_seconds: float) -> Path:
    """One notebook of every lab's section (inputs hidden), exported by nbconvert to one HTML file."""
    import nbformat
    from nbconvert import HTMLExporter

    env = environment()
    rows = "\n".join(f"| {k} | {v} |" for k, v in env.items())
    failed = [r for r in runs if r.error]
    summary = "\n".join(
        f"| [{r.lab}](#{r.lab}) | {claim_counts(r)} | {timing(r)} | "
        f"[{r.notebook.name}]({r.notebook.stem}.html) |" for r in runs)
    write_claims_csv(runs, out_dir / "claims.csv")
    cells = [nbformat.v4.new_markdown_cell(
        f"# cluster_sim: every lab at preset `{scale}`\n\n"
        f"Each lab's notebook was executed headless (papermill, `preset={scale!r}`, `interactive=False`, the "
        f"notebook's own seed pools). Below each lab: its section putting our numbers beside the paper's, as the "
        f"notebook computed them, and its closing cell (the claims it measures over its seed pool, each with a "
        f"paired interval and a verdict; a claim that must reproduce and does not fails the notebook). The counts "
        f"below are read from those tables (every row is in `claims.csv`).\n\n"
        f"{len(runs) - len(failed)} of {len(runs)} labs ran to the end; total wall time "
        f"{total_seconds:.0f} s. A lab's CPU time is its kernel's: on a machine others share, the wall time grows with the "
        f"load and the CPU time does not.\n\n| lab | claims | time | executed notebook |\n| --- | --- | --- | --- |\n"
        f"{summary}\n\n## Environment\n\n| | |\n| --- | --- |\n{rows}")]
    for r in runs:
        status = f"**failed**: `{r.error}`" if r.error else f"claims: {claim_counts(r)}"
        cells.append(nbformat.v4.new_markdown_cell(
            f'<a id="{r.lab}"></a>\n\n## {_title(r.notebook)}\n\n`{r.notebook.name}` at preset `{scale}`: '
            f"{timing(r)}; {status}."))
        cells.extend(r.cells)
        if r.figures:
            cells.append(nbformat.v4.new_markdown_cell(
                f"### Figures\n\nEvery figure `{r.notebook.name}` drew at preset `{scale}` (its panel aside), under "
                "the heading of the section that drew it."))
            cells.extend(r.figures)
    report = nbformat.v4.new_notebook(cells=cells)
    report.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python (cluster_sim)", "language": "python"}
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(report)
    path = out_dir / "report.html"
    path.write_text(body)
    full = HTMLExporter()
    for r in runs:
        if r.executed is not None:
            page, _ = full.from_notebook_node(nbformat.read(r.executed, as_version=4))
            (out_dir / f"{r.notebook.stem}.html").write_text(page)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="ci", help=f"the preset every notebook runs at: {', '.join(SCALES)}")
    ap.add_argument("--labs", nargs="*", help="lab numbers (e.g. 00 08); default: every notebook")
    ap.add_argument("--out", type=Path, default=None, help="output directory (default reports/reproduce/SCALE)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds a notebook cell may take")
    args = ap.parse_args(argv)
    if args.scale not in SCALES:
        ap.error(f"--scale={args.scale!r} is not allowed: choose one of {', '.join(SCALES)}")
    if args.timeout < 1:
        ap.error(f"--timeout={args.timeout} is out of range: give 1 or more seconds")
    try:
        paths = notebooks(args.labs)
    except ValueError as err:
        ap.error(str(err))
    out_dir = (args.out or ROOT / "reports" / "reproduce" / args.scale).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    # a long sweep draws a text bar in the headless kernels (a widget can stall one)
    os.environ.setdefault("CLUSTER_SIM_PROGRESS", "text")
    t0 = time.perf_counter()
    runs = []
    for path in paths:
        print(f"running {path.name} at {args.scale} ...", flush=True)
        run = execute(path, args.scale, out_dir, args.timeout)
        print(f"  {timing(run)}, {'FAILED: ' + run.error.splitlines()[0] if run.error else claim_counts(run)}",
              flush=True)
        runs.append(run)
    report = build_report(runs, args.scale, out_dir, time.perf_counter() - t0)
    print(f"report: {report}")
    return 1 if any(r.error for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
