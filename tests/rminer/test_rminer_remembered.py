"""The memo of runs (``metrics_row``) hands out copies: a reader who edits a row changes no later call."""

from cluster_sim.rminer.config import RMinerConfig
from cluster_sim.rminer.experiments import metrics_row


def test_a_metrics_row_changed_by_its_reader_does_not_change_the_next_call():
    c = RMinerConfig.ci()
    row = metrics_row(c)
    want = dict(row)
    for k in row:
        row[k] = -1
    assert metrics_row(c) == want and all(not isinstance(v, (list, dict, set)) for v in want.values())
