"""Settings for the whole test session.

Lab sweeps go through :func:`cluster_sim.sweep.run_grid`, which caches results on disk. A test must
exercise the code, not read what an earlier run left in the user's cache, so each session (each
xdist worker, and the notebook kernels it starts, which inherit the environment) gets an empty
cache of its own.
"""

import os
import tempfile

os.environ["CLUSTER_SIM_SWEEP_CACHE"] = tempfile.mkdtemp(prefix="cluster_sim-sweeps-")
# Sweeps run in the process that asks for them: the two xdist workers already use both cores, and a
# notebook's sweep that starts its own Dask cluster under that load only adds start-up time. Tests of
# the Dask routes pass client= explicitly.
os.environ.setdefault("CLUSTER_SIM_SWEEP_CLIENT", "inprocess")
