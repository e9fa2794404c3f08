"""Labs extend the engine only through its documented seams, never through its private members."""

import ast
import functools
import importlib
import inspect
import textwrap
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "cluster_sim" / "engine"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@functools.cache
def privates_of(cls: type) -> set[str]:
    """The private members an engine class defines: its ``_x`` methods and the ``self._x`` it sets or uses."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    names = {n for n in vars(cls) if _is_private(n)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and _is_private(node.attr)):
            names.add(node.attr)
    return names


def _engine_classes(cls: type) -> list[type]:
    return [c for c in cls.__mro__ if c.__module__.startswith("cluster_sim.engine")]


@functools.cache
def engine_private_names() -> frozenset[str]:
    """Every private name the engine defines: module-level functions and classes, and its classes' members."""
    names = set()
    for p in ENGINE.glob("*.py"):
        module = importlib.import_module(f"cluster_sim.engine.{p.stem}" if p.stem != "__init__" else "cluster_sim.engine")
        for name, obj in vars(module).items():
            if _is_private(name) and getattr(obj, "__module__", None) == module.__name__:
                names.add(name)
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                names |= privates_of(obj)
    return frozenset(names)


def private_uses_in(source: str, namespace: dict, where: str = "") -> list[str]:
    """Uses of an engine private in ``source`` (a lab module whose globals are ``namespace``): in a class
    that derives from an engine class, any ``self._x`` that an engine class of its ancestry defines (a lab
    redefining the name does not make it its own: it would override the engine's); anywhere, any ``obj._x``
    on another object (not ``self``) whose name is an engine private."""
    engine_names = engine_private_names()
    found = []
    tree = ast.parse(source)
    lines = source.splitlines()

    def report(node, name):
        found.append(f"{where}:{node.lineno}: uses the engine's private {name!r}: {lines[node.lineno - 1].strip()}")

    in_class: dict[int, set[str]] = {}  # id of each node inside an engine-derived class -> its privates
    for cls_node in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        cls = namespace.get(cls_node.name)
        if not inspect.isclass(cls):
            continue
        inherited = set().union(*(privates_of(c) for c in _engine_classes(cls))) if _engine_classes(cls) else set()
        for node in ast.walk(cls_node):
            if isinstance(node, ast.FunctionDef) and node.name in inherited:
                report(node, node.name)
            in_class[id(node)] = inherited

    def check(node, obj, name):
        """``obj._name`` (or its getattr form): on ``self``, private if an engine ancestor defines it."""
        if not _is_private(name):
            return
        if isinstance(obj, ast.Name) and obj.id == "self":
            if name in in_class.get(id(node), set()):
                report(node, name)
        elif name in engine_names:
            report(node, name)

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            check(node, node.value, node.attr)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            check(node, node.args[0], node.args[1].value)
        elif isinstance(node, ast.ImportFrom) and "engine" in (node.module or "").split("."):
            for alias in node.names:  # ``from ..engine.placement import _fitting``
                if _is_private(alias.name):
                    report(node, alias.name)
    return found


def private_uses() -> list[str]:
    found = []
    for p in sorted((ROOT / "cluster_sim").rglob("*.py")):
        if ENGINE in p.parents or p.name == "__main__.py":
            continue
        module = importlib.import_module(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))
        found += private_uses_in(p.read_text(), vars(module), str(p.relative_to(ROOT)))
    return found


def test_no_lab_reaches_into_a_private_member_of_the_engine():
    found = private_uses()
    assert not found, "use the engine's documented seams (cluster_sim/engine/__init__.py):\n" + "\n".join(found)


