"""cluster_sim: an agent-based, interactive teaching suite on cluster resource management."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cluster_sim")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "unknown"

from .figure_watch import watch_when_asked as _watch_figures

_watch_figures()  # a no-op unless CLUSTER_SIM_LAYOUT_CHECK=on (the test suite's notebook runs): cluster_sim/figure_watch.py
