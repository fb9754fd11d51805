"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml): what its pages take from the code.

``docs/reference/cli.md`` holds a short introduction and the marker ``<!-- cli-reference -->``; at build time the
marker becomes the reference of every command and subcommand of ``python -m clearside``, read from the argument
parser itself (``clearside.cli.build_parser``): its usage, its help, and each argument with its metavar, choices,
default and help. Nothing in the page is written by hand, so it cannot drift from the code. Building the parser
imports no model, no Streamlit and no database driver.

docs/architecture.md includes ARCHITECTURE.md, its links made the site's. On the Python API reference
(mkdocstrings), a Sphinx role some docstrings use (``:func:`x```) shows as its code.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- cli-reference -->"
EXIT_CODES = "<!-- exit-codes -->"
PAGE = "reference/cli.md"
WIDTH = 78  # usage lines wrap here (the width of a code block of the theme), whatever the terminal is


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri == "architecture.md":
        return architecture(markdown)
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lost its marker {MARKER}: the command-line reference has nowhere to go")
    if EXIT_CODES in markdown:
        markdown = markdown.replace(EXIT_CODES, exit_codes())
    return markdown.replace(MARKER, cli_reference())


# ``[text](target)``, not an image, not inside a code span (a Markdown link of ARCHITECTURE.md)
LINK = re.compile(r"(?<![!`])\[([^\]]+)\]\(([^)\s]+)\)")
INCLUDE = '--8<-- "ARCHITECTURE.md"'


