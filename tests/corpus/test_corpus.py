"""The checked-in guideline corpus: shape, references, citations, and version enforcement."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from domain.models import Citation
from corpus import manifest as manifest_module
from corpus.loader import (
    SOURCES_DIR,
    CorpusError,
    GuidelineChunk,
    load_corpus,
    parse_source,
    read_version,
)
from corpus.manifest import build_manifest, corpus_digest, manifest_problems, read_manifest, write_manifest

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*#[a-z0-9]+(?:-[a-z0-9]+)*$")


@pytest.fixture(scope="module")
def corpus() -> tuple[str, list[GuidelineChunk]]:
    return load_corpus()


def test_version_and_chunk_count(corpus):
    version, chunks = corpus
    assert version == read_version()
    assert 60 <= len(chunks) <= 150
    assert all(c.corpus_version == version for c in chunks)


def test_at_least_twelve_sources_covering_every_topic(corpus):
    _, chunks = corpus
    sources = {c.chunk_id.split("#")[0] for c in chunks}
    assert len(sources) >= 12
    text = " ".join(f"{c.source_title} {c.section} {c.text}".lower() for c in chunks)
    for topic in ("a1c", "statin", "ldl", "hypertension", "out-of-office", "colorectal", "mammography",
                  "cervical", "egfr", "albumin", "tsh", "not make diagnoses"):
        assert topic in text, topic


def test_chunk_ids_are_unique_well_formed_and_stable(corpus):
    _, chunks = corpus
    ids = [c.chunk_id for c in chunks]
    assert len(ids) == len(set(ids))
    assert all(ID_RE.match(i) for i in ids)
    assert ids == [c.chunk_id for c in load_corpus()[1]]  # same order on every load
    assert set(ids) == set(read_manifest()["chunks"])  # ids are pinned by the manifest


def test_every_source_has_a_full_reference():
    for path in sorted(SOURCES_DIR.glob("*.md")):
        ref = parse_source(path).reference
        assert ref.issuing_body and ref.title, path.name
        assert 1990 <= ref.year <= 2030, path.name
        assert ref.url.startswith("https://"), path.name


def test_chunk_reference_and_citation_shape(corpus):
    _, chunks = corpus
    for c in chunks:
        assert c.source_reference.startswith(c.source_reference.split(".")[0])
        assert "https://" in c.source_reference and re.search(r"\(\d{4}\)", c.source_reference)
        cite = Citation.model_validate(c.citation)
        assert cite.source_type == "guideline"
        assert cite.source_id == cite.field_or_chunk_id == c.chunk_id
        assert cite.page_or_section == c.section
        assert c.text.startswith(cite.quote_or_value)  # verbatim, so a verifier can re-find it
        assert 20 <= len(cite.quote_or_value) <= 200


def test_sections_are_substantial(corpus):
    _, chunks = corpus
    for c in chunks:
        assert 10 <= len(c.text.split()) <= 200, c.chunk_id


# -- version enforcement ------------------------------------------------------------


def test_checked_in_manifest_matches_the_corpus(corpus):
    version, chunks = corpus
    assert manifest_problems(version, chunks, read_manifest()) == []


def test_changed_text_under_the_same_version_is_caught(corpus):
    version, chunks = corpus
    edited = [dataclasses.replace(chunks[0], text=chunks[0].text + " Extra words.")] + chunks[1:]
    problems = manifest_problems(version, edited, read_manifest())
    assert any("changed without a manifest update" in p for p in problems)
    assert any("bump corpus/VERSION" in p for p in problems)


def test_regenerated_manifest_without_a_new_version_is_caught(corpus):
    version, chunks = corpus
    edited = [dataclasses.replace(chunks[0], text="Rewritten.")] + chunks[1:]
    manifest = read_manifest()
    forged = build_manifest(version, edited, {})  # chunk hashes regenerated...
    forged["history"] = manifest["history"]  # ...but the released digest is kept
    assert any("bump corpus/VERSION" in p for p in manifest_problems(version, edited, forged))


def test_new_version_with_new_content_passes_and_old_history_is_kept(corpus, tmp_path):
    version, chunks = corpus
    path = tmp_path / "manifest.json"
    write_manifest(version, chunks, path)
    edited = [dataclasses.replace(c, corpus_version="v-next") for c in chunks[:-1]]
    with pytest.raises(SystemExit, match="bump corpus/VERSION"):
        write_manifest(version, edited, path)
    written = write_manifest("v-next", edited, path)
    assert written["history"] == {version: corpus_digest(chunks), "v-next": corpus_digest(edited)}
    assert manifest_problems("v-next", edited, written) == []


def test_same_content_under_two_versions_is_flagged(corpus):
    version, chunks = corpus
    manifest = build_manifest(version, chunks, {"older": corpus_digest(chunks)})
    assert any("identical content" in p for p in manifest_problems(version, chunks, manifest))


def test_manifest_cli_check_passes():
    assert manifest_module.main([]) == 0


# -- malformed sources --------------------------------------------------------------


def _copy_corpus(tmp_path: Path) -> tuple[Path, Path]:
    sources = tmp_path / "sources"
    shutil.copytree(SOURCES_DIR, sources)
    version = tmp_path / "VERSION"
    version.write_text("test-1\n")
    return sources, version


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("url: ", "link: ", "lacks url"),
        ("---\n", "", "header block"),
        ("year: 2024", "year: recent", "year"),
        ("## A1C goal for most nonpregnant adults", "## How often to check A1C", "duplicate section"),
        ("# Glycemic goals and A1C testing in adults with diabetes\n",
         "# Glycemic goals\n\nA paragraph outside any section.\n", "before the first"),
        ("slug: ada-2024-glycemic-goals", "slug: ADA Glycemic", "slug"),
    ],
)
def test_malformed_source_is_refused(tmp_path, old, new, message):
    sources, version = _copy_corpus(tmp_path)
    target = sources / "ada-2024-glycemic-goals.md"
    original = target.read_text()
    assert old in original
    target.write_text(original.replace(old, new, 1))
    with pytest.raises(CorpusError, match=message):
        load_corpus(sources, version)


def test_copied_corpus_loads_unchanged(tmp_path):
    sources, version = _copy_corpus(tmp_path)
    _, copied = load_corpus(sources, version)
    assert [c.content_hash for c in copied] == [c.content_hash for c in load_corpus()[1]]


def test_bad_version_string_is_refused(tmp_path):
    sources, version = _copy_corpus(tmp_path)
    version.write_text("bad version/../x\n")
    with pytest.raises(CorpusError):
        load_corpus(sources, version)
