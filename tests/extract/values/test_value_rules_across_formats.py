"""One printed result, one stored reading, whatever the format.

Each row of ``ROWS`` is what a lab printed (value, unit, reference range, flag) and what
must be stored (the abnormal flag; value, unit and range as printed). Every row is built
as a line of a lab PDF (in every generated layout), as an HL7 OBX and as an XLSX row, and
each extractor must store the same thing. Critical results get the same treatment: a
critical flag or a value past printed critical limits is critical in every format, and a
critical flag that says no direction is kept critical and sent to review.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache

import pymupdf
import pytest

from extract.formats.hl7.normalize import normalize_hl7

from extract.hl7.facts import extract_hl7
from extract.lab.extractor import extract_lab
from extract.formats.pdf import normalize_pdf
from extract.workbook.extractor import extract_workbook
from extract.formats.office.xlsx import normalize_xlsx
from golden.fixtures import ExpectedLab, LabCase, Patient, render_lab
from golden.lab_layouts import ALL_LAB_LAYOUTS, CUMULATIVE_LAYOUTS

# A cumulative layout prints a test once per date: the tables below repeat tests on one date.
TABLE_LAYOUTS = sorted(set(ALL_LAB_LAYOUTS) - CUMULATIVE_LAYOUTS)


@dataclass(frozen=True)
class Row:
    test: str
    value: str
    unit: str
    range: str
    printed_flag: str
    flag: str  # the abnormal_flag every extractor must store


ROWS = (
    # Qualitative result with a printed flag first: one layout glues every other
    # row's flag to its value ("182H"), which is only ever done to numbers.
    Row("Nitrite", "Positive", "", "Negative", "Abnormal", "abnormal"),
    Row("Hemoglobin A1c", "7.9", "%", "<5.7", "", "high"),
    Row("eGFR", "72", "mL/min/1.73m2", ">60", "", "normal"),
    Row("Cholesterol, Total", "240", "mg/dL", "<=200", "", "high"),
    Row("Potassium", "3.2", "mmol/L", "3.5-5.0", "", "low"),
    Row("Glucose", "85", "mg/dL", "70 - 99", "", "normal"),
    Row("Urine Protein", "Negative", "", "Negative", "", "normal"),
    Row("hCG, Qualitative", "Positive", "", "Negative", "", "abnormal"),
    Row("Blood Smear", "Abnormal", "", "Normal", "", "abnormal"),
    Row("Glucose", "182", "mg/dL", "70-99", "H", "high"),
    Row("Sodium", "128", "mmol/L", "135-145", "L", "low"),
    Row("Potassium", "6.8", "mmol/L", "3.5-5.0", "HH", "critical_high"),
    Row("Glucose", "38", "mg/dL", "70-99", "LL", "critical_low"),
    Row("WBC", "11.8", "x10E3/uL", "3.4-10.8", "A", "abnormal"),
    Row("Potassium", "2.1", "mmol/L", "3.5-5.0", "AA", "critical_low"),
    Row("Calcium", "11.2", "mg/dL", "8.6-10.3", "*", "abnormal"),
    Row("Potassium", "7.1", "mmol/L", "3.5-5.0", "CRIT", "critical_high"),
    Row("Sodium", "139", "mmol/L", "135-145", "N", "normal"),
    Row("Troponin I", "<0.01", "ng/mL", "<0.04", "", "normal"),
    Row("eGFR", ">90", "mL/min/1.73m2", ">60", "", "normal"),
    Row("Ferritin", "<5", "ng/mL", "15-150", "", "low"),
    Row("Lipase", "<10", "U/L", "7-60", "", "unknown"),  # below 10 may or may not be below 7
)
# Spellings and layouts the rules were not written against: a flag column in two words,
# a unit inside the range, an abbreviated qualitative result, a comparator value, a
# decimal comma, a bare "*" and a spelled-out "PANIC".
VARIANT_ROWS = (
    Row("Potassium", "6.9", "mmol/L", "3.5 - 5.0", "Crit H", "critical_high"),
    Row("Urine Protein", "Neg", "", "Negative", "", "normal"),
    Row("Glucose", "38", "mg/dL", "70-99", "Crit L", "critical_low"),
    Row("Hemoglobin A1c", "<5.0", "%", "<5.7", "", "normal"),
    Row("Hemoglobin", "7,9", "g/dL", "12,0-16,0", "", "low"),
    Row("Sodium", "121", "mmol/L", "135-145", "*", "abnormal"),
    Row("Calcium", "6.1", "mg/dL", "8.6-10.3", "PANIC", "critical_low"),
)
COLLECTED = "2026-04-10"
PATIENT = Patient("Ilse", "Varga-Moreno", "1969-02-11", "VM-55102")


def stored(sv: dict) -> tuple[str, str, str, str]:
    return sv["value"], sv["unit"], sv["reference_range"], sv["abnormal_flag"]


def expected(row: Row) -> tuple[str, str, str, str]:
    return row.value, row.unit, row.range, row.flag


# --------------------------------------------------------------------------- builders


def pdf_rows(layout: str, rows=ROWS) -> list[dict]:
    case = LabCase(f"value_rules_{layout}", layout, PATIENT, COLLECTED, (
        ("Results", tuple(ExpectedLab(r.test, r.value, r.unit, r.range, r.flag, r.printed_flag) for r in rows)),))
    result = extract_lab(normalize_pdf(render_lab(case)), "documents:1")
    return [f.structured_value for f in result.facts]


def obx(i: int, row: Row, flag: str | None = None, ref: str | None = None) -> str:
    value = row.value
    if value[:1] in "<>":
        value_type, value = "SN", f"{value[:1]}^{value[1:]}"
    elif any(c.isdigit() for c in value):
        value_type = "NM"
    else:
        value_type = "ST"
    unit = f"{row.unit}^^UCUM" if row.unit else ""
    flag = row.printed_flag if flag is None else flag
    ref = row.range if ref is None else ref
    return f"OBX|{i}|{value_type}|T{i}^{row.test}^L||{value}|{unit}|{ref}|{flag}|||F|||20260410081500"


def hl7_message(*segments: str) -> bytes:
    head = ("MSH|^~\\&|LAB|NORTHWIND LAB|EHR|CLINIC|20260410093000||ORU^R01^ORU_R01|VR0001|P|2.5.1",
            "PID|1||VM-55102^^^CLINIC^MR||VARGA-MORENO^ILSE||19690211|F",
            "OBR|1|ORD7|FIL7|80048^Chemistry^L|||20260410081500")
    return "\r".join(head + segments).encode()


def hl7_results(data: bytes):
    result = extract_hl7(normalize_hl7(data), "documents:2")
    return [f for f in result.facts if f.fact_type == "lab_result"]


def hl7_rows(rows=ROWS) -> list[dict]:
    return [f.structured_value for f in hl7_results(hl7_message(*(obx(i, r) for i, r in enumerate(rows, 1))))]


def _cell_value(text: str):
    """Numbers go in as numbers, as a spreadsheet holds them; everything else as text."""
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if text.isdigit() else (number if repr(number) == text else text)


def xlsx_book(header: tuple[str, ...], rows: list[tuple]) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Patient:", "VARGA-MORENO, Ilse"])
    ws.append(["MRN:", "VM-55102"])
    ws.append([])
    ws.append(list(header))
    for row in rows:
        ws.append([_cell_value(c) if isinstance(c, str) else c for c in row])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def xlsx_results(data: bytes):
    result = extract_workbook(normalize_xlsx(data), "documents:3")
    return [f for f in result.facts if f.fact_type == "lab_result"]


def xlsx_rows(rows=ROWS) -> list[dict]:
    header = ("Test", "Result", "Units", "Reference range", "Flag", "Collected")
    data = xlsx_book(header, [(r.test, r.value, r.unit, r.range, r.printed_flag, COLLECTED) for r in rows])
    return [f.structured_value for f in xlsx_results(data)]


# --------------------------------------------------------------------------- one table, every format


@lru_cache(maxsize=None)
def _pdf(layout: str) -> tuple[tuple[str, str, str, str], ...]:
    return tuple(stored(sv) for sv in pdf_rows(layout))


@pytest.mark.parametrize("rows", [ROWS, VARIANT_ROWS], ids=["rows", "variants"])
def test_the_layouts_glue_flags_only_to_numbers(rows):
    # units_in_range glues the flag of every odd row to its value ("182H"); a qualitative
    # result with a flag, or a flag of two words ("38Crit L" is no printed form), must sit
    # on an even row for the PDF to be printable.
    assert all(not (i % 2 and (r.printed_flag and not any(c.isdigit() for c in r.value) or " " in r.printed_flag))
               for i, r in enumerate(rows))


@pytest.mark.parametrize("layout", TABLE_LAYOUTS)
def test_lab_pdf_lines_store_the_table(layout):
    got = _pdf(layout)
    assert len(got) == len(ROWS)
    for row, reading in zip(ROWS, got):
        if layout == "split_range" and row.flag == "unknown":
            # This layout states normal/abnormal by column: a value printed under
            # "Out of Range" is abnormal by the document's own word.
            assert reading == (row.value, row.unit, row.range, "abnormal"), row
            continue
        assert reading == expected(row), row


def test_hl7_obx_store_the_table():
    got = [stored(sv) for sv in hl7_rows()]
    assert got == [expected(r) for r in ROWS]


def test_xlsx_rows_store_the_table():
    got = [stored(sv) for sv in xlsx_rows()]
    assert got == [expected(r) for r in ROWS]


@pytest.mark.parametrize("layout", TABLE_LAYOUTS)
def test_lab_pdf_lines_store_the_variants(layout):
    assert [stored(sv) for sv in pdf_rows(layout, VARIANT_ROWS)] == [expected(r) for r in VARIANT_ROWS]


def test_hl7_and_xlsx_store_the_variants():
    assert [stored(sv) for sv in hl7_rows(VARIANT_ROWS)] == [expected(r) for r in VARIANT_ROWS]
    assert [stored(sv) for sv in xlsx_rows(VARIANT_ROWS)] == [expected(r) for r in VARIANT_ROWS]


def test_a_unit_printed_in_the_value_or_range_cell_is_the_unit_in_every_format():
    potassium = Row("Potassium", "6.9", "mmol/L", "3.5 - 5.0", "", "high")
    (xlsx,) = xlsx_results(xlsx_book(("Test", "Result", "Reference range", "Collected"),
                                     [("Potassium", "6.9 mmol/L", "3.5 - 5.0 mmol/L", COLLECTED)]))
    (hl7,) = hl7_results(hl7_message(obx(1, potassium, ref="3.5 - 5.0 mmol/L")))
    (pdf,) = pdf_rows("units_in_range", (potassium,))  # prints "3.5 - 5.0 mmol/L" in one cell
    for sv in (xlsx.structured_value, hl7.structured_value, pdf):
        assert stored(sv) == expected(potassium)


def test_a_flag_word_no_rule_knows_is_never_dropped_in_silence():
    odd = Row("Potassium", "6.9", "mmol/L", "3.5-5.0", "Hx", "high")
    (hl7,) = hl7_results(hl7_message(obx(1, odd)))
    (xlsx,) = xlsx_results(xlsx_book(("Test", "Result", "Units", "Reference range", "Flag", "Collected"),
                                     [(odd.test, odd.value, odd.unit, odd.range, odd.printed_flag, COLLECTED)]))
    for fact in (hl7, xlsx):
        assert stored(fact.structured_value) == expected(odd) and fact.structured_value["flag_derived"]
        assert fact.wants_review and "'Hx' is not one the rules know" in fact.review_reason
    for layout in sorted(ALL_LAB_LAYOUTS):  # in a flag column, or an unread word beside the value
        (pdf,) = extract_lab(normalize_pdf(render_lab(LabCase("odd_flag", layout, PATIENT, COLLECTED, (
            ("Results", (ExpectedLab(odd.test, odd.value, odd.unit, odd.range, odd.flag, odd.printed_flag),)),)))),
            "documents:1").facts
        assert stored(pdf.structured_value) == expected(odd) and pdf.wants_review, layout
        assert "'Hx' is not one the rules know" in pdf.review_reason or "could not be read" in pdf.review_reason


def test_every_format_agrees_row_by_row():
    pdf = _pdf("classic")
    hl7 = [stored(sv) for sv in hl7_rows()]
    xlsx = [stored(sv) for sv in xlsx_rows()]
    for row, a, b, c in zip(ROWS, pdf, hl7, xlsx):
        assert a == b == c, row


# --------------------------------------------------------------------------- critical results


CRITICAL_LIMITS = "<2.5 or >6.5"
PAST_LIMITS = (
    Row("Potassium", "1.9", "mmol/L", "3.5-5.0", "", "critical_low"),  # past the limit, no flag printed
    Row("Potassium", "6.9", "mmol/L", "3.5-5.0", "H", "critical_high"),  # printed H, but past the limit
    Row("Potassium", "5.6", "mmol/L", "3.5-5.0", "H", "high"),  # high, not critical
    Row("Potassium", "2.5", "mmol/L", "3.5-5.0", "", "low"),  # "<2.5": the limit itself is not critical
)


def _critical_pdf() -> bytes:
    """A typed table with a column of critical limits."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((50, 60), f"Collected: 04/10/2026    Patient: {PATIENT.last.upper()}, {PATIENT.first.upper()}",
                     fontname="helv", fontsize=9.5)
    columns = ((50, "Test"), (170, "Result"), (230, "Flag"), (270, "Units"), (340, "Reference Range"),
               (450, "Critical Range"))
    for x, label in columns:
        page.insert_text((x, 90), label, fontname="hebo", fontsize=9.5)
    for i, r in enumerate(PAST_LIMITS):
        y = 110 + 14 * i
        for (x, _), text in zip(columns, (r.test, r.value, r.printed_flag, r.unit, r.range, CRITICAL_LIMITS)):
            if text:
                page.insert_text((x, y), text, fontname="helv", fontsize=9.5)
    data = doc.tobytes()
    doc.close()
    return data


