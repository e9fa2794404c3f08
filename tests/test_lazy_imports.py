"""Importing the package loads no library that only a few functions use.

Every notebook kernel (a student's, papermill's, each nbgrader autograde's) imports the labs' packages
first: pymoo (Table 2's EVO baseline), scikit-learn (Lab 07's latency model, fitted by
``LatencyModel.fit``), scipy.stats (a t interval, a rank correlation, truncated noise), scipy.optimize (the LPs and
MILPs of Labs 02, 03, 06) and scipy.ndimage (Lab 07's clustering) are imported by the functions that use them, not by
every kernel (together about 1.6 s of each start; scipy.optimize and scipy.ndimage 0.09 and 0.04 s of CPU). Numba
(LowCost's compiled search, about 0.4 s) is imported by the first LowCost search.
"""

from __future__ import annotations

import subprocess
import sys

LABS = ("engine", "shaper", "morpheus", "wing", "wing.scheduling", "stageopt", "rminer", "capstone", "claims",
        "predict", "checking", "ui")
ONLY_WHEN_USED = ("pymoo", "sklearn", "scipy.stats", "scipy.optimize", "scipy.ndimage", "dask", "distributed",
                  "numba")


def test_importing_every_lab_loads_none_of_the_libraries_only_some_functions_use():
    code = ("import sys\n" + "".join(f"import cluster_sim.{lab}\n" for lab in LABS)
            + f"print(','.join(m for m in {ONLY_WHEN_USED!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", f"importing the labs loaded {done.stdout.strip()}"


#: lab packages whose exercises draw nothing (Labs 04, 06, 07): their figures are imported by their first use
#: (cluster_sim/lazy.py), so each nbgrader autograde of those labs, a fresh kernel, does not load matplotlib
DRAW_NOTHING = ("wing", "stageopt", "stageopt.experiments", "stageopt.checks")


def test_the_labs_whose_exercises_draw_nothing_load_matplotlib_only_when_a_figure_is_asked_for():
    code = ("import sys\n" + "".join(f"import cluster_sim.{lab}\n" for lab in DRAW_NOTHING)
            + "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'PIL') if m in sys.modules))\n"
            + "import cluster_sim.wing as w, cluster_sim.stageopt as s, cluster_sim.stageopt.experiments as e\n"
            + "from cluster_sim.wing import plot_fig2\n"
            + "print(plot_fig2 is w.plot_fig2, s.plot_placement is e.plot_placement, s.plot_placement.__module__,\n"
            + "      'plot_fig5' in dir(w), 'matplotlib' in sys.modules)\n"
            + "print(sorted(set(w.__all__) - set(dir(w))), sorted(set(s.__all__) - set(dir(s))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, missing = done.stdout.splitlines()
    assert before == "[]", f"importing {DRAW_NOTHING} loaded {before}"
    assert after == "True True cluster_sim.stageopt.plots True True", after  # the figures are there when asked for
    assert missing == "[] []", f"names in __all__ that dir() does not show: {missing}"
    unknown = subprocess.run([sys.executable, "-c", "import cluster_sim.wing as w; w.plot_nothing"],
                             capture_output=True, text=True)
    assert "module 'cluster_sim.wing' has no attribute 'plot_nothing'" in unknown.stderr
