"""Morpheus is one subpackage per lab (issue 26) whose pure functions check their arguments with the shared
kit (issue 31): the layout and the kit's use are read from the source, so a module that grows past the
limit or a lab that writes its own range check again fails here."""

from __future__ import annotations

import ast
import importlib
import pathlib
import re

import pytest

import cluster_sim.morpheus as morpheus

ROOT = pathlib.Path(morpheus.__file__).parent
LABS = {"slo": "02", "packing": "03"}
#: a lab's parts, as the template lab (cluster_sim/wing/scheduling) has them
PARTS = ("config", "experiments", "claims", "plots", "predictions")
MAX_LINES = 520  # "about 500": a module past it does more than one job
#: the generic argument rules that cluster_sim.validate owns (a lab must not define its own copy)
GENERIC = re.compile(r"^def (check_alpha|check_nonnegative|check_percentile|check_columns|check_seconds|check_names"
                     r"|_whole|_whole_vector|_number)\(", re.M)


def modules():
    return sorted(p for p in ROOT.rglob("*.py"))


@pytest.mark.parametrize("lab", sorted(LABS))
def test_each_lab_is_a_subpackage_with_its_config_experiments_claims_plots_and_predictions(lab):
    missing = [part for part in PARTS if not (ROOT / lab / f"{part}.py").is_file()]
    assert not missing, f"cluster_sim/morpheus/{lab}/ (Lab {LABS[lab]}) lacks {missing}"
    pkg = importlib.import_module(f"cluster_sim.morpheus.{lab}")
    assert callable(pkg.run) and pkg.claims_table, f"cluster_sim.morpheus.{lab} must export run and claims_table"


def test_no_module_is_at_the_top_level_but_the_package_and_no_name_says_packing_twice():
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert top == ["__init__.py"], f"modules outside the labs' subpackages: {top}"
    suffixed = [str(p.relative_to(ROOT)) for p in modules() if p.stem.endswith("_packing")]
    assert not suffixed, f"modules named after their lab inside it: {suffixed}"


def test_no_module_is_over_about_500_lines():
    long = {str(p.relative_to(ROOT)): n for p in modules() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by job): {long}"


def test_generic_argument_checks_come_from_cluster_sim_validate():
    own = {str(p.relative_to(ROOT)): GENERIC.findall(p.read_text()) for p in modules()}
    own = {k: v for k, v in own.items() if v}
    assert not own, f"argument checks written again instead of cluster_sim.validate's: {own}"
    named_checks = [str(p.relative_to(ROOT)) for p in modules() if p.stem == "checks"]
    assert not named_checks, f"'checks' means exercise checks in this project: {named_checks}"


def test_the_window_search_and_its_helpers_live_in_one_module():
    """lowcost_window and the helpers it calls stay together in cluster_sim/morpheus/packing/lowcost.py (one place to speed up)."""
    tree = ast.parse((ROOT / "packing" / "lowcost.py").read_text())
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"lowcost_window", "_max_fit", "_best_end_point", "_no_room", "end_points", "_check_stages"} <= defined


def test_the_paper_package_still_exports_both_labs():
    from cluster_sim.morpheus import MorpheusConfig, SLOConfig, packing, run, slo

    assert morpheus.fit_skyline is slo.fit_skyline and morpheus.PeriodicJob is packing.PeriodicJob
    assert morpheus.MorpheusConfig is packing.MorpheusConfig and morpheus.SLOConfig is slo.SLOConfig
    assert {SLOConfig, MorpheusConfig} and run is morpheus.run