def test_lab_pdf_critical_limits_column():
    facts = extract_lab(normalize_pdf(_critical_pdf()), "documents:1").facts
    assert [stored(f.structured_value) for f in facts] == [expected(r) for r in PAST_LIMITS]
    assert {f.structured_value["critical_range"] for f in facts} == {CRITICAL_LIMITS}
    upgraded = facts[1]  # printed "H" under a value past the critical limit
    assert upgraded.wants_review and "critical limits" in upgraded.review_reason


def test_hl7_critical_limits_in_the_range_or_a_note():
    in_range = [obx(i, r, ref=f"{r.range} (critical {CRITICAL_LIMITS})") for i, r in enumerate(PAST_LIMITS, 1)]
    facts = hl7_results(hl7_message(*in_range))
    assert [sv["abnormal_flag"] for sv in (f.structured_value for f in facts)] == [r.flag for r in PAST_LIMITS]
    assert facts[0].structured_value["critical_range"] == f"critical {CRITICAL_LIMITS}"
    assert facts[0].structured_value["reference_range"] == f"3.5-5.0 (critical {CRITICAL_LIMITS})"  # as printed
    noted = hl7_results(hl7_message(obx(1, PAST_LIMITS[0]), f"NTE|1|L|Critical values: {CRITICAL_LIMITS} mmol/L"))
    assert noted[0].structured_value["abnormal_flag"] == "critical_low"


