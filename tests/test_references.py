"""Every product rule the code cites points to a design page that exists (docs/design/index.md#citations).

The code, the tests, the benchmarks, README.md and ARCHITECTURE.md cite a rule in one form,
``docs/design/<page>.md#<anchor>``. The page must exist under docs/design/ and the anchor must be one of its
headings: an explicit ``{#id}`` (the attr_list syntax) or, without one, the slug MkDocs gives the heading. The code
must not cite documents that are not in the repository (numbered specs, a PRD, issues, an evaluation guide, their
section signs); a requirement identifier such as FR-105 may appear only next to a citation of the requirements page.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design"
PAGES = ("index.md", "agents.md", "schema.md", "live-protocol.md", "perspectives.md", "requirements.md")
CODE_DIRS = ("clearside", "clearside_ui", "tests", "bench")
CODE_SUFFIXES = (".py", ".toml", ".json")
DOCS = ("README.md", "ARCHITECTURE.md")
SELF = Path(__file__).resolve()

REFERENCE = re.compile(r"docs/design/([A-Za-z0-9_.-]+?\.md)(?:#([A-Za-z0-9_-]+))?")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ID = re.compile(r"\s*\{[^}]*#([A-Za-z0-9_-]+)[^}]*\}\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# Documents outside the repository, as the code used to cite them. Built from parts so this file does not cite them.
OLD_FORMS = [
    ("a numbered spec", re.compile(r"\bspec(?:ification)?s?\s+0\d\d\b", re.IGNORECASE)),
    ("the PRD", re.compile(r"\bP" r"RD\b")),
    ("an issue", re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)),
    ("the evaluation guide", re.compile(r"\bevaluation\s+gu" r"ide\b", re.IGNORECASE)),
    ("a guide's metric", re.compile(r"\bgu" r"ide\s+M\d+")),
    ("a section sign", re.compile("\u00a7" r"\s?\d")),
]
REQUIREMENT_ID = re.compile(r"\b(?:N?FR|US)-\d{3}\b")
NEAR = 200  # characters either side of a requirement identifier in which its citation must appear


@dataclass(frozen=True)
class Reference:
    file: Path
    line: int
    page: str
    anchor: str | None

    def __str__(self) -> str:
        where = self.file.relative_to(ROOT) if self.file.is_relative_to(ROOT) else self.file
        return f"{where}:{self.line}: docs/design/{self.page}" + (f"#{self.anchor}" if self.anchor else "")


def slug(title: str) -> str:
    """The id MkDocs (Python-Markdown's toc extension) gives a heading without an explicit one."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text.replace("`", ""))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(markdown: str) -> set[str]:
    """The ids of a page's headings (fenced code skipped): an explicit ``{#id}``, else the slug, numbered
    ``_1``, ``_2`` ... when a slug repeats, as the toc extension does."""
    found: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if not match:
            continue
        title = match.group(2)
        explicit = EXPLICIT_ID.search(title)
        if explicit:
            found.add(explicit.group(1))
            continue
        base = candidate = slug(title)
        number = 0
        while candidate in found:
            number += 1
            candidate = f"{base}_{number}"
        found.add(candidate)
    return found


def references(path: Path) -> list[Reference]:
    text = path.read_text(encoding="utf-8")
    return [Reference(path, _line(text, m.start()), m.group(1), m.group(2))
            for m in REFERENCE.finditer(text)]


def dangling(refs: list[Reference], design: Path) -> list[str]:
    """Each reference whose page or anchor does not exist, with why."""
    known: dict[str, set[str] | None] = {}
    problems = []
    for ref in refs:
        if ref.page not in known:
            page = design / ref.page
            known[ref.page] = anchors(page.read_text(encoding="utf-8")) if page.is_file() else None
        ids = known[ref.page]
        if ids is None:
            problems.append(f"{ref}: no page docs/design/{ref.page}")
        elif ref.anchor is not None and ref.anchor not in ids:
            problems.append(f"{ref}: no heading #{ref.anchor} on that page")
    return problems


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def old_forms(text: str) -> list[str]:
    """Citations of documents that are not in the repository, and requirement ids far from their citation."""
    found = []
    for name, pattern in OLD_FORMS:
        found += [f"line {_line(text, m.start())}: {name} ({m.group()!r})" for m in pattern.finditer(text)]
    for m in REQUIREMENT_ID.finditer(text):
        around = text[max(0, m.start() - NEAR): m.end() + NEAR]
        if "docs/design/requirements.md" not in around:
            found.append(f"line {_line(text, m.start())}: {m.group()} without a citation of "
                         "docs/design/requirements.md beside it")
    return found


def code_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in CODE_DIRS:
        files += [p for p in sorted((ROOT / folder).rglob("*")) if p.suffix in CODE_SUFFIXES and p.is_file()
                  and not any(part == "__pycache__" or part.startswith(".") for part in p.relative_to(ROOT).parts)]
    return [p for p in files if p.resolve() != SELF]  # not caches: bench/.cache holds llama.cpp's own sources


# --- the repository ------------------------------------------------------------------------------------------------


def test_the_design_pages_exist():
    assert sorted(p.name for p in DESIGN.glob("*.md")) == sorted(PAGES)


def test_every_design_reference_in_code_and_docs_resolves():
    refs = [ref for path in code_files() + [ROOT / name for name in DOCS if (ROOT / name).is_file()]
            for ref in references(path)]
    assert len(refs) > 50, "the code cites the design pages throughout"
    assert dangling(refs, DESIGN) == []


def test_the_code_cites_no_document_outside_the_repository():
    problems = [f"{path.relative_to(ROOT)} {problem}" for path in code_files()
                for problem in old_forms(path.read_text(encoding="utf-8"))]
    assert problems == []


def test_the_readme_architecture_and_user_docs_cite_no_document_outside_the_repository():
    """The design pages name requirement ids themselves; every other page, the README and ARCHITECTURE.md cite
    only what the repository holds."""
    pages = [ROOT / name for name in DOCS] + [p for p in sorted((ROOT / "docs").rglob("*.md"))
                                              if DESIGN not in p.parents]
    problems = [f"{path.relative_to(ROOT)} {problem}" for path in pages
                for problem in old_forms(path.read_text(encoding="utf-8"))]
    assert len(pages) > 20 and problems == []


def test_links_between_design_pages_resolve():
    link = re.compile(r"\]\(([A-Za-z0-9_-]+\.md)?(?:#([A-Za-z0-9_-]+))?\)")
    problems = []
    for page in PAGES:
        text = (DESIGN / page).read_text(encoding="utf-8")
        refs = [Reference(DESIGN / page, _line(text, m.start()), m.group(1) or page, m.group(2))
                for m in link.finditer(text) if m.group(1) or m.group(2)]
        problems += dangling(refs, DESIGN)
    assert problems == []


# --- the checker itself --------------------------------------------------------------------------------------------


@pytest.fixture
def design(tmp_path: Path) -> Path:
    folder = tmp_path / "docs" / "design"
    folder.mkdir(parents=True)
    (folder / "rules.md").write_text("# Rules\n\n## Time budgets {#budgets}\n\nText.\n\n## Who may see what\n\n"
                                     "```\n## Not a heading {#fenced}\n```\n\n### Who may see what\n",
                                     encoding="utf-8")
    return folder


def test_the_checker_reports_a_dangling_page_and_a_dangling_anchor(design: Path, tmp_path: Path):
    source = tmp_path / "module.py"
    source.write_text('"""Budgets (docs/design/rules.md#budgets), visibility (docs/design/rules.md#who-may-see-what),\n'
                      "the page (docs/design/rules.md).\n\nGone: docs/design/rules.md#fenced and\n"
                      'docs/design/missing.md#budgets."""\n', encoding="utf-8")
    refs = references(source)
    assert [(r.line, r.page, r.anchor) for r in refs] == [
        (1, "rules.md", "budgets"), (1, "rules.md", "who-may-see-what"), (2, "rules.md", None),
        (4, "rules.md", "fenced"), (5, "missing.md", "budgets")]
    problems = dangling(refs, design)
    assert len(problems) == 2
    assert problems[0].endswith("module.py:4: docs/design/rules.md#fenced: no heading #fenced on that page")
    assert problems[1].endswith("module.py:5: docs/design/missing.md#budgets: no page docs/design/missing.md")


def test_anchors_are_explicit_ids_or_mkdocs_slugs():
    page = ("# Requirements\n## Security and privacy {#nfr-400}\n## M9 Moderator neutrality {#m9}\n"
            "## The `schema_version` field\n## Who may see what?\n## Who may see what?\n### Déjà vu, again\n")
    assert anchors(page) == {"requirements", "nfr-400", "m9", "the-schema_version-field", "who-may-see-what",
                             "who-may-see-what_1", "deja-vu-again"}


def test_old_forms_are_caught_and_cited_requirement_ids_are_not():
    spec, prd, guide = "spec 0" "04", "P" "RD", "evaluation gu" "ide"
    text = (f"Follows {spec}.\nSee the {prd}.\nFixed in issue 17.\nThresholds of the {guide}.\n"
            "Per \u00a73.2 here.\nInput rules: FR-105.\n" + "Unrelated text.\n" * 20
            + "Input rules: FR-106 (docs/design/requirements.md#fr-100).\n")
    found = old_forms(text)
    assert [f.split(":")[0] for f in found] == ["line 1", "line 2", "line 3", "line 4", "line 5", "line 6"]
    assert "FR-106" not in " ".join(found)
