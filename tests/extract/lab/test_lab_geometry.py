"""Table structure from the geometry of words (issue 23): side-by-side panels, dated
(cumulative) value columns, headers over two rows, a unit printed under a heading,
the page's own flag key, flags as signs or in brackets, results inline in a
sentence, and a flag cell OCR could not read. Each rule on small synthetic pages;
the layouts of ``golden.lab_layouts`` check them end to end."""

from __future__ import annotations

from domain.content import NormalizedContent, PageContent, Word
from domain.policy.facts.citations import verify_citations
from extract.lab.extractor import extract_lab
from extract.lab.table import detect_tables, extend_header, read_result, stacked_header
from extract.layout import page_rows
from golden.fixtures import LAB_CASES, LAB_LAYOUTS
from golden.lab_layouts import GEOMETRY_LAB_LAYOUTS
from golden.cases import load_cases

COLLECTED = [("Collected:", 40), ("04/10/2026", 100)]


def _page(rows: list[list[tuple]], conf: bool = False) -> PageContent:
    """Rows of (text, x0[, OCR confidence[, width]]) words, 10 pt tall, 5 pt per character, 14 pt apart."""
    words = []
    for r, row in enumerate(rows):
        for text, x0, *c in row:
            width = c[1] if len(c) > 1 else 5 * len(text)
            words.append(Word(text, x0, 100 + r * 14, x0 + width, 110 + r * 14, conf=c[0] if c else None))
    for i, w in enumerate(words):
        w.index = i
    return PageContent(1, 612, 792, words)


def _ocr_extract(*rows):
    page = _page([[("Collected:", 40, 0.95), ("04/10/2026", 100, 0.95)], *rows])
    return extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1")


def _extract(*rows):
    page = _page([COLLECTED, *rows])
    content = NormalizedContent(source_kind="pdf_text", pages=[page])
    return content, extract_lab(content, "documents:1")


def _read(facts):
    return [(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["unit"],
             f.structured_value["abnormal_flag"], f.structured_value["collection_date"]) for f in facts]


def test_every_layout_is_checked_by_a_default_case_or_a_golden_case_of_its_own():
    golden = {doc.get("layout") for c in load_cases() if c.id.startswith("lab-layout-")
              for doc in c.documents.values()}
    assert set(LAB_LAYOUTS) <= {c.layout for c in LAB_CASES}
    assert set(GEOMETRY_LAB_LAYOUTS) == golden and len(golden) >= 15


# --------------------------------------------------------------------------- panels side by side


TWO_PANELS = [("Test", 40), ("Result", 130), ("Units", 170), ("Test", 320), ("Result", 410), ("Units", 450)]


def test_a_header_with_two_sets_of_labels_starts_two_tables_split_by_x():
    tables = detect_tables(page_rows(_page([TWO_PANELS]))[0])
    assert [[c.role for c in t.columns] for t in tables] == [["test", "result", "units"]] * 2
    left, right = tables
    assert left.x_max == right.x_min and 170 < right.x_min <= 320


def test_each_panel_of_a_row_is_its_own_result():
    content, result = _extract(
        TWO_PANELS,
        [("Sodium", 40), ("139", 130), ("mmol/L", 170), ("WBC", 320), ("11.8", 410), ("x10E3/uL", 450)],
        [("Potassium", 40), ("6.6", 130), ("mmol/L", 170), ("Platelets", 320), ("142", 410), ("x10E3/uL", 450)],
    )
    # reported panel by panel
    assert [r[:3] for r in _read(result.facts)] == [
        ("Sodium", "139", "mmol/L"), ("Potassium", "6.6", "mmol/L"),
        ("WBC", "11.8", "x10E3/uL"), ("Platelets", "142", "x10E3/uL")]
    assert all(c.verified for c in verify_citations([f.citation for f in result.facts], content))
    assert "Sodium" not in result.facts[2].citation.quote_or_value


# --------------------------------------------------------------------------- cumulative reports


