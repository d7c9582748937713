"""Load the checked-in guideline corpus as section-level chunks.

Each markdown file in ``sources/`` starts with a ``---`` header block (slug, title,
issuing_body, year, url) and holds ``##`` sections; every section becomes one chunk whose
id, ``<slug>#<section-slug>``, stays the same for as long as the slug and heading do.
The corpus version lives in ``VERSION``; ``manifest.json`` records a content hash per
chunk so that changed text without a new version fails the test suite (see
:mod:`corpus.manifest`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from domain.models import Citation

CORPUS_DIR = Path(__file__).resolve().parent
SOURCES_DIR = CORPUS_DIR / "sources"
VERSION_FILE = CORPUS_DIR / "VERSION"

REQUIRED_HEADER_KEYS = ("slug", "title", "issuing_body", "year", "url")
QUOTE_CHARS = 200
_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class CorpusError(ValueError):
    """A source file or the version file is malformed (a defect in checked-in data)."""


@dataclass(frozen=True)
class SourceReference:
    issuing_body: str
    title: str
    year: int
    url: str

    def __str__(self) -> str:
        return f"{self.issuing_body}. {self.title} ({self.year}). {self.url}"


@dataclass(frozen=True)
class GuidelineChunk:
    """One ``##`` section of one source: the unit that is indexed, retrieved and cited."""

    chunk_id: str
    corpus_version: str
    source_title: str
    source_reference: str
    section: str
    text: str
    citation: dict[str, Any] = field(hash=False, compare=False)

    @classmethod
    def build(
        cls,
        *,
        chunk_id: str,
        corpus_version: str,
        source_title: str,
        source_reference: str,
        section: str,
        text: str,
    ) -> "GuidelineChunk":
        citation = Citation(
            source_type="guideline",
            source_id=chunk_id,
            page_or_section=section,
            field_or_chunk_id=chunk_id,
            quote_or_value=leading_quote(text),
        ).model_dump(mode="json")
        return cls(chunk_id, corpus_version, source_title, source_reference, section, text, citation)

    @property
    def content_hash(self) -> str:
        """Hash of everything a reader sees; the version does not enter it."""
        payload = json.dumps(
            [self.chunk_id, self.source_title, self.source_reference, self.section, self.text],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @property
    def index_text(self) -> str:
        """What embedders see: the heading path gives a short section its topic."""
        return f"{self.source_title} - {self.section}\n{self.text}"


def leading_quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """A verbatim prefix of ``text`` of about ``limit`` characters, cut at a word end."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit]


def slugify(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def read_version(path: Path = VERSION_FILE) -> str:
    version = path.read_text(encoding="utf-8").strip()
    if not _VERSION_RE.match(version):
        raise CorpusError(f"{path}: corpus version {version!r} must match {_VERSION_RE.pattern}")
    return version


@dataclass(frozen=True)
class Source:
    slug: str
    reference: SourceReference
    sections: tuple[tuple[str, str], ...]  # (heading, text)


def parse_source(path: Path) -> Source:
    """Parse one source file; every malformed part raises ``CorpusError`` naming the file."""
    raw = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", raw, re.S)
    if not match:
        raise CorpusError(f"{path.name}: missing '---' header block")
    header: dict[str, str] = {}
    for line in match.group(1).splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise CorpusError(f"{path.name}: header line without ':': {line!r}")
        header[key.strip()] = value.strip().strip('"')
    missing = [k for k in REQUIRED_HEADER_KEYS if not header.get(k)]
    if missing:
        raise CorpusError(f"{path.name}: header lacks {', '.join(missing)}")
    if not _SLUG_RE.match(header["slug"]):
        raise CorpusError(f"{path.name}: slug {header['slug']!r} is not lowercase-hyphenated")
    if not header["year"].isdigit():
        raise CorpusError(f"{path.name}: year must be a number")
    reference = SourceReference(
        header["issuing_body"], header["title"], int(header["year"]), header["url"]
    )
    return Source(header["slug"], reference, _sections(path.name, match.group(2)))


def _sections(name: str, body: str) -> tuple[tuple[str, str], ...]:
    sections: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif line.startswith("# ") or not line.strip():
            if sections:
                sections[-1][1].append("")
        elif not sections:
            raise CorpusError(f"{name}: text before the first '##' section would be lost")
        else:
            sections[-1][1].append(line.strip())
    out = []
    for heading, lines in sections:
        paragraphs = [" ".join(p.split("\n")).strip() for p in "\n".join(lines).split("\n\n")]
        text = "\n\n".join(p for p in paragraphs if p)
        if not text:
            raise CorpusError(f"{name}: section {heading!r} is empty")
        out.append((heading, text))
    if not out:
        raise CorpusError(f"{name}: no '##' sections")
    return tuple(out)


def load_corpus(
    sources_dir: Path = SOURCES_DIR, version_file: Path = VERSION_FILE
) -> tuple[str, list[GuidelineChunk]]:
    """Return ``(corpus_version, chunks)`` in a stable order (file name, then section)."""
    version = read_version(version_file)
    chunks: list[GuidelineChunk] = []
    seen_slugs: dict[str, str] = {}
    seen_ids: set[str] = set()
    for path in sorted(sources_dir.glob("*.md")):
        source = parse_source(path)
        if source.slug in seen_slugs:
            raise CorpusError(f"{path.name}: slug {source.slug!r} already used by {seen_slugs[source.slug]}")
        seen_slugs[source.slug] = path.name
        for heading, text in source.sections:
            chunk_id = f"{source.slug}#{slugify(heading)}"
            if chunk_id in seen_ids:
                raise CorpusError(f"{path.name}: duplicate section heading {heading!r}")
            seen_ids.add(chunk_id)
            chunks.append(
                GuidelineChunk.build(
                    chunk_id=chunk_id,
                    corpus_version=version,
                    source_title=source.reference.title,
                    source_reference=str(source.reference),
                    section=heading,
                    text=text,
                )
            )
    if not chunks:
        raise CorpusError(f"no sources found in {sources_dir}")
    return version, chunks
