"""XLSX clinical workbooks: displayed values, header-row discovery, merged/hidden/formula
cells, real data-dictionary workbooks that must not turn into results, and broken input."""

from __future__ import annotations

import io
from datetime import datetime

import pytest

from domain.errors import ExtractionError
from domain.models import DocType
from extract.registry import EXTRACTORS, FORMATS, extractor_for
from extract.workbook.extractor import extract_workbook
from extract.formats.office.xlsx import display_value, normalize_xlsx
from golden import office_fixtures as G
from tests.support.paths import SHARED_DATA
from tests.support.extract_support import identity, of_type, read_and_extract

SOURCE = "documents:31"
OFFICE = SHARED_DATA / "office"
REAL_XLSX = sorted(p.name for p in OFFICE.glob("*.xlsx")) if OFFICE.is_dir() else []


def run(data: bytes):
    """A workbook read by the XLSX normaliser and the workbook extractor; every citation verifies."""
    return read_and_extract(data, normalize_xlsx, extract_workbook, SOURCE)


def _book(build) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    build(wb.active)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_registered_for_clinical_workbook():
    assert extractor_for(DocType.CLINICAL_WORKBOOK) is extract_workbook
    assert FORMATS["xlsx"].accepts("xlsx", None) and FORMATS["xlsx"].accepts("zip", DocType.CLINICAL_WORKBOOK)
    assert not FORMATS["xlsx"].accepts("zip", DocType.REFERRAL_DOCX)
    assert EXTRACTORS[DocType.CLINICAL_WORKBOOK].module == "extract.workbook.extractor"  # imported on first use


@pytest.mark.parametrize(
    "value,fmt,shown",
    [(182.0, "General", "182"), (7.9, "General", "7.9"), (0.1 + 0.2, "General", "0.3"), (0.056, "0.0%", "5.6%"),
     (5, "0.00", "5.00"), (True, "General", "TRUE"), (datetime(2024, 3, 12), "dd/mm/yyyy", "2024-03-12"),
     (datetime(2024, 3, 12, 9, 5), "yyyy-mm-dd hh:mm", "2024-03-12 09:05"), ("  text ", "General", "  text "),
     (None, "General", "")],
)
def test_displayed_values(value, fmt, shown):
    assert display_value(value, fmt)[0] == shown


@pytest.mark.parametrize("case,build", [(G.WORKBOOK_LABS, G.build_results_workbook),
                                        (G.WORKBOOK_MEDS, G.build_medication_workbook)])
def test_synthetic_workbooks(case, build):
    content, result = run(build())
    assert identity(result) == {"name": case.identity.name, "dob": case.identity.dob, "mrn": case.identity.mrn}
    got = [
        (sv["test_name"], sv["value"], sv["unit"], sv["reference_range"], sv["abnormal_flag"], sv["collection_date"],
         sv["flag_derived"])
        for sv in (f.structured_value for f in of_type(result, "lab_result"))
    ]
    assert got == [(e.test_name, e.value, e.unit, e.reference_range, e.abnormal_flag, e.collection_date, e.flag_derived)
                   for e in case.labs]
    meds = of_type(result, "medication")
    assert [(m.structured_value["name"], m.structured_value["dose"], m.structured_value["frequency"]) for m in meds] \
        == [(m.name, m.dose, m.frequency) for m in case.medications]
    assert [m.wants_review for m in meds] == [m.needs_review for m in case.medications]
    names = {f.structured_value.get("test_name") for f in result.facts}
    assert not names & set(case.skipped_tests)
    assert set(case.warnings) <= {w.code for w in result.warnings}
    for fact in of_type(result, "lab_result"):
        assert not fact.wants_review and fact.confidence >= 0.8
        assert "!" in fact.citation.page_or_section and ":" in fact.citation.page_or_section


def test_results_workbook_locators_merges_hidden_rows_and_formulas():
    content, result = run(G.build_results_workbook())
    sections = {s.locator: s for s in content.sections}
    assert sections["Chemistry!A7:F7"].text == "Glucose, fasting | 7.9 | mmol/L | 3.9-5.5 | H | 2024-03-12"
    assert sections["Chemistry!A8:F8"].text == "Sodium | 139 | mmol/L | 135-145 | 2024-03-12"
    # the merged collection date (F7:F9) applies to every row it spans
    assert sections["Chemistry!A9:F9"].text.endswith("| 2024-03-12")
    assert sections["Chemistry!F8"].meta["merged_from"] == "F7"
    assert sections["Chemistry!A5"].text == "Basic metabolic panel"
    assert not any(s.meta.get("row") == 12 for s in content.sections)  # hidden row
    assert "Chemistry!B13" not in sections  # formula with no cached value
    warning = next(w for w in result.warnings if w.code == "formula_without_value")
    assert "Chemistry!B13" in warning.message
    glucose = of_type(result, "lab_result")[0]
    assert glucose.citation.page_or_section == "Chemistry!A7:F7" and glucose.citation.quote_or_value == "7.9"
    assert glucose.citation.field_or_chunk_id == "results[0]"
    dob = next(i for i in result.identifiers if i.kind.value == "dob")
    assert dob.citation.page_or_section == "Chemistry!B3"


