"""Build a golden case's fixture documents from their declarative specs.

A case file names each document by a spec, never by a stored file: the generators of
this package draw it from the spec (reproducibly, scans from a seed), or a small real
sample from ``../shared/data`` is read in place. The eval runner uploads the bytes; the
Evals page rebuilds the same bytes to draw a cited box on the page.

Spec kinds (``"kind"``):

* ``lab`` - a lab report: ``preset`` (a ``golden.fixtures`` lab case) and/or
  ``layout``, ``patient``, ``collection_date``, ``lab_name``, ``panels``
  (``[[panel name, [[test, value, unit, range, flag, printed flag(, collection date)], ...]], ...]``;
  a cumulative layout prints one column per collection date), ``inline`` (rows of one
  test stated in a sentence).
* ``intake`` - an intake form of ``golden.fixtures`` (``preset`` plus overrides).
* ``intake_layout`` - a form of ``golden.intake_layouts`` (``preset``: a case of
  ``golden.intake_layout_cases``; overrides of
  ``allergies_printed``/``allergies``/``patient``/``chief_concern``/``medications``).
* ``referral`` / ``office`` - a named builder of ``golden.referral_letters`` or
  ``golden.office_fixtures``.
* ``docx`` - a letter of ``paragraphs`` (and optional ``table`` rows, or ``tables``, each a
  list of rows), then ``after_table`` paragraphs.
* ``xlsx`` - a workbook of ``sheets`` (``{name: [[cell, ...], ...]}``).
* ``hl7`` - a message from ``segments`` (joined by carriage returns).
* ``fhir`` - FHIR JSON: the ``json`` object (a Bundle or one resource) written out as
  an exporter writes it (indented, UTF-8).
* ``typed`` - a plain typed PDF of ``lines``.
* ``fax`` - a packet of ``parts`` (each a ``lab`` or ``intake`` spec), with a cover
  sheet unless ``"cover": false``.
* ``shared`` - a real sample at ``path`` under ``../shared/data``.
* ``raw`` - ``text`` (or ``hex``) bytes as they are: empty, corrupt or mislabelled files.

Any paged spec may add ``"scan": {"seed": 1, "format": "pdf"|"png"|"tiff", "dpi": 200,
"rotate": 1.5, "noise": 0.03}`` to turn it into an image-only scan.
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from golden import fixtures as fx

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
CASES_DIR = Path(__file__).resolve().parent / "cases"


class SharedDataMissing(RuntimeError):
    """A case reads a real sample that this clone does not have."""


def patient_of(value: Any, patients: dict[str, dict]) -> fx.Patient:
    """A printed person: a key of the case's patients, or an inline mapping."""
    p = patients[value] if isinstance(value, str) else value
    return fx.Patient(first=p["first"], last=p["last"], dob=p["dob"], mrn=p["mrn"], middle=p.get("middle", ""),
                      sex=p.get("sex", "U"))


def _lab(spec: dict, patients: dict) -> bytes:
    base = fx.lab_case(spec["preset"]) if "preset" in spec else None
    panels = spec.get("panels")
    if panels is not None:
        panels = tuple((name, tuple(fx.ExpectedLab(*row) for row in rows)) for name, rows in panels)
    case = fx.LabCase(
        name=spec.get("name", base.name if base else "lab"),
        layout=spec.get("layout", base.layout if base else "classic"),
        patient=patient_of(spec["patient"], patients) if "patient" in spec else base.patient,
        collection_date=spec.get("collection_date", base.collection_date if base else "2026-04-10"),
        panels=panels if panels is not None else base.panels,
        lab_name=spec.get("lab_name", base.lab_name if base else "Sunrise Valley Laboratories"),
        inline=tuple(fx.ExpectedLab(*row) for row in spec.get("inline", ())),
    )
    from golden.identity_layouts import LAYOUTS as IDENTITY_LAYOUTS

    if case.layout in IDENTITY_LAYOUTS:  # headers with abbreviated identity labels
        return IDENTITY_LAYOUTS[case.layout](case)
    return fx.render_lab(case)


def _meds(rows: list) -> tuple:
    return tuple(fx.ExpectedMedication(*r) if isinstance(r, list) else fx.ExpectedMedication(**r) for r in rows)


def _allergies(rows: list) -> tuple:
    return tuple(fx.ExpectedAllergy(*r) if isinstance(r, list) else fx.ExpectedAllergy(**r) for r in rows)


