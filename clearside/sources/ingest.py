"""Reading the files a user attaches to a debate: what they say, as plain text, or a refusal that says why.

One file is read by :func:`read_source`, a debate's files by :func:`read_sources` (all or nothing: the first
refusal of any file refuses them all, and nothing is returned). The type comes from the file's extension,
checked against its content:

- ``.txt`` (kind ``text``) and ``.md``/``.markdown`` (``markdown``): the text as written (it is read by people
  and quoted verbatim), decoded as UTF-8 (a byte-order mark allowed; UTF-16 with its byte-order mark too), else
  as Windows-1252.
- ``.html``/``.htm`` (``html``): the visible text only (BeautifulSoup on the standard library's ``html.parser``):
  scripts, styles, comments and the like dropped, tags gone, block elements as line breaks.
- ``.pdf`` (``pdf``): each page's text (pypdf), pages separated by a form feed (``\\f``), as pdftotext does,
  so a passage can name its page. A PDF encrypted with an empty password (an owner password only) is read.
- ``.csv`` (``csv``): each row as one line ``col1: v1; col2: v2`` under the header's names (stdlib ``csv``,
  the delimiter sniffed); a file whose rows do not share a delimiter is not CSV.

The text kept is Unicode NFC with ``\\n`` line ends, control characters dropped (tab, line feed and the PDF's
form feed kept). A source's ``id`` is the SHA-256 of the bytes as attached: the same file twice is one source.
Limits (stated on the page and in the CLI): :data:`MAX_FILES`, :data:`MAX_BYTES`, :data:`MAX_PAGES`,
:data:`MAX_CHARS`. Every refusal is an :class:`~clearside.errors.InputError` naming the file, the reason and
the fix.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import InputError

MAX_FILES = 10  # files per debate
MAX_BYTES = 5 * 1024 * 1024  # per file, as attached
MAX_PAGES = 100  # per PDF
MAX_CHARS = 400_000  # of extracted text per file
MAX_NAME = 200  # characters of a file name kept

KINDS = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
         ".pdf": "pdf", ".csv": "csv"}
ACCEPTED = ".txt, .md, .html, .pdf or .csv"
PAGE_BREAK = "\f"  # between a PDF's pages in Source.text

# Signatures of binary formats that are not text whatever their name says.
_BINARY = {b"%PDF-": "PDF data", b"PK\x03\x04": "a ZIP archive (a .docx, .xlsx or .zip?)",
           b"\xd0\xcf\x11\xe0": "an old Office document", b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image",
           b"GIF8": "a GIF image", b"\x1f\x8b": "gzip data"}
# Control characters (C0, DEL, C1) other than tab, line feed, carriage return and form feed.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
# Elements whose content is never shown; block elements that start a line.
_HIDDEN = ("script", "style", "noscript", "template", "head", "meta", "link", "iframe", "object", "embed", "svg",
           "canvas")
# Blocks stand apart (a blank line around them); lines (a list item, a table row) end a line; cells share one.
_BLOCKS = ("address", "article", "aside", "blockquote", "caption", "details", "dialog", "div", "dl", "fieldset",
           "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main",
           "nav", "ol", "p", "pre", "section", "summary", "table", "ul")
_LINES = ("dd", "dt", "li", "tr")
_CELLS = ("td", "th")


@dataclass(frozen=True)
class Source:
    """One attached file, read: its text and what the store keys it on."""

    id: str  # SHA-256 hex of the bytes as attached
    name: str  # the file name, cleaned (no path, no control characters, at most 200 characters)
    kind: str  # "text", "markdown", "html", "pdf", "csv"
    text: str = field(repr=False)  # NFC, "\n" line ends; a PDF's pages separated by "\f"
    pages: int | None  # a PDF's page count, else None
    size: int  # bytes as attached
    ref: str = "S1"  # the short label by position in the debate's list: S1, S2, ... (see labelled)


def clean_name(name: str) -> str:
    """The file name without path parts or control/format characters, NFC, at most 200 characters (the
    extension kept); ``source`` when nothing is left."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = "".join(c for c in unicodedata.normalize("NFC", base) if unicodedata.category(c) not in ("Cc", "Cf"))
    base = base.strip() or "source"
    if len(base) > MAX_NAME:
        stem, dot, ext = base.rpartition(".")
        suffix = f".{ext}" if dot and stem and len(ext) <= 10 else ""
        base = base[: MAX_NAME - len(suffix)].rstrip() + suffix
    return base


