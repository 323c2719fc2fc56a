"""docs/reference.py (the generator of the reference pages) imported by path: docs/ is not a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "docs" / "reference.py"


def load():
    name = "docs_reference"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PATH)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before exec: dataclasses look their module up while it runs
        spec.loader.exec_module(module)
    return sys.modules[name]
