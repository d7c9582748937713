"""What each FHIR bundle id exported (``fhir_export_entries``, migration 18): a re-export
under the same bundle id sends what has left the chart since as entered-in-error."""

from __future__ import annotations

from typing import Any

import duckdb

from domain.clock import utcnow
from storage.db import rows, to_json


def bundle_patient(cur: duckdb.DuckDBPyConnection, bundle_id: str) -> int | None:
    """The patient a bundle id was exported for, or None when the id is new."""
    cur.execute("SELECT patient_id FROM fhir_export_entries WHERE bundle_id = ? LIMIT 1", [bundle_id])
    found = cur.fetchone()
    return int(found[0]) if found else None


def exported_entries(cur: duckdb.DuckDBPyConnection, bundle_id: str) -> list[dict[str, Any]]:
    """Every resource a bundle id has exported, with the resource as last written."""
    cur.execute("SELECT * FROM fhir_export_entries WHERE bundle_id = ? ORDER BY resource_type, resource_id",
                [bundle_id])
    return rows(cur)


def record_export(cur: duckdb.DuckDBPyConnection, bundle_id: str, patient_id: int,
                  resources: list[dict[str, Any]]) -> None:
    """Remember each resource of a written bundle (inserted, or updated when the bundle id
    exported it before): its last form and status."""
    now = utcnow()
    for resource in resources:
        status = str(resource.get("status") or (resource.get("verificationStatus") or {}).get("coding", [{}])[0]
                     .get("code") or "")
        cur.execute(
            """INSERT INTO fhir_export_entries (bundle_id, patient_id, resource_type, resource_id, resource, status,
                   first_exported_at, last_exported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (bundle_id, resource_type, resource_id)
               DO UPDATE SET resource = excluded.resource, status = excluded.status,
                   last_exported_at = excluded.last_exported_at""",
            [bundle_id, patient_id, resource["resourceType"], resource["id"], to_json(resource), status, now, now])
