"""What the documentation site's tests share: its nav, its pages, and one strict build per test run."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
# Modules the build must not import: the site is built with no dashboard, model, runtime or network.
HEAVY = ("streamlit", "torch", "transformers", "sentence_transformers", "llama_cpp", "dbos", "sqlalchemy", "httpx")

BUILD_SCRIPT = """
import json, sys
from mkdocs.commands.build import build
from mkdocs.config import load_config
config = load_config(sys.argv[1], site_dir=sys.argv[2])
build(config)  # strict (mkdocs.yml): any warning aborts it
print(json.dumps(sorted(name for name in sys.modules if name.split('.')[0] in sys.argv[3].split(','))))
"""


def config() -> dict:
    """mkdocs.yml as data (it uses no YAML tags)."""
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))


def nav_pages(nav=None) -> list[str]:
    """Every page the nav lists, as its path under docs/, in the nav's order."""
    nav = config()["nav"] if nav is None else nav
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            pages += nav_pages(value)
        else:
            pages.append(value)
    return pages


def markdown_files() -> list[str]:
    """Every Markdown file under docs/, as its path there."""
    return sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))


@functools.cache
def built() -> tuple[Path, list[str]]:
    """The site built once per test run with ``mkdocs build --strict`` (from the repository's root, as
    scripts/test.sh builds it) into a throwaway folder: the folder, and the heavy modules the build imported."""
    site = Path(tempfile.mkdtemp(prefix="clearside-site-"))
    atexit.register(shutil.rmtree, site, ignore_errors=True)
    done = subprocess.run([sys.executable, "-c", BUILD_SCRIPT, str(CONFIG), str(site), ",".join(HEAVY)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    if done.returncode != 0:
        raise AssertionError(f"mkdocs build --strict failed:\n{done.stderr[-6000:]}")
    return site, json.loads(done.stdout.strip().splitlines()[-1])


def page_html(page: str) -> str:
    """The built HTML of a page given as its Markdown path under docs/ (``reference/cli.md``)."""
    return (built()[0] / page).with_suffix(".html").read_text(encoding="utf-8")