@pytest.mark.parametrize("source, name", [
    # a scheduler calling the engine's private step (what rminer did), even when it defines one of its own
    ("class S(Scheduler):\n    def go(self):\n        self._next()\n", "_next"),
    ("class S(Scheduler):\n    def _next(self):\n        pass\n", "_next"),
    # reaching into the model or the central state from outside
    ("def f(model):\n    return model._queued\n", "_queued"),
    ("def f(model):\n    model.csv._release_waiters.clear()\n", "_release_waiters"),
    # issue 31: by another road than ``obj._x``: an engine module's private imported by name (and called
    # bare), or named in a string to getattr/setattr/hasattr
    ("from cluster_sim.engine.placement import _fitting\n", "_fitting"),
    ("from cluster_sim.engine import placement\ndef f(free, d):\n    return placement._fitting(free, d)\n",
     "_fitting"),
    ("def f(model):\n    return getattr(model, '_queued')\n", "_queued"),
    ("class S(Scheduler):\n    def go(self):\n        getattr(self, '_next')()\n", "_next"),
    ("def f(csv):\n    setattr(csv, '_release_waiters', [])\n", "_release_waiters"),
])
def test_the_check_sees_a_private_use_whoever_defines_the_name(source, name):
    from cluster_sim.engine import Scheduler

    namespace = {"Scheduler": Scheduler}
    exec(compile(source, "<lab>", "exec"), namespace)
    found = private_uses_in(source, namespace, "lab.py")
    assert found and all(repr(name) in f for f in found), found


def test_a_lab_class_of_its_own_may_use_names_the_engine_also_uses():
    # a class not derived from an engine class keeps its own private members
    source = "class Pool:\n    def __init__(self):\n        self._waiting = []\n"
    namespace = {}
    exec(compile(source, "<lab>", "exec"), namespace)
    assert "_waiting" in engine_private_names() and not private_uses_in(source, namespace)


def test_both_scheduler_families_implement_the_protocol():
    from cluster_sim.engine import CapacityClusterModel, ClusterConfig, ClusterModel, SchedulerProtocol

    omega = ClusterModel(ClusterConfig.ci(), jobs=[])
    omega.start()
    yarn = CapacityClusterModel(ClusterConfig.ci(), jobs=[])
    for scheduler in (*omega.schedulers, yarn.capacity_scheduler):
        assert isinstance(scheduler, SchedulerProtocol), type(scheduler)


def test_every_seam_the_contract_names_exists():
    from cluster_sim.engine import EVENTS, CapacityClusterModel, ClusterConfig, ClusterModel, JobManager, Scheduler

    doc = (ENGINE / "__init__.py").read_text()
    model = ClusterModel(ClusterConfig.ci(), jobs=[])
    for name in ("schedule", "schedule_every", "callback", "start", "make_jobs", "make_schedulers", "route",
                 "task_started", "task_ended", "job_finished", "job_failed", "queue_changed", "view_synced",
                 "check_invariants", "check_ledger", "check_tasks", "settle", "after_event"):
        assert f"{name}(" in doc and callable(getattr(model, name)), name
    for name in ("queue_key", "decide", "choose", "on_blocked", "requeue"):
        assert f"{name}(" in doc and callable(getattr(Scheduler, name)), name
    for name in ("admit", "release_ready", "release_stage"):
        assert f"{name}(" in doc and callable(getattr(JobManager, name)), name
    for name in ("commit", "kill", "evict", "subscribe"):
        assert f"csv.{name}(" in doc and callable(getattr(model.csv, name)), name
    for name in EVENTS:
        assert f"{name}(" in doc, name
    assert CapacityClusterModel.__name__ in doc and "SchedulerProtocol" in doc
    # the composition of the two families: the queue layer's seams
    from cluster_sim.engine import QueuedModel, QueueLayer, TokenJobManager

    assert "make_queue_layer(" in doc and callable(QueuedModel.make_queue_layer)
    for name in ("request", "tokens_to_release"):
        assert f"{name}(" in doc and callable(getattr(TokenJobManager, name)), name
    for name in ("reserve", "top_up", "take_back"):
        assert f"layer.{name}(" in doc and callable(getattr(QueueLayer, name)), name
