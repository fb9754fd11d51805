"""The README is a ten-minute read: at most 200 lines, the two set-up commands unchanged, and every relative
link and image it holds points to a file of the repository (and, for a link with an anchor into a Markdown page,
to a heading of that page)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 200
SET_UP = (
    "CMAKE_ARGS=-DGGML_NATIVE=OFF python3 -m pip install -r requirements.txt && python3 -m streamlit run app.py",
    "bash scripts/test.sh",
)
LINK = re.compile(r"(!?)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`[^`\n]*`")


def prose(text: str) -> str:
    """The Markdown without its code blocks and inline code, where a bracket is not a link."""
    return CODE.sub("", FENCE.sub("", text))


def links(text: str) -> list[tuple[bool, str]]:
    """(is an image, target) of every inline link and image."""
    return [(bang == "!", target) for bang, target in LINK.findall(prose(text))]


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) and not target.startswith(("#", "//"))


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs (Python-Markdown's toc) writes it."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#").strip()) for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines()
            if re.match(r"^#{1,6}\s", line)}


def broken(image: bool) -> list[str]:
    found = []
    for is_image, target in links(README.read_text(encoding="utf-8")):
        if is_image != image or not relative(target):
            continue
        path, _, anchor = unquote(target).partition("#")
        where = (ROOT / path).resolve()
        if not where.is_relative_to(ROOT) or not where.exists():
            found.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            found.append(f"{target}: {path} has no heading #{anchor}")
    return found


def test_the_readme_is_at_most_200_lines():
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count <= MAX_LINES, f"README.md has {count} lines; the limit is {MAX_LINES}: move detail to docs/"


def test_the_readme_keeps_the_two_set_up_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    for command in SET_UP:
        assert command in lines, f"README.md no longer has the set-up command, alone on its line: {command}"


def test_every_relative_link_in_the_readme_points_to_a_file_of_the_repository():
    assert links(README.read_text(encoding="utf-8")), "no link found: the pattern no longer reads the README"
    assert not broken(image=False), "\n".join(broken(image=False))


def test_every_image_in_the_readme_is_a_file_of_the_repository():
    images = [target for is_image, target in links(README.read_text(encoding="utf-8")) if is_image]
    assert images, "the README shows a screenshot of a finished debate"
    assert not broken(image=True), "\n".join(broken(image=True))


def test_the_link_reader_sees_links_and_images_and_skips_code_and_web_addresses():
    text = ("See [the guide](docs/x.md#a-b) and ![shot](docs/s.png \"title\").\n"
            "`[not](a-link.md)`\n```\n[nor](this.md)\n```\n[web](https://example.org) [here](#top)")
    assert links(text) == [(False, "docs/x.md#a-b"), (True, "docs/s.png"), (False, "https://example.org"),
                           (False, "#top")]
    assert [target for _, target in links(text) if relative(target)] == ["docs/x.md#a-b", "docs/s.png"]
    assert slug("Where your data goes") == "where-your-data-goes"
    assert slug("Re-map: your priorities and `--whole`") == "re-map-your-priorities-and-whole"