def test_one_result_per_analyte_and_date_each_with_its_date_and_its_own_box():
    content, result = _extract(
        [("Test", 40), ("03/02/2026", 150), ("02/01/2026", 230), ("01/05/2026", 310), ("Units", 400)],
        [("Creatinine", 40), ("2.1", 160), ("H", 180), ("1.8", 240), ("1.3", 320), ("mg/dL", 400)],
        [("Sodium", 40), ("133", 160), ("---", 240), ("139", 320), ("mmol/L", 400)],
    )
    got = _read(result.facts)
    assert got == [
        ("Creatinine", "2.1", "mg/dL", "high", "2026-03-02"), ("Creatinine", "1.8", "mg/dL", "unknown", "2026-02-01"),
        ("Creatinine", "1.3", "mg/dL", "unknown", "2026-01-05"),
        ("Sodium", "133", "mmol/L", "unknown", "2026-03-02"), ("Sodium", "139", "mmol/L", "unknown", "2026-01-05")]
    checked = verify_citations([f.citation for f in result.facts], content)
    assert all(c.verified for c in checked)
    boxes = [c.bounding_box for c in checked[:3]]
    assert len({(b.x, b.width) for b in boxes}) == 3  # each cell its own box
    assert result.facts[1].citation.quote_or_value.endswith("1.8")


def test_a_cell_saying_no_result_was_given_is_held_as_no_result_not_as_a_misread():
    # A UK renal report written after the rule: the lab printed "haemolysed" for one date.
    _, result = _extract(
        [("Test", 40), ("02/12/26", 150), ("28/11/26", 230), ("14/11/26", 310), ("Units", 400)],
        [("Potassium", 40), ("5.9", 160), ("haemolysed", 240), ("5.1", 320), ("mmol/L", 400)],
        [("Sodium", 40), ("136", 160), ("insufficient sample", 240), ("138", 320), ("mmol/L", 400)],
    )
    held = [f for f in result.facts if f.wants_review]
    assert [f.fact_text for f in held] == ["Potassium: no result (haemolysed)", "Sodium: no result (insufficient sample)"]
    assert all("gives no result for this test" in f.review_reason for f in held)
    assert [f.structured_value["collection_date"] for f in held] == ["2026-11-28"] * 2
    assert len(result.facts) == 6


def test_a_count_printed_as_a_range_is_held_as_a_range_not_as_a_misread():
    # A urine microscopy written after the rule: counts per high-power field as spans.
    _, result = _extract(
        [("Test", 40), ("Result", 200), ("Units", 300), ("Reference", 380)],
        [("RBC", 40), ("10-20", 200), ("/HPF", 300), ("0-2", 380)],
        [("Casts", 40), ("3 - 5", 200), ("/LPF", 300), ("0-2", 380)],
        [("WBC", 40), ("8", 200), ("/HPF", 300), ("0-5", 380)],
    )
    held = {f.structured_value["test_name"]: f for f in result.facts if f.wants_review}
    assert set(held) == {"RBC", "Casts"}
    assert all("printed as a range" in f.review_reason and "could not be read" not in f.review_reason
               for f in held.values())
    wbc = next(f for f in result.facts if f.structured_value["test_name"] == "WBC")
    assert wbc.structured_value["unit"] == "/HPF" and wbc.structured_value["abnormal_flag"] == "high"


def _potassium_by_date(*rows) -> list:
    """A cumulative page of these rows over a Potassium row (4.9, 6.3): its facts."""
    page = _page([*rows, [("Potassium", 40), ("4.9", 160), ("6.3", 240), ("mmol/L", 400)]])
    return extract_lab(NormalizedContent(source_kind="pdf_text", pages=[page]), "documents:1").facts


