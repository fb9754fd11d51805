"""The documentation site (mkdocs.yml): every page in the nav and every nav entry a page; a strict build that imports
no dashboard, model or runtime; a command-line reference naming every command and option of the parser; an API
reference naming every public name; the architecture page being ARCHITECTURE.md; and, in Chromium, every page
opened offline: no request leaves 127.0.0.1 and every internal link (anchors included) resolves."""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import re
import threading
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import site_kit


def test_every_page_under_docs_is_in_the_nav_and_every_nav_entry_is_a_page():
    listed = site_kit.nav_pages()
    assert len(listed) == len(set(listed)), "a page is listed twice"
    assert sorted(set(site_kit.markdown_files()) - set(listed)) == [], "pages under docs/ missing from the nav"
    assert sorted(set(listed) - set(site_kit.markdown_files())) == [], "nav entries with no page under docs/"


def test_the_site_builds_strictly_without_importing_the_dashboard_a_model_or_the_runtime():
    site, heavy = site_kit.built()
    assert heavy == [], f"building the site imported {heavy}"
    for page in site_kit.nav_pages():
        assert (site / page).with_suffix(".html").is_file(), page


def test_the_theme_loads_no_web_font():
    assert site_kit.config()["theme"].get("font") is False, "Material loads Google Fonts unless told not to"


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from commands(sub, (*path, name))


def test_the_cli_reference_has_every_command_of_the_parser_with_its_usage_and_options():
    from clearside.cli import build_parser

    page = html.unescape(re.sub(r"<[^>]+>", "", site_kit.page_html("reference/cli.md")))
    raw = site_kit.page_html("reference/cli.md")
    found = list(commands(build_parser()))
    assert len(found) >= 20
    for path, sub in found:
        assert f'id="{"-".join(path)}"' in raw, f"no section for {' '.join(path)}"
        assert f"usage: {sub.prog}" in page, f"no usage of {' '.join(path)}"
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help") and action.help != argparse.SUPPRESS:
                    assert option in page, f"{' '.join(path)} {option} is missing"


def test_the_cli_reference_lists_every_exit_code():
    from clearside import errors

    page = re.sub(r"<[^>]+>", "", site_kit.page_html("reference/cli.md"))
    codes = {cls.__dict__["exit_code"] for cls in vars(errors).values()
             if isinstance(cls, type) and isinstance(cls.__dict__.get("exit_code"), int)}
    for code in codes:
        assert re.search(rf"^{code}$", page, re.M), f"exit code {code} is missing"


@pytest.mark.parametrize("module", ["clearside", "clearside.providers", "clearside.store", "clearside.runtime"])
def test_the_api_reference_documents_every_public_name(module):
    import importlib

    raw = site_kit.page_html("reference/api.md")
    names = importlib.import_module(module).__all__
    missing = [name for name in names if f'id="{module}.{name}"' not in raw]
    assert missing == [], f"{module}: not in the API reference: {missing}"


def test_the_api_reference_documents_the_modes_registry():
    raw = site_kit.page_html("reference/api.md")
    for name in ("MODES", "BATCH_MODES", "Mode", "BatchMode", "mode", "import_file"):
        assert f'id="clearside.modes.{name}"' in raw, name


def test_the_api_reference_shows_no_sphinx_role_as_text():
    left = re.findall(r":[a-z]+:<code>[^<]*</code>", site_kit.page_html("reference/api.md"))
    assert left == [], f"docs/hooks.py's SPHINX_ROLE misses {left}"


def test_the_architecture_page_is_architecture_md():
    text = (site_kit.ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    page = html.unescape(re.sub(r"<[^>]+>", "", site_kit.page_html("architecture.md")))
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        assert heading.replace("`", "") in page, heading
    assert (site_kit.DOCS / "architecture.md").read_text(encoding="utf-8").strip() == '--8<-- "ARCHITECTURE.md"', \
        "one source: the page includes ARCHITECTURE.md, it holds no copy"


# -- in Chromium ------------------------------------------------------------------------------------------------------

LINKS_JS = """() => [...document.querySelectorAll('a[href]')].map(a => a.href)"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # the browser left before the answer: no traceback
        pass


@pytest.fixture(scope="module")
def served():
    """The built site on 127.0.0.1 (http.server in a thread): its base URL."""
    site, _ = site_kit.built()
    server = QuietServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    import browser_kit

    yield from browser_kit.chromium(pytest.importorskip("playwright.sync_api"))


def ids_of(url: str) -> set[str]:
    body = urllib.request.urlopen(url, timeout=10).read().decode("utf-8", "replace")
    return {html.unescape(value) for value in re.findall(r'\s(?:id|name)="([^"]*)"', body)}


@pytest.mark.browser
def test_every_page_opens_offline_and_every_internal_link_resolves(served, browser):
    expect = pytest.importorskip("playwright.sync_api").expect
    origin = served.rstrip("/")
    outside: list[str] = []
    failed: list[str] = []
    links: dict[str, set[str]] = {}  # internal link -> the pages it is on

    def local(url: str) -> bool:
        return url.startswith((origin + "/", "data:", "blob:", "about:"))

    def guard(route) -> None:  # a request to another host is recorded and never sent
        if local(route.request.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    def seen(request) -> None:  # the workers' requests too (the search index)
        if not local(request.url):
            outside.append(request.url)

    def answered(response) -> None:
        if response.status >= 400:
            failed.append(f"{response.status} {response.url}")

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.route("**/*", guard)
        context.on("request", seen)
        context.on("response", answered)
        page = context.new_page()
        for name in site_kit.nav_pages():
            address = served + str(Path(name).with_suffix(".html"))
            response = page.goto(address, wait_until="load")
            assert response is not None and response.status == 200, address
            expect(page.locator("article h1").first).to_be_visible()
            for href in page.evaluate(LINKS_JS):
                if href.startswith(origin + "/"):
                    links.setdefault(href, set()).add(name)
    finally:
        context.close()
    assert outside == [], f"requests that left 127.0.0.1: {sorted(set(outside))}"
    assert failed == [], f"requests that failed: {failed}"

    broken: list[str] = []
    targets: dict[str, set[str]] = {}
    for href, pages in sorted(links.items()):
        url, _, fragment = href.partition("#")
        try:
            status = urllib.request.urlopen(url, timeout=10).status
        except OSError as exc:
            broken.append(f"{href} (on {sorted(pages)}): {exc}")
            continue
        if status != 200:
            broken.append(f"{href} (on {sorted(pages)}): HTTP {status}")
            continue
        if fragment and url.endswith((".html", "/")):
            if url not in targets:
                targets[url] = ids_of(url)
            if urllib.parse.unquote(fragment) not in targets[url]:
                broken.append(f"{href} (on {sorted(pages)}): no element with id {fragment!r}")
    assert broken == [], "broken internal links:\n" + "\n".join(broken)
    assert len(links) > len(site_kit.nav_pages()), "the pages link to each other"
