"""A laboratory's comment that a result may not be valid ("sample haemolysed - potassium
may be falsely raised") sends that result to review, quoting the comment, in every
format. Written after a held-out lab page and an HL7 message charted a haemolysed
potassium as verified with the comment dropped; the layouts, wordings and tests here
were written after the rule (domain/policy/facts/result_comments.py)."""

from __future__ import annotations

from datetime import datetime

import pytest

from domain.policy.facts.result_comments import comment_doubts, doubt_cue
from extract.fhir.facts import extract_fhir
from extract.formats.fhir.normalize import normalize_fhir
from extract.formats.hl7.normalize import normalize_hl7
from extract.formats.office.xlsx import normalize_xlsx
from extract.formats.pdf import normalize_pdf
from extract.hl7.facts import extract_hl7
from extract.lab.extractor import extract_lab
from extract.workbook.extractor import extract_workbook
from golden.drawing import placed_text_pdf
from tests.support import fhir_bundles as F
from tests.support.extract_support import of_type, read_and_extract
from tests.support.file_builders import sheets_workbook
from tests.support.synthetic import assert_page_citations_verify

DOUBT = "the laboratory's comment says the result may not be valid"


def held(result) -> dict[str, str | None]:
    """test name -> review reason (None when charted as read)."""
    return {f.structured_value["test_name"]: (f.review_reason if f.wants_review else None)
            for f in of_type(result, "lab_result")}


# ------------------------------------------------------------------------------ the policy

@pytest.mark.parametrize("text", [
    "Specimen grossly hemolyzed", "Lipemic sample", "Mildly icteric", "Clotted specimen received",
    "Query EDTA contamination", "Result may be spurious", "Delay in separation - interpret K+ accordingly",
    "Sample was delayed", "Suggest repeat", "Repeat specimen advised", "Possible drip arm sample",
])
def test_words_that_doubt_a_sample(text):
    assert doubt_cue(text)


@pytest.mark.parametrize("text", [
    "Non-hemolyzed", "No haemolysis seen", "Sample not lipaemic", "Hemolysis: not detected", "Icterus - none",
    "eGFR values should be interpreted with caution in acute illness", "Results checked and repeated",
    "Fasting sample", "Reported by J. Okoro",
])
def test_words_that_do_not(text):
    assert doubt_cue(text) is None


def test_a_comment_that_names_tests_covers_those_and_one_naming_none_covers_all():
    named = ["Haemolysed: LDH and AST may be falsely raised"]
    assert comment_doubts("LDH", scope=named)
    assert comment_doubts("AST", scope=named) and comment_doubts("Sodium", scope=named) == []
    assert comment_doubts("Sodium", scope=["Grossly lipaemic sample"])
    # its own comment covers it whatever it names
    assert comment_doubts("Sodium", own=["K+ may be falsely raised"])
    (reason,) = comment_doubts("Potassium", own=["Haemolysed."], scope=["Haemolysed."])
    assert reason.startswith(DOUBT) and "'Haemolysed.'" in reason


# ------------------------------------------------------------------------------ a lab page

COLS = [50, 250, 330, 420, 510]


def _page(rows: list, tail: list[tuple[int, str]] = ()):
    content = normalize_pdf(_page_pdf(rows, tail))
    result = extract_lab(content, "documents:7")
    assert_page_citations_verify(content, result)
    return result


def _page_pdf(rows: list, tail: list[tuple[int, str]] = ()) -> bytes:
    lines = [(50, 40, "WESTBROOK HOSPITAL CLINICAL CHEMISTRY", 12, "hebo"),
             (50, 60, "Name: OYELARAN, Bisi   DOB: 02/09/1958   MRN: WB55102   Collected: 2026-11-30 10:05"),
             *[(x, 84, h) for x, h in zip(COLS, ["Analyte", "Result", "Units", "Range", "Flag"])]]
    y = 100
    for row in rows:
        if isinstance(row, str):
            lines.append((70, y, row))
        else:
            lines += [(x, y, cell) for x, cell in zip(COLS, row) if cell]
        y += 14
    lines += [(50, y + 20 + 14 * i, text) for i, (_, text) in enumerate(tail)]
    return placed_text_pdf(lines, width=612)


PANEL = [["Sodium", "141", "mmol/L", "133-146"], ["Potassium", "6.4", "mmol/L", "3.5-5.3", "H"],
         ["Calcium", "2.31", "mmol/L", "2.20-2.60"], ["Phosphate", "1.9", "mmol/L", "0.8-1.5", "H"]]


def test_a_comment_under_a_row_naming_its_test_holds_that_result_only():
    got = held(_page(PANEL[:2] + ["NB specimen received haemolysed; K+ result likely to be falsely high."] + PANEL[2:]))
    assert DOUBT in got["Potassium"] and "falsely high" in got["Potassium"]
    assert got["Sodium"] is None and got["Calcium"] is None and got["Phosphate"] is None


def test_a_sample_comment_naming_no_test_holds_every_result_of_the_page():
    got = held(_page(PANEL, tail=[(50, "Lab note: lipaemic sample.")]))
    assert all(reason and DOUBT in reason for reason in got.values()), got


def test_a_comment_wrapped_onto_a_second_line_is_read_whole():
    got = held(_page(PANEL, tail=[(50, "Comment: the sample was received six hours after collection and"),
                                  (50, "phosphate may be spuriously raised.")]))
    assert DOUBT in got["Phosphate"] and got["Sodium"] is None and got["Potassium"] is None


