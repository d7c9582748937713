"""The viewer's services: every cited box with the right colour class, pages rendered
once, HL7 / XLSX / DOCX shown natively at the cited place, and the delete preview
agreeing with what delete_document then does."""

from __future__ import annotations

import shutil

import pytest

from core.services import document_view as dv
from core.services.facts import chart_view, document_report, patient_facts
from core.services.ingestion import list_categories, suggest_category
from core.services.retraction import delete_document, deletion_impact
from golden.demo import DOCUMENTS


def _load(wb, *filenames: str) -> dict[str, int]:
    from core.services.demo import load_demo

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
    segs = dv.hl7_segments(wb, potassium["citation"])
    cited = [r for r in segs.rows if r["cited"]]
    assert [(r["segment"], r["index"], r["field"], r["value"]) for r in cited] == [("OBX", 1, 5, "6.8")]
    assert (segs.test_name, segs.unit, segs.reference_range, segs.flag) == ("Potassium", "mmol/L", "3.5-5.1", "HH")
    assert not any(r["cited_segment"] for r in segs.rows if (r["segment"], r["index"]) == ("OBX", 2))

    book = dv.document_view(wb, docs["demo-workbook.xlsx"])
    later = next(f for f in book.facts if f["citation"]["quote_or_value"] == "7.9")
    grid = dv.sheet_grid(wb, later["citation"])
    assert grid.sheet == "Lab trend" and grid.columns == ["A", "B", "C", "D", "E"]
    assert grid.cited == {(3, c) for c in range(1, 6)}
    row3 = dict(grid.rows)[3]
    assert row3[2] == "7.9" and dict(grid.rows)[1][2] == "Result"  # header row kept as context

    letter = dv.document_view(wb, docs["demo-referral.docx"])
    allergy = next(f for f in letter.facts if f["fact_type"] == "allergy")
    ctx = dv.docx_context(wb, allergy["citation"])
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
    from core.services.source_review import source_view

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
