"""The ConText trigger lexicon (pure): ``context_lexicon.json`` compiled once per process.

The lexicon is data: families of trigger phrases (a category, a direction, a scope),
vocabularies the phrases share ("{relative}"), token shapes ("{number}"), regular
expressions for what words cannot say ("?" glued to a word, ~~struck~~ text), and the
words of a form's questions and answers. Phrases and texts are cut into the same
tokens, and one token trie holds every phrase of every family, so the longest phrase at
a word wins ("no known allergies" over "no"). Where each trigger reaches is decided by
``domain.policy.context.scope``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

LEXICON_PATH = Path(__file__).with_name("lexicon.json")


@dataclass(frozen=True)
class Family:
    name: str
    category: str  # one of domain.policy.context.mentions.CATEGORIES, "pseudo" or "terminate"
    direction: str  # forward | backward | bidirectional | self | pseudo | terminate
    forward_scope: str  # sentence | item
    backward_scope: str
    ends: frozenset[str]  # for terminators: the categories whose scope they end
    # Backward scope only when the words just before the trigger end like this
    # ("breast cancer in her mother", "diabetes (father)"), for triggers that
    # govern backwards only through a link word.
    backward_link: re.Pattern | None = None
    # Terminating words this family's scope runs past: "stopped it" points back through its
    # pronoun to the medicine before "but" ("started on X in May but stopped it").
    crosses: frozenset[str] = frozenset()


@dataclass(frozen=True)
class QuestionWords:
    openers: frozenset[str]
    yes: tuple[str, ...]
    no: tuple[str, ...]
    doubt: tuple[str, ...]  # answers that leave the question in doubt ("Unknown")




def _split_outside_classes(pattern: str) -> str:
    """A space in a lexicon pattern matches any whitespace, except inside [...]."""
    out, depth, escaped = [], 0, False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        out.append(r"\s+" if ch == " " and depth == 0 else ch)
    return "".join(out)


# Words (with inner hyphens and apostrophes: "pain-free", "don't") and single
# punctuation marks. Phrases and texts are cut the same way, so matching is on
# whole words: "no" never matches inside "nose".
# A combining accent (a decomposed "é") belongs to its word.
TOKEN = re.compile(r"[\w\u0300-\u036f]+(?:[-'’][\w\u0300-\u036f]+)*|[^\w\s\u0300-\u036f]")


_POSSESSIVE = re.compile(r"['’]s$")


@lru_cache(maxsize=8192)
def token_key(token: str) -> str:
    """A token as the lexicon looks it up: lower case, without accents, a possessive
    "'s", hyphens or apostrophes ("Mother's" = "mother", "Pain-free" = "painfree",
    "don't" = "dont", "quizás" = "quizas", "peut-être" = "peutetre"): cues written
    without their accents, as forms often are, match all the same."""
    folded = "".join(ch for ch in unicodedata.normalize("NFD", token) if not unicodedata.combining(ch))
    if len(folded) == 1:
        return folded.lower()
    return _POSSESSIVE.sub("", folded.lower()).replace("-", "").replace("'", "").replace("’", "")


def _tokens(text: str) -> list[str]:
    return [token_key(t) for t in TOKEN.findall(text)]


def _spellings(words: str) -> list[list[str]]:
    """A literal piece of a phrase as token keys; a hyphenated word may also be written
    as two words ("pain-free" / "pain free"), and either way matches."""
    joined = _tokens(words)
    split = _tokens(re.sub(r"(?<=\w)-(?=\w)", " ", words))
    return [joined] if joined == split else [joined, split]


def _expansions(phrase: str, words: dict[str, list[str]], shapes: dict[str, str]) -> list[tuple[str, ...]]:
    """Every form of a phrase as a sequence of token keys: "{via} {relative}" becomes
    ("per", "mother"), ("with", "sister")...; a {number}-like shape stays one
    "<name>" slot that any token of that shape fills."""
    forms: list[list[str]] = [[]]
    for part in re.split(r"(\{\w+\})", phrase):
        name = part[1:-1] if part.startswith("{") and part.endswith("}") else None
        if name is None:
            if part.strip():
                forms = [f + s for f in forms for s in _spellings(part)]
        elif name in words:
            forms = [f + s for f in forms for w in words[name] for s in _spellings(w)]
        elif name in shapes:
            forms = [f + [f"<{name}>"] for f in forms]
        else:
            raise ValueError(f"context lexicon: unknown vocabulary {part}")
    return [tuple(f) for f in forms if f]


def _vocabulary_regex(words: list[str]) -> str:
    """A vocabulary list as a regex alternation, for patterns and backward links."""
    return "(?:" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True)) + ")"


def _expand_pattern(pattern: str, vocab: dict[str, str]) -> str:
    parts = re.split(r"(\{\w+\})", pattern)
    out = []
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            if part[1:-1] not in vocab:
                raise ValueError(f"context lexicon: unknown vocabulary {part}")
            out.append(vocab[part[1:-1]])
        else:
            out.append(_split_outside_classes(part))
    return "".join(out)


def _scopes(spec) -> tuple[str, str]:
    if isinstance(spec, dict):
        return spec.get("forward", "sentence"), spec.get("backward", "sentence")
    return (spec or "sentence"), (spec or "sentence")


_END = "\x00"  # trie key under which a node lists the families whose phrase ends there


@dataclass(frozen=True)
class Lexicon:
    # Every phrase of every family in one token trie (dict of dicts): the longest
    # phrase starting at a word is found by walking it. One phrase may belong to
    # several families ("stopped" looks both ways).
    trie: dict
    shapes: tuple[tuple[str, re.Pattern], ...]  # "<number>" -> what fills that slot
    patterns: tuple[tuple[re.Pattern, Family], ...]
    questions: QuestionWords


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """Read and build the lexicon once per process."""
    data = json.loads(LEXICON_PATH.read_text(encoding="utf-8"))
    words = {name: list(ws) for name, ws in data["vocabulary"].items()}
    shapes = dict(data.get("vocabulary_patterns", {}))
    vocab = {name: _vocabulary_regex(ws) for name, ws in words.items()} | {n: f"(?:{rx})" for n, rx in shapes.items()}
    trie: dict = {}
    patterns: list[tuple[re.Pattern, Family]] = []
    for name, spec in data["families"].items():
        if not spec.get("phrases") and not spec.get("patterns"):
            raise ValueError(f"context lexicon: family {name} has no triggers")
        forward, backward = _scopes(spec.get("scope"))
        link = spec.get("backward_link")
        fam = Family(
            name=name, category=spec["category"], direction=spec["direction"], forward_scope=forward,
            backward_scope=backward, ends=frozenset(spec.get("ends", ())),
            backward_link=re.compile(f"(?:{_expand_pattern(link, vocab)})$", re.IGNORECASE) if link else None,
            crosses=frozenset(spec.get("crosses", ())),
        )
        for phrase in spec.get("phrases", ()):
            for form in _expansions(phrase, words, shapes):
                node = trie
                for key in form:
                    node = node.setdefault(key, {})
                ends = node.setdefault(_END, [])
                if fam not in ends:
                    ends.append(fam)
        patterns += [(re.compile(_expand_pattern(p, vocab), re.IGNORECASE), fam) for p in spec.get("patterns", ())]
    q = data["questions"]
    questions = QuestionWords(openers=frozenset(w.lower() for w in q["openers"]),
                           **{k: tuple(w.lower() for w in q[k]) for k in ("yes", "no", "doubt")})
    return Lexicon(trie, tuple((f"<{n}>", re.compile(rx)) for n, rx in shapes.items()),
                    tuple(patterns), questions)


def longest_phrase(trie: dict, keys: list[str], i: int, shapes) -> tuple[int, list[Family]] | None:
    """The longest phrase starting at token ``i``: (index after its last token, families)."""
    best = None
    stack = [(trie, i)]
    while stack:
        node, j = stack.pop()
        if _END in node and j > i and (best is None or j > best[0]):
            best = (j, node[_END])
        if j >= len(keys):
            continue
        child = node.get(keys[j])
        if child is not None:
            stack.append((child, j + 1))
        for slot, rx in shapes:
            if slot in node and rx.fullmatch(keys[j]):
                stack.append((node[slot], j + 1))
    return best
