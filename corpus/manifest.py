"""The corpus manifest: a content hash per chunk, and one digest per corpus version ever
released. Changing any chunk's text under an already-released version is refused, so an
index built for version X always holds the text that X names.

    python -m corpus.manifest            # check; exit 1 with the problems
    python -m corpus.manifest --write    # record the current version (after bumping VERSION)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from corpus.loader import CORPUS_DIR, GuidelineChunk, load_corpus

MANIFEST_FILE = CORPUS_DIR / "manifest.json"


def corpus_digest(chunks: Sequence[GuidelineChunk]) -> str:
    lines = sorted(f"{c.chunk_id} {c.content_hash}" for c in chunks)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def build_manifest(version: str, chunks: Sequence[GuidelineChunk], history: dict[str, str]) -> dict[str, Any]:
    digest = corpus_digest(chunks)
    return {
        "corpus_version": version,
        "corpus_digest": digest,
        "chunk_count": len(chunks),
        "chunks": {c.chunk_id: c.content_hash for c in chunks},
        "history": {**history, version: digest},
    }


def manifest_problems(version: str, chunks: Sequence[GuidelineChunk], manifest: dict[str, Any]) -> list[str]:
    """Everything that disagrees between the corpus on disk and the checked-in manifest."""
    problems: list[str] = []
    if manifest.get("corpus_version") != version:
        problems.append(
            f"corpus/VERSION is {version!r} but manifest.json records {manifest.get('corpus_version')!r}:"
            " run `python -m corpus.manifest --write`"
        )
    recorded: dict[str, str] = manifest.get("chunks", {})
    current = {c.chunk_id: c.content_hash for c in chunks}
    for chunk_id in sorted(set(recorded) | set(current)):
        if recorded.get(chunk_id) != current.get(chunk_id):
            state = "added" if chunk_id not in recorded else "removed" if chunk_id not in current else "changed"
            problems.append(f"chunk {chunk_id} {state} without a manifest update")
    history: dict[str, str] = manifest.get("history", {})
    digest = corpus_digest(chunks)
    if history.get(version) != digest:
        problems.append(
            f"content of corpus version {version!r} differs from what was released under it:"
            " bump corpus/VERSION, then run `python -m corpus.manifest --write`"
        )
    released = list(history.values())
    if len(set(released)) != len(released):
        problems.append("two corpus versions in the history have identical content")
    return problems


def read_manifest(path: Path = MANIFEST_FILE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(version: str, chunks: Sequence[GuidelineChunk], path: Path = MANIFEST_FILE) -> dict[str, Any]:
    history: dict[str, str] = read_manifest(path).get("history", {}) if path.exists() else {}
    digest = corpus_digest(chunks)
    if version in history and history[version] != digest:
        raise SystemExit(
            f"corpus version {version!r} was already released with other content; bump corpus/VERSION first"
        )
    if digest in history.values() and history.get(version) != digest:
        raise SystemExit("this content is already released under another version; nothing to do")
    manifest = build_manifest(version, chunks, history)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="record the current corpus version")
    args = parser.parse_args(argv)
    version, chunks = load_corpus()
    if args.write:
        manifest = write_manifest(version, chunks)
        print(f"manifest written: {version} ({manifest['chunk_count']} chunks)")
        return 0
    problems = manifest_problems(version, chunks, read_manifest())
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
