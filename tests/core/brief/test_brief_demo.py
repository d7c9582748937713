"""The brief of every demo patient (the demo loaded as `core demo` loads it): within its
budget, every line cited or standing for what is absent, each of the four sentinels where
the demo record calls for it, the same brief twice, and a PDF that holds the footnotes."""

from __future__ import annotations

import pymupdf
import pytest

from domain.policy.answers.brief_budget import CONFLICT, MISSING, NEVER_CUT, PENDING, SENTINELS, UNCLEAR
from core.services.admin.patients import DEMO_PATIENTS, chart_documents
from core.services.brief.brief import patient_brief
from core.services.brief.pdf import brief_pdf
from core.services.brief.render import footnotes
from core.services.brief.tokens import count_tokens


@pytest.fixture(scope="module")
def demo_wb(tmp_path_factory):
    from domain.settings import reload_settings
    from core.services.admin.patients import seed_demo_patients
    from core.services.ingest.demo import build_demo_documents, load_demo, read_demo_dir
    from core.services.workbench import open_workbench

    data = tmp_path_factory.mktemp("brief-demo") / "data"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_DATA_DIR", str(data))
        mp.setenv("WORKBENCH_JOB_PROCESS", "off")
        wb = open_workbench(reload_settings())
        seed_demo_patients(wb)
        loaded = load_demo(wb, read_demo_dir(build_demo_documents(tmp_path_factory.mktemp("demo-docs"))))
        assert all(d["job"]["status"] == "succeeded" for d in loaded)
        yield wb
        wb.close()
    reload_settings()


MRNS = [p["mrn"] for p in DEMO_PATIENTS]


@pytest.mark.parametrize("budget", [1500, 700])
@pytest.mark.parametrize("mrn", MRNS)
def test_each_demo_patients_brief_fits_its_budget_with_every_line_cited(demo_wb, mrn, budget):
    brief = patient_brief(demo_wb, mrn=mrn, budget_tokens=budget)
    assert count_tokens(brief.text) == brief.fitted.tokens <= budget
    assert not brief.fitted.over_budget
    for line in brief.lines:
        assert line.citations or line.sentinels or line.notice, line
        assert all(s in line.text for s in line.sentinels)
        if line.notice:  # a notice speaks about the brief or the checks, never about a finding
            assert not line.sentinels and not line.citations
    notes, marks = footnotes(brief.lines, brief.names)
    for line, mine in zip(brief.lines, marks):
        assert len(mine) == len({(c.source_id, c.page_or_section, c.field_or_chunk_id, c.quote_or_value)
                                 for c in line.citations})
        assert f"- {line.text}" + "".join(f" [{n}]" for n in mine) in brief.text
    for n in notes:
        assert f"[{n.number}] {n.text}" in brief.text
    cut = sum(n for _, n, _ in brief.fitted.cut)
    assert len(brief.lines) + cut == len(patient_brief(demo_wb, mrn=mrn, budget_tokens=100_000).lines)
    assert {s for s, _, _ in brief.fitted.cut}.isdisjoint(NEVER_CUT)


def test_a_budget_below_what_is_never_cut_keeps_it_and_says_it_is_over(demo_wb):
    brief = patient_brief(demo_wb, mrn="DEMO-1001", budget_tokens=300)
    assert brief.fitted.over_budget and brief.fitted.tokens > 300
    assert {line.section for line in brief.lines} == NEVER_CUT
    assert any("Potassium 6.8" in line.text for line in brief.lines)
    assert brief.payload()["over_budget"] is True and brief.payload()["cut_count"] > 0