def test_a_date_column_is_read_day_first_when_the_header_or_the_report_shows_it_prints_days_first():
    # "19/11/26" can only be day first, so "12/11/26" beside it is 12 November, not 11 December.
    facts = _potassium_by_date([("Test", 40), ("12/11/26", 150), ("19/11/26", 230), ("Units", 400)])
    assert [f.structured_value["collection_date"] for f in facts] == ["2026-11-12", "2026-11-19"]
    # European headers with dots and a two-digit year, settled by the birth date printed above.
    facts = _potassium_by_date([("D.O.B.:", 40), ("14.03.1949", 80)],
                               [("Test", 40), ("03.11.26", 150), ("05.11.26", 230), ("Units", 400)])
    assert [f.structured_value["collection_date"] for f in facts] == ["2026-11-03", "2026-11-05"]
    # A report printing dates both ways leaves an open column date in doubt.
    first, second = _potassium_by_date([("Reported:", 40), ("11/27/2026", 110)],
                                       [("Test", 40), ("03/11/26", 150), ("19/11/26", 230), ("Units", 400)])
    assert first.wants_review and "may be 2026-03-11 or 2026-11-03" in first.review_reason
    assert second.structured_value["collection_date"] == "2026-11-19" and "may be" not in (second.review_reason or "")


def test_a_date_column_headed_with_its_time_of_day_is_a_dated_column():
    _, result = _extract(
        [("Test", 40), ("26/11/26", 150), ("08:10", 190), ("19/11/26", 250), ("07:45", 290), ("Units", 400)],
        [("Potassium", 40), ("6.3", 160), ("5.6", 260), ("mmol/L", 400)],
    )
    assert [(f.structured_value["value"], f.structured_value["collection_date"]) for f in result.facts] == [
        ("6.3", "2026-11-26"), ("5.6", "2026-11-19")]


def test_dates_on_a_second_header_row_under_a_spanning_heading_become_dated_columns():
    page = _page([
        [("Test", 40), ("Results", 240), ("Units", 420)],
        [("10/14/2025", 150), ("01/12/2026", 240), ("04/09/2026", 330)],
        [("LDL", 40), ("162", 160), ("131", 250), ("98", 340), ("mg/dL", 420)],
    ])
    rows = page_rows(page)
    tables = detect_tables(rows[0])
    assert extend_header(tables, rows[1], rows[0])
    assert [(c.role, c.date) for c in tables[0].columns] == [
        ("test", None), ("result", "10/14/2025"), ("result", "01/12/2026"), ("result", "04/09/2026"), ("units", None)]
    result = extract_lab(NormalizedContent(source_kind="pdf_text", pages=[page]), "documents:1")
    assert [(f.structured_value["value"], f.structured_value["collection_date"]) for f in result.facts] == [
        ("162", "2025-10-14"), ("131", "2026-01-12"), ("98", "2026-04-09")]
    assert not [w for w in result.warnings if w.code == "no_collection_date"]  # every result has its date


def test_a_row_of_collection_times_whose_colon_ocr_lost_is_part_of_the_header_not_a_result():
    # A cumulative report's "Time" row under its dates, faxed: OCR read "08:10" as "0810"
    # and the row became a test called "Time" with four values, held for review.
    page = _page([
        [("Collected", 40, 0.9), ("02/11/26", 200, 0.9), ("19/10/26", 260, 0.9), ("Units", 400, 0.9),
         ("Ref.", 460, 0.9), ("Range", 485, 0.9)],
        [("Time", 40, 0.9), ("0810", 200, 0.6), ("09:45", 260, 0.9)],
        [("Potassium", 40, 0.9), ("5.9H", 200, 0.9), ("5.4H", 260, 0.9), ("mmol/L", 400, 0.9),
         ("(3.5-5.2)", 460, 0.9)],
    ])
    result = extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1")
    assert [(f.structured_value["test_name"], f.structured_value["value"]) for f in result.facts] == [
        ("Potassium", "5.9"), ("Potassium", "5.4")]
    # typed, "0810" is a number, and a row of numbers is no header
    typed = _page([[("Collected", 40), ("02/11/26", 200), ("Units", 400)], [("Count", 40), ("0810", 200)]])
    rows = page_rows(typed)
    assert not extend_header(detect_tables(rows[0]), rows[1], rows[0])


