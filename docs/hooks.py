"""MkDocs hook (mkdocs.yml ``hooks:``): adds the generated reference pages to every build, and pages other work
adds to docs/ to the nav.

The reference pages (messages, configuration, command lines) are written by docs/reference.py from the code itself,
in a fresh Python process each build, and added to the build in memory: nothing generated is committed, so nothing
can drift, and ``mkdocs serve`` shows a changed docstring on the next rebuild.

A Markdown page in docs/ that mkdocs.yml's nav does not list (an experiment log written beside a change) is added
to the nav, under Experiments when it is in docs/experiments/, else under More: the build stays --strict about
links and nav entries that lead nowhere, without failing on a page nobody listed yet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mkdocs.structure.files import File, Files

GENERATOR = Path(__file__).resolve().parent / "reference.py"
ROOT = GENERATOR.parent.parent
EXPERIMENTS_SECTION = "Experiments"
OTHER_SECTION = "More"


def generated_pages() -> dict[str, str]:
    """{page path under docs/: Markdown}, from docs/reference.py run with the project on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "pages.json"
        done = subprocess.run([sys.executable, str(GENERATOR), str(out)], cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"docs/reference.py failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
        return json.loads(out.read_text())


def nav_paths(items: list) -> Iterator[str]:
    """Every page path a nav (mkdocs.yml's list of dicts and strings) names."""
    for item in items:
        values = item.values() if isinstance(item, dict) else [item]
        for value in values:
            if isinstance(value, list):
                yield from nav_paths(value)
            elif isinstance(value, str):
                yield value


def unlisted_pages(docs_dir: Path, listed: set[str]) -> list[str]:
    """Markdown pages under docs_dir that the nav does not name, in path order."""
    return sorted(path for path in (p.relative_to(docs_dir).as_posix() for p in docs_dir.rglob("*.md")) if path not in listed)


def page_title(path: Path) -> str:
    """The page's first heading, else its file name."""
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").replace("_", " ")


def section(items: list, title: str) -> list | None:
    """The list of entries of the nav section ``title``, searched depth first."""
    for item in items:
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, list):
                    if key == title:
                        return value
                    found = section(value, title)
                    if found is not None:
                        return found
    return None


def on_config(config):
    nav = config["nav"]
    if not nav:
        return config
    docs_dir = Path(config["docs_dir"])
    for path in unlisted_pages(docs_dir, set(nav_paths(nav))):
        entry = {page_title(docs_dir / path): path}
        target = section(nav, EXPERIMENTS_SECTION) if path.startswith("experiments/") else None
        if target is None:
            target = section(nav, OTHER_SECTION)
            if target is None:
                target = []
                nav.append({OTHER_SECTION: target})
        target.append(entry)
    return config


def on_files(files: Files, config) -> Files:
    for path, markdown in generated_pages().items():
        files.append(File.generated(config, path, content=markdown))
    return files