def test_a_sheet_formatted_far_down_is_read_by_its_filled_cells():
    """A formatted but empty cell a million rows down is not walked to
    (extract/formats/office/xlsx_internals.py); a formula and a value are found."""
    from openpyxl.styles import Font

    def build(ws):
        ws["A1"], ws["B1"], ws["C2"] = "Test", "Value", "=1+1"
        ws.cell(row=1_000_000, column=3).font = Font(bold=True)

    content = normalize_xlsx(_book(build))
    cells = {s.locator for s in content.sections if s.section_type == "cell"}
    assert cells >= {"Sheet!A1", "Sheet!B1"} and not any(loc.endswith("1000000") for loc in cells)
    assert {s.locator for s in content.sections if s.section_type != "cell"} >= {"Sheet!A1:B1"}


def test_rows_without_a_patient_ask_for_review():
    def sheet(ws):
        ws.append(["Analyte", "Result", "Units", "Range"])
        ws.append(["Ferritin", 8, "ug/L", "15-150"])

    _, result = run(_book(sheet))
    (fact,) = of_type(result, "lab_result")
    assert fact.wants_review and "does not identify the patient" in fact.review_reason
    assert fact.structured_value["abnormal_flag"] == "low" and fact.structured_value["flag_derived"]


def test_incomplete_and_ambiguous_dates():
    def sheet(ws):
        ws.append(["Patient:", "ORVELLE, Tamsin"])
        ws.append([])
        ws.append(["Test", "Result", "Units", "Date"])
        ws.append(["TSH", 2.1, "mU/L", "03/2024"])
        ws.append(["Free T4", 14, "pmol/L", "03/04/2024"])

    _, result = run(_book(sheet))
    tsh, t4 = of_type(result, "lab_result")
    assert tsh.structured_value["collection_date"] is None and "incomplete date" in tsh.review_reason
    assert t4.structured_value["collection_date"] == "2024-03-04" and not t4.wants_review
    assert t4.confidence == pytest.approx(0.83) and tsh.confidence == pytest.approx(0.70)


@pytest.mark.parametrize("other, dob, warned", [
    ("16/09/2026", "1944-08-02", False),  # the workbook prints days first
    ("09/16/2026", "1944-02-08", False),  # ... months first
    ("05/09/2026", "1944-02-08", True),  # nothing settles it: month first, warned
])
def test_the_workbooks_other_dates_settle_an_open_date_of_birth(other, dob, warned):
    def sheet(ws):
        ws.append(["Patient:", "WHITFIELD-TANE, Ngaire"])
        ws.append(["DOB:", "02/08/1944"])
        ws.append(["Test", "Result", "Units", "Date"])
        ws.append(["Creatinine", 176, "umol/L", other])

    _, result = run(_book(sheet))
    assert [i.value for i in result.identifiers if i.kind.value == "dob"] == [dob]
    assert ("xlsx_ambiguous_date" in {w.code for w in result.warnings}) is warned
    assert [i.other_reading for i in result.identifiers if i.kind.value == "dob"] == [
        "1944-08-02" if warned else None]


def test_excel_error_values_are_not_results():
    def sheet(ws):
        ws.append(["Patient:", "ORVELLE, Tamsin"])
        ws.append(["Test", "Result", "Units", "Range"])
        ws.append(["eGFR", "#DIV/0!", "mL/min", ">60"])
        ws.append(["Urea", 5.1, "mmol/L", "2.5-7.8"])

    content, result = run(_book(sheet))
    assert [f.structured_value["test_name"] for f in of_type(result, "lab_result")] == ["Urea"]
    assert "xlsx_cell_error" in {w.code for w in result.warnings}


def test_test_plans_and_printed_flag_disagreement():
    def plan(ws):
        ws.append(["Test Case #", "Test", "Result", "Units", "PASS/FAIL"])
        ws.append([1, "Glucose", 5.0, "mmol/L", "PASS"])

    _, result = run(_book(plan))
    assert result.facts == []
    assert "xlsx_not_patient_results" in {w.code for w in result.warnings}

    def disagree(ws):
        ws.append(["MRN:", "QF-778201"])
        ws.append(["Test", "Result", "Units", "Reference range", "Flag"])
        ws.append(["Potassium", 6.4, "mmol/L", "3.5-5.1", "N"])

    _, result = run(_book(disagree))
    (k,) = of_type(result, "lab_result")
    assert k.structured_value["abnormal_flag"] == "normal"  # as printed, never overwritten
    assert k.wants_review and "disagrees" in k.review_reason