def test_a_test_name_wrapped_onto_the_row_below_in_its_column_is_one_name():
    # A liver panel written after the rule: "Gamma-glutamyl" over "transferase (GGT)" had
    # charted a test called "Gamma-glutamyl", and the "(ALT)" under its name was lost.
    content, result = _extract(
        [("Test", 40), ("Result", 260), ("Flag", 320), ("Units", 360), ("Reference", 450)],
        [("Gamma-glutamyl", 40), ("88", 260), ("H", 320), ("U/L", 360), ("<40", 450)],
        [("transferase", 40), ("(GGT)", 100)],
        [("Albumin", 40), ("31", 260), ("L", 320), ("g/L", 360), ("35-50", 450)],
        [("see", 40), ("comment", 65)],  # a note under a name the vocabulary knows: no part of it
        [("Fasting", 40), ("glucose", 80), ("5.1", 260), ("mmol/L", 360), ("3.0-6.0", 450)],
        [("Comment", 40), ("to", 90), ("follow", 110)],
    )
    assert [(f.structured_value["test_name"], f.structured_value["value"]) for f in result.facts] == [
        ("Gamma-glutamyl transferase (GGT)", "88"), ("Albumin", "31"), ("Fasting glucose", "5.1")]
    checked = verify_citations([f.citation for f in result.facts], content)
    assert all(c.verified for c in checked)
    assert checked[0].quote_or_value == "Gamma-glutamyl 88 H U/L <40 transferase (GGT)"


# --------------------------------------------------------------------------- headers over two rows


def test_a_unit_printed_under_the_result_heading_is_the_unit_of_its_values():
    _, result = _extract(
        [("Test", 40), ("Result", 200), ("Reference", 300)],
        [("mmol/L", 200)],
        [("Sodium", 40), ("129", 200), ("135-145", 300)],
        [("Potassium", 40), ("4.0", 200), ("3.5-5.1", 300)],
    )
    assert _read(result.facts) == [("Sodium", "129", "mmol/L", "low", "2026-04-10"),
                                   ("Potassium", "4.0", "mmol/L", "normal", "2026-04-10")]


def test_labels_stacked_over_two_rows_read_as_one_header():
    page = _page([
        [("Test", 40), ("Result", 200), ("Unit", 280), ("of", 305), ("Reference", 360), ("Abnormal", 460)],
        [("Name", 40), ("Measure", 280), ("Range", 360), ("Flag", 460)],
    ])
    rows = page_rows(page)
    assert not detect_tables(rows[0]) and not detect_tables(rows[1])  # neither row alone
    tables = detect_tables(stacked_header(rows[0], rows[1]))
    assert [c.role for c in tables[0].columns] == ["test", "result", "units", "range", "flag"]
    _, result = _extract(*[[(w.text, w.x0) for w in r.words] for r in rows],
                         [("Prolactin", 40), ("31", 200), ("ng/mL", 280), ("4-23", 360), ("H", 460)])
    assert _read(result.facts) == [("Prolactin", "31", "ng/mL", "high", "2026-04-10")]


# --------------------------------------------------------------------------- flags: signs, brackets, the page's key


def test_a_sign_explained_by_the_pages_key_line_is_read_through_it():
    _, result = _extract(
        [("Test", 40), ("Result", 200), ("Range", 300)],
        [("Sodium", 40), ("151", 200), ("\u25b2", 225), ("135-145", 300)],
        [("Potassium", 40), ("6.6\u203c", 200), ("3.5-5.1", 300)],
        [("\u25b2", 40), ("high", 50), ("\u25bc", 90), ("low", 100), ("\u203c", 140), ("critical", 150)],
    )
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert set(got) == {"Sodium", "Potassium"}  # the key line is not a result
    assert got["Sodium"].structured_value["abnormal_flag"] == "high" and not got["Sodium"].wants_review
    assert got["Potassium"].structured_value["abnormal_flag"] == "critical_high"
    assert got["Potassium"].structured_value["flag_derived"] is False


