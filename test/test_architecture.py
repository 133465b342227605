"""The architecture as docs/architecture.md states it, checked on the sources.

- who may import whom (the package rules) and no import cycles, on the import graph read with `ast`;
- every module named in docs/architecture.md, in its package's and folder's row;
- every package.xml names the rosdep key of everything its package and its tests import.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from salamander_testing import REPO
from salamander_testing.import_graph import (
    PACKAGES,
    Module,
    cycles,
    package_edges,
    project_graph,
    read_package,
)
from salamander_testing.package_deps import declared, rosdep_key

ARM = "salamander_control"
SIM = "salamander_sim"
BRINGUP = "salamander_bringup"
KIT = "salamander_testing"

ALLOWED = {
    ARM: set(),
    SIM: {ARM},
    "salamander_behavior": {ARM},
    "salamander_teleop": {ARM},
    "salamander_view": {ARM},
    BRINGUP: {ARM},
    KIT: set(PACKAGES) - {KIT},
}
"""Project packages each package's code may import (docs/architecture.md, "Who may import whom")."""


@pytest.fixture(scope="module")
def graph() -> dict[str, Module]:
    return project_graph(REPO)


def test_every_package_imports_only_what_the_rules_allow(graph: dict[str, Module]) -> None:
    assert set(ALLOWED) == set(PACKAGES)
    broken = [
        f"{src} may not import {dst}: " + "; ".join(lines[:3])
        for (src, dst), lines in sorted(package_edges(graph).items())
        if dst not in ALLOWED[src]
    ]
    assert not broken, "\n".join(broken)


def test_the_graph_sees_imports_of_every_kind(tmp_path: Path) -> None:
    """Module level, relative, inside a function and for type checking: each ties two modules."""
    pkg = tmp_path / "pkg" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.c import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n")
    graph = project_graph(tmp_path, ["pkg"])
    assert {name: sorted(m.links) for name, m in graph.items()} == {
        "pkg": [],
        "pkg.a": ["pkg", "pkg.b"],
        "pkg.b": ["pkg.c"],
        "pkg.c": ["pkg.a"],
    }
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert package_edges(graph) == {}


def test_no_import_cycles(graph: dict[str, Module]) -> None:
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle() -> None:
    modules = {name: Module(name, Path(name)) for name in ("a", "b", "c", "d")}
    modules["a"].links = {"b"}
    modules["b"].links = {"c"}
    modules["c"].links = {"a"}
    modules["d"].links = {"a"}
    assert cycles(modules) == [["a", "b", "c"]]


def _doc_rows() -> dict[tuple[str, str], str]:
    """(package, folder) -> the 'what it holds' cell of docs/architecture.md's table."""
    rows: dict[tuple[str, str], str] = {}
    package = ""
    for line in (REPO / "docs" / "architecture.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or set(cells[0]) <= {"-"} and cells[0]:
            continue
        package = cells[0] or package
        folder = "" if cells[1] == "(top level)" else cells[1].strip("`")
        rows[(package, folder)] = cells[2]
    return rows


def test_docs_architecture_names_every_module_in_its_folder_row() -> None:
    rows = _doc_rows()
    missing = []
    for package in PACKAGES:
        for path in sorted((REPO / package / package).rglob("*.py")):
            if path.name == "__init__.py":
                continue
            rel = path.relative_to(REPO / package / package)
            folder = "" if len(rel.parts) == 1 else "/".join(rel.parts[:-1]) + "/"
            text = rows.get((package, folder))
            if text is None:
                missing.append(f"{package}: no row for folder {folder or '(top level)'}")
            elif f"`{rel.name}`" not in text and f"`{rel.stem}`" not in text:
                missing.append(f"{package}/{rel}: not named in the row of {folder or '(top level)'}")
    assert not missing, "docs/architecture.md:\n" + "\n".join(missing)


def test_docs_architecture_names_no_folder_that_is_gone() -> None:
    stale = [
        f"{package} {folder}"
        for package, folder in _doc_rows()
        if package in PACKAGES and not (REPO / package / package / folder).is_dir()
    ]
    assert not stale


def _tops(modules: dict[str, Module], package: str) -> set[str]:
    names = {target.split(".")[0] for module in modules.values() for target in module.imports}
    return {n for n in names if n and n != package and n not in sys.stdlib_module_names}


@pytest.mark.parametrize("package", PACKAGES)
def test_package_xml_names_what_the_package_imports(package: str) -> None:
    keys = declared(REPO / package / "package.xml")
    runtime = {rosdep_key(top) for top in _tops(read_package(REPO, package), package)}
    assert runtime - keys["exec"] == set(), "imported but not an exec_depend"
    assert keys["exec"] - runtime == set(), "an exec_depend nothing imports"
    tests = {rosdep_key(top) for top in _tops(read_package(REPO, package, tests=True), package)}
    # The test kit (and a package that depends on this one) cannot be named: colcon refuses the cycle.
    cyclic = {KIT} | {p for p in PACKAGES if package in ALLOWED[p]}
    assert tests - keys["exec"] - keys["test"] - cyclic == set(), "imported by the tests, not declared"


def test_every_package_is_built_and_tested() -> None:
    setup = (REPO / "scripts" / "setup.sh").read_text()
    pytest_ini = (REPO / "pytest.ini").read_text()
    for package in PACKAGES:
        assert re.search(rf"\b{package}\b", setup), package
        assert f"{package}/test" in pytest_ini, package
