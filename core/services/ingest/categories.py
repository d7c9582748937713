"""Document categories and the doc type each is read as: what a clinic calls its
documents ("Outside labs", "Scanned referrals") mapped to the reader that extracts them.

Changing a mapping changes how future uploads are read, so it is an admin's decision and
is audited (who, before, after); documents already stored keep the job they had. The
list is ``core.services.ingest.ingestion.list_categories`` (the upload form reads it).
"""

from __future__ import annotations

from typing import Any

from domain.errors import BadInput
from domain.models import DocType
from domain.policy.access.permissions import Permission
from core.services.admin.accounts import authorize
from core.services.workbench import Workbench
from storage import audit_repo, documents_repo

MAX_NAME = 60


def map_category(wb: Workbench, name: str, doc_type: str | None, *, by: str) -> dict[str, Any]:
    """Map category ``name`` (created when new) to ``doc_type``; None or "" unmaps it, so
    its uploads are stored without extraction. Returns the category with its mapping."""
    actor = authorize(wb, by, Permission.MANAGE_CATEGORIES)
    name = " ".join((name or "").split())
    if not name or len(name) > MAX_NAME:
        raise BadInput(f"A category name has 1-{MAX_NAME} characters.", code="bad_category")
    if doc_type:
        try:
            doc_type = DocType(doc_type).value
        except ValueError:
            known = ", ".join(t.value for t in DocType)
            raise BadInput(f"Unknown document type {doc_type!r}; use one of: {known}, or none.",
                           code="unsupported_doc_type") from None
    else:
        doc_type = None
    with wb.db.transaction() as cur:
        category = documents_repo.category_by_name(cur, name) or documents_repo.add_category(cur, name)
        before = category["doc_type"]
        if before != doc_type:
            documents_repo.set_mapping(cur, category["id"], doc_type)
            audit_repo.add_review_decision(cur, item_type="category", item_id=category["id"], decision="map",
                                           actor=actor.name, reason=None, before={"doc_type": before},
                                           after={"doc_type": doc_type})
        return documents_repo.category_by_name(cur, name)