def test_an_ocr_sign_glued_to_a_value_counts_when_the_pages_key_explains_it():
    # OCR reads specks as signs, so a glued sign counts only when known: "**" is, through this key.
    rows = [[("Test", 40, 0.95), ("Result", 200, 0.95), ("Units", 260, 0.95), ("Range", 320, 0.95)],
            [("Potassium", 40, 0.96), ("6.3**", 200, 0.26), ("mmol/L", 260, 0.96), ("3.5-5.2", 320, 0.96)]]
    key = [("Key:", 40, 0.93), ("*", 70, 0.93), ("outside", 80, 0.96), ("range", 120, 0.96), ("**", 160, 0.6),
           ("critical", 175, 0.94), ("value", 220, 0.96)]
    (fact,) = _ocr_extract(*rows, key).facts
    assert (fact.structured_value["value"], fact.structured_value["abnormal_flag"]) == ("6.3", "critical_high")
    assert fact.wants_review and "low confidence" in fact.review_reason
    (unkeyed,) = _ocr_extract(*rows).facts
    assert unkeyed.wants_review and unkeyed.structured_value["abnormal_flag"] != "normal"


def test_a_key_line_overrides_the_default_meaning_for_that_document():
    rows = [[("Test", 40), ("Result", 200), ("Flag", 250), ("Range", 300)],
            [("Calcium", 40), ("6.1", 200), ("*", 250), ("8.6-10.3", 300)]]
    _, plain = _extract(*rows)
    _, keyed = _extract(*rows, [("Key:", 40), ("*", 70), ("=", 80), ("critical", 90), ("result", 130)])
    assert plain.facts[0].structured_value["abnormal_flag"] == "abnormal"  # "*" by default
    assert keyed.facts[0].structured_value["abnormal_flag"] == "critical_low"


def test_a_sign_the_page_does_not_explain_goes_to_review_saying_so():
    _, result = _extract(
        [("Test", 40), ("Result", 200), ("Range", 300)],
        [("Sodium", 40), ("151", 200), ("\u25c6", 225), ("135-145", 300)],
    )
    (fact,) = result.facts
    assert fact.wants_review and "'\u25c6' is not one the rules know" in fact.review_reason
    assert fact.structured_value["abnormal_flag"] == "high" and fact.structured_value["flag_derived"]


def test_a_bracketed_flag_beside_the_value_is_a_flag_and_a_bracketed_word_a_range():
    def words(text: str) -> list[Word]:
        return [Word(t, 0, 0, 1, 1) for t in text.split()]

    assert read_result(words("6.6 (H)")).flag == "H"
    assert read_result(words("6.9 (Crit H)")).flag == "Crit H"
    normal = read_result(words("Abnormal (Normal)"))
    assert normal.flag is None and normal.reference_range == "Normal"


# --------------------------------------------------------------------------- prose and sentences under a table


def test_two_results_of_one_test_in_one_sentence_both_come_out_for_review():
    content, result = _extract(
        [("Test", 40), ("Result", 200), ("Units", 260)],
        [("Glucose", 40), ("148", 200), ("mg/dL", 260)],
        [("HbA1c", 40), ("7.9%", 72), ("on", 97), ("03/02", 112), ("and", 142), ("8.4%", 164), ("on", 189),
         ("06/01.", 204)],
    )
    prose = [f for f in result.facts if f.citation.field_or_chunk_id.startswith("text_results")]
    assert [(f.structured_value["value"], f.structured_value["unit"]) for f in prose] == [("7.9", "%"), ("8.4", "%")]
    assert all(f.wants_review for f in prose)
    assert all(c.verified for c in verify_citations([f.citation for f in prose], content))
    table = [f for f in result.facts if f not in prose]
    assert _read(table) == [("Glucose", "148", "mg/dL", "unknown", "2026-04-10")]


# --------------------------------------------------------------------------- European decimals


def test_decimal_commas_in_a_table_are_read_and_compared():
    _, result = _extract(
        [("Parameter", 40), ("Result", 200), ("Unit", 260), ("Reference", 330), ("Interval", 380)],
        [("Hemoglobin", 40), ("7,9", 200), ("g/dL", 260), ("12,0-16,0", 330)],
        [("Potassium", 40), ("4,5", 200), ("mmol/L", 260), ("3,5-5,1", 330)],
    )
    assert [(r[1], r[3]) for r in _read(result.facts)] == [("7,9", "low"), ("4,5", "normal")]