def _overrides(spec: dict, patients: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key in ("kind", "preset", "scan", "filename"):
            continue
        if key == "patient":
            out[key] = patient_of(value, patients)
        elif key == "medications":
            out[key] = _meds(value)
        elif key == "allergies":
            out[key] = _allergies(value)
        elif isinstance(value, list):
            out[key] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
        else:
            out[key] = value
    return out


def _intake(spec: dict, patients: dict) -> bytes:
    case = replace(fx.intake_case(spec["preset"]), **_overrides(spec, patients))
    return fx.render_intake(case)


def _intake_layout(spec: dict, patients: dict) -> bytes:
    from golden import intake_layout_cases, intake_layouts

    overrides = _overrides(spec, patients)
    if "others" in overrides:
        overrides["others"] = tuple(intake_layouts.OtherPerson(*o) for o in overrides["others"])
    return intake_layouts.render(replace(intake_layout_cases.case(spec["preset"]), **overrides))


def _named(spec: dict, patients: dict) -> bytes:
    from golden import office_fixtures, referral_letters

    name = spec["builder"]
    if name in referral_letters.BUILDERS:
        return referral_letters.build(name)
    return office_fixtures.BUILDERS[name]()


def _docx(spec: dict, patients: dict) -> bytes:
    import docx

    doc = docx.Document()
    for text in spec.get("paragraphs", []):
        doc.add_paragraph(text)
    # "table": one table after the paragraphs; "tables": several, one after another
    for rows in ([spec["table"]] if spec.get("table") else []) + list(spec.get("tables") or []):
        table = doc.add_table(rows=len(rows), cols=max(len(r) for r in rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                table.cell(r, c).text = str(text)
    for text in spec.get("after_table", []):
        doc.add_paragraph(text)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _xlsx(spec: dict, patients: dict) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in spec["sheets"].items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _hl7(spec: dict, patients: dict) -> bytes:
    return "\r".join(spec["segments"]).encode("utf-8") + b"\r"


def _fhir(spec: dict, patients: dict) -> bytes:
    import json

    return json.dumps(spec["json"], indent=2, ensure_ascii=False).encode("utf-8")


def _typed(spec: dict, patients: dict) -> bytes:
    from golden.scan import typed_pdf

    return typed_pdf(spec["lines"], pages=spec.get("pages", 1))


def _fax(spec: dict, patients: dict) -> bytes:
    from golden.fax import packet

    parts = []
    for part in spec["parts"]:
        if part["kind"] == "lab":
            base = fx.lab_case(part["preset"])
            parts.append(replace(base, **({"patient": patient_of(part["patient"], patients)} if "patient" in part
                                          else {})))
        else:
            parts.append(replace(fx.intake_case(part["preset"]), **_overrides(part, patients)))
    return packet(parts, with_cover=spec.get("cover", True))


def _shared(spec: dict, patients: dict) -> bytes:
    path = SHARED_DATA / spec["path"]
    if not path.is_file():
        raise SharedDataMissing(f"real sample {spec['path']} not found under {SHARED_DATA}")
    return path.read_bytes()


def _raw(spec: dict, patients: dict) -> bytes:
    if "hex" in spec:
        return bytes.fromhex(spec["hex"])
    return spec.get("text", "").encode("utf-8")


BUILDERS: dict[str, Callable[[dict, dict], bytes]] = {
    "lab": _lab, "intake": _intake, "intake_layout": _intake_layout, "referral": _named, "office": _named,
    "docx": _docx, "xlsx": _xlsx, "hl7": _hl7, "fhir": _fhir, "typed": _typed, "fax": _fax, "shared": _shared,
    "raw": _raw,
}
_EXTENSION = {"lab": "pdf", "intake": "pdf", "intake_layout": "pdf", "docx": "docx", "xlsx": "xlsx", "hl7": "hl7",
              "fhir": "json", "typed": "pdf", "fax": "pdf", "raw": "bin"}


def build_spec(spec: dict, patients: dict[str, dict], *, key: str = "document") -> tuple[bytes, str]:
    """The bytes of one document spec and the filename it is uploaded under."""
    family = spec["kind"]  # the fixture family that draws it (the case files call it "kind")
    if family not in BUILDERS:
        raise ValueError(f"unknown document kind {family!r}")
    data = BUILDERS[family](spec, patients)
    if family in ("referral", "office"):
        ext = "xlsx" if spec["builder"].endswith("xlsx") or spec["builder"].startswith("workbook") else "docx"
    elif family == "shared":
        ext = spec["path"].rsplit(".", 1)[-1]
    else:
        ext = _EXTENSION[family]
    scan = spec.get("scan")
    if scan:
        from golden.scan import scan_pdf

        fmt = scan.get("format", "pdf")
        data = scan_pdf(data, dpi=scan.get("dpi", 200), rotate_deg=scan.get("rotate", 1.5),
                        noise=scan.get("noise", 0.03), seed=scan.get("seed", 0), as_format=fmt,
                        tiff_compression=scan.get("compression", "group4"), dpi_y=scan.get("dpi_y"))
        ext = {"pdf": "pdf", "png": "png", "tiff": "tif"}[fmt]
    return data, spec.get("filename") or f"{key}.{ext}"


def build(case_id: str, doc_key: str) -> tuple[bytes, str]:
    """Rebuild one document of a golden case (for the Evals page's source viewer)."""
    from golden.cases import load_case

    case = load_case(case_id)
    return build_spec(case.documents[doc_key], case.patients, key=doc_key)