def read_source(name: str, data: bytes) -> Source:
    """Read one attached file (labelled S1: it is a list of one; :func:`labelled` labels a longer list)."""
    name = clean_name(name)
    ext = ("." + name.rpartition(".")[2].lower()) if "." in name.strip(".") else ""
    kind = KINDS.get(ext)
    if kind is None:
        what = f"{ext} files are" if ext else "a file without an extension is"
        raise InputError(f"{name}: {what} not supported: attach {ACCEPTED}.")
    size = len(data)
    if size > MAX_BYTES:
        raise InputError(f"{name} is {_megabytes(size)}, over the {_megabytes(MAX_BYTES)} limit per file: "
                         "attach a smaller part of it.")
    if not data.strip():
        raise InputError(f"{name} holds no text.")
    pages = None
    if kind == "pdf":
        text, pages = _pdf(name, data)
    else:
        raw = _decode(name, data)
        text = _html(raw) if kind == "html" else _csv(name, raw) if kind == "csv" else raw
    text = _tidy(text)
    if not text.strip():
        if kind == "pdf":
            raise InputError(f"{name} holds no extractable text (a scanned PDF?): attach a PDF with a text layer "
                             "(run it through OCR) or its text as .txt.")
        raise InputError(f"{name} holds no text.")
    if len(text) > MAX_CHARS:
        raise InputError(f"{name} holds {len(text):,} characters of text, over the {MAX_CHARS:,}-character "
                         "limit per file: attach the part you need.")
    return Source(id=hashlib.sha256(data).hexdigest(), name=name, kind=kind, text=text, pages=pages, size=size)


def labelled(sources: Iterable[Source]) -> list[Source]:
    """The sources without repeats (the same content twice is kept once, first name wins), labelled S1, S2, ...
    in order."""
    seen: set[str] = set()
    kept = []
    for source in sources:
        if source.id not in seen:
            seen.add(source.id)
            kept.append(source)
    return [dataclasses.replace(source, ref=f"S{n}") for n, source in enumerate(kept, 1)]


def read_sources(files: Iterable[tuple[str, bytes]]) -> list[Source]:
    """Read a debate's files, all or nothing: every refusal (one per line) in one InputError, else the sources,
    repeats dropped, labelled S1, S2, ... in order."""
    files = list(files)
    if len(files) > MAX_FILES:
        raise InputError(f"{len(files)} files attached, over the limit of {MAX_FILES} per debate: attach the "
                         f"{MAX_FILES} you need most.")
    read, refused = [], []
    for name, data in files:
        try:
            read.append(read_source(name, data))
        except InputError as exc:
            refused.append(str(exc))
    if refused:
        raise InputError("\n".join(refused))
    return labelled(read)


def _megabytes(size: int) -> str:
    value = size / (1024 * 1024)
    return f"{value:.0f} MB" if value == int(value) else f"{value:.1f} MB"


def _decode(name: str, data: bytes) -> str:
    """Text as UTF-8 (BOM allowed), UTF-16 with a BOM, else Windows-1252; binary data refused."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            text = "\x00"
    else:
        for magic, what in _BINARY.items():
            if data.startswith(magic):
                raise InputError(f"{name} holds {what}, not text: attach the file under its own type "
                                 f"({ACCEPTED}).")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            try:
                text = data.decode("cp1252")
            except UnicodeDecodeError:
                text = "\x00"  # bytes Windows-1252 leaves undefined: not text either way
    controls = len(_CONTROL.findall(text))
    if "\x00" in text or controls > max(8, len(text) // 100):
        raise InputError(f"{name} is not readable text (it holds binary data): attach it saved as UTF-8 text.")
    return text


def _tidy(text: str) -> str:
    """NFC, "\\n" line ends, control characters dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n\n").replace("\x85", "\n")
    return unicodedata.normalize("NFC", _CONTROL.sub("", text))


