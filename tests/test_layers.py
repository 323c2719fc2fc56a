"""The layers of docs/architecture.md, read from every module's imports (including those inside functions).

runtime/ imports nothing of actors/ (not even the names in actors/__init__.py); bus/ knows only the shared vocabulary (bus/messages.py builds its messages
from actors/common); an actor's package imports no other actor's, only actors/common; actors/common
imports no actor; only actors/jobs/ brings several actors together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = "common"
JOBS = "jobs"


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def actor_packages_imported(path: Path) -> set[str]:
    """The actors.<x> packages a module imports (``actors.env.batch`` -> ``env``)."""
    return {name.split(".")[1] for name in imported_modules(path) if name.startswith("actors.") and name.count(".") >= 1}


def python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def actor_packages() -> list[str]:
    return sorted(p.name for p in (ROOT / "actors").iterdir() if (p / "__init__.py").is_file() and p.name not in (SHARED, JOBS))


def test_the_layer_check_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\n\ndef f():\n    from actors.env.batch import EnvBatch\n    import actors.policy.learner\n")
    assert actor_packages_imported(module) == {"env", "policy"}


def test_config_imports_nothing_above_it():
    """config/ (the tree loader and the checks every section uses) is the ground floor: it imports no actor, not
    even the shared vocabulary, nor the bus or the runtime. The root Config that lists every section is the jobs'
    (actors/jobs/config.py)."""
    offenders = {str(p.relative_to(ROOT)): sorted(name for name in imported_modules(p) if name.split(".")[0] in ("actors", "bus", "runtime"))
                 for p in python_files("config")}
    assert {path: names for path, names in offenders.items() if names} == {}


def test_runtime_imports_no_actor_not_even_the_shared_vocabulary_nor_the_names_in_actors_init():
    """Where a process runs and how it starts come from the settings (runtime.loop_actors, llm_actors) and the actor's
    class, so runtime/ imports nothing of actors/, ``from actors import NAME`` included."""
    offenders = {str(p.relative_to(ROOT)): sorted(name for name in imported_modules(p) if name.split(".")[0] == "actors")
                 for p in python_files("runtime")}
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_runtime_check_sees_an_import_of_the_actors_package_itself(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from actors import REASONER\n")
    assert imported_modules(module) == {"actors"} and not actor_packages_imported(module)


def test_the_bus_reads_only_the_shared_vocabulary():
    offenders = {str(p.relative_to(ROOT)): sorted(actor_packages_imported(p) - {SHARED}) for p in python_files("bus")}
    assert {path: packages for path, packages in offenders.items() if packages} == {}


def test_the_shared_vocabulary_imports_no_actor():
    offenders = {str(p.relative_to(ROOT)): sorted(actor_packages_imported(p) - {SHARED}) for p in python_files("actors/common")}
    assert {path: packages for path, packages in offenders.items() if packages} == {}


@pytest.mark.parametrize("actor", actor_packages())
def test_an_actor_imports_no_other_actor(actor):
    offenders = {str(p.relative_to(ROOT)): sorted(actor_packages_imported(p) - {actor, SHARED})
                 for p in python_files(f"actors/{actor}")}
    assert {path: packages for path, packages in offenders.items() if packages} == {}


# ---------------------------------------------------------------------- transitive imports and cycles
#
# What runs when a module is imported: its imports (inside functions too, which run when called, but not those
# under ``if TYPE_CHECKING:``), ``from pkg import module`` as that module, and the __init__ of every package above
# an imported module. A layer is broken as much by a route through another module as by a direct import.

LAYERED_TOPS = ("actors", "bus", "runtime", "config")

ALLOWED_ROUTES: dict[str, str] = {}
"""importer -> why its imports of actor packages are not followed by the transitive check."""

ALLOWED_CYCLES: dict[frozenset[str], str] = {}
"""Import cycles known and not yet removed, each with its reason."""


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    nodes: set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"):
            nodes.update(id(inner) for inner in ast.walk(node))
    return nodes


def runtime_imports(path: Path, modules: set[str], type_hints: bool = False) -> set[str]:
    """The project modules importing ``path`` runs (or may run, from a function); TYPE_CHECKING imports left out
    unless ``type_hints``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped = set() if type_hints else _type_checking_nodes(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)  # from pkg import module
    return names & modules


def import_graph(root: Path, tops: tuple[str, ...] = LAYERED_TOPS, type_hints: bool = False) -> dict[str, set[str]]:
    paths = {module_name(root, path): path for top in tops for path in sorted((root / top).rglob("*.py"))}
    return {name: runtime_imports(path, set(paths), type_hints) for name, path in paths.items()}


def packages_above(name: str, graph: dict[str, set[str]]) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))} & graph.keys()


def reachable(graph: dict[str, set[str]], start: str, allowed: dict[str, str]) -> dict[str, str]:
    """Every module importing ``start`` runs, each with the module that imported it (imports of ``allowed``
    importers into actor packages not followed)."""
    came_from: dict[str, str] = {start: ""}
    todo = [start]
    while todo:
        module = todo.pop()
        for target in sorted(graph[module] | packages_above(module, graph)):
            if target in came_from or (module in allowed and actor_package_of(target)):
                continue
            came_from[target] = module
            todo.append(target)
    return came_from


def actor_package_of(module: str) -> str:
    """``actors.env.batch`` -> ``env``; '' outside an actor package (actors/common, actors/jobs, bus, ...)."""
    parts = module.split(".")
    if parts[0] != "actors" or len(parts) < 2 or parts[1] in (SHARED, JOBS) or not (ROOT / "actors" / parts[1]).is_dir():
        return ""
    return parts[1]


