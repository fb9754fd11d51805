"""Cut sentences: where a string stops mid-phrase (the decoder's length cap, or a small model closing it early), and
where it can be ended instead, at its last whole sentence or clause or after its last word that still reads whole.

Plain Python on strings, on the word lists of :mod:`clearside.checks.text`.
"""

from __future__ import annotations

import math
import re
from functools import cache

from .text import DANGLING, NEVER_LAST, VERBS, has_verb, known, statement_problem, vocabulary, words

# A string the decoder's length cap ended stops where the cap fell: on an article, a preposition, a conjunction,
# a possessive or a comma. Without a final stop any of these ends a cut; with one ("protecting the.") only the
# words no English sentence ends on.
_CUT_OPEN = DANGLING | frozenset([
    "its", "their", "our", "your", "my", "whose", "whether", "into", "towards", "toward", "between", "including",
    "nor", "for", "about", "against", "among", "across", "during", "without", "within", "through", "via", "per",
    "at", "was", "were", "been", "being", "these", "those", "very"
])  # never "in", "on", "most", "is"...: "what matters most", "the rules it is built on" end a sentence
_CUT_CLOSED = NEVER_LAST | frozenset([
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
]) | VERBS | _CUT_OPEN | _CUT_CLOSED | _SUBORDINATE | _WH | _PREPOSITIONS | _SUBJECT_VERBS
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
        finite = any(w in VERBS or w in _SUBJECT_VERBS or w.endswith("ed") for w in tokens[1:])
        if not finite or len(clause) < 3 or not has_verb(clause) or opener is not None and (
                len(clause) - opener < 3 or not has_verb(clause[opener + 1:])):
            continue
        sentence = f"{head}."
        if not (cut_problem(sentence) or statement_problem(sentence, verb=True)):
            return sentence
    return None
