"""The viewer's services: every cited box with the right colour class, pages rendered
once, HL7 / XLSX / DOCX shown natively at the cited place, and the delete preview
agreeing with what delete_document then does."""

from __future__ import annotations

import shutil

import pytest

from core.services.review import document_view as dv
from core.services.review import native_views
from core.services.review.facts import chart_view, document_report, patient_facts
from core.services.ingest.ingestion import list_categories, suggest_category
from core.services.review.retraction import delete_document, deletion_impact
from golden.demo import DOCUMENTS


def _load(wb, *filenames: str) -> dict[str, int]:
    from core.services.ingest.demo import load_demo

    loaded = load_demo(wb, [d for d in DOCUMENTS if d.filename in filenames])
    assert all(d["job"]["status"] == "succeeded" for d in loaded), loaded
    return {d["filename"]: d["document_id"] for d in loaded}


@pytest.fixture(autouse=True)
def _fresh_caches():
    dv.clear_caches()
    yield
    dv.clear_caches()


def test_every_cited_fact_of_the_demo_lab_is_one_box(wb):
    doc = _load(wb, "demo-lab-typed.pdf")["demo-lab-typed.pdf"]
    facts = document_report(wb, doc)["facts"]
    view = dv.document_view(wb, doc)
    cited = [f for f in facts if f["citation"]["bounding_box"]]
    assert view.paged and view.page_count == 1
    assert len(view.boxes()) == len(cited) == 10
    assert {b["fact_id"] for b in view.boxes()} == {f["fact_id"] for f in cited}
    assert {b["box_class"] for b in view.boxes()} == {"verified"}
    assert all(0 <= b["box"]["x"] <= 1 and 0 < b["box"]["width"] <= 1 for b in view.boxes())
    assert view.unboxed == [] and view.page_of(cited[3]["fact_id"]) == 1


def test_box_classes_follow_the_overview_grouping(wb, demo_patient):
    docs = _load(wb, "demo-intake.pdf", "demo-lab-typed.pdf", "demo-lab-repeat.pdf")
    groups = patient_facts(wb, demo_patient["id"])
    expected = {f["fact_id"]: group for group, facts in groups.items() for f in facts}
    seen = set()
    for doc in docs.values():
        for box in dv.document_view(wb, doc).boxes():
            assert box["box_class"] == expected[box["fact_id"]], box
            seen.add(box["box_class"])
    assert {"verified", "document_fact", "needs_review"} <= seen  # intake: past history, uncertain allergy; repeat: conflict


def test_a_quarantined_documents_facts_are_held(wb):
    doc = _load(wb, "demo-wrong-patient-lab.pdf")["demo-wrong-patient-lab.pdf"]
    boxes = dv.document_view(wb, doc).boxes()
    assert boxes and {b["box_class"] for b in boxes} == {"held"}


def test_a_page_is_rendered_once_however_often_it_is_shown(wb):
    doc = _load(wb, "demo-lab-typed.pdf")["demo-lab-typed.pdf"]
    shutil.rmtree(wb.settings.renders_dir)  # force a real rasterisation below
    before = dv.render_stats["renders"]
    first = dv.page_image(wb, doc, 1)
    for _ in range(3):
        assert dv.page_image(wb, doc, 1) == first
        dv.document_view(wb, doc)  # computing boxes never renders
    assert dv.render_stats["renders"] - before == 1
    assert first.startswith(b"\x89PNG")
    dv.clear_caches()  # a new process: the file cache answers
    assert dv.page_image(wb, doc, 1) == first
    assert dv.render_stats["renders"] - before == 1


def test_page_words_are_in_citation_space(wb):
    doc = _load(wb, "demo-lab-typed.pdf")["demo-lab-typed.pdf"]
    fact = next(f for f in document_report(wb, doc)["facts"] if f["structured_value"].get("test_name") == "Hemoglobin")
    box = fact["citation"]["bounding_box"]
    words = dv.page_words(wb, doc, 1)
    inside = [w["text"] for w in words
              if box["x"] - 1e-6 <= w["x"] and w["x"] + w["width"] <= box["x"] + box["width"] + 1e-6
              and box["y"] - 1e-6 <= w["y"] and w["y"] + w["height"] <= box["y"] + box["height"] + 1e-6]
    assert " ".join(inside) == fact["citation"]["quote_or_value"]