@pytest.mark.shared_data
@pytest.mark.parametrize("name", REAL_XLSX or ["(shared data absent)"])
def test_real_workbooks_are_not_result_tables(shared_data, name):
    """The real workbooks are data dictionaries and a test-case plan: they parse, every
    visible cell becomes a section, and none of their rows is mistaken for a result."""
    content, result = run((shared_data / "office" / name).read_bytes())
    assert len(content.sections) > 50
    assert of_type(result, "lab_result") == [] and of_type(result, "medication") == []
    assert result.identifiers == []


@pytest.mark.shared_data
def test_real_workbook_hidden_sheets_and_merged_cells(shared_data):
    content, result = run((shared_data / "office" / "cdc_iis_COVID19_vaccination_reporting_spec_HL7_mapping.xlsx").read_bytes())
    hidden = [w.message for w in result.warnings if w.code == "xlsx_hidden_sheet"]
    assert len(hidden) == 4 and any("'Data Dictionary Background'" in m for m in hidden)
    assert not any(s.meta["sheet"] == "Data Dictionary Background" for s in content.sections)
    merged = [s for s in content.sections if s.section_type == "cell" and s.meta.get("merged_from")]
    assert merged, "merged ranges should repeat their value into every covered cell"


# ---------------------------------------------------------------------------- broken input


@pytest.mark.parametrize(
    "make,code,words",
    [
        (lambda: b"", "empty_file", "empty"),
        (lambda: b"Test,Result\nGlucose,5.0\n", "not_xlsx", "plain text"),
        (lambda: G.build_results_workbook()[:4000], "corrupt_file", "damaged"),
        (lambda: G.build_prose_letter(), "not_xlsx", "Word document"),
        (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "not_xlsx", ".xls"),
    ],
)
def test_broken_input_is_a_coded_error(make, code, words):
    with pytest.raises(ExtractionError) as err:
        normalize_xlsx(make())
    assert err.value.code == code
    assert words.lower() in str(err.value).lower()


def test_loinc_column_is_kept_when_it_is_a_valid_code():
    def sheet(ws):
        ws.append(["MRN:", "QF-778201"])
        ws.append(["Test", "LOINC", "Result", "Units", "Reference range"])
        ws.append(["GHB", "4548-4", 7.9, "%", "<5.7"])
        ws.append(["Glucose", "2345-6", 5.1, "mmol/L", "3.9-5.5"])  # check digit wrong: dropped

    _, result = run(_book(sheet))
    ghb, glucose = of_type(result, "lab_result")
    assert ghb.structured_value["loinc"] == "4548-4" and "loinc" not in glucose.structured_value
    assert ghb.structured_value["abnormal_flag"] == "high" and ghb.structured_value["flag_derived"]


# --------------------------------------------------------------------------- identity labels, ranges, unitless results

CHART = {"first_name": "Ottoline", "last_name": "Brackenridge-Sowah", "dob": "1966-02-11", "mrn": "HN-440921"}


def _verified(result):
    from domain.models import IdentityStatus
    from domain.policy.identity.gate import check_identity

    return check_identity(result.identifiers, CHART).status is IdentityStatus.VERIFIED


@pytest.mark.parametrize("rows", [
    [["Surname", "BRACKENRIDGE-SOWAH"], ["Forename", "Ottoline"], ["Hospital number", "HN-440921"]],
    [["Family name:", "Brackenridge-Sowah"], ["Given name(s):", "Ottoline"], ["Date of birth:", datetime(1966, 2, 11)]],
    [["Last name", "Brackenridge-Sowah", "First name", "Ottoline"], ["Patient ID", "HN-440921"]],
    [["Forename", "Ottoline"], ["Middle name", "June"], ["Surname", "Brackenridge-Sowah"], ["Chart #", "HN-440921"]],
    [["Surname: Brackenridge-Sowah"], ["Forename: Ottoline"], ["Clinic ID: HN-440921"]],
    [["Name", "Ottoline Brackenridge-Sowah"], ["Unit no.", "HN-440921"]],
])
def test_split_names_and_id_label_wordings_identify_the_patient(rows):
    def sheet(ws):
        for r in rows:
            ws.append(r)
        ws.append([])
        ws.append(["Test", "Result", "Units", "Reference range"])
        ws.append(["Sodium", 139, "mmol/L", "135-145"])

    _, result = run(_book(sheet))
    assert _verified(result), identity(result)
    assert not of_type(result, "lab_result")[0].wants_review


