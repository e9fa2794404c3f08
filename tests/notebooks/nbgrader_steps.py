"""A course's nbgrader steps in one process: ``python nbgrader_steps.py ROOT ASSIGNMENT HANG``.

tests/notebooks/test_nbgrader.py starts it in the course folder: it releases the assignment
(``generate_assignment``), prints :data:`RELEASED` and waits for a line on stdin while the test writes the
students' submissions from the release, then grades every student (``autograde``, students created) and writes
every student's feedback (``generate_feedback``). Each step is nbgrader's own, through its Python API
(:class:`nbgrader.apps.api.NbGraderAPI`, what the Formgrader runs): the same converters, preprocessors and
gradebook as the ``nbgrader`` command, whose three processes each paid about 2.8 s of CPU to import nbgrader,
nbconvert and nbformat. The log is nbgrader's, one line per message with its level, on stdout next to what the
kernels and Python's warnings write (run with ``-u`` and stderr joined to stdout, so the lines keep their order),
each step after a ``nbgrader step: NAME`` line. A step that fails prints its traceback and exits 1; a step still
running after HANG seconds ends the process (a guard against a hang, never a speed check).
"""

from __future__ import annotations

import faulthandler
import logging
import sys

#: printed once the release is written; the process then reads one line from stdin before it grades
RELEASED = "nbgrader step: released, waiting for the submissions"


def main(root: str, assignment: str, hang: float) -> int:
    faulthandler.dump_traceback_later(hang, exit=True)
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    api = NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=root).load_config())
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    api.log.addHandler(handler)
    steps = {
        "generate_assignment": lambda: api.generate_assignment(assignment, force=True, create=True),
        "autograde": lambda: api.autograde(assignment, "*", force=True, create=True),  # every student submitted
        "generate_feedback": lambda: api.generate_feedback(assignment, force=True),  # every student autograded
    }
    for name, step in steps.items():
        print(f"nbgrader step: {name}", flush=True)
        result = step()
        if not result["success"]:
            print(f"nbgrader {name} failed:\n{result.get('error', '')}", flush=True)
            return 1
        if name == "generate_assignment":
            print(RELEASED, flush=True)
            if not sys.stdin.readline():
                print("stdin closed before the submissions were written", flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