def test_non_paged_sources_flag_the_cited_place(wb):
    docs = _load(wb, "demo-critical-potassium.hl7", "demo-workbook.xlsx", "demo-referral.docx")

    hl7 = dv.document_view(wb, docs["demo-critical-potassium.hl7"])
    assert not hl7.paged and hl7.boxes() == [] and len(hl7.unboxed) == len(hl7.facts)
    potassium = next(f for f in hl7.facts if f["structured_value"]["test_name"] == "Potassium")
    segs = native_views.hl7_segments(wb, potassium["citation"])
    cited = [r for r in segs.rows if r["cited"]]
    assert [(r["segment"], r["index"], r["field"], r["value"]) for r in cited] == [("OBX", 1, 5, "6.8")]
    assert (segs.test_name, segs.unit, segs.reference_range, segs.flag) == ("Potassium", "mmol/L", "3.5-5.1", "HH")
    assert not any(r["cited_segment"] for r in segs.rows if (r["segment"], r["index"]) == ("OBX", 2))

    book = dv.document_view(wb, docs["demo-workbook.xlsx"])
    later = next(f for f in book.facts if f["citation"]["quote_or_value"] == "7.9")
    grid = native_views.sheet_grid(wb, later["citation"])
    assert grid.sheet == "Lab trend" and grid.columns == ["A", "B", "C", "D", "E"]
    assert grid.cited == {(3, c) for c in range(1, 6)}
    row3 = dict(grid.rows)[3]
    assert row3[2] == "7.9" and dict(grid.rows)[1][2] == "Result"  # header row kept as context

    letter = dv.document_view(wb, docs["demo-referral.docx"])
    allergy = next(f for f in letter.facts if f["fact_type"] == "allergy")
    ctx = native_views.docx_context(wb, allergy["citation"])
    hit = next(i for i in ctx.items if i["cited"])
    assert hit["locator"] == allergy["citation"]["page_or_section"]
    a, b = hit["span"]
    assert hit["text"][a:b].lower() == allergy["citation"]["quote_or_value"].lower()
    assert len(ctx.items) > 1 and sum(i["cited"] for i in ctx.items) == 1


def test_deletion_impact_is_what_delete_then_does(wb, demo_patient):
    docs = _load(wb, "demo-lab-typed.pdf", "demo-workbook.xlsx")
    lab = docs["demo-lab-typed.pdf"]
    impact = deletion_impact(wb, lab)
    kept = {r["label"]: r["kept_by_documents"] for r in impact["chart_rows_kept"]}
    assert kept == {"Hemoglobin A1c": [docs["demo-workbook.xlsx"]]}  # the workbook's A1c supports that row
    assert impact["facts"] == 10 and impact["promotions"] == 10 and impact["chart_rows"] == 9

    result = delete_document(wb, lab, by="dr.alice")
    assert {k: result["retracted"][k] for k in ("facts", "promotions", "chart_rows")} == \
        {k: impact[k] for k in ("facts", "promotions", "chart_rows")}
    labs = {r["id"]: r for r in chart_view(wb, demo_patient["id"])["labs"]}
    kept_id = impact["chart_rows_kept"][0]["row_id"]
    assert labs[kept_id]["document_ids"] == [docs["demo-workbook.xlsx"]]  # still in the chart, re-linked
    assert not any(r["row_id"] in labs for r in impact["chart_rows_retracted"])
    assert not any(lab in r["document_ids"] for r in labs.values())

    view = dv.document_view(wb, lab)
    assert view.deleted.startswith("deleted on ") and view.deleted.endswith("by dr.alice")
    assert view.boxes() == [] and view.page_count == 1  # retracted facts are not drawn, the page still shows
    assert len(dv.document_view(wb, lab, include_deleted=True).boxes()) == 10
    from core.services.review.source_review import source_view

    old = source_view(wb, document_report(wb, lab)["facts"][0]["citation"])  # an old answer's citation
    assert old.image_png and "deleted on" in old.note and "dr.alice" in old.note