# --------------------------------------------------------------------------- OCR'd flag column


OCR_HEADER = [("Test", 40, 0.95), ("Result", 200, 0.95), ("Flag", 250, 0.95), ("Units", 300, 0.95),
              ("Range", 360, 0.95)]


def test_a_doubtful_ocr_flag_whose_print_holds_more_than_it_reads_goes_to_review():
    # "HH" printed, OCR read one "H" at low confidence in a box two letters wide.
    result = _ocr_extract(
        OCR_HEADER,
        [("Potassium", 40, 0.96), ("6.6", 200, 0.96), ("H", 250, 0.31, 10), ("mmol/L", 300, 0.9),
         ("3.5-5.1", 360, 0.9)],
        [("Sodium", 40, 0.96), ("151", 200, 0.96), ("H", 250, 0.31), ("mmol/L", 300, 0.9), ("135-145", 360, 0.9)],
    )
    potassium, sodium = result.facts
    assert potassium.wants_review and "flag 'H' read by OCR with low confidence" in potassium.review_reason
    assert not sodium.wants_review  # its box holds one letter: what was printed was read


def test_an_empty_ocr_flag_cell_beside_a_value_outside_its_range_goes_to_review():
    result = _ocr_extract(
        OCR_HEADER,
        [("Potassium", 40, 0.96), ("6.6", 200, 0.96), ("mmol/L", 300, 0.9), ("3.5-5.1", 360, 0.9)],
        [("Sodium", 40, 0.96), ("139", 200, 0.96), ("mmol/L", 300, 0.9), ("135-145", 360, 0.9)],
    )
    potassium, sodium = result.facts
    assert potassium.wants_review and "a printed flag may have been lost" in potassium.review_reason
    assert potassium.structured_value["abnormal_flag"] == "high"
    assert not sodium.wants_review


def test_a_flag_cell_that_cannot_be_read_as_a_flag_sends_the_result_to_review():
    result = _ocr_extract(
        OCR_HEADER,
        [("Potassium", 40, 0.96), ("6.6", 200, 0.96), ("HN", 250, 0.7), ("mmol/L", 300, 0.9), ("3.5-5.1", 360, 0.9)],
    )
    (fact,) = result.facts
    assert fact.wants_review and "'HN' is not one the rules know" in fact.review_reason


def test_a_unit_glued_to_the_value_in_a_table_cell_is_its_unit():
    _, result = _extract(
        [("Test", 40), ("Result", 200), ("Range", 300)],
        [("HbA1c", 40), ("7.9%", 200), ("<5.7", 300)],
        [("Albumin", 40), ("3.1g/dL", 200), ("L", 245), ("3.5-5.0", 300)],
    )
    assert _read(result.facts) == [("HbA1c", "7.9", "%", "high", "2026-04-10"),
                                   ("Albumin", "3.1", "g/dL", "low", "2026-04-10")]


def test_a_header_of_dates_alone_reads_the_test_names_left_of_them():
    _, result = _extract(
        [("12-Jan-2026", 200), ("09-Apr-2026", 280), ("Units", 360)],
        [("TSH", 40), ("6.1", 210), ("3.2", 290), ("mIU/L", 360)],
    )
    assert _read(result.facts) == [("TSH", "6.1", "mIU/L", "unknown", "2026-01-12"),
                                   ("TSH", "3.2", "mIU/L", "unknown", "2026-04-09")]
    _, dates_in_text = _extract([("Seen", 40), ("on", 65), ("12-Jan-2026", 80), ("and", 140), ("09-Apr-2026", 160)])
    assert not dates_in_text.facts  # a sentence with two dates is not a header


