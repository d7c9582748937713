"""The doc_type -> extractor table, in one place.

``load_all`` (re)fills any missing entry; an entry already present (a stand-in a
test put there) is left alone.
"""

from __future__ import annotations

from core.models import DocType
from extract.registry import EXTRACTORS, Extractor


def load_all() -> dict[DocType, Extractor]:
    from extract.referral import extract_referral
    from extract.fax import extract_fax
    from extract.hl7 import extract_hl7
    from extract.intake import extract_intake
    from extract.lab import extract_lab
    from extract.workbook import extract_workbook

    for doc_type, fn in {
        DocType.LAB_PDF: extract_lab, DocType.INTAKE_FORM: extract_intake, DocType.REFERRAL_DOCX: extract_referral,
        DocType.CLINICAL_WORKBOOK: extract_workbook, DocType.HL7V2_MESSAGE: extract_hl7, DocType.FAX_PACKET: extract_fax,
    }.items():
        EXTRACTORS.setdefault(doc_type, fn)
    return EXTRACTORS
