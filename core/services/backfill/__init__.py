"""Batch backfill: a manifest of documents read on a pool of readers (local or Ray) and
persisted by one writer through the same services as an upload (docs/backfill.md)."""
