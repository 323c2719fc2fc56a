"""The layers of DESIGN.md section 2, read from every module's imports (including those inside functions).

runtime/ and bus/ know no actor package but the shared vocabulary (bus/messages.py builds its messages
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


def test_config_imports_no_actor_but_the_section_structs_its_schema_lists():
    offenders = {str(p.relative_to(ROOT)): sorted(actor_packages_imported(p) - {SHARED})
                 for p in python_files("config") if p.name != "schema.py"}
    assert {path: packages for path, packages in offenders.items() if packages} == {}
    schema_imports = {name for name in imported_modules(ROOT / "config" / "schema.py") if name.startswith("actors.")}
    assert schema_imports and all(name.endswith(".config") for name in schema_imports)


def test_runtime_imports_no_actor_not_even_the_shared_vocabulary():
    assert {str(p.relative_to(ROOT)) for p in python_files("runtime") if actor_packages_imported(p)} == set()


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
