"""cluster_sim: an agent-based, interactive teaching suite on cluster resource management."""