def test_a_name_in_parts_is_cited_by_its_surname_cell():
    def sheet(ws):
        ws.append(["Surname", "BRACKENRIDGE-SOWAH"])
        ws.append(["Forename", "Ottoline"])

    _, result = run(_book(sheet))
    (name,) = [i for i in result.identifiers if i.kind.value == "name"]
    assert name.value == "BRACKENRIDGE-SOWAH, Ottoline"
    assert name.citation.page_or_section == "Sheet!B1" and name.citation.quote_or_value == "BRACKENRIDGE-SOWAH"


@pytest.mark.parametrize("rows", [
    # a data dictionary that describes the fields is no patient
    [["Surname", "Family name of the patient"], ["Forename", "Given name as registered"]],
    [["Next of kin name", "Ottoline Brackenridge-Sowah"], ["GP name", "Dr Ama Sowah"]],
    [["Surname", "Brackenridge-Sowah"]],  # half a name identifies nobody
])
def test_label_like_rows_that_name_no_patient(rows):
    def sheet(ws):
        for r in rows:
            ws.append(r)

    _, result = run(_book(sheet))
    assert "name" not in identity(result)


@pytest.mark.parametrize("header", ["Target range", "Therapeutic range", "Normal range", "Ref range", "Target",
                                    "Reference interval"])
def test_range_column_wordings(header):
    def sheet(ws):
        ws.append(["MRN:", "HN-440921"])
        ws.append(["DOB:", "1966-02-11"])
        ws.append(["Date", "Test", "Result", "Units", header])
        ws.append(["2025-03-02", "INR", 3.7, "", "2.0-3.0"])

    _, result = run(_book(sheet))
    (inr,) = of_type(result, "lab_result")
    assert inr.structured_value["reference_range"] == "2.0-3.0"
    assert inr.structured_value["abnormal_flag"] == "high"


@pytest.mark.parametrize("test, value, unit_needed", [
    ("INR", 2.6, False), ("PT INR", 1.1, False), ("Urine specific gravity", 1.025, False), ("pH", 6.5, False),
    ("Cholesterol/HDL ratio", 4.2, False), ("Potassium", 4.4, True), ("Ferritin", 40, True),
])
def test_only_analytes_with_a_dimension_need_a_unit(test, value, unit_needed):
    from domain.policy.facts.certainty import classify
    from domain.policy.context.mentions import apply_to

    def sheet(ws):
        ws.append(["MRN:", "HN-440921"])
        ws.append(["DOB:", "1966-02-11"])
        ws.append(["Collected", "Test", "Result", "Units"])
        ws.append(["2025-03-02", test, value, None])

    _, result = run(_book(sheet))
    (fact,) = of_type(result, "lab_result")
    decision = classify(apply_to(fact), citation_verified=True, paged=False)
    assert (decision.reason == "missing unit") is unit_needed, decision
    if not unit_needed:
        assert fact.confidence == pytest.approx(0.92)


# ---------------------------------------------------------------- shared-string bombs (issue 28)

def _with_strings(body: bytes) -> bytes:
    from tests.support.file_builders import with_part, workbook

    head = b'<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    return with_part(workbook(), "xl/sharedStrings.xml", lambda part: part.write(head + body + b"</sst>"))


def test_shared_strings_are_counted_before_any_parser_builds_them():
    from domain.limits import Limits

    limits = Limits(max_shared_strings=50)
    normalize_xlsx(_with_strings(b"<si><t>a</t></si>" * 50), limits)  # at the limit: read
    for body in (b"<si><t>a</t></si>" * 51, b"<x:si><x:t>a</x:t></x:si>" * 51, b"<si/>" * 51):
        with pytest.raises(ExtractionError) as err:
            normalize_xlsx(_with_strings(body), limits)
        assert err.value.code == "sheet_too_large" and "50 distinct texts" in err.value.message


def test_one_shared_string_is_measured_while_it_streams():
    from domain.limits import Limits

    limits = Limits(max_shared_string_bytes=4096)
    four = b"<si><t>Test</t></si><si><t>Result</t></si><si><t>Glucose</t></si><si><t>mg/dL</t></si>"
    normalize_xlsx(_with_strings(four + b"<si><t>" + b"x" * 4000 + b"</t></si>"), limits)
    with pytest.raises(ExtractionError) as err:  # never closed, as a bomb cut short would be
        normalize_xlsx(_with_strings(b"<si><t>" + b"x" * 3 * 1024 * 1024), limits)
    assert err.value.code == "sheet_too_large" and "longer than 4 KB" in err.value.message
    with pytest.raises(ExtractionError):
        normalize_xlsx(_with_strings(b"<si><t>a</t></si><si><t>" + b"y" * 5000 + b"</t></si>"), limits)
