"""The brief's parts that need no demo: the real tokenizer, its lines from the chart
checks (no alert is said, never left blank; low-priority notes cut first), and a brief
built on a record written for the test (two workbooks: a trend and a conflict)."""

from __future__ import annotations

from datetime import date

from domain.policy.answers.brief_budget import CONFLICT, KEEP_PRIORITY, MISSING, NEVER_CUT
from core.services.brief import alerts
from core.services.brief.brief import patient_brief
from core.services.brief.tokens import TOKENIZER_NAME, count_tokens
from retrieve.embedder import find_minilm_files
from tests.support.file_builders import sheets_workbook
from tests.support.pipeline import ingest


def test_tokens_are_counted_by_the_embedders_own_wordpiece_tokenizer():
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(find_minilm_files().tokenizer))
    reference.no_truncation()
    text = "Hyperkalaemia: potassium 6.8 mmol/L, collected 2026-10-20 " * 40  # longer than the model's window
    assert count_tokens(text) == len(reference.encode(text, add_special_tokens=False).ids) > 512
    assert count_tokens("hyperkalaemia") > 1  # split into word pieces, not counted as one word
    assert count_tokens("") == 0 and "MiniLM" in TOKENIZER_NAME


def test_a_chart_without_alerts_says_so(wb, demo_patient):
    brief = patient_brief(wb, patient_id=demo_patient["id"])
    (line,) = [line for line in brief.lines if line.section == "alerts"]
    assert line.notice and "No open alert" in line.text


def test_alert_lines_cite_every_fact_and_low_priority_notes_are_cut_first(wb, demo_patient, monkeypatch):
    cited = {"source_type": "hl7v2_message", "source_id": "documents:4", "page_or_section": "OBX[1]-5",
             "field_or_chunk_id": "results[0]", "quote_or_value": "6.1"}
    raised = [{"message": "Lisinopril with potassium 6.1 mmol/L", "acknowledged": False, "priority": "high",
               "facts": [{"citation": cited}, {"citation": cited | {"page_or_section": "paragraph 4",
                                                                   "quote_or_value": "lisinopril 10 mg"}}]},
              {"message": "Warfarin with no INR on record", "acknowledged": True, "acknowledged_by": "dr.a",
               "priority": "high", "facts": []},
              {"message": "No problem names an indication for atorvastatin", "priority": "low",
               "facts": [{"citation": cited | {"quote_or_value": "atorvastatin"}}]}]
    monkeypatch.setattr(alerts, "patient_alerts", lambda wb, patient_id: raised)
    first, second, note = alerts.alert_lines(wb, demo_patient["id"])
    assert len(first.citations) == 2 and not first.sentinels and first.section == "alerts"
    assert MISSING in second.sentinels and "acknowledged by dr.a" in second.text
    assert note.section == "notes" and KEEP_PRIORITY[-1] == "notes" and "notes" not in NEVER_CUT


def test_a_written_record_gives_trends_conflicts_and_missing_sections_their_lines(wb):
    from core.services.admin.patients import add_patient

    patient = add_patient(wb, mrn="BR-44120", first="Oona", last="Ferreira-Lind", dob=date(1966, 2, 9), sex="F",
                          by="dr.reviewer")
    who = [["Patient", "Oona Ferreira-Lind"], ["DOB", "1966-02-09"], ["MRN", "BR-44120"]]
    ingest(wb, patient, sheets_workbook({"Who": who, "Results": [
        ["Date", "Test", "Result", "Units", "Reference range"],
        ["2026-03-02", "Calcium", 11.6, "mg/dL", "8.6-10.3"],
        ["2026-05-11", "Calcium", 12.1, "mg/dL", "8.6-10.3"]]}), "clinical_workbook", "first.xlsx")
    ingest(wb, patient, sheets_workbook({"Who": who, "Results": [
        ["Date", "Test", "Result", "Units", "Reference range"],
        ["2026-05-11", "Calcium", 10.9, "mg/dL", "8.6-10.3"]]}), "clinical_workbook", "second.xlsx")
    brief = patient_brief(wb, patient_id=patient["id"], budget_tokens=5000)
    text = brief.text
    calcium = next(line for line in brief.lines if line.section == "abnormal" and line.text.startswith("Calcium"))
    assert "previous 11.6 mg/dL on 2026-03-02" in calcium.text and len(calcium.citations) == 2
    assert CONFLICT in calcium.sentinels  # the second workbook says 10.9 for the same day
    conflict = next(line for line in brief.lines if line.section == "review")
    assert conflict.text.startswith("Calcium 10.9") and CONFLICT in conflict.sentinels
    assert any("second.xlsx" in n for n in text.splitlines() if n.startswith("["))
    for section in ("allergies", "medications", "problems"):
        assert [line.text for line in brief.lines if line.section == section] == [MISSING]
