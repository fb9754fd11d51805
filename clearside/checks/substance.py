"""What a string says, or fails to: letter-digit codes and number runs instead of words, statements that say
nothing, a claim that restates the question, negations (which flip a question), a question that asks nothing
specific. Plain Python on strings, like :mod:`clearside.checks.text`, whose words and stems it uses.
"""

from __future__ import annotations

import re

from .text import STOPWORDS, containment, stem, words

_ALNUM = re.compile(r"[A-Za-z0-9]+")
_RUNS = re.compile(r"[A-Za-z]+|[0-9]+")
_NUMBERS = re.compile(r"\d+(?:[/.:,\-]\d+)*")
CODE_RUNS = 5  # "D2A4B3E05": an identifier, never a word ("B2B", "H100", "IPv6" have 2-3 runs)
CODE_SHARE = 0.5  # at least this share of the tokens letter-digit codes ("P1 C2 D3 E4"), and at least 3 of them
NUMBER_GROUPS = 5  # digit groups joined by punctuation alone ("2019/3/7/48.56"; a date has 3, a range 2)


def code_soup(text: str) -> str | None:
    """Why ``text`` is letter-digit codes or identifiers instead of words, or None."""
    tokens = _ALNUM.findall(text)
    codes = [tok for tok in tokens if re.search(r"[A-Za-z]", tok) and re.search(r"\d", tok)]
    if any(len(_RUNS.findall(tok)) >= CODE_RUNS for tok in codes):
        return "is an identifier or code, not words"
    if len(codes) >= 3 and len(codes) >= CODE_SHARE * len(tokens):
        return f"is a run of codes ({' '.join(codes[:4])} ...), not words"
    if len(codes) >= 2 and not any(tok.isalpha() and len(tok) >= 2 and not tok.isupper() for tok in tokens):
        return f"is codes ({' '.join(codes[:4])}), not words"  # "P3, C4", "D5 B6 CABS 102983": not a word in it
    return None


def number_soup(text: str) -> str | None:
    """Why ``text`` is a run of dates and numbers instead of words, or None."""
    clusters = _NUMBERS.findall(text)
    groups = sum(len(re.findall(r"\d+", c)) for c in clusters)
    longest = max((len(re.findall(r"\d+", c)) for c in clusters), default=0)
    letters = [w for w in re.findall(r"[A-Za-z]{2,}", text)]
    if longest >= NUMBER_GROUPS or (groups >= 6 and groups > 2 * len(letters)):
        return "is a run of dates and numbers, not a statement"
    return None


# Words that say a point exists without saying it: "This is based on several key points. The first, the second."
_VACUOUS = frozenset([
    "based", "several", "key", "point", "main", "first", "second", "third", "fourth", "last", "following",
    "reason", "various", "number", "important", "factor", "aspect", "thing", "way", "many", "consideration",
    "also", "further", "argument", "case", "issue", "matter", "mentioned", "above", "below", "one", "two", "three",
    "etc", "other", "another", "different", "certain", "lot", "lots", "list", "make", "made", "below", "include",
    "includes", "including", "like", "follow", "follows", "next", "finally", "lastly", "firstly", "secondly",
    "thirdly", "additionally", "furthermore", "moreover", "well", "just", "say", "said", "explain", "explained",
    "reasons", "points", "factors", "aspects", "things", "ways", "considerations", "arguments", "cases", "issues",
    # talk about the debate instead of in it: "This is a very important topic.", "This topic has many different
    # sides that we must consider.", "This case is based on a unique perspective."
    "topic", "topics", "debate", "debates", "debated", "discussion", "discuss", "discussed", "perspective",
    "perspectives", "viewpoint", "side", "sides", "consider", "considered", "considering", "very", "unique",
    "information", "contains", "contain", "final", "complex", "question", "questions", "more"
])


def empty_statement(text: str) -> str | None:
    """Why ``text`` says nothing (every content word only announces points), or None."""
    found = [w for w in words(text) if w not in STOPWORDS]
    if found and all(w in _VACUOUS or stem(w) in _VACUOUS for w in found):
        return "says nothing: it announces points without making one"
    return None


# "The premise is that the city should ...": a claim that describes the proposition instead of arguing.
_FRAMING = re.compile(r"(?i)^\s*(?:the|this|our|my)\s+(?:premise|proposition|question|proposal|motion|idea|"
                      r"issue|debate|topic|case|claim|argument)\s+(?:here\s+)?(?:is|asks|concerns|states|says)"
                      r"\s+(?:that|whether|about|if)?\s*")


def framed_restatement(text: str, question: str) -> bool:
    """``text`` opens by naming the proposition ("The premise is that ...") and then restates it."""
    match = _FRAMING.match(text)
    return bool(match) and containment(question, text[match.end():]) >= 0.6


_NEGATIONS = frozenset({"not", "no", "never", "cannot", "nor", "neither"})


def negations(text: str) -> int:
    """How many negations ``text`` holds ("not", "never", "shouldn't" ...)."""
    return sum(1 for w in words(text.replace("’", "'")) if w in _NEGATIONS or w.endswith("n't"))


# Words that ask for nothing in particular: a question made only of these (and stopwords) is generic (a clarifying
# question of Perspectives, "Can you tell me more?"; a debate's decision hinge, "What are your thoughts?").
FILLER = frozenset([
    "tell", "more", "detail", "details", "information", "info", "else", "anything", "something", "everything",
    "situation", "context", "provide", "share", "explain", "elaborate", "think", "feel", "feeling", "want", "know",
    "mean", "help", "like", "please", "question", "thing", "happen", "happened", "happening", "going", "describe",
    "give", "say", "add", "further", "additional", "background", "clarify", "specific", "specifically", "exactly",
    "currently", "right", "good", "idea", "best", "option", "decision", "choice", "advice", "opinion", "view",
    "matter", "important", "consider", "really", "actually", "also", "other", "way", "need", "go", "get", "now",
    "one", "ok", "okay", "sure", "well", "much", "many", "me", "myself", "yourself", "yes", "else's", "decide",
    "thought", "thoughts", "opinions", "ideas", "suggestions", "worth",
])


def roots(text: str) -> set[str]:
    """The words of ``text`` that carry its content: stopwords and filler out, plurals and -ing/-ed folded."""
    found = set()
    for word in words(text):
        if word in STOPWORDS or word in FILLER:
            continue
        word = stem(word)
        for ending in ("ing", "ed"):
            if word.endswith(ending) and len(word) > len(ending) + 3:
                word = word[: -len(ending)]
        found.add(word)
    return found


def generic(question: str) -> bool:
    """It asks nothing specific: no word of it names a person, an event, a time or a wish."""
    return not roots(question)
