"""A notebook's panels built in-process run only the cells the panel cells need (issue 24: each notebook's
cells ran twice at ``default`` per suite run, once in papermill and once up to its last panel here).

A cell the panels do not need (a table, a figure, a study no panel reads) is skipped; a cell that binds or
changes a name a needed cell reads is kept, however far back."""

import nbformat

from cluster_sim.ui.inprocess import cells_needed, notebook_panels

PANEL = ("if interactive:\n"
         "    panel = ConfigPanel(config, run, plot_overview, fields=['load'])\n")


def test_cells_the_panel_does_not_read_are_skipped():
    cells = ["preset = 'default'\ninteractive = True",                       # 0 parameters
             "from cluster_sim.engine import ClusterConfig, run\nfrom cluster_sim.ui import ConfigPanel, plot_overview\n"
             "config = ClusterConfig.from_preset(preset)",                      # 1 set-up: needed
             "result = run(config)\nplot_overview(result)",                    # 2 a figure: skipped
             "table = result.table\ntable",                                     # 3 reads 2, read by none
             PANEL]
    assert cells_needed(cells, [4], parameters=0) == [0, 1, 4]


def test_a_cell_that_changes_or_rebinds_a_needed_name_is_kept():
    cells = ["interactive = True",
             "import numpy as np\nfields = ['load']\nsettings = {}",
             "fields.append('seed')",               # a method call on a needed name: it may change it
             "settings['x'] = np.mean([1, 2])",     # an item stored into a needed name
             "np.mean([3.0])",                      # a call on a module changes nothing: skipped
             "config = make(settings)",             # binds config, reads settings and make
             "def make(s):\n    return s",          # after config: not needed by it
             "panel = ConfigPanel(config, fields=fields)"]
    assert cells_needed(cells, [7], parameters=0) == [0, 1, 2, 3, 5, 7]


def test_a_skipped_cell_does_not_run(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("preset = 'default'\ninteractive = True", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("from cluster_sim.engine import ClusterConfig, run\n"
                                          "from cluster_sim.ui import ConfigPanel, plot_overview\n"
                                          "config = ClusterConfig.ci()"),
                nbformat.v4.new_markdown_cell("a study no panel reads"),
                nbformat.v4.new_code_cell("raise RuntimeError('a cell the panel does not need ran')"),
                nbformat.v4.new_code_cell(PANEL)]
    path = tmp_path / "lab.ipynb"
    nbformat.write(nb, path)
    built = notebook_panels(path)
    assert len(built) == 1 and built[0].image is not None
