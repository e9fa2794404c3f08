"""The exercise generator: answers and hidden tests stripped, orphans pruned only when asked."""

import shutil
from pathlib import Path

import nbformat

from cluster_sim.exercises import generate, student_version

ROOT = Path(__file__).resolve().parent.parent


def test_student_version_strips_answers_and_hidden_tests():
    nb = student_version(nbformat.read(ROOT / "solutions" / "00_cluster_sim_tour.ipynb", as_version=4))
    text = nbformat.writes(nb)
    assert "raise NotImplementedError()" in text
    assert "### BEGIN SOLUTION" not in text and "### BEGIN HIDDEN TESTS" not in text
    assert "leftover.argmin()" not in text  # the answer itself is gone


def test_generate_prunes_orphans_only_when_asked(tmp_path):
    solutions, exercises = tmp_path / "solutions", tmp_path / "exercises"
    solutions.mkdir()
    exercises.mkdir()
    shutil.copy(ROOT / "solutions" / "00_cluster_sim_tour.ipynb", solutions)
    (exercises / "NN_orphan.ipynb").write_text("{}")
    assert generate(solutions, exercises, prune=False) == [exercises / "00_cluster_sim_tour.ipynb"]
    assert (exercises / "NN_orphan.ipynb").exists()
    assert generate(solutions, exercises, check=True) == [exercises / "NN_orphan.ipynb"]
    generate(solutions, exercises)
    assert not (exercises / "NN_orphan.ipynb").exists()
    assert generate(solutions, exercises, check=True) == []
