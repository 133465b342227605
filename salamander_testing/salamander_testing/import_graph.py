"""The project's import graph, read from the sources with `ast` (nothing is imported or run).

`project_graph(repo)` returns every module of every ament_python package of the repository with the
modules it imports: at module level, inside functions (lazy imports) and under ``if TYPE_CHECKING:``
alike, since each of them ties one module to another. The architecture tests check the package rules
and the absence of cycles on it (test/test_architecture.py); docs/architecture.md says what the rules
are and why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = (
    "salamander_control",
    "salamander_sim",
    "salamander_behavior",
    "salamander_teleop",
    "salamander_view",
    "salamander_bringup",
    "salamander_testing",
)
"""The ament_python packages of the repository, each at ``<repo>/<name>/<name>``."""


@dataclass
class Module:
    """One source module: its dotted name, its file, what it imports and which of those are the project's."""

    name: str
    path: Path
    imports: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)

    @property
    def package(self) -> str:
        """The top-level package the module belongs to."""
        return self.name.split(".")[0]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """Dotted names imported anywhere in `tree`; ``from a import b`` yields ``a.b`` as well as ``a``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = name.split(".")
                drop = node.level - 1 if is_package else node.level
                base = base[: len(base) - drop] if drop else base
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def read_package(repo: Path, package: str, *, tests: bool = False) -> dict[str, Module]:
    """The modules of one package's sources (or, with `tests`, of its test folder) by dotted name."""
    root = repo / package
    top = root / "test" if tests else root / package
    modules: dict[str, Module] = {}
    for path in sorted(top.rglob("*.py")):
        name = _module_name(path, root if not tests else repo)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        modules[name] = Module(name, path, _imports(tree, name, path.name == "__init__.py"))
    return modules


def project_graph(repo: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Module]:
    """Every source module of `packages`, its imports narrowed to the project's own modules."""
    modules: dict[str, Module] = {}
    for package in packages:
        modules.update(read_package(repo, package))
    for module in modules.values():
        # "from pkg import name" names a module only when that module exists; keep the real ones.
        module.links = {target for target in module.imports if target in modules} - {module.name}
    return modules


def third_party(modules: Mapping[str, Module], own: Iterable[str] = PACKAGES) -> set[str]:
    """Top-level names imported by `modules` that are neither the project's nor the standard library's."""
    import sys

    own = set(own) | {"salamander_msgs"}
    tops = {target.split(".")[0] for module in modules.values() for target in module.imports}
    return {top for top in tops if top and top not in own and top not in sys.stdlib_module_names}


def cycles(modules: Mapping[str, Module]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted, biggest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative Tarjan: (node, iterator over its successors).
        work = [(start, iter(sorted(modules[start].links)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(modules[succ].links))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for name in sorted(modules):
        if name not in index:
            visit(name)
    return sorted(found, key=len, reverse=True)


def package_edges(modules: Mapping[str, Module]) -> dict[tuple[str, str], list[str]]:
    """Imports that cross packages: (importer package, imported package) -> ['a.b -> c.d', ...]."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module in modules.values():
        for target in sorted(module.links):
            other = target.split(".")[0]
            if other != module.package:
                edges.setdefault((module.package, other), []).append(f"{module.name} -> {target}")
    return edges
