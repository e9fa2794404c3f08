"""cluster_sim: an agent-based, interactive teaching suite on cluster resource management."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cluster_sim")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "unknown"