def route(came_from: dict[str, str], module: str) -> str:
    steps = [module]
    while came_from[steps[-1]]:
        steps.append(came_from[steps[-1]])
    return " -> ".join(reversed(steps))


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan), each a set of modules that import each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(frozenset(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def test_the_transitive_check_follows_functions_submodules_and_package_inits_but_not_type_checking(tmp_path):
    pkg = tmp_path / "actors"
    (pkg / "env").mkdir(parents=True)
    (pkg / "common").mkdir()
    for init in ("__init__.py", "env/__init__.py", "common/__init__.py"):
        (pkg / init).write_text("")
    (pkg / "common" / "a.py").write_text("def f():\n    from actors.common import b\n")
    (pkg / "common" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import actors.common.a\nimport actors.common.c\n")
    (pkg / "common" / "c.py").write_text("from actors.common import b\n")
    (pkg / "env" / "x.py").write_text("import actors.common.a\n")
    (pkg / "common" / "d.py").write_text("from actors.env import x\n")
    graph = import_graph(tmp_path, ("actors",))

    assert "actors.common.b" in reachable(graph, "actors.common.a", {})
    assert "actors.env.x" in reachable(graph, "actors.common.d", {})
    assert "actors.env" in reachable(graph, "actors.common.d", {})  # the package's __init__ runs first
    assert import_cycles(graph) == [frozenset({"actors.common.b", "actors.common.c"})]  # a <-> b only under TYPE_CHECKING


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT)


@pytest.mark.parametrize("layer", ["config", "runtime", "bus", "actors.common"])
def test_no_import_runs_from_config_runtime_bus_or_common_into_an_actor_package_not_even_through_another_module(graph, layer):
    offenders = {}
    for module in sorted(name for name in graph if name == layer or name.startswith(layer + ".")):
        came_from = reachable(graph, module, ALLOWED_ROUTES)
        reached = sorted(name for name in came_from if actor_package_of(name))
        if reached:
            offenders[module] = route(came_from, reached[0])
    assert offenders == {}


COMPOSITION_ROOT = "actors.jobs.config"
"""The root Config: every actor's sections assembled, loaded and validated for a job."""

JOBS_IMPORTERS: dict[str, str] = {}
"""Modules outside actors/jobs/ that may reach the jobs layer, each with its reason (none: bin/ and the tests start jobs)."""


def test_nothing_below_the_jobs_reaches_them_not_even_through_another_module(graph):
    """The jobs (actors/jobs/) stand on the top floor: no module of config/, bus/, runtime/ or an actor package
    imports them, directly or through another module; an actor reads its own settings (Actor.settings_type),
    never the root Config (actors/jobs/config.py)."""
    offenders = {}
    for module in sorted(name for name in graph if name.split(".")[:2] != ["actors", JOBS] and name not in JOBS_IMPORTERS):
        came_from = reachable(graph, module, {})
        reached = sorted(name for name in came_from if name.split(".")[:2] == ["actors", JOBS])
        if reached:
            offenders[module] = route(came_from, reached[0])
    assert offenders == {}


def test_the_composition_root_is_a_jobs_module(graph):
    assert COMPOSITION_ROOT in graph and COMPOSITION_ROOT.split(".")[:2] == ["actors", JOBS]


def test_the_layer_check_names_the_route_to_the_jobs(tmp_path):
    pkg = tmp_path / "actors"
    for folder in ("env", "jobs", "common"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "jobs" / "config.py").write_text("")
    (pkg / "common" / "a.py").write_text("def f():\n    import actors.env.b\n")
    (pkg / "env" / "b.py").write_text("from actors.jobs.config import Config\n")
    graph = import_graph(tmp_path, ("actors",))
    came_from = reachable(graph, "actors.common.a", {})
    assert route(came_from, "actors.jobs.config") == "actors.common.a -> actors.env.b -> actors.jobs.config"


def test_no_two_modules_import_each_other(graph):
    cycles = set(import_cycles(graph))
    assert {cycle: sorted(cycle) for cycle in cycles - set(ALLOWED_CYCLES)} == {}
    assert set(ALLOWED_CYCLES) - cycles == set(), "an allowed cycle is gone: remove it from ALLOWED_CYCLES"


TYPE_HINT_CYCLES: dict[frozenset[str], str] = {
}
"""Modules that import each other only for type hints, known and not yet untied; one gone is no failure."""


def test_no_two_modules_import_each_other_not_even_for_type_hints():
    """A pair tied only under TYPE_CHECKING runs, but a reader still cannot read one without the other: the shared type
    belongs in the lower module (actors/common/markets.py's SyntheticMarket, actors/env/session_features.py's Sessions)."""
    cycles = set(import_cycles(import_graph(ROOT, type_hints=True)))
    assert {cycle: sorted(cycle) for cycle in cycles - set(TYPE_HINT_CYCLES)} == {}


MODULE_LINES = 400
"""About this many lines is what a newcomer reads in one sitting (issue 21); a tenth more is still "about"."""
LENGTH_REASON = "over 400 lines"
"""A longer module says why in its docstring, in these words (actors/env/loop.py: its parts share one state machine)."""


def test_no_actor_module_is_much_over_400_lines_without_its_docstring_saying_why():
    offenders = {}
    for path in python_files("actors"):
        lines = len(path.read_text().splitlines())
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        if lines > MODULE_LINES * 1.1 and LENGTH_REASON not in " ".join(docstring.split()).lower():
            offenders[str(path.relative_to(ROOT))] = lines
    assert offenders == {}
