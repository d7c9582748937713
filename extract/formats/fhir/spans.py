"""JSON read with the place of every value: where in the text each object member and
array item stands, so a citation can quote a value exactly as the file writes it
(``5.40``, not the float ``5.4``) and a viewer can show it.

The standard ``json`` module checks the syntax first (its error names the line and
column); this walk then runs over text known to be valid JSON. Depth is bounded: a file
of a million nested brackets is refused before any recursion could exhaust the stack.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}


class TooDeep(ValueError):
    """The JSON nests deeper than the reader allows."""


@dataclass(slots=True)
class Node:
    """One JSON value: its parsed value, its span in the text, and its children."""

    value: Any
    start: int
    end: int
    members: dict[str, "Node"] = field(default_factory=dict)  # an object's, last duplicate wins as in json
    items: list["Node"] = field(default_factory=list)  # an array's

    def raw(self, text: str) -> str:
        return text[self.start:self.end]

    def get(self, *path: str | int) -> "Node | None":
        """The node at a path of member names and item indexes, or None."""
        node: Node | None = self
        for step in path:
            if node is None:
                return None
            if isinstance(step, int):
                node = node.items[step] if 0 <= step < len(node.items) else None
            else:
                node = node.members.get(step)
        return node


def max_depth(text: str) -> int:
    """The deepest bracket nesting of JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse(text: str, *, depth_limit: int) -> Node:
    """The JSON text as a tree of ``Node``. Raises ``json.JSONDecodeError`` for invalid
    JSON and ``TooDeep`` past ``depth_limit`` levels."""
    if max_depth(text) > depth_limit:
        raise TooDeep(f"nested more than {depth_limit} levels deep")
    json.loads(text)  # the syntax check, with its line and column on failure
    node, end = _value(text, _skip(text, 0))
    if _skip(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return node


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()


def _value(text: str, at: int) -> tuple[Node, int]:
    ch = text[at]
    if ch == "{":
        node = Node({}, at, at)
        at = _skip(text, at + 1)
        if text[at] == "}":
            node.end = at + 1
            return node, at + 1
        while True:
            key, at = scanstring(text, at + 1)
            at = _skip(text, _skip(text, at) + 1)  # past the colon
            child, at = _value(text, at)
            node.members[key] = child
            node.value[key] = child.value
            at = _skip(text, at)
            if text[at] == "}":
                node.end = at + 1
                return node, at + 1
            at = _skip(text, at + 1)  # past the comma, to the next key's quote
    if ch == "[":
        node = Node([], at, at)
        at = _skip(text, at + 1)
        if text[at] == "]":
            node.end = at + 1
            return node, at + 1
        while True:
            child, at = _value(text, at)
            node.items.append(child)
            node.value.append(child.value)
            at = _skip(text, at)
            if text[at] == "]":
                node.end = at + 1
                return node, at + 1
            at = _skip(text, at + 1)
    if ch == '"':
        value, end = scanstring(text, at + 1)
        return Node(value, at, end), end
    m = _NUMBER.match(text, at)
    if m:
        raw = m.group(0)
        number = float(raw) if any(c in raw for c in ".eE") else int(raw)
        return Node(number, at, m.end()), m.end()
    for word, value in _LITERALS.items():
        if text.startswith(word, at):
            return Node(value, at, at + len(word)), at + len(word)
    raise json.JSONDecodeError("Expecting value", text, at)
