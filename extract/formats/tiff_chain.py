"""Walk a TIFF's chain of image directories (one per page) before Pillow reads it.

Pillow follows the chain itself but stops quietly where it loops back or points past
the end of the file, so a packet whose chain is damaged was read as if whole: pages
silently missing or read twice. The walk is linear in the number of directories and
reads only their entry counts and next-pointers.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# A directory claiming more entries than this is garbage (real ones hold 10-30).
MAX_ENTRIES = 4096
MAX_DIRECTORIES = 100_000


@dataclass
class Chain:
    """Where each page's directory starts, and what is wrong with the chain (plain
    words) or None when it ends cleanly or the bytes are not a TIFF this walk reads."""

    offsets: list[int] = field(default_factory=list)
    damage: str | None = None


def chain_damage(data: bytes) -> str | None:
    return walk(data).damage


def walk(data: bytes) -> Chain:
    head = data[:4]
    if head in (b"II*\x00", b"MM\x00*"):
        order, big = ("<" if head[:2] == b"II" else ">"), False
        offset = _unpack(data, order + "I", 4)
    elif head in (b"II+\x00", b"MM\x00+"):  # BigTIFF: 8-byte offsets
        order, big = ("<" if head[:2] == b"II" else ">"), True
        offset = _unpack(data, order + "Q", 8)
    else:
        return Chain()
    count_fmt, entry_size, next_fmt = ("Q", 20, "Q") if big else ("H", 12, "I")
    count_size = 8 if big else 2
    chain = Chain()
    seen: set[int] = set()
    while offset:
        page = len(chain.offsets) + 1
        if offset in seen:
            chain.damage = f"its list of pages loops back on itself after page {page - 1}"
            break
        if len(seen) >= MAX_DIRECTORIES:
            chain.damage = "its list of pages does not end"
            break
        seen.add(offset)
        entries = _unpack(data, order + count_fmt, offset)
        if entries is None:
            chain.damage = f"page {page} lies past the end of the file (the file may be cut short)"
            break
        if entries == 0 or entries > MAX_ENTRIES:
            chain.damage = f"the description of page {page} is unreadable"
            break
        chain.offsets.append(offset)
        offset = _unpack(data, order + next_fmt, offset + count_size + entries * entry_size)
        if offset is None:
            chain.damage = f"the description of page {page} is cut short (the file may be cut short)"
            break
    return chain


def starting_at(data: bytes, offset: int) -> bytes | None:
    """The same classic TIFF with its header pointing at the directory at ``offset``:
    a page Pillow cannot reach by following the chain (a damaged page before it stops
    the walk) opened as the first page of a copy."""
    head = data[:4]
    if head not in (b"II*\x00", b"MM\x00*"):
        return None
    order = "<" if head[:2] == b"II" else ">"
    return head + struct.pack(order + "I", offset) + data[8:]


def _unpack(data: bytes, fmt: str, at: int) -> int | None:
    size = struct.calcsize(fmt)
    if at < 0 or at + size > len(data):
        return None
    return struct.unpack_from(fmt, data, at)[0]
