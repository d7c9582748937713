"""BM25 keyword index over guideline chunks (tantivy, English stemming).

One directory per corpus version, ``<root>/tantivy/<corpus_version>/``, so a new version
is built beside the old one and never edits it. A ``COMPLETE`` marker is written last;
a directory without it is a half-built index and is rebuilt from scratch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import tantivy

MARKER = "COMPLETE"
SEARCH_FIELDS = ("title", "section", "body")
FIELD_BOOSTS = {"section": 1.5, "title": 1.2, "body": 1.0}  # headings say what a chunk is about
MAX_QUERY_TERMS = 48
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TERM_RE = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class KeywordDoc:
    chunk_id: str
    title: str
    section: str
    body: str


def sanitise_query(query: str) -> str:
    """Plain lowercase words only.

    Dropping every symbol removes the query language (quotes, ``field:``, ``+/-``,
    brackets, ``^``, ``~``) and lowercasing removes the AND/OR/NOT/IN operators, so any
    user text parses; what is left is a bag of words, which is what BM25 scores anyway.
    """
    return " ".join(_TERM_RE.findall(query.lower())[:MAX_QUERY_TERMS])


class KeywordIndex:
    """Build once, then search many times from any thread (the searcher is cached)."""

    def __init__(self, root: Path | str, corpus_version: str):
        if not _VERSION_RE.match(corpus_version):
            raise ValueError(f"corpus version {corpus_version!r} is not safe as a directory name")
        self.path = Path(root) / "tantivy" / corpus_version
        self._index: tantivy.Index | None = None
        self._searcher: tantivy.Searcher | None = None
        self._lock = threading.Lock()

    @staticmethod
    def _schema() -> tantivy.Schema:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("chunk_id", stored=True, tokenizer_name="raw")
        for name in SEARCH_FIELDS:
            builder.add_text_field(name, stored=False, tokenizer_name="en_stem")
        return builder.build()

    def is_complete(self) -> bool:
        return (self.path / MARKER).is_file()

    def doc_count(self) -> int:
        """Documents recorded by the completed build (0 when not built)."""
        if not self.is_complete():
            return 0
        return int(json.loads((self.path / MARKER).read_text())["count"])

    def build(self, docs: Iterable[KeywordDoc], *, rebuild: bool = False) -> tuple[int, bool]:
        """Build the index unless a complete one exists (or ``rebuild``).
        Returns ``(count, skipped)``."""
        if self.is_complete() and not rebuild:
            return self.doc_count(), True
        if self.path.exists():
            shutil.rmtree(self.path)  # a crashed earlier build: start clean
        self.path.mkdir(parents=True)
        index = tantivy.Index(self._schema(), path=str(self.path))
        writer = index.writer(heap_size=50_000_000, num_threads=1)
        count = 0
        for doc in docs:
            writer.add_document(
                tantivy.Document(chunk_id=doc.chunk_id, title=doc.title, section=doc.section, body=doc.body)
            )
            count += 1
        writer.commit()
        writer.wait_merging_threads()
        tmp = self.path / (MARKER + ".tmp")
        tmp.write_text(json.dumps({"count": count}))
        os.replace(tmp, self.path / MARKER)
        with self._lock:
            self._index, self._searcher = None, None
        return count, False

    def _open(self) -> tuple[tantivy.Index, tantivy.Searcher]:
        with self._lock:
            if self._searcher is None:
                if not self.is_complete():
                    raise FileNotFoundError(f"keyword index not built: {self.path}")
                self._index = tantivy.Index.open(str(self.path))
                self._searcher = self._index.searcher()
            assert self._index is not None
            return self._index, self._searcher

    def search(self, query: str, limit: int = 30) -> list[tuple[str, float]]:
        """Top ``limit`` ``(chunk_id, bm25)`` pairs; empty when the query has no words."""
        text = sanitise_query(query)
        if not text:
            return []
        index, searcher = self._open()
        parsed = index.parse_query(text, list(SEARCH_FIELDS), field_boosts=FIELD_BOOSTS)
        hits = searcher.search(parsed, limit, count=False).hits
        return [(searcher.doc(address)["chunk_id"][0], float(score)) for score, address in hits]
