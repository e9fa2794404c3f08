"""What a student does in each lab's exercise to see its check fail and then pass: the answer cell typed into, the
check cell that grades it, what the check says on a wrong answer and on the right one, and the cells the check needs.

Shared by the in-process test of every lab (tests/notebooks/test_exercise_messages.py) and the browser test of a
few (tests/browser/test_exercise_in_browser.py), so both type the same answers and expect the same messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from seeded_answers import WRONG

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Lab:
    """What a student does in one lab's exercise."""

    answer: str     #: the grade id of the answer cell typed into (its wrong answer is WRONG[answer])
    check: str      #: the grade id of the check cell that grades it
    wrong: str      #: what the check's one message says on the wrong answer (a regex)
    right: str      #: what the check prints on the right answer (a regex)
    reads: tuple[str, ...] = ()  #: how other cells the check reads begin (beyond the parameters and imports)
    slip: tuple[str, str] | None = None  #: a wrong answer (old -> new in the solution) other than WRONG[answer]


LABS = {
    "00": Lab("best_fit", "check_best_fit", r"best_fit: case \d+ disagrees with the reference",
              r"best_fit: all \d+ cases agree with the reference"),
    "01": Lab("treeify_solution", "treeify_check", r"treeify: case \d+ \(.*\): .*you seem to take the first tied",
              r"treeify: all \d+ cases agree with the reference"),
    "02": Lab("over_allocation", "check_over_allocation", r"over_allocation: .*\n.*yours: .*expected .*\n.*cause: ",
              r"over_allocation: all \d+ cases agree"),
    "03": Lab("folded_load", "check_folded_load", r"period \d+, .*you averaged the instances",
              r"your folded load agrees on all \d+ cases"),
    "04": Lab("owl_weights", "check_owl_weights", r"owl_weights: on random DAG 0 .*1/N over the consumers",
              r"owl_weights: all \d+ random DAGs agree"),
    "05": Lab("wing_agg_priority", "check_table", r"wing_agg_priority: job \d+ .*not its value efficiency",
              r"wing_agg_priority: all \d+ jobs of the worked history agree"),
    "06": Lab("stageopt_06_my_ipa", "stageopt_06_check_library", r"my_ipa, case \d+: decision \d+ of \d+ differs",
              r"my_ipa: all \d+ cases agree"),
    "07": Lab("stageopt_07_my_raa_path", "stageopt_07_check_library", r"my_raa_path, case 0: .*ascending latency order",
              r"my_raa_path: all \d+ fronts agree", reads=("# the cases both checks use",)),
    "08": Lab("model", "check_model", r"shadow_ratio_model: case \d+ disagrees with the reference",
              r"shadow_ratio_model: all \d+ cases agree"),
    "09": Lab("traverse_order", "check_traverse_order", r"traverse_order \(hand cases\): case \d+ disagrees",
              r"traverse_order: all \d+ replayed decisions agree"),
    # the seeded naive rule fails only after the paired ablation (about a minute): a typo fails on the first call
    "10": Lab("my_release_rule", "check_release_rule", r"my_release_rule\(job \d+, .*\) returned 'organisation': allowed",
              r"my_release_rule: invariants hold after every event",
              slip=('return "organisations"', 'return "organisation"')),
}
EXERCISES = {lab: next((ROOT / "exercises").glob(f"{lab}_*.ipynb")).name for lab in LABS}


def solution(lab: str, grade_id: str) -> str:
    """The solution's code of an answer cell, as a student types it (the nbgrader markers removed)."""
    nb = nbformat.read(ROOT / "solutions" / EXERCISES[lab], as_version=4)
    source = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", source, flags=re.M)


def wrong(lab: str, grade_id: str) -> str:
    """The lab's seeded wrong answer: a one-line edit of the solution."""
    right = solution(lab, grade_id)
    old, new = LABS[lab].slip or WRONG[grade_id]
    assert old in right, f"{grade_id}: the seeded wrong answer's edit no longer applies to the solution"
    return right.replace(old, new)


def cells(lab: str, exercise: Path) -> tuple[list[int], int, int]:
    """Indices of the cells to run before the answer, of the answer cell and of its check, in ``exercise``."""
    spec = LABS[lab]
    nb_cells = nbformat.read(exercise, as_version=4).cells
    grade = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb_cells]
    params = next(i for i, c in enumerate(nb_cells) if "parameters" in c.metadata.get("tags", []))
    imports = next(i for i in range(params + 1, len(nb_cells)) if nb_cells[i].cell_type == "code")
    reads = [i for i, c in enumerate(nb_cells) if c.cell_type == "code" and c.source.startswith(spec.reads)] \
        if spec.reads else []
    assert len(reads) == len(spec.reads), f"lab {lab}: the cells beginning {spec.reads} are not all there"
    return [params, imports, *reads], grade.index(spec.answer), grade.index(spec.check)


#: what a check's one message must look like (beyond the lab's own regex), in JupyterLab or in a shell
NO_TRACEBACK = r"Traceback|File \"|---->|Cell In\["
SHOW_CASE = r"\n  to look at it: from cluster_sim.checking import show_case; show_case\('[^']+'\)$"


def message_problems(lab: str, shown: str) -> list[str]:
    """What is wrong with the output of the check cell on the lab's wrong answer (empty: one clear message)."""
    spec, found = LABS[lab], []
    if not shown.startswith("CheckFailed: "):
        found.append("it does not start with 'CheckFailed: '")
    if not re.search(spec.wrong, shown, flags=re.S):
        found.append(f"it does not say {spec.wrong!r}")
    if re.search(NO_TRACEBACK, shown):
        found.append("it shows a traceback")
    if shown.count("CheckFailed") != 1:
        found.append("it holds more than one message")
    if not re.search(SHOW_CASE, shown):
        found.append("it names a case without the call that shows it")
    return [f"lab {lab}: the wrong answer's check output: {p}:\n{shown}" for p in found]