def _html(markup: str) -> str:
    """The visible text of an HTML page: hidden elements and comments dropped, block elements on their own
    lines, whitespace inside a line collapsed as a browser does (``pre`` included: a known simplification)."""
    from bs4 import BeautifulSoup
    from bs4.element import NavigableString

    soup = BeautifulSoup(markup, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_HIDDEN):
        tag.decompose()
    for node in soup.find_all(string=True):
        if type(node) is not NavigableString:  # comments, CDATA, doctype, processing instructions
            node.extract()
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    for tag in soup.find_all(_BLOCKS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    for tag in soup.find_all(_LINES):
        tag.insert_after("\n")
    for tag in soup.find_all(_CELLS):
        tag.insert_after(" ")
    lines = [" ".join(line.split()) for line in soup.get_text().split("\n")]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return f"{title}\n\n{body}" if title and not body.startswith(title) else body


def _csv(name: str, text: str) -> str:
    """Each row as one line ``col1: v1; col2: v2`` (empty cells left out), the header row naming the columns."""
    refusal = f"{name} is not CSV ({{}}): export it as CSV again, or attach it as .txt."
    sample = text[:65536]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        rows = [row for row in csv.reader(io.StringIO(text), dialect) if any(cell.strip() for cell in row)]
    except csv.Error as exc:
        if not any(delimiter in sample for delimiter in ",;\t|"):
            raise InputError(refusal.format("it has a single column")) from exc
        raise InputError(refusal.format(f"its rows do not share a delimiter: {exc}")) from exc
    if not rows:
        raise InputError(f"{name} holds no text.")
    header = [" ".join(cell.split()) for cell in rows[0]]
    if len(header) < 2:
        raise InputError(refusal.format("it has a single column"))
    body = rows[1:]
    if not body:
        raise InputError(f"{name} holds no rows under its header: attach a CSV with data.")
    regular = sum(len(row) == len(header) for row in body)
    if regular < 0.8 * len(body):
        raise InputError(refusal.format(f"{len(body) - regular} of its {len(body)} rows do not have the header's "
                                        f"{len(header)} columns"))
    names = [cell or f"column {n}" for n, cell in enumerate(header, 1)]
    lines = []
    for row in body:
        cells = [(names[n] if n < len(names) else f"column {n + 1}", " ".join(value.split()))
                 for n, value in enumerate(row)]
        lines.append("; ".join(f"{key}: {value}" for key, value in cells if value))
    return "\n".join(line for line in lines if line)


def _pdf(name: str, data: bytes) -> tuple[str, int]:
    """Each page's text, pages joined by a form feed; and the page count."""
    from pypdf import PasswordType, PdfReader

    if b"%PDF-" not in data[:1024]:
        raise InputError(f"{name} cannot be read as a PDF: it has no PDF header: attach the PDF itself.")
    encrypted = f"{name} is encrypted: remove the password and attach it again."
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise InputError(encrypted)
        count = len(reader.pages)
    except InputError:
        raise
    except Exception as exc:  # pypdf raises many kinds on a damaged file: all of them mean "cannot be read"
        if _declares_encryption(data):  # e.g. AES that needs the cryptography package to try the empty password
            raise InputError(encrypted) from exc
        raise InputError(f"{name} cannot be read as a PDF: {_reason(exc)}: attach an undamaged copy.") from exc
    if count > MAX_PAGES:
        raise InputError(f"{name} has {count} pages, over the {MAX_PAGES}-page limit: attach the pages you need.")
    if count == 0:
        raise InputError(f"{name} holds no pages: attach a PDF with text in it.")
    texts = []
    for number, page in enumerate(reader.pages, 1):
        try:
            texts.append((page.extract_text() or "").replace(PAGE_BREAK, "\n"))
        except Exception as exc:
            raise InputError(f"{name}: page {number} cannot be read ({_reason(exc)}): attach an undamaged copy, "
                             "or its text as .txt.") from exc
    return PAGE_BREAK.join(texts), count


def _declares_encryption(data: bytes) -> bool:
    """Whether a PDF pypdf could not open names an /Encrypt dictionary in its trailer (or first bytes)."""
    return b"/Encrypt" in data[-4096:] or b"/Encrypt" in data[:4096]


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())[:200]
    return text or type(exc).__name__