def test_a_test_name_ocr_read_doubtfully_with_a_letter_for_a_digit_still_finds_its_values():
    result = _ocr_extract(
        [("Worse:", 40, 0.95), ("HbAIc", 75, 0.28), ("7.9%", 110, 0.95), ("on", 135, 0.95), ("03/02", 150, 0.95),
         ("and", 180, 0.95), ("8.4%", 200, 0.95)],
    )
    assert [(f.structured_value["test_name"], f.structured_value["value"], f.wants_review) for f in result.facts] == [
        ("HbAIc", "7.9", True), ("HbAIc", "8.4", True)]


# --------------------------------------------------------------------------- a table over scanned pages


def _scanned_page(number: int, width: float, rows: list[list[tuple]]) -> PageContent:
    page = _page(rows, conf=True)
    page.number, page.width = number, width
    return page


def _split_range_pages(second_width: float) -> NormalizedContent:
    header = [("Analyte", 40, 0.95), ("Reference", 130, 0.95), ("Result", 230, 0.95), ("Flag", 290, 0.95),
              ("Units", 340, 0.95)]
    first = _scanned_page(1, 1740, [[("Collected:", 40, 0.95), ("04/10/2026", 100, 0.95)], header,
                                    [("Sodium", 40, 0.96), ("134-144", 130, 0.99), ("139", 230, 0.99),
                                     ("mmol/L", 340, 0.95)]])
    # Page 2 carries on the table without its header (a deskewed scan's canvas grows
    # with its angle: the second page came out a little wider).
    second = _scanned_page(2, second_width, [[("LDL", 40, 0.96), ("Cholesterol", 60, 0.96), ("<100", 130, 0.99),
                                              ("148", 230, 0.99), ("H", 290, 0.97), ("mg/dL", 340, 0.96)]])
    return NormalizedContent(source_kind="ocr", pages=[first, second])


def test_a_table_runs_on_over_a_scanned_page_a_few_pixels_wider():
    facts = extract_lab(_split_range_pages(1742), "documents:1").facts
    ldl = [f.structured_value for f in facts if f.structured_value["test_name"] == "LDL Cholesterol"]
    assert [(v["value"], v["reference_range"], v["abnormal_flag"]) for v in ldl] == [("148", "<100", "high")]


def test_a_page_of_another_size_does_not_carry_on_the_table():
    # A landscape page after a portrait one is another sheet: its rows are not cells of
    # the first page's columns.
    facts = extract_lab(_split_range_pages(2230), "documents:1").facts
    ldl = [f for f in facts if f.structured_value["test_name"].startswith("LDL")]
    assert all(f.wants_review for f in ldl)


def _ocr_dated(date_words: list[tuple]) -> list:
    """Facts of an OCR'd page whose collection date is read as ``date_words``."""
    page = _page([[("Specimen", 40, 0.95), ("collected", 90, 0.95), *date_words],
                  [("Test", 40, 0.95), ("Result", 200, 0.95), ("Units", 280, 0.95), ("Range", 360, 0.95)],
                  [("Sodium", 40, 0.96), ("139", 200, 0.97), ("mmol/L", 280, 0.96), ("133-146", 360, 0.96)],
                  [("Urea", 40, 0.96), ("5.2", 200, 0.97), ("mmol/L", 280, 0.96), ("2.5-7.8", 360, 0.96)]])
    return extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1").facts


def test_a_collection_date_ocr_read_after_a_stray_mark_or_unsurely_sends_its_results_to_a_person():
    # A faxed portal print written after the rule: "11/27/2026" was read "| 1/27/2026", both sure.
    split = _ocr_dated([("|", 150, 0.5), ("1/27/2026", 158, 1.0)])
    assert split and all(f.wants_review and "stray mark '|'" in f.review_reason for f in split)
    unsure = _ocr_dated([("11/27/2026", 150, 0.31)])
    assert unsure and all("collection date '11/27/2026' was read by OCR with low confidence" in f.review_reason
                          for f in unsure)
    # A time after the date read unsurely says nothing about the date.
    clean = _ocr_dated([("11/27/2026", 150, 0.97), ("0752", 205, 0.41)])
    assert [f.structured_value["collection_date"] for f in clean] == ["2026-11-27"] * 2
    assert not any(f.wants_review for f in clean)