def architecture(markdown: str) -> str:
    """docs/architecture.md is ARCHITECTURE.md, included (one source). Its links are written from the repository's
    root: one to a page of the site (``docs/design/agents.md``) becomes that page's (``design/agents.md``), one to
    another file of the repository (the site has no copy) its path as code."""
    if INCLUDE not in markdown:
        raise ValueError(f"docs/architecture.md lost its {INCLUDE}: the page would be a second copy")

    def link(match: re.Match) -> str:
        text, target = match.groups()
        if re.match(r"[a-z]+:|#", target):  # another site's address, or an anchor of this page
            return match.group(0)
        path, _, anchor = target.partition("#")
        if path.startswith("docs/") and path.endswith(".md"):
            return f"[{text}]({path.removeprefix('docs/')}{'#' + anchor if anchor else ''})"
        return text if text.strip("`") == path else f"{text} (`{path}`)"

    return markdown.replace(INCLUDE, LINK.sub(link, (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")))


# A Sphinx role left in a docstring (":func:`registry`", ":mod:`~clearside.runtime.host`") as mkdocstrings renders
# it: the code alone is kept (a "~" keeps its last part, as Sphinx shows it).
SPHINX_ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>")


def on_page_content(html: str, page, config, files) -> str:
    if page.file.src_uri != "reference/api.md":
        return html
    return SPHINX_ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>",
                           html)


def build_parser() -> argparse.ArgumentParser:
    if str(ROOT) not in sys.path:  # the checkout's package, wherever mkdocs was started from
        sys.path.insert(0, str(ROOT))
    from clearside.cli import build_parser as build

    return build()


def exit_codes() -> str:
    """A command's exit codes, from the errors that carry them (``exit_code`` of ``clearside.errors``' classes)."""
    build_parser()  # the checkout on sys.path
    import inspect

    from clearside import errors

    rows = ["| Exit code | Error | Meaning |", "| ---: | --- | --- |", "| 0 | | The command did what it was asked. |"]
    declared = [(cls.__dict__["exit_code"], name, cls) for name, cls in inspect.getmembers(errors, inspect.isclass)
                if issubclass(cls, errors.ClearSideError) and isinstance(cls.__dict__.get("exit_code"), int)]
    for code, name, cls in sorted(declared, key=lambda row: (row[0], row[1])):
        kinds = [name] + sorted(sub.__name__ for sub in cls.__subclasses__() if "exit_code" not in sub.__dict__)
        meaning = text((inspect.getdoc(cls) or "").split("\n\n")[0], table=True)
        rows.append(f"| {code} | {', '.join(f'`{kind}`' for kind in kinds)} | {meaning} |")
    return "\n".join(rows) + "\n"


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser, help) of every command and subcommand, depth first, in the parser's own order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), sub, helps.get(name) or ""
                yield from commands(sub, (*path, name))


def anchor(path: tuple[str, ...]) -> str:
    return "-".join(path)


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    parser = parser or build_parser()
    found = list(commands(parser))
    out = [f"Usage: `{parser.prog} COMMAND [OPTIONS]`. {text(parser.description or '')}", "",
           "| Command | What it does |", "| --- | --- |"]
    out += [f"| [`{' '.join(path)}`](#{anchor(path)}) | {text(help_, table=True)} |" for path, _, help_ in found]
    for path, sub, help_ in found:
        out += ["", f"### `{' '.join(path)}` {{#{anchor(path)}}}", ""]
        if help_:
            out += [sentence(text(help_)), ""]
        if sub.description and sub.description != help_:
            out += [text(sub.description), ""]
        out += ["```text", usage(sub).rstrip(), "```"]
        out += arguments(sub)
        if sub.epilog:
            out += ["", text(sub.epilog)]
    return "\n".join(out) + "\n"


def usage(parser: argparse.ArgumentParser) -> str:
    formatter = parser.formatter_class(prog=parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help()


def arguments(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser.formatter_class(prog=parser.prog, width=WIDTH)
    positional = [a for a in parser._actions if not a.option_strings and a.help != argparse.SUPPRESS]
    optional = [a for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS
                and not isinstance(a, argparse._HelpAction)]
    out: list[str] = []
    for title, actions in (("Arguments", positional), ("Options", optional)):
        if not actions:
            continue
        out += ["", f"**{title}**", ""]
        for action in actions:
            said = describe(formatter, action)
            out.append(f"- {signature(formatter, action)}" + (f": {said}" if said else ""))
    return out


def signature(formatter: argparse.HelpFormatter, action: argparse.Action) -> str:
    """The argument as ``--help`` writes it: ``question``, ``--sources FILE [FILE ...]``, ``--format {json,md}``."""
    if isinstance(action, argparse._SubParsersAction):
        return "`COMMAND`"
    if not action.option_strings:
        return f"`{formatter._format_args(action, formatter._get_default_metavar_for_positional(action))}`"
    if action.nargs == 0:
        return ", ".join(f"`{option}`" for option in action.option_strings)
    metavar = formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
    return ", ".join(f"`{option} {metavar}`" for option in action.option_strings)


def describe(formatter: argparse.HelpFormatter, action: argparse.Action) -> str:
    parts = []
    if action.help:
        parts.append(text(formatter._expand_help(action)))
    if isinstance(action, argparse._SubParsersAction):
        parts.append("one of " + ", ".join(f"[`{name}`](#{anchor((*prefix(action), name))})"
                                           for name in action.choices))
    elif action.choices and not (action.metavar is None and action.option_strings):
        parts.append("one of " + ", ".join(f"`{choice}`" for choice in action.choices))
    if action.default not in (None, False, argparse.SUPPRESS, [], "") and action.nargs != 0 \
            and "default" not in (action.help or ""):
        parts.append(f"default `{action.default}`")
    return "; ".join(parts)


def prefix(action: argparse._SubParsersAction) -> tuple[str, ...]:
    """The command path of the parser a subparsers action belongs to ("python -m clearside suite" -> suite)."""
    sub = next(iter(action.choices.values()))
    return tuple(sub.prog.split()[3:-1])


def sentence(value: str) -> str:
    value = value.strip()
    return value[:1].upper() + value[1:] + ("" if value.endswith((".", "!", "?")) else ".")


def text(value: str, *, table: bool = False) -> str:
    """Help text as Markdown: its `code spans` kept, everything else escaped (HTML, emphasis, a table's pipes)."""
    pieces = re.split(r"(`[^`]*`)", " ".join(value.split()))
    out = []
    for piece in pieces:
        if not piece.startswith("`"):
            piece = piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            piece = re.sub(r"([\\*_\[\]])", r"\\\1", piece)
        if table:
            piece = piece.replace("|", "\\|")
        out.append(piece)
    return "".join(out)
