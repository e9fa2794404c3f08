"""CONTRIBUTING's "Adding a lab" matches the code: the template package has the modules it names, its model
calls super().__init__() first, and the sketch of the engine's seams runs."""

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = re.search(r"## Adding a lab\n(.*?)\n## ", (ROOT / "CONTRIBUTING.md").read_text(), re.S).group(1)


def test_the_template_package_has_the_modules_the_section_names():
    package = re.search(r"Follow `cluster_sim/([\w/]+)/` \(the template", SECTION).group(1)
    prose = SECTION.split("```")[0]
    named = set(re.findall(r"`(\w+\.py)`", prose))
    assert {"config.py", "model.py", "experiments.py", "plots.py", "__init__.py"} <= named
    missing = sorted(n for n in named if not (ROOT / "cluster_sim" / package / n).exists())
    assert not missing, f"CONTRIBUTING names {missing}, which cluster_sim/{package}/ does not have"
    module = importlib.import_module("cluster_sim." + package.replace("/", "."))
    for name in ("run",):
        assert hasattr(module, name), f"cluster_sim.{package} does not export {name}"
    # its models construct as in Mesa: super().__init__() is the first statement of __init__
    tree = ast.parse((ROOT / "cluster_sim" / package / "model.py").read_text())
    inits = [f for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name.endswith("Model")
             for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
    assert inits
    for f in inits:
        body = [s for s in f.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        assert "super().__init__" in ast.unparse(body[0]), ast.unparse(body[0])


def test_the_sketch_runs_against_the_engine():
    from cluster_sim.config import Config, field_of, param, seed_param
    from cluster_sim.engine import CapacityClusterModel, ClusterConfig, Job, JobManager, QueueSpec, Stage, Task

    class MyProbe:
        def __init__(self, model):
            self.released = []

        def on_release(self, task, t):
            self.released.append(t)

    sketch = SECTION.split("```python\n")[1].split("```")[0]
    namespace = dict(Config=Config, field_of=field_of, param=param, seed_param=seed_param, dataclass=dataclass,
                     ClusterConfig=ClusterConfig, CapacityClusterModel=CapacityClusterModel, JobManager=JobManager,
                     MyProbe=MyProbe)
    exec(compile(sketch, "CONTRIBUTING.md", "exec"), namespace)
    config = namespace["MyConfig"]().replace(seed=4)
    cluster = config.cluster_config()
    assert (cluster.machines, cluster.seed, cluster.horizon) == (40, 4, 600.0)
    model_class = namespace["MyModel"]
    model_class.sample = lambda self: None
    job = Job(id=0, arrival=1.0)
    job.stages.append(Stage(0, [Task(0, job, 0, (1, 1), 3.0)]))
    model = model_class(ClusterConfig.ci(), [QueueSpec("q")], [job], extra=1, check_every_event=True)
    model.run_until(20.0)
    assert job.tasks[0].released == 6.0 and job.tasks[0].finish == 9.0
