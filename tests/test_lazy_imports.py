"""Importing the package loads no library that only a few functions use.

Every notebook kernel (a student's, papermill's, each nbgrader autograde's) imports the labs' packages
first: pymoo (Table 2's EVO baseline), scikit-learn (Lab 07's latency model, fitted by
``LatencyModel.fit``), scipy.stats (a t interval, a rank correlation, truncated noise), scipy.optimize (the LPs and
MILPs of Labs 02, 03, 06) and scipy.ndimage (Lab 07's clustering) are imported by the functions that use them, not by
every kernel (together about 1.6 s of each start; scipy.optimize and scipy.ndimage 0.09 and 0.04 s of CPU).
"""

from __future__ import annotations

import subprocess
import sys

LABS = ("engine", "shaper", "morpheus", "wing", "wing.scheduling", "stageopt", "rminer", "capstone", "claims",
        "predict", "checking", "ui")
ONLY_WHEN_USED = ("pymoo", "sklearn", "scipy.stats", "scipy.optimize", "scipy.ndimage", "dask", "distributed")


def test_importing_every_lab_loads_none_of_the_libraries_only_some_functions_use():
    code = ("import sys\n" + "".join(f"import cluster_sim.{lab}\n" for lab in LABS)
            + f"print(','.join(m for m in {ONLY_WHEN_USED!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", f"importing the labs loaded {done.stdout.strip()}"
