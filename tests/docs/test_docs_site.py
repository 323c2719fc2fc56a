"""The documentation site builds with --strict (a broken link or a page missing from the nav fails), the same way
bin/docs build does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = [sys.executable, "-m", "mkdocs"]


def build(config_file: Path, site_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([*MKDOCS, "build", "--strict", "--config-file", str(config_file), "--site-dir", str(site_dir)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_site_builds_strict_with_the_generated_reference_pages(tmp_path):
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    config_page = (tmp_path / "site" / "reference" / "config" / "index.html").read_text()
    assert "fusion.max_staleness_steps" in config_page
    assert "env.obs" in (tmp_path / "site" / "reference" / "messages" / "index.html").read_text()
    assert "bin/feed" in (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()


@pytest.mark.slow
def test_a_broken_link_fails_the_build(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("__pycache__"))
    with (docs / "troubleshooting.md").open("a") as page:
        page.write("\nSee [a page that is not there](no-such-page.md).\n")
    config = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: docs", f"docs_dir: {docs}")
    config = config.replace("  - docs/hooks.py", f"  - {ROOT / 'docs' / 'hooks.py'}")  # it reads this repository's code
    config = re.sub(r"(?m)^watch:.*\n(  - .*\n)+", "", config)  # the watched sources are relative to the repository
    (tmp_path / "mkdocs.yml").write_text(config)
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def _hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_page_the_nav_does_not_list_is_added_under_experiments_or_more(tmp_path):
    docs = tmp_path / "docs"
    (docs / "experiments").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n")
    (docs / "experiments" / "README.md").write_text("# Experiments\n")
    (docs / "experiments" / "43-news.md").write_text("intro line\n# Issue 43: news\n")
    (docs / "ray.md").write_text("no heading\n")
    nav = [{"Home": "index.md"}, {"Results": [{"Experiments": [{"Why": "experiments/README.md"}]}]}]
    _hooks().on_config({"nav": nav, "docs_dir": str(docs)})
    assert nav == [{"Home": "index.md"},
                   {"Results": [{"Experiments": [{"Why": "experiments/README.md"}, {"Issue 43: news": "experiments/43-news.md"}]}]},
                   {"More": [{"ray": "ray.md"}]}]