def test_xlsx_critical_limits_column():
    header = ("Test", "Result", "Units", "Reference range", "Flag", "Critical range", "Collected")
    data = xlsx_book(header, [(r.test, r.value, r.unit, r.range, r.printed_flag, CRITICAL_LIMITS, COLLECTED)
                              for r in PAST_LIMITS])
    facts = xlsx_results(data)
    assert [stored(f.structured_value) for f in facts] == [expected(r) for r in PAST_LIMITS]
    assert facts[1].wants_review and "critical limits" in facts[1].review_reason


WBC_CRITICAL = Row("WBC", "42.0", "x10E3/uL", "4.0-11.0", "", "critical_high")


@pytest.mark.parametrize("flag", ["HH", "AA", "CRIT", "critical", "panic", "!!", "C"])
def test_hl7_critical_wbc_is_never_promoted_as_a_plain_high(flag):
    (fact,) = hl7_results(hl7_message(obx(1, WBC_CRITICAL, flag=flag)))
    assert fact.structured_value["abnormal_flag"] == "critical_high"
    assert fact.structured_value["flag_derived"] is False


def test_critical_without_a_direction_is_kept_critical_and_reviewed_in_every_format():
    culture = Row("Blood Culture", "Positive", "", "", "AA", "critical_high")
    (hl7,) = hl7_results(hl7_message(obx(1, culture)))
    (xlsx,) = xlsx_results(xlsx_book(("Test", "Result", "Units", "Reference range", "Flag", "Collected"),
                                     [(culture.test, culture.value, "", "", "AA", COLLECTED)]))
    (pdf,) = [f for f in extract_lab(normalize_pdf(render_lab(LabCase(
        "culture", "classic", PATIENT, COLLECTED,
        (("Microbiology", (ExpectedLab(culture.test, culture.value, "", "", "critical_high", "AA"),)),)))),
        "documents:1").facts]
    for fact in (pdf, hl7, xlsx):
        assert fact.structured_value["abnormal_flag"] == "critical_high"
        assert fact.wants_review and "without a direction" in fact.review_reason