def test_the_demo_record_brings_each_sentinel_where_it_belongs(demo_wb):
    brief = patient_brief(demo_wb, mrn="DEMO-1001", budget_tokens=100_000)
    by_section: dict[str, list] = {}
    for line in brief.lines:
        by_section.setdefault(line.section, []).append(line)
    critical = by_section["critical"]
    assert any("Potassium 6.8" in line.text and "previous 5.9" in line.text for line in critical)
    assert any(c.source_id.startswith("documents:") and "OBX" in c.page_or_section for line in critical
               for c in line.citations)
    allergies = by_section["allergies"]
    assert any(line.text.startswith("penicillin — reaction: hives") and not line.sentinels for line in allergies)
    # "NKDA" on the intake and penicillin in the referral: a contradiction, said as one.
    assert any("NKDA" in line.text and CONFLICT in line.sentinels for line in allergies)
    assert any("sulfa" in line.text and PENDING in line.sentinels for line in allergies)
    assert [line.text for line in by_section["problems"]] == [MISSING]
    review = by_section["review"]
    sodium = next(line for line in review if line.text.startswith("Sodium 131"))
    assert CONFLICT in sodium.sentinels and "the chart holds Sodium 139" in sodium.text
    assert len({c.source_id for c in sodium.citations}) == 2  # the finding and the chart row it contradicts
    assert any("Glucose 131" in line.text and UNCLEAR in line.sentinels for line in review)  # OCR, low confidence
    assert any("demo-fax-packet.pdf" in line.text and PENDING in line.sentinels for line in review)
    quarantined = by_section["quarantined"]
    wrong = next(d for d in chart_documents(demo_wb, brief.patient["id"]) if d["filename"] == "demo-wrong-patient-lab.pdf")
    # A document that names another patient is named by its id: its file name could quote them.
    assert {line.text.split(":")[0] for line in quarantined} == {f"document {wrong['id']} (file name withheld)",
                                                                 "demo-fax-packet.pdf, page 3"}
    assert "demo-wrong-patient-lab" not in brief.text
    # Another patient's identifiers are pointed to, never quoted in this patient's brief.
    assert "BRANNIGAN" not in brief.text.upper() and "DEMO-1002" not in brief.text
    trend = next(line for line in by_section["abnormal"] if line.text.startswith("Hemoglobin A1c"))
    # Both results cited, each by every document that states it.
    assert "previous 7.1 % on 2025-10-02" in trend.text
    quotes = " ".join(c.quote_or_value for c in trend.citations)
    assert "7.1" in quotes and "7.9" in quotes and len({c.source_id for c in trend.citations}) >= 2
    assert set(SENTINELS) <= {s for line in brief.lines for s in line.sentinels}


def test_an_empty_chart_is_written_as_missing_never_as_none_found(demo_wb):
    brief = patient_brief(demo_wb, mrn="DEMO-1003")
    texts = {line.section: line.text for line in brief.lines}
    for section in ("allergies", "medications", "problems"):
        assert texts[section] == MISSING
    assert "No known" not in brief.text  # no NKDA from an empty list
    assert "Ayesha" in texts["identity"] and "1979-07-22" in texts["identity"]


def test_the_same_record_gives_the_same_brief(demo_wb):
    first = patient_brief(demo_wb, mrn="DEMO-1001", budget_tokens=900)
    again = patient_brief(demo_wb, mrn="DEMO-1001", budget_tokens=900)
    assert first.text == again.text and first.payload() == again.payload()
    assert first.fitted.cut  # this budget cuts, so the cut itself is compared too
    assert "Cut to fit the budget of 900 tokens" in first.text


def test_the_pdf_opens_and_holds_every_footnote(demo_wb):
    brief = patient_brief(demo_wb, mrn="DEMO-1001", budget_tokens=3000)
    doc = pymupdf.open(stream=brief_pdf(brief), filetype="pdf")
    flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES  # "fi", not one ligature glyph
    text = "\n".join(page.get_text(flags=flags) for page in doc)
    flat = " ".join(text.split())
    notes, _ = footnotes(brief.lines, brief.names)
    assert notes and doc.page_count >= 1
    for n in notes:
        assert " ".join(n.text.split()) in flat, n.text
    assert "Potassium 6.8 mmol/L" in flat and "Patient brief" in text
    # Each footnote is printed once, on the page of its first mark.
    assert sum(flat.count(" ".join(n.text.split())) for n in notes) == len(notes)