def test_negated_and_general_comments_hold_nothing():
    got = held(_page(PANEL, tail=[(50, "Comment: no haemolysis detected."),
                                  (50, "Calcium results should be interpreted with caution in low albumin states.")]))
    assert all(reason is None for reason in got.values()), got


def test_a_comment_on_the_reports_last_page_covers_the_results_of_the_first():
    import pymupdf

    first = pymupdf.open(stream=_page_pdf(PANEL), filetype="pdf")
    second = pymupdf.open(stream=placed_text_pdf([(50, 60, "Page 2 of 2"), (50, 90, "Laboratory comments:"),
                                                   (50, 104, "Phosphate may be spuriously high: delayed separation.")],
                                                  width=612), filetype="pdf")
    first.insert_pdf(second)
    content = normalize_pdf(first.tobytes())
    got = held(extract_lab(content, "documents:7"))
    assert DOUBT in got["Phosphate"] and got["Potassium"] is None and got["Sodium"] is None


# ------------------------------------------------------------------------------ HL7 v2

MSH = "MSH|^~\\&|LIS|NORTHLAB|EHR|CLINIC|20261130110000||ORU^R01|C771|P|2.5.1"
PID = "PID|1||WB55102^^^CLINIC^MR||OYELARAN^BISI||19580902|F"
OBR = "OBR|1||L771|BMP^Basic metabolic panel|||20261130100500"


def _hl7(*segments: str):
    return read_and_extract("\r".join((MSH, PID, OBR) + segments).encode(), normalize_hl7, extract_hl7,
                            "documents:8")[1]


NA = "OBX|1|NM|2951-2^Sodium^LN||139|mmol/L|135-145|N|||F"
K = "OBX|2|NM|2823-3^Potassium^LN||6.0|mmol/L|3.5-5.1|H|||F"
CA = "OBX|3|NM|17861-6^Calcium^LN||2.4|mmol/L|2.2-2.6|N|||F"


def test_hl7_a_note_under_an_obx_holds_its_result():
    got = held(_hl7(NA, K, "NTE|1|L|Haemolysis index raised: interpret with care, repeat sample requested.", CA))
    assert DOUBT in got["Potassium"] and got["Sodium"] is None and got["Calcium"] is None


def test_hl7_a_note_under_the_order_holds_the_results_it_names_or_all():
    got = held(_hl7("NTE|1|L|Potassium falsely elevated by delayed separation.", NA, K, CA))
    assert DOUBT in got["Potassium"] and got["Sodium"] is None
    got = held(_hl7("NTE|1|L|Specimen clotted.", NA, K, CA))
    assert all(reason and DOUBT in reason for reason in got.values()), got
    got = held(_hl7("NTE|1|L|Specimen not haemolysed.", NA, K, CA))
    assert all(reason is None for reason in got.values()), got


# ------------------------------------------------------------------------------ FHIR

def test_fhir_an_observation_note_holds_its_result():
    potassium = F.lab("2823-3", "Potassium", 6.2, "mmol/L", low=3.5, high=5.1, flag="H")
    potassium["note"] = [{"text": "Result may be falsely raised: haemolysed specimen."}]
    sodium = F.lab("2951-2", "Sodium", 140, "mmol/L", low=135, high=145)
    sodium["note"] = [{"text": "Sample not haemolysed."}]
    doc = F.bundle(F.patient("Bisi", "Oyelaran", "1958-09-02", "WB55102"), potassium, sodium)
    got = held(read_and_extract(F.as_bytes(doc), normalize_fhir, extract_fhir, "documents:9")[1])
    assert DOUBT in got["Potassium"] and got["Sodium"] is None


# ------------------------------------------------------------------------------ workbooks

ID_ROWS = [["Patient", "Bisi Oyelaran"], ["DOB", "1958-09-02"], ["MRN", "WB55102"], []]


def _workbook(rows):
    return read_and_extract(sheets_workbook({"Results": ID_ROWS + rows}), normalize_xlsx, extract_workbook,
                            "documents:10")[1]


def test_workbook_a_comment_column_beside_a_result_holds_it():
    got = held(_workbook([
        ["Collected", "Analyte", "Result", "Units", "Ref range", "Remarks"],
        [datetime(2026, 11, 30), "Sodium", 140, "mmol/L", "135-145", "non-haemolysed"],
        [datetime(2026, 11, 30), "Potassium", 6.3, "mmol/L", "3.5-5.3", "Grossly haemolysed"],
    ]))
    assert DOUBT in got["Potassium"] and got["Sodium"] is None


def test_workbook_a_comment_on_a_dated_row_holds_that_row_only():
    result = _workbook([
        ["Date", "Na (mmol/L)", "K (mmol/L)", "Comments"],
        [datetime(2026, 11, 23), 139, 4.4, ""],
        [datetime(2026, 11, 30), 140, 6.3, "Lipaemic - please repeat"],
    ])
    by_date = {(f.structured_value["test_name"], f.structured_value["collection_date"]): f
               for f in of_type(result, "lab_result")}
    assert not by_date[("K", "2026-11-23")].wants_review
    assert DOUBT in by_date[("K", "2026-11-30")].review_reason and DOUBT in by_date[("Na", "2026-11-30")].review_reason