def test_the_upload_form_suggests_a_category_from_the_file(wb):
    cats = list_categories(wb)
    by_name = {d.filename: d for d in DOCUMENTS}
    expected = {"demo-critical-potassium.hl7": "HL7 v2 Message", "demo-workbook.xlsx": "Clinical Workbook",
                "demo-referral.docx": "Referral Document", "demo-intake.pdf": "Intake Form",
                "demo-lab-typed.pdf": "Lab Report", "demo-fax-packet.pdf": "Fax Packet"}
    for filename, category in expected.items():
        # the bytes decide, not the name
        assert suggest_category("upload.bin", by_name[filename].build(), cats) == category, filename
    assert suggest_category("notes.txt", b"just some words", cats) == "Other"


def _attach(wb, patient, filename: str, data: bytes, doc_type: str) -> int:
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.ingest.worker import Worker

    attached = attach_and_extract(wb, patient_id=patient["id"], source=filename, data=data, filename=filename,
                                  doc_type=doc_type, by="dr.reviewer")
    job = Worker(wb, worker_id="test").run_specific(attached.job["id"])
    assert job["status"] == "succeeded", job
    return attached.document["id"]


def _cited_in_view(wb, view, fact) -> bool:
    """Whether the viewer marks the fact's cited place: a box holding the quote on a
    page, the cited field in the HL7 table, the quoted cell in the grid shown, the quote
    in the DOCX item."""
    from domain.policy.facts.review_rules import quote_missing_from_box

    cit = fact["citation"]
    if view.paged:
        return fact["fact_id"] not in view.unboxed and not quote_missing_from_box(
            cit["quote_or_value"], dv.page_words(wb, view.document_id, cit["page"]), cit["bounding_box"])
    if view.kind == "hl7":
        values = [r["value"] for r in native_views.hl7_segments(wb, cit, document_id=view.document_id).rows if r["cited"]]
        quote = cit["quote_or_value"].strip().lower()
        return bool(values) and (quote in " ".join(values).lower() or any(v.strip().lower() in quote for v in values))
    if view.kind == "xlsx":
        grid = native_views.sheet_grid(wb, cit, document_id=view.document_id)
        return any((n, grid.first_col + i) in grid.cited and text == cit["quote_or_value"]
                   for n, cells in grid.rows for i, text in enumerate(cells))
    if view.kind == "docx":
        return any(i["cited"] and i["span"] for i in native_views.docx_context(wb, cit, document_id=view.document_id).items)
    return False


def test_a_wide_sheet_keeps_the_quoted_cell_in_view(wb, demo_patient):
    # Twenty-two admin columns before the results: the value sits in column Y.
    import io

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Export 2026"
    sheet.append([f"Admin {i}" for i in range(1, 23)] + ["Date", "Test", "Result", "Units", "Reference range"])
    sheet.append(["x"] * 22 + ["2026-04-10", "Potassium", 5.9, "mmol/L", "3.5-5.1"])
    who = book.create_sheet("Patient", 0)
    for row in (["Patient name", "Marisol Quintero-Vale"], ["Date of birth", "1961-03-14"], ["MRN", "DEMO-1001"]):
        who.append(row)
    buf = io.BytesIO()
    book.save(buf)
    doc = _attach(wb, demo_patient, "wide.xlsx", buf.getvalue(), "clinical_workbook")
    view = dv.document_view(wb, doc)
    potassium = next(f for f in view.facts if f["citation"]["quote_or_value"] == "5.9")
    grid = native_views.sheet_grid(wb, potassium["citation"], document_id=doc)
    assert len(grid.columns) == 20 and "Y" in grid.columns and "AA" in grid.columns
    assert _cited_in_view(wb, view, potassium)


