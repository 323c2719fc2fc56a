"""MkDocs hook (mkdocs.yml ``hooks:``): adds the generated reference pages to every build.

The pages (messages, configuration, command lines) are written by docs/reference.py from the code itself, in a
fresh Python process each build, and added to the build in memory: nothing generated is committed, so nothing
can drift, and ``mkdocs serve`` shows a changed docstring on the next rebuild.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mkdocs.structure.files import File, Files

GENERATOR = Path(__file__).resolve().parent / "reference.py"
ROOT = GENERATOR.parent.parent


def generated_pages() -> dict[str, str]:
    """{page path under docs/: Markdown}, from docs/reference.py run with the project on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "pages.json"
        done = subprocess.run([sys.executable, str(GENERATOR), str(out)], cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"docs/reference.py failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
        return json.loads(out.read_text())


def on_files(files: Files, config) -> Files:
    for path, markdown in generated_pages().items():
        files.append(File.generated(config, path, content=markdown))
    return files
