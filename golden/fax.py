"""Fax packet fixtures: a cover sheet plus typed lab and intake pages, possibly of
different patients, joined into one PDF (and, via golden.scan, a TIFF fax)."""

from __future__ import annotations

import pymupdf

from golden.ground_truth import IntakeCase, LabCase
from golden.intake_forms import render_intake
from golden.lab_layouts import render_lab


def cover_sheet(*, to: str = "Riverside Family Practice", sender: str = "Sunrise Valley Laboratories",
                pages: int = 4) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    lines = ["FAX COVER SHEET", "", f"To: {to}", "Fax: (541) 555-0100", f"From: {sender}",
             f"Pages (including cover): {pages}", "Re: results and forms for your patients", "",
             "CONFIDENTIAL: this transmission is intended only for the named recipient.",
             "If you received this fax in error, please notify the sender."]
    y = 90
    for line in lines:
        page.insert_text((72, y), line, fontsize=16 if line == "FAX COVER SHEET" else 11, fontname="helv")
        y += 24
    data = doc.tobytes(no_new_id=True)
    doc.close()
    return data


def packet(parts: list[LabCase | IntakeCase], *, with_cover: bool = True) -> bytes:
    out = pymupdf.open()
    sources = [cover_sheet(pages=len(parts) + 1)] if with_cover else []
    sources += [render_lab(p) if isinstance(p, LabCase) else render_intake(p) for p in parts]
    for data in sources:
        with pymupdf.open(stream=data, filetype="pdf") as src:
            out.insert_pdf(src)
    data = out.tobytes(no_new_id=True)
    out.close()
    return data