def test_an_hl7_message_behind_a_banner_is_shown_as_hl7(wb, demo_patient):
    # Sniffed as text; the pipeline read it as HL7 because of its doc type, so must the viewer.
    from core.services.review.source_review import source_view

    data = ("Printed by LIS gateway 2026-10-20\r\n"
            "MSH|^~\\&|LAB|HARBOUR LAB|EHR|CLINIC|20261020101500||ORU^R01^ORU_R01|G1|P|2.5.1\r"
            "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F\r"
            "OBR|1|ORD1|FIL1|80048^Basic metabolic panel^C4|||20261020083000\r"
            "OBX|1|NM|2823-3^Potassium^LN||6.8|mmol/L|3.5-5.1|HH|||F\r").encode()
    doc = _attach(wb, demo_patient, "gateway-print.txt", data, "hl7v2_message")
    view = dv.document_view(wb, doc)
    assert view.kind == "hl7" and len(view.facts) == 1
    assert _cited_in_view(wb, view, view.facts[0])
    assert source_view(wb, view.facts[0]["citation"]).source_text == "6.8"


REAL_SAMPLES = (("hl7/nist_LRI_ORU_R01_v2.5.1_CBC_28obx.hl7", "hl7v2_message"),
                ("hl7/rs_BATCH_FHS_BHS_20x_ORU_R01_v2.5.1_CR.hl7", "hl7v2_message"),
                ("hl7/mangled_MDM_T04_v2.3_pdf_wrapped_radiology.hl7", "hl7v2_message"),
                ("scans/hl7_ccda_discharge_summary_typed_with_lipids.pdf", "lab_pdf"),
                ("scans/msft_immunization_consent_and_screening_form_blank.pdf", "intake_form"),
                ("scans/aws_patient_intake_form_handwritten_photo.jpg", "intake_form"))


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.usefixtures("cached_ocr")  # the photo is also read by test_images: once a run (tests/support/ocr_cache.py)
def test_every_cited_fact_of_the_real_samples_is_marked_in_the_viewer(wb, demo_patient, shared_data):
    missed, seen = [], 0
    for path, doc_type in REAL_SAMPLES:
        doc = _attach(wb, demo_patient, path.split("/")[-1], (shared_data / path).read_bytes(), doc_type)
        view = dv.document_view(wb, doc)
        for fact in view.facts:
            if fact["box_class"] is not None:
                seen += 1
                if not _cited_in_view(wb, view, fact):
                    missed.append((path, fact["citation"]["page_or_section"], fact["citation"]["quote_or_value"]))
    assert seen > 150 and missed == []


def test_job_progress_says_found_nothing_as_the_document_list_does(wb, demo_patient):
    from core.services.ingest.ingestion import job_progress
    from core.services.admin.patients import chart_documents

    from golden.documents import build_spec

    note, _ = build_spec({"kind": "docx", "paragraphs": ["Thank you for your letter.", "Kind regards"]}, {})
    empty = _attach(wb, demo_patient, "thanks.docx", note, "referral_docx")
    full = _load(wb, "demo-critical-potassium.hl7")["demo-critical-potassium.hl7"]
    listed = {d["id"]: d["found_nothing"] for d in chart_documents(wb, demo_patient["id"])}
    progress = job_progress(wb, [empty, full])
    assert {d: progress[d]["found_nothing"] for d in (empty, full)} == {empty: listed[empty], full: listed[full]}
    assert listed[empty] is True and listed[full] is False


def test_a_rectangle_drawn_on_the_canvas_reads_as_a_page_relative_box():
    from ui.viewer import drawn_box

    assert drawn_box(None, 700, 1000) is None
    assert drawn_box({"objects": [{"type": "path"}]}, 700, 1000) is None
    plain = {"type": "rect", "left": 70, "top": 100, "width": 140, "height": 50}
    assert drawn_box({"objects": [plain]}, 700, 1000) == pytest.approx({"x": 0.1, "y": 0.1, "width": 0.2, "height": 0.05})
    # resized after drawing, placed by its centre: the box is where the reviewer sees it
    moved = {"type": "rect", "left": 350, "top": 500, "width": 70, "height": 25, "scaleX": 2, "scaleY": 2,
             "originX": "center", "originY": "center"}
    assert drawn_box({"objects": [plain, moved]}, 700, 1000) == pytest.approx(
        {"x": 0.4, "y": 0.475, "width": 0.2, "height": 0.05})
