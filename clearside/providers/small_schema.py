"""A wire schema tightened for a small in-process model (:meth:`EmbeddedProvider.constrain
<clearside.providers.embedded.EmbeddedProvider.constrain>`): length-bounded strings get sentence patterns the
grammar enforces, and arrays are held near their minimum. No llama.cpp here: plain schemas and regexes.
"""

from __future__ import annotations

from typing import Any

# Sentences start with a capital letter or digit and hold no JSON punctuation: without this, small
# models constrained to "any string" fill strings with stray brackets and braces.
_TEXT = r'^[A-Z0-9][^"\\{}\[\]<>\x00-\x1f]{%d,%d}$'
# A label made of words (x-words: a topic) opens with a letter: never a bare number such as "154".
_LABEL = r'^[A-Z][^"\\{}\[\]<>\x00-\x1f]{%d,%d}$'
# A sentence (a string of 100 characters or more at most) opens with three plain words and goes on: it
# starts with a capital letter (never a list number, "1. ..."), has at least four words (never a one- or
# two-word label such as "Economic costs"), and its opening words hold no ":" or "_" (never a field name
# such as "EvidenceGaps: ..." or "Root_cause: ..."). Opening words run to 12 characters, and the rest is
# bounded so that the whole stays within maxLength. An opening word is letters, or (after the first) a number
# ("In 2020 cities ...", "Rents rose 3% ..."): never letters and digits mixed, so a small model cannot open a
# sentence with the assumption ids or codes it was shown ("C1 a2 c3 d4", "P1 p5 e7 t8": whole syntheses failed so).
_LETTER = r"[A-Za-z'-]"
_NEXT = rf"({_LETTER}{{1,12}}|[0-9][0-9.,%%]{{0,11}})"  # "%%": the patterns are %-formatted with their bounds
_OPENING = rf"[A-Z]{_LETTER}{{0,11}} {_NEXT} {_NEXT} "
OPENING = len("A23456789012 123456789012 123456789012 ")  # the longest opening: the whole stays within maxLength
_SENTENCE = "^" + _OPENING + r'[^"\\{}\[\]<>\x00-\x1f]{%d,%d}$'
# Words that open a question, never a claim: a small model that starts a claim with "Should ..." is copying the
# question it was given (the advocates' echo), so a statement's grammar cannot start with them.
QUESTION_OPENERS = ("Should", "Would", "Could", "Can", "Will", "Shall", "Is", "Are", "Do", "Does", "Did", "What",
                    "Why", "How", "Which", "When", "Where", "Who")
_WORD_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'-"  # a first word's: letters only


def first_word_except(words: tuple[str, ...], longest: int = 12) -> str:
    """A regex for a capitalised word of 1 to ``longest`` word characters that is none of ``words``.

    Grammar patterns have no lookahead, so the complement is spelled out over the words' trie: at each prefix
    of a listed word, either stop (when the prefix itself is not listed), or go on with a character that leaves
    the trie (then any word characters), or follow the trie."""
    def alternatives(prefix: str, chars: str) -> list[str]:
        depth = len(prefix)
        nexts = sorted({w[depth] for w in words if w.startswith(prefix) and len(w) > depth})
        options = []
        if depth < longest:
            others = "".join(c for c in chars if c not in nexts)
            rest = longest - depth - 1
            tail = f"{_LETTER}{{0,{rest}}}" if rest else ""
            options.append(f"[{re_class(others)}]{tail}")
            options += [c + follow(prefix + c) for c in nexts]
        return options

    def follow(prefix: str) -> str:
        """After a listed word's prefix: more characters, or (when the prefix is not listed) none."""
        options = alternatives(prefix, _WORD_CHARS)
        return f"({'|'.join(options)})" + ("" if prefix in words else "?")

    return group(alternatives("", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))


def re_class(chars: str) -> str:
    """The characters as the body of a regex class (ranges where they run on)."""
    out, i = [], 0
    while i < len(chars):
        j = i
        while j + 1 < len(chars) and ord(chars[j + 1]) == ord(chars[j]) + 1 and chars[j].isalnum():
            j += 1
        out.append(chars[i] if j == i else chars[i] + ("" if j == i + 1 else "-") + chars[j])
        i = j + 1
    return "".join(out)  # a "-" comes last (as in _WORD_CHARS), where it is a literal


def group(options: list[str]) -> str:
    return options[0] if len(options) == 1 else "(" + "|".join(options) + ")"


_STATEMENT_OPENING = first_word_except(QUESTION_OPENERS) + rf" {_NEXT} {_NEXT} "
# a claim is never a question: it holds no "?" and does not open with a question's word
_STATEMENT = "^" + _STATEMENT_OPENING + r'[^"\\{}\[\]<>?\x00-\x1f]{%d,%d}$'
SENTENCE_MIN = 15
# Words that make a moderator's string address the user or speak for someone (x-neutral): "You should ...",
# "I recommend ...", "We must ..." take a side, and the neutrality check rejects them; a small model asked about a
# personal decision ("Should I ...?") opened its synthesis's topics with "You should" on every attempt.
ADDRESSING = ("You", "I", "We")
_NOT_LETTER = r'[^"\\{}\[\]<>\x00-\x1fA-Za-z' + "'-]"  # what ends a first word: the rest cannot make "Yo" "You"
_NEUTRAL_LABEL = "^" + first_word_except(ADDRESSING) + "(" + _NOT_LETTER + r'[^"\\{}\[\]<>\x00-\x1f]{0,%d})?$'
_NEUTRAL_SENTENCE = "^" + first_word_except(ADDRESSING) + rf" {_NEXT} {_NEXT} " + r'[^"\\{}\[\]<>\x00-\x1f]{%d,%d}$'


def compact(schema: Any) -> Any:
    """Tighten a wire schema for small in-process models.

    Length-bounded free-text strings get a sentence pattern the grammar enforces,
    and arrays are held to at most one item above their minimum, which keeps a
    full debate within the time budget on a 2-core CPU.
    """
    if isinstance(schema, list):
        return [compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "string" and "enum" not in schema and "maxLength" in schema:
        low = max(int(schema.get("minLength", 1)) - 1, 0)
        high = int(schema["maxLength"])
        if high < 100 and schema.get("x-neutral"):
            return {"type": "string", "pattern": _NEUTRAL_LABEL % max(high - 2 - 12, 1)}
        if high < 100:
            return {"type": "string", "pattern": (_LABEL if schema.get("x-words") else _TEXT) % (low, high - 1)}
        pattern = _STATEMENT if schema.get("x-statement") else _NEUTRAL_SENTENCE if schema.get(
            "x-neutral") else _SENTENCE
        rest = max(max(low, SENTENCE_MIN - 1) - OPENING, 2)
        return {"type": "string", "pattern": pattern % (rest, high - 1 - OPENING)}
    result = {key: compact(value) for key, value in schema.items()}
    if schema.get("type") == "array" and "minItems" in schema and "maxItems" in schema:
        result["maxItems"] = min(schema["maxItems"], schema["minItems"] + 1)
    return result
