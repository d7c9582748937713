"""Lab extraction end to end on every generated layout, plus the rules one by one."""

from __future__ import annotations

from functools import lru_cache

import pytest
import pymupdf

from domain.content import NormalizedContent, PageContent, Word
from domain.models import DocType, IdentifierKind
from domain.policy.facts.citations import verify_citations
from extract.values import text_rules as tr
from extract.registry import extractor_for
from extract.lab.extractor import extract_lab
from extract.lab.table import assign_columns, detect_header, read_result, split_dotted, split_ocr_leader
from extract.layout import page_rows, segments
from extract.formats.pdf import normalize_pdf
from golden.fixtures import LAB_CASES, LAB_LAYOUTS, lab_case, render_lab, with_layout
from golden.lab_layouts import ALL_LAB_LAYOUTS


@lru_cache(maxsize=None)
def _run(name: str):
    case = next(c for c in LAB_CASES if c.name == name)
    content = normalize_pdf(render_lab(case))
    return case, content, extract_lab(content, "documents:7")


CASES = [c.name for c in LAB_CASES]


def test_every_layout_has_a_default_case():
    assert {c.layout for c in LAB_CASES} == set(LAB_LAYOUTS)
    # Five layouts the extractor was written against, plus the held-out landscape
    # Courier report added afterwards without changing the extractor.
    assert len(LAB_LAYOUTS) >= 6 and "landscape_courier" in LAB_LAYOUTS


@pytest.mark.parametrize("name", CASES)
def test_every_expected_result_is_found_exactly_and_nothing_else(name):
    case, _, result = _run(name)
    got = [f.structured_value for f in result.facts]
    assert [g["test_name"] for g in got] == [e.test_name for e in case.results]
    for g, e in zip(got, case.results):
        assert (g["value"], g["unit"], g["reference_range"], g["abnormal_flag"]) == (
            e.value, e.unit, e.reference_range, e.abnormal_flag), e.test_name
        assert g["collection_date"] == case.collection_date
        if e.printed_flag:
            assert g["flag_derived"] is False, e.test_name


@pytest.mark.parametrize("name", CASES)
def test_every_citation_verifies_inside_the_page_and_quotes_the_value(name):
    _, content, result = _run(name)
    citations = [f.citation for f in result.facts] + [i.citation for i in result.identifiers]
    verified = verify_citations(citations, content)
    for original, checked in zip(citations, verified):
        assert checked.verified, original.quote_or_value
        assert checked.bounding_box == original.bounding_box  # already snapped to its words
        b = checked.bounding_box
        assert 0 <= b.x and 0 <= b.y and b.x + b.width <= 1 and b.y + b.height <= 1
        assert original.page_or_section == f"page {original.page}"
        assert original.source_type == "lab_pdf" and original.source_id == "documents:7"
    for i, fact in enumerate(result.facts):
        assert fact.structured_value["value"] in fact.citation.quote_or_value
        assert fact.structured_value["test_name"].split()[0] in fact.citation.quote_or_value
        assert fact.citation.field_or_chunk_id == f"results[{i}]"


# Layouts that print the patient's number as an account number ("Acct #"): an account
# is not a record number, so the lab reader leaves it to the identity sweep
# (extract.unread_identity), which reads it as another identifier, never as the MRN.
ACCOUNT_NUMBERED = {"units_in_range_mixed"}


@pytest.mark.parametrize("name", CASES)
def test_patient_identifiers_come_from_the_header(name):
    case, _, result = _run(name)
    ids = {i.kind: i.value for i in result.identifiers}
    assert ids[IdentifierKind.DOB] == case.patient.dob
    if name in ACCOUNT_NUMBERED:
        assert IdentifierKind.MRN not in ids
    else:
        assert ids[IdentifierKind.MRN] == case.patient.mrn
    parsed = tr.parse_person_name(ids[IdentifierKind.NAME])
    assert parsed is not None
    assert (parsed.first.lower(), parsed.last.lower()) == (case.patient.first.lower(), case.patient.last.lower())
    assert len(result.identifiers) == 3 - (name in ACCOUNT_NUMBERED)  # repeated page headers are not new identifiers


@pytest.mark.parametrize("name", CASES)
def test_full_rows_are_confident_and_not_sent_to_review(name):
    _, _, result = _run(name)
    for f in result.facts:
        assert not f.wants_review
        assert f.confidence >= 0.85, f.fact_text
    assert not [w for w in result.warnings if w.code in ("no_results_found", "no_collection_date")]


def test_fact_text_reads_like_a_sentence():
    _, _, result = _run("classic_cbc_lipids")
    ldl = next(f for f in result.facts if f.structured_value["test_name"] == "LDL Cholesterol")
    assert ldl.fact_text == "LDL Cholesterol 148 mg/dL (ref <100) high, collected 2026-04-10"
    assert ldl.fact_type == "lab_result"


def test_confidence_reflects_what_matched():
    _, _, result = _run("units_in_range_mixed")
    by_name = {f.structured_value["test_name"]: f for f in result.facts}
    # Same layout, same clean parse: no unit printed costs confidence; a printed
    # flag beats a derived one.
    assert by_name["Specific Gravity"].confidence < by_name["BUN"].confidence
    assert by_name["Glucose"].confidence > by_name["BUN"].confidence
    assert by_name["BUN"].structured_value["flag_derived"] is True
    assert len({f.confidence for f in result.facts}) > 1


def test_results_continue_on_a_page_without_a_header():
    _, content, result = _run("split_range_cmp")
    assert len(content.pages) == 2
    page2 = [f.structured_value["test_name"] for f in result.facts if f.citation.page == 2]
    assert page2[:2] == ["eGFR", "Cholesterol, Total"]


def test_repeated_header_and_footer_on_page_two_are_not_results():
    _, content, result = _run("two_page_panels")
    assert {f.citation.page for f in result.facts} == {1, 2}
    names = " ".join(f.structured_value["test_name"] for f in result.facts)
    for noise in ("Panel", "PANEL", "Comment", "Page", "Cascade", "Component", "Patient"):
        assert noise not in names


def test_split_columns_give_normal_by_position_and_direction_from_numbers():
    _, _, result = _run("split_range_cmp")
    rbc = next(f for f in result.facts if f.structured_value["test_name"] == "RBC").structured_value
    assert rbc["abnormal_flag"] == "normal" and rbc["flag_derived"] is False


def test_same_results_in_every_layout_agree():
    base = lab_case("classic_cbc_lipids")
    seen = {}
    for layout in ALL_LAB_LAYOUTS:
        case = with_layout(base, layout)
        result = extract_lab(normalize_pdf(render_lab(case)), "documents:1")
        seen[layout] = [(f.structured_value["test_name"].casefold(), f.structured_value["value"], f.structured_value["unit"],
                         f.structured_value["reference_range"], f.structured_value["abnormal_flag"])
                        for f in result.facts]
    first = next(iter(seen.values()))
    assert len(first) == len(base.results)
    assert all(v == first for v in seen.values()), seen


def test_registered_for_lab_pdf():
    assert extractor_for(DocType.LAB_PDF) is extract_lab


# --------------------------------------------------------------------------- rules on synthetic pages


def _page(rows: list[list[tuple[str, float]]], width: float = 612, top: float = 100, pitch: float = 14) -> PageContent:
    """Rows of (text, x0) words, 10 pt tall, 5 pt per character."""
    words = []
    for r, row in enumerate(rows):
        for text, x0 in row:
            words.append(Word(text, x0, top + r * pitch, x0 + 5 * len(text), top + r * pitch + 10))
    for i, w in enumerate(words):
        w.index = i
    return PageContent(1, width, 792, words)


def _extract(*pages: PageContent):
    for n, p in enumerate(pages, 1):
        p.number = n
    return extract_lab(NormalizedContent(source_kind="pdf_text", pages=list(pages)), "documents:1")


HEADER_REORDERED = [("Units", 40), ("Reference", 100), ("Interval", 150), ("Analyte", 230), ("Out", 330),
                    ("of", 350), ("Range", 362), ("In", 420), ("Range", 432)]


def test_header_found_by_vocabulary_in_any_order():
    layout = detect_header(page_rows(_page([HEADER_REORDERED]))[0])
    assert layout is not None
    assert [c.role for c in layout.columns] == ["units", "range", "test", "out_range", "in_range"]


@pytest.mark.parametrize("row", [
    [("Test", 40), ("results", 65), ("are", 105), ("discussed", 125), ("below", 175)],
    [("Test:", 40), ("Lipid", 70), ("panel", 100), ("Result:", 200), ("final", 240)],
    [("Units", 40), ("Reference", 100), ("Range", 150)],  # no test and no value column
])
def test_rows_that_are_not_headers(row):
    assert detect_header(page_rows(_page([row]))[0]) is None


def test_words_fall_into_columns_by_header_position():
    page = _page([
        [("Test", 40), ("Value", 220), ("Flag", 270), ("Units", 300)],
        [("Cholesterol,", 48), ("Total", 112), ("1234.5", 205), ("H", 272), ("mg/dL", 300)],
    ])
    rows = page_rows(page)
    cells = assign_columns(rows[1].words, detect_header(rows[0]))
    assert cells.text("test") == "Cholesterol, Total"
    assert cells.text("result") == "1234.5"  # right-aligned, starts left of "Value"
    assert (cells.text("flag"), cells.text("units")) == ("H", "mg/dL")
    assert cells.alignment < 1.0  # the number straddles the column start


def test_value_grammar_reads_units_ranges_and_flags_in_any_order():
    words = [Word(t, 0, 0, 1, 1) for t in "11.8 x10E3/uL (3.4 - 10.8) H".split()]
    r = read_result(words)
    assert (r.value, r.unit, r.reference_range, r.flag, r.leftovers) == ("11.8", "x10E3/uL", "3.4 - 10.8", "H", 0)
    glued = read_result([Word(t, 0, 0, 1, 1) for t in "212H 100-199 mg/dL".split()])
    assert (glued.value, glued.inline_flag, glued.reference_range, glued.unit) == ("212", "H", "100-199", "mg/dL")
    assert read_result([Word("pending", 0, 0, 1, 1)]) is None


def test_dotted_leader_splits_name_from_result():
    words = [Word(t, 0, 0, 1, 1) for t in "Cholesterol, Total........ 212 mg/dL".split()]
    name_words, name, rest = split_dotted(words)
    assert name == "Cholesterol, Total" and [w.text for w in rest] == ["212", "mg/dL"]
    assert split_dotted([Word("......", 0, 0, 1, 1), Word("5", 2, 0, 3, 1)]) is None


def test_dotted_line_without_result_parts_is_not_a_result():
    result = _extract(_page([[("Patient.........", 40), ("Jane", 130), ("Doe", 160)],
                             [("Page........", 40), ("3", 130)]]))
    assert result.facts == []


def test_unreadable_value_in_a_result_row_asks_for_review():
    result = _extract(_page([
        [("Collected:", 40), ("04/10/2026", 100)],
        [("Test", 40), ("Result", 200), ("Units", 280), ("Range", 360)],
        [("Glucose", 40), ("###", 200), ("mg/dL", 280), ("65-99", 360)],
        [("Sodium", 40), ("139", 200), ("mmol/L", 280), ("134-144", 360)],
        [("Potassium", 40), ("mmol/L", 280), ("3.5-5.2", 360)],  # no value printed: no fact
    ]))
    assert [f.structured_value["test_name"] for f in result.facts] == ["Glucose", "Sodium"]
    glucose, sodium = result.facts
    assert glucose.wants_review and "value" in glucose.review_reason
    assert glucose.confidence < 0.5 <= sodium.confidence
    assert not sodium.wants_review


def test_missing_collection_date_lowers_confidence_and_warns():
    rows = [[("Test", 40), ("Result", 200), ("Units", 280), ("Range", 360)],
            [("Sodium", 40), ("139", 200), ("mmol/L", 280), ("134-144", 360)]]
    undated = _extract(_page(rows))
    dated = _extract(_page([[("Date", 40), ("Collected:", 70), ("2026-04-10", 130)], *rows]))
    assert undated.facts[0].structured_value["collection_date"] is None
    assert dated.facts[0].structured_value["collection_date"] == "2026-04-10"
    assert undated.facts[0].confidence < dated.facts[0].confidence
    assert "no_collection_date" in {w.code for w in undated.warnings}
    # A label whose date could not be read is said to be so, not "no label was found".
    unreadable = _extract(_page([[("Date", 40), ("Collected:", 70), ("30/1", 130), ("1/2O26", 153)], *rows]))
    (warning,) = [w for w in unreadable.warnings if w.code == "no_collection_date"]
    assert "'30/1 1/2O26' could not be read as a date" in warning.message


@pytest.mark.parametrize("label", [["Sample", "taken:"], ["Date/time", "taken:"], ["Specimen", "taken:"],
                                   ["Date", "of", "collection:"], ["Taken:"]])
def test_a_british_sample_taken_label_dates_the_results(label):
    # "Sample taken: 01-Dec-2026 09:14" on an NHS report: unread, each of its results
    # went to a person for a missing collection date the page prints.
    head = [(w, 40 + 50 * i) for i, w in enumerate(label)]
    result = _extract(_page([
        [*head, ("01-Dec-2026", 40 + 50 * len(label)), ("09:14", 100 + 50 * len(label))],
        [("Investigation", 40), ("Result", 200), ("Units", 280), ("Reference", 360), ("interval", 410)],
        [("Serum", 40), ("sodium", 75), ("128", 200), ("mmol/L", 280), ("133", 360), ("-", 380), ("146", 390)],
    ]))
    (fact,) = result.facts
    assert fact.structured_value["collection_date"] == "2026-12-01"
    assert "no_collection_date" not in {w.code for w in result.warnings}


def test_value_only_row_is_below_the_promotion_bar():
    result = _extract(_page([[("Test", 40), ("Result", 200)], [("Ferritin", 40), ("12", 200)]]))
    assert result.facts[0].structured_value["abnormal_flag"] == "unknown"
    assert result.facts[0].confidence < 0.7


def test_stacked_header_fields_and_other_dates_are_not_confused():
    result = _extract(_page([
        [("Reported:", 40), ("05/01/2026", 100), ("Collection", 300), ("Date", 355)],
        [("Ordering", 40), ("Physician:", 85), ("Dr.", 140), ("Ana", 160), ("Ruiz", 180), ("04/11/2026", 300)],
        [("Test", 40), ("Result", 200), ("Units", 280)],
        [("Sodium", 40), ("139", 200), ("mmol/L", 280)],
    ]))
    assert result.facts[0].structured_value["collection_date"] == "2026-04-11"
    assert not [i for i in result.identifiers if i.kind == IdentifierKind.NAME]


def test_prose_mentioning_values_is_not_a_table_but_its_results_are_shown_for_review():
    result = _extract(_page([
        [("Fasting", 40), ("lipids", 80), ("showed", 115), ("LDL", 150), ("cholesterol", 170), ("107,", 230)],
        [("HDL", 40), ("22", 65), ("mg/dL", 80), ("and", 115), ("triglycerides", 135), ("180.", 205)],
    ]))
    read = {(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["unit"])
            for f in result.facts}
    assert read == {("LDL cholesterol", "107", ""), ("HDL", "22", "mg/dL"), ("triglycerides", "180", "")}
    assert all(f.wants_review and "running text" in f.review_reason for f in result.facts)
    assert all(f.citation.field_or_chunk_id.startswith("text_results[") for f in result.facts)
    assert all(f.confidence < 0.7 for f in result.facts)


def test_a_result_in_running_text_keeps_when_the_text_says_it_was_measured():
    # a held-out lab's comment "Previous potassium 5.4 mmol/L on 21/11/2026": the date was dropped,
    # so the held item read like a result of this report
    result = _extract(_page([
        [("Previous", 40), ("potassium", 85), ("5.4", 140), ("mmol/L", 160), ("on", 200), ("21/11/2026.", 215)],
        [("HbA1c", 40), ("7.9%", 75), ("on", 100), ("03/02", 115), ("and", 145), ("8.4%", 165), ("on", 190),
         ("06/01.", 205)],
    ]))
    by_value = {f.structured_value["value"]: f for f in result.facts}
    assert by_value["5.4"].structured_value["stated_when"] == "on 21/11/2026"
    assert by_value["5.4"].structured_value["collection_date"] is None  # never taken for the report's date
    assert "(on 21/11/2026)" in by_value["5.4"].fact_text
    assert "stated_when" not in by_value["7.9"].structured_value  # "on 03/02": no year, not a date it can say
    assert all(f.wants_review for f in result.facts)


@pytest.mark.parametrize("sentence, expected", [
    # name, links, value, unit; a name at the end of a line finds its value on the next
    ("Her sodium was 131 mmol/L on admission.", {("sodium", "131", "mmol/L")}),
    ("Labs: potassium 5.9, creatinine of 2.1 mg/dL", {("potassium", "5.9", ""), ("creatinine", "2.1", "mg/dL")}),
    ("TSH currently is 6.2 and free T4 0.7.", {("TSH", "6.2", ""), ("free T4", "0.7", "")}),
    # targets, thresholds, ranges, doses and bare words are not results
    ("The goal LDL is 70 and the target A1c is 7.", set()),
    ("Keep glucose below 180; recheck sodium in 2 days.", set()),
    ("Docusate sodium 100 mg twice daily, potassium chloride 20 mEq.", set()),
    ("LDL 100 to 129 is borderline.", set()),
    ("The pt was seen on 3/4/2026 with hb stable.", set()),
    # the same value stated twice is one result
    ("Her INR was 2.4. Repeat INR is 2.4 today.", {("INR", "2.4", "")}),
    # a result of another specimen is not filed under the blood test
    ("Urinalysis showed white blood cells 41, protein trace.", {("white blood cells (urine)", "41", "")}),
])
def test_results_in_running_text_follow_general_rules(sentence, expected):
    words = sentence.split()
    half = len(words) // 2
    rows, x = [[], []], 40
    for i, w in enumerate(words):
        r = 0 if i < half else 1
        x = 40 if i in (0, half) else x
        rows[r].append((w, x))
        x += 6 * len(w) + 8
    result = _extract(_page(rows))
    got = {(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["unit"])
           for f in result.facts}
    assert got == expected
    assert all(f.wants_review for f in result.facts)


@pytest.mark.shared_data
def test_real_discharge_summary_yields_only_review_items_from_its_prose(shared_data):
    data = (shared_data / "scans" / "hl7_ccda_discharge_summary_typed_with_lipids.pdf").read_bytes()
    content = normalize_pdf(data)
    result = extract_lab(content, "documents:1")
    by_name = {f.structured_value["test_name"]: f for f in result.facts}
    assert by_name["LDL cholesterol"].structured_value["value"] == "107"
    assert by_name["HDL cholesterol"].structured_value["value"] == "22"
    assert by_name["LDL cholesterol"].citation.page == 2
    assert all(f.wants_review and f.citation.field_or_chunk_id.startswith("text_results[") for f in result.facts)
    assert "Zocor" not in " ".join(f.fact_text for f in result.facts)  # doses are not results
    cited = verify_citations([f.citation for f in result.facts], content)
    assert all(c.verified for c in cited)


def test_flag_printed_in_an_unlabelled_column_is_still_read():
    result = _extract(_page([
        [("Collected:", 40), ("04/10/2026", 100)],
        [("Test", 40), ("Result", 200), ("Units", 280), ("Range", 360)],
        [("Glucose", 40), ("105", 200), ("H", 250), ("mg/dL", 280), ("65-99", 360)],
    ]))
    (v,) = [f.structured_value for f in result.facts]
    assert (v["value"], v["unit"], v["abnormal_flag"], v["flag_derived"]) == ("105", "mg/dL", "high", False)


def test_result_status_column_is_kept():
    result = _extract(_page([
        [("Test", 40), ("Result", 200), ("Units", 280), ("Status", 360)],
        [("Sodium", 40), ("139", 200), ("mmol/L", 280), ("Corrected", 360)],
    ]))
    assert result.facts[0].structured_value["result_status"] == "Corrected"


def test_labels_typed_on_one_line_with_few_spaces_are_separated():
    # "Patient Name: ...   Date of Birth: ...   Patient ID: ..." typed as one line.
    result = _extract(_page([
        [("Patient", 40), ("Name:", 80), ("Rowan", 110), ("Ellery-Tate", 142), ("Date", 206), ("of", 230),
         ("Birth:", 244), ("02/03/1975", 278), ("Patient", 336), ("ID:", 374), ("77-1234", 393)],
        [("Test", 40), ("Result", 200), ("Units", 280)],
        [("Sodium", 40), ("139", 200), ("mmol/L", 280)],
    ]))
    ids = {i.kind: i.value for i in result.identifiers}
    assert ids == {IdentifierKind.NAME: "Rowan Ellery-Tate", IdentifierKind.DOB: "1975-02-03",
                   IdentifierKind.MRN: "77-1234"}


# --------------------------------------------------------------------------- rules on OCR words
# OCR words carry a confidence; (text, x0, conf) or (text, x0, conf, width). 5 pt per
# character as above; a leader's junk gets the width of the dots it was read from.


def _ocr_page(rows: list[list[tuple]], width: float = 612) -> PageContent:
    words = []
    for r, row in enumerate(rows):
        for text, x0, conf, *w in row:
            words.append(Word(text, x0, 100 + r * 14, x0 + (w[0] if w else 5 * len(text)), 110 + r * 14, conf=conf))
    for i, w in enumerate(words):
        w.index = i
    return PageContent(1, width, 792, words)


def _ocr_extract(*rows: list[tuple]):
    page = _ocr_page([[("Collected:", 40, 0.95), ("04/10/2026", 100, 0.95)], *rows])
    return extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1")


def test_ocr_words_one_space_apart_stay_one_phrase():
    # Courier through OCR: words 1.5 characters apart, but more than 0.8 of the
    # (ink-tight) row height; a text layer's words at the same places split.
    ocr = [Word(t, x, 0, x + 5 * len(t), 6, conf=0.95)
           for t, x in (("Specimen", 0), ("collected:", 47.5), ("Apr", 105))]
    typed = [Word(w.text, w.x0, w.y0, w.x1, w.y1) for w in ocr]
    assert [len(s) for s in segments(ocr)] == [3]
    assert [len(s) for s in segments(typed)] == [1, 1, 1]
    far = ocr[:2] + [Word("Apr", 125, 0, 140, 6, conf=0.95)]  # 4.5 characters: a column gap
    assert [len(s) for s in segments(far)] == [2, 1]


def test_ocr_leader_read_as_junk_words_splits_name_from_value():
    words = [Word(t, x, 0, x + w, 10, conf=c) for t, x, w, c in (
        ("WBC", 40, 15, 0.56), ("oe", 60, 110, 0.03), ("Ss", 172, 22, 0.29), ("11.8", 200, 20, 0.92),
        ("x10E3/uL", 225, 40, 0.9), ("(3.4-10.8)", 270, 50, 0.82), ("H", 325, 5, 0.82))]
    split = split_ocr_leader(words)
    assert (split.name, [w.text for w in split.leader], split.rest[0].text, split.doubt) == (
        "WBC", ["oe", "Ss"], "11.8", None)
    typed = [Word(w.text, w.x0, w.y0, w.x1, w.y1) for w in words]
    assert split_ocr_leader(typed) is None  # a text layer says exactly what was printed


def test_ocr_leader_never_cuts_a_doubtful_name_word():
    # "Alc" is doubtful but as wide as its letters: a word of the name, not dots.
    # Cutting there would turn "Hemoglobin A1c" into "Hemoglobin".
    words = [Word(t, x, 0, x + w, 10, conf=c) for t, x, w, c in (
        ("Hemoglobin", 40, 50, 0.9), ("Alc", 95, 15, 0.0), ("is", 115, 50, 0.19), ("7.9", 170, 15, 0.9),
        ("%", 190, 5, 0.9), ("(<5.7)", 200, 30, 0.9))]
    assert split_ocr_leader(words).name == "Hemoglobin Alc"


def test_ocr_leader_lines_become_results_and_doubts_go_to_review():
    result = _ocr_extract(
        [("Sodium", 40, 0.95), ("oe", 80, 0.05, 100), ("139", 190, 0.95), ("mmol/L", 210, 0.9),
         ("(134-144)", 250, 0.9)],
        # a number read in the leader: which one is the result?
        [("Chloride", 40, 0.95), ("32.8", 85, 0.29), ("ee.", 110, 0.1, 60), ("101", 190, 0.95), ("mmol/L", 210, 0.9),
         ("(96-106)", 250, 0.9)],
        # letters in the number: kept as read, not guessed
        [("Potassium", 40, 0.95), ("2...", 95, 0.06), ("eee", 120, 0.2, 60), ("4l.2", 190, 0.9), ("mmol/L", 210, 0.9),
         ("(3.5-5.2)", 250, 0.9)],
    )
    by_name = {f.structured_value["test_name"]: f for f in result.facts}
    assert set(by_name) == {"Sodium", "Chloride", "Potassium"}
    sodium = by_name["Sodium"]
    assert (sodium.structured_value["value"], sodium.structured_value["reference_range"]) == ("139", "134-144")
    assert not sodium.wants_review and sodium.confidence >= 0.85  # the junk's confidence does not count
    assert by_name["Chloride"].wants_review and "'32.8'" in by_name["Chloride"].review_reason
    potassium = by_name["Potassium"]
    assert potassium.wants_review and potassium.structured_value["value"] == "4l.2"
    assert "letters" in potassium.review_reason


def test_ocr_table_rows_with_doubtful_parts_go_to_review():
    result = _ocr_extract(
        [("Test", 40, 0.95), ("Result", 200, 0.95), ("Units", 280, 0.95), ("Range", 360, 0.95)],
        [("Sodium", 40, 0.95), ("139", 200, 0.95), ("mmol/L", 280, 0.95), ("134-144", 360, 0.95)],
        [("Glucose", 40, 0.95), ("105", 200, 0.25), ("mg/dL", 280, 0.95), ("65-99", 360, 0.95)],
        [("Calcium", 40, 0.95), ("9.1", 200, 0.95), ("mg/dL", 280, 0.95)],  # range not read
        [("Platelets", 40, 0.95), ("142", 200, 0.95), ("xlOE3/uL", 280, 0.6), ("150-450", 360, 0.95)],
    )
    by_name = {f.structured_value["test_name"]: f for f in result.facts}
    assert not by_name["Sodium"].wants_review
    assert "low confidence (0.25)" in by_name["Glucose"].review_reason
    assert "no reference range" in by_name["Calcium"].review_reason
    assert by_name["Platelets"].structured_value["unit"] == "x10E3/uL"  # only the "10" of the unit repaired
    # Inside a table its columns decide: a doubtful word is never taken for a leader.
    assert by_name["Glucose"].structured_value["value"] == "105"


# A one-result table of OCR words under the identity rows a test prints.
_OCR_SODIUM_TABLE = [
    [("Test", 40, 0.95), ("Result", 200, 0.95), ("Units", 280, 0.95), ("Range", 360, 0.95)],
    [("Sodium", 40, 0.95), ("139", 200, 0.95), ("mmol/L", 280, 0.95), ("134-144", 360, 0.95)],
]


def test_a_collection_date_ocr_split_with_a_space_is_read_and_reviewed():
    """A fax read "Collected: 30/11/2026" as "30/1 1/2026": no date was found, every
    result went undated. The space is taken out, and the reason says what was read."""
    page = _ocr_page([[("DOB:", 40, 0.95), ("14/07/1949", 80, 0.95), ("Collected:", 200, 0.95), ("30/1", 260, 0.95),
                       ("1/2026", 285, 0.95), ("08:40", 330, 0.95)], *_OCR_SODIUM_TABLE])
    (fact,) = extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1").facts
    assert fact.structured_value["collection_date"] == "2026-11-30"
    assert fact.wants_review and "read by OCR as '30/1 1/2026', taken as '30/11/2026'" in fact.review_reason
    typed = _ocr_page([[("Collected:", 200, None), ("30/1", 260, None), ("1/2026", 285, None)], *_OCR_SODIUM_TABLE])
    (fact,) = extract_lab(NormalizedContent(source_kind="pdf", pages=[typed]), "documents:1").facts
    assert fact.structured_value.get("collection_date") is None  # a text layer prints what it prints


def test_a_star_flag_a_fax_read_as_a_degree_sign_keeps_its_value_and_goes_to_review():
    """"131 *L" read as "131°L": before, the value could not be read, nor its unit and
    range. Now the value is read and the unknown flag sends the result to a person."""
    result = _ocr_extract([("Test", 40, 0.95), ("Result", 200, 0.95), ("Units", 280, 0.95), ("Range", 360, 0.95)],
                          [("Sodium", 40, 0.95), ("131°L", 200, 0.95), ("mmol/L", 280, 0.95), ("(135-145)", 360, 0.95)],
                          [("Temp", 40, 0.95), ("37.2°C", 200, 0.95)])
    sodium = result.facts[0]
    sv = sodium.structured_value
    assert (sv["test_name"], sv["value"], sv["unit"], sv["reference_range"], sv["abnormal_flag"]) == (
        "Sodium", "131", "mmol/L", "135-145", "low")
    assert sodium.wants_review and "'°L' is not one the rules know" in sodium.review_reason
    assert all(f.structured_value.get("value") != "37.2" for f in result.facts)  # a temperature is no star flag


def test_ocr_label_glued_to_its_value_is_still_a_field():
    # OCR lost the space after the colon: "DOB:7/22/58" is one word on the page.
    page = _ocr_page([[("Patient:", 40, 0.95), ("Ann", 85, 0.95), ("Lee", 105, 0.95)],
                      [("DOB:7/22/58", 40, 0.95), ("Collected:04/10/2026", 200, 0.95)],
                      *_OCR_SODIUM_TABLE])
    content = NormalizedContent(source_kind="ocr", pages=[page])
    result = extract_lab(content, "documents:1")
    dob = next(i for i in result.identifiers if i.kind == IdentifierKind.DOB)
    assert dob.value == "1958-07-22"
    assert verify_citations([dob.citation], content)[0].verified  # the quote still finds the one OCR word
    assert result.facts[0].structured_value["collection_date"] == "2026-04-10"


def test_ocr_label_glued_to_its_value_by_a_point_is_still_a_field():
    # A fax read "DOB 14/03/1952" as "DOB.14/03/1952": the name and the date of birth went
    # unread; a word that only looks like it ("No.5") stays whole.
    page = _ocr_page([[("Patient:", 40, 0.95), ("Tomasz", 85, 0.95), ("WIECZOREK", 125, 0.95),
                       ("DOB.14/03/1952", 190, 0.9), ("MRN", 260, 0.95), ("HX-771203", 285, 0.95)],
                      *_OCR_SODIUM_TABLE])
    content = NormalizedContent(source_kind="ocr", pages=[page])
    result = extract_lab(content, "documents:1")
    got = {i.kind: i.value for i in result.identifiers}
    assert got == {IdentifierKind.NAME: "Tomasz WIECZOREK", IdentifierKind.DOB: "1952-03-14",
                   IdentifierKind.MRN: "HX-771203"}
    assert all(c.verified for c in verify_citations([i.citation for i in result.identifiers], content))


def test_a_label_a_column_apart_from_its_value_is_vouched_for_by_the_value():
    # A scanned header box lost its colons: "DOB      09-Aug-1963", "Collected      28-Nov-2026 07:45",
    # each label a column apart from its value; neither was read ("no collection date label").
    page = _ocr_page([[("Surname:", 40, 0.95), ("MBEKI-LARSSON", 110, 0.95), ("Collected", 300, 0.95),
                       ("28-Nov-2026", 400, 0.95), ("07:45", 460, 0.95)],
                      [("DOB", 40, 0.45), ("09-Aug-1963", 110, 0.95), ("Received", 300, 0.95),
                       ("28-Nov-2026", 400, 0.95)],
                      *_OCR_SODIUM_TABLE])
    result = extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1")
    assert {i.kind: i.value for i in result.identifiers}[IdentifierKind.DOB] == "1963-08-09"
    assert result.facts[0].structured_value["collection_date"] == "2026-11-28"


@pytest.mark.parametrize("row, expected", [
    # labels inside one segment, without colons: the name ran on to the end of the row and nothing was read
    ("Patient: WIECZOREK, Tomasz  DOB 14/03/1952  MRN HX-771203",
     {"name": "WIECZOREK, Tomasz", "dob": "1952-03-14", "mrn": "HX-771203"}),
    ("Name: Ann LEE Date of birth 01/02/1960 Hosp# 445566", {"name": "Ann LEE", "dob": "1960-01-02", "mrn": "445566"}),
    ("Pt: LEE, Ann Visit 2231", {"name": "LEE, Ann"}),
    # a unit record number after the hospital's letter code: read as the code alone, it was lost
    ("Pt: LEE, Ann  UR No.: RMH 0442917", {"name": "LEE, Ann", "mrn": "RMH0442917"}),
    # a label word in lower case is running text: nothing is attributed, so nothing is read
    ("Patient: Ann LEE born 01/02/1960", {}),
])
def test_labels_inside_a_row_without_colons(row, expected):
    from extract.formats.pdf import normalize_pdf

    doc = pymupdf.open()
    page = doc.new_page()
    for y, text in ((72, row), (100, "Collected 02/11/2026"), (114, "Sodium 133 mmol/L 135-145 L")):
        page.insert_text((72, y), text, fontsize=10)
    result = extract_lab(normalize_pdf(doc.tobytes()), "documents:1")
    assert {i.kind.value: i.value for i in result.identifiers} == expected


def test_ocr_label_with_its_space_read_as_a_hyphen_is_still_a_field():
    # "Patient-name:" on a scan: the name went unread, and nothing said so
    page = _ocr_page([[("Patient-name:", 40, 0.95), ("DUBOIS,", 110, 0.95), ("Helene", 150, 0.95)],
                      *_OCR_SODIUM_TABLE])
    content = NormalizedContent(source_kind="ocr", pages=[page])
    result = extract_lab(content, "documents:1")
    name = next(i for i in result.identifiers if i.kind == IdentifierKind.NAME)
    assert name.value == "DUBOIS, Helene"
    assert name.citation.quote_or_value == "Patient-name: DUBOIS, Helene"  # as the page prints it
    assert verify_citations([name.citation], content)[0].verified


def test_a_hyphened_word_that_is_no_label_stays_whole():
    page = _ocr_page([[("Follow-up:", 40, 0.95), ("6620915", 110, 0.95)],
                      *_OCR_SODIUM_TABLE])
    result = extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1")
    assert not result.identifiers


# --------------------------------------------------------------------------- leaders read as debris, lost leaders


def test_ocr_leader_read_as_dot_shaped_letters_is_cut_from_the_name():
    # Courier at 200 dpi: the dots read as short lower-case words of round letters,
    # each as wide as real letters (so not "stretched"), all doubtful.
    result = _ocr_extract(
        [("WBC", 40, 0.49), ("eos", 62, 0.15), ("wae", 82, 0.16), ("oeCave", 102, 0.0), ("sce", 140, 0.07),
         ("11.8", 190, 0.91), ("x10E3/uL", 215, 0.8), ("(3.4-10.8)", 260, 0.89), ("H", 315, 0.9)],
        [("Hematocrit", 40, 0.13), ("ies", 95, 0.13), ("ees", 115, 0.11), ("oe", 140, 0.2), ("39.6", 190, 0.86),
         ("%", 215, 0.8), ("(34.0-46.6)", 230, 0.86)],
        [("Urine", 40, 0.42), ("Protein", 70, 0.2), ("rns", 110, 0.04), ("aes", 130, 0.18), ("es", 150, 0.03),
         ("Negative", 190, 0.96), ("(Negative)", 240, 0.96)],
        [("Urine", 40, 0.78), ("Glucose", 70, 0.78), ("is", 112, 0.26), ("ene", 125, 0.2, 60), ("Positive", 190, 0.96),
         ("(Negative)", 240, 0.96), ("A", 295, 0.96)],
        # debris of every kind between name and value
        [("Sodium", 40, 0.9), (".,:;", 80, 0.3), ("'`-_", 105, 0.2), ("141", 190, 0.95), ("mmol/L", 215, 0.9),
         ("(135-145)", 255, 0.9)],
        # a doubtful capitalised name word is not dots: "Alc" stays in the name (and is
    # read as the "A1c" it stands for, for a person to confirm)
        [("Hemoglobin", 40, 0.28), ("Alc", 95, 0.28), ("ec", 115, 0.09), ("soc", 130, 0.0), ("7.9", 190, 0.89),
         ("%", 210, 0.85), ("(<5.7)", 225, 0.89), ("H", 260, 0.91)],
    )
    got = {f.structured_value["test_name"]: f.structured_value for f in result.facts}
    assert set(got) == {"WBC", "Hematocrit", "Urine Protein", "Urine Glucose", "Sodium", "Hemoglobin A1c"}
    a1c = next(f for f in result.facts if f.structured_value["test_name"] == "Hemoglobin A1c")
    assert a1c.wants_review and "read by OCR as 'Hemoglobin Alc'" in a1c.review_reason
    assert "Alc" in a1c.citation.quote_or_value  # the quote keeps what was read
    assert (got["WBC"]["value"], got["WBC"]["unit"], got["WBC"]["reference_range"], got["WBC"]["abnormal_flag"]) == (
        "11.8", "x10E3/uL", "3.4-10.8", "high")
    assert (got["Urine Glucose"]["value"], got["Urine Glucose"]["abnormal_flag"]) == ("Positive", "abnormal")
    assert got["Sodium"]["value"] == "141" and got["Hematocrit"]["value"] == "39.6"


def test_one_doubtful_word_before_the_value_is_never_cut_from_the_name():
    # "Creatinine, urine" with "urine" read doubtfully right before the value: one
    # round-lettered word is part of the name, not a leader (and not serum creatinine).
    result = _ocr_extract(
        [("Creatinine,", 40, 0.9), ("urine", 100, 0.3), ("112", 190, 0.95), ("mg/dL", 215, 0.9),
         ("(20-320)", 255, 0.9)],
    )
    (fact,) = result.facts
    assert fact.structured_value["test_name"] == "Creatinine, urine"


def test_a_result_line_without_a_leader_is_read_whole_or_not_at_all():
    # OCR at 150 dpi lost the dots altogether; some reports print none.
    result = _ocr_extract(
        [("WBC", 40, 0.96), ("11.8", 190, 0.92), ("x10E3/uL", 215, 0.87), ("(3.4-10.8)", 260, 0.72), ("H", 315, 0.93)],
        [("Specific", 40, 0.96), ("Gravity", 85, 0.96), ("1.015", 190, 0.8), ("(1.005-1.030)", 220, 0.63)],
        [("Piatelets", 40, 0.44), ("142", 190, 0.91), ("x10E3/uL", 215, 0.36), ("(150-450)", 260, 0.71), ("L", 315, 0.89)],
        [("Urine", 40, 0.96), ("Protein", 70, 0.96), ("Negative", 190, 0.96), ("(Negative)", 240, 0.95)],
        # running text or a line without a range is no result line
        [("HDL", 40, 0.95), ("22", 65, 0.95), ("mg/dL", 80, 0.95), ("and", 115, 0.95), ("falling", 135, 0.95)],
        [("Albumin", 40, 0.95), ("4.0", 190, 0.95), ("g/dL", 215, 0.95)],
    )
    got = {f.structured_value["test_name"]: f for f in result.facts if not f.citation.field_or_chunk_id.startswith("text")}
    assert set(got) == {"WBC", "Specific Gravity", "Platelets", "Urine Protein"}
    wbc = got["WBC"].structured_value
    assert (wbc["value"], wbc["unit"], wbc["reference_range"], wbc["abnormal_flag"]) == (
        "11.8", "x10E3/uL", "3.4-10.8", "high")
    assert not got["WBC"].wants_review
    # a name a letter away from one test is read as it, for a person to confirm
    assert got["Platelets"].wants_review and "read by OCR as 'Piatelets'" in got["Platelets"].review_reason
    # what the line rule does not take stays visible for review through the prose rule, or not at all
    others = [f for f in result.facts if f.citation.field_or_chunk_id.startswith("text")]
    assert all(f.wants_review for f in others)


def test_a_long_unit_run_into_its_range_is_split_at_the_bound():
    # A fixed-width (Courier) report written after the rule: "mL/min/1.73m2" filled its
    # column and ">60" followed with no space; the eGFR went to review as "no unit".
    result = _extract(_page([
        [("Collected:", 40), ("30-NOV-2026", 100)],
        [("ANALYTE", 40), ("RESULT", 160), ("FLAG", 210), ("UNITS", 240), ("REF.", 305), ("RANGE", 330)],
        [("eGFR", 40), ("23", 160), ("L", 210), ("mL/min/1.73m2>60", 240)],
        [("Creatinine", 40), ("188", 160), ("H", 210), ("umol/L", 240), ("45-84", 305)],
    ]))
    got = {f.structured_value["test_name"]: f for f in result.facts}
    egfr = got["eGFR"].structured_value
    assert (egfr["unit"], egfr["reference_range"], egfr["abnormal_flag"]) == ("mL/min/1.73m2", ">60", "low")
    assert not got["eGFR"].wants_review


def test_a_confident_ocr_name_two_letters_from_a_known_test_is_held_not_charted_as_printed():
    # A standard fax read "Potassium" as "Potassiuin", every word sure: charted as
    # printed, the 5.6 would sit under a test nobody ordered, and no potassium trend
    # would show it.
    result = _ocr_extract(
        [("Test", 40, 0.95), ("Result", 190, 0.95), ("Units", 240, 0.95), ("Range", 300, 0.95)],
        [("Potassiuin", 40, 0.93), ("5.6", 190, 0.95), ("mmol/L", 240, 0.93), ("3.5-5.2", 300, 0.94)],
        [("Sodium", 40, 0.95), ("139", 190, 0.95), ("mmol/L", 240, 0.95), ("134-144", 300, 0.95)],
    )
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert not got["Sodium"].wants_review
    held = got["Potassiuin"]
    assert held.wants_review and "close to 'Potassium'" in held.review_reason


def test_typed_line_of_an_unknown_test_outside_a_table_goes_to_review():
    result = _extract(_page([
        [("Collected:", 40), ("04/10/2026", 100)],
        [("Patient", 40), ("weight", 80), ("80", 200), ("kg", 220), ("(60-90)", 250)],
        [("Ferritin", 40), ("6", 200), ("ng/mL", 220), ("(15-150)", 260), ("L", 320)],
    ]))
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert got["Patient weight"].wants_review
    assert not got["Ferritin"].wants_review and got["Ferritin"].structured_value["abnormal_flag"] == "low"


def test_a_known_test_whose_value_cannot_be_read_stays_visible_for_review():
    result = _ocr_extract(
        [("Hemoglobin", 40, 0.96), ("131°", 190, 0.51), ("g/dL", 220, 0.24), ("(111-15.", 250, 0.52), ("9)", 300, 0.82)],
        [("Hematocrit", 40, 0.96), ("39.@", 190, 0.8), ("%", 220, 0.83), ("(34.0-46", 240, 0.58), ("6)", 290, 0.96)],
        [("Specific", 40, 0.96), ("Gravity", 85, 0.93), (".......", 125, 0.86), ("L015:", 190, 0.45),
         ("(1.005-1.030)", 230, 0.22)],
        [("WBC", 40, 0.96), ("1l.8", 190, 0.9), ("x10E3/uL", 215, 0.87), ("(3.4-10.8)", 260, 0.9)],
        # not a known test, or nothing result-like after it: not a result
        [("Suite", 40, 0.96), ("300,", 80, 0.9), ("Fairview", 110, 0.9)],
        [("Potassium", 40, 0.96), ("see", 100, 0.9), ("note", 130, 0.9), ("3", 160, 0.9)],
    )
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert set(got) == {"Hemoglobin", "Hematocrit", "Specific Gravity", "WBC"}
    for fact in got.values():
        assert fact.wants_review and fact.confidence < 0.7
    assert got["Hemoglobin"].structured_value["value"] == "131°"
    assert "letters" in got["WBC"].review_reason  # "1l.8" is not guessed into 11.8


def test_a_range_that_cannot_be_right_sends_the_row_to_review():
    result = _ocr_extract(
        [("Test", 40, 0.95), ("Result", 200, 0.95), ("Flag", 250, 0.95), ("Units", 300, 0.95), ("Range", 360, 0.95)],
        [("Hemoglobin", 40, 0.96), ("6.8", 200, 0.96), ("LL", 250, 0.94), ("g/dL", 300, 0.81), ("41.1-15.9", 360, 0.88)],
        [("Hematocrit", 40, 0.92), ("21.4", 200, 0.95), ("L", 250, 0.92), ("%", 300, 0.89), ("34.0-46.6", 360, 0.91)],
    )
    by_name = {f.structured_value["test_name"]: f for f in result.facts}
    hgb = by_name["Hemoglobin"]
    assert hgb.wants_review and "low bound above its high bound" in hgb.review_reason
    assert hgb.structured_value["abnormal_flag"] == "critical_low"  # still shown as printed
    assert not by_name["Hematocrit"].wants_review


def test_units_in_the_range_cell_after_critical_limits():
    result = _extract(_page([
        [("Collected:", 40), ("04/10/2026", 100)],
        [("Test", 40), ("Result", 200), ("Reference", 280), ("Range", 330)],
        [("Potassium", 40), ("2.3", 200), ("3.5-5.0", 280), ("(critical", 320), ("<2.5", 365), ("or", 390),
         (">6.5)", 405), ("mmol/L", 440)],
        [("Sodium", 40), ("118", 200), ("135-145", 280), ("mmol/L", 320)],
    ]))
    by_name = {f.structured_value["test_name"]: f.structured_value for f in result.facts}
    k = by_name["Potassium"]
    assert (k["unit"], k["reference_range"], k["abnormal_flag"]) == (
        "mmol/L", "3.5-5.0 (critical <2.5 or >6.5)", "critical_low")
    assert by_name["Sodium"]["unit"] == "mmol/L"


def test_a_dotted_line_with_critical_limits_and_unit_in_its_brackets():
    words = [Word(t, 0, 0, 1, 1) for t in "2.3 (3.5-5.0 (critical <2.5 or >6.5) mmol/L) LL".split()]
    r = read_result(words)
    assert (r.value, r.reference_range, r.range_unit, r.flag, r.leftovers) == (
        "2.3", "3.5-5.0 (critical <2.5 or >6.5)", "mmol/L", "LL", 0)


@pytest.mark.parametrize("words, name", [
    ("Glucose ------- 105 mg/dL (65-99) H", "Glucose"),
    ("Sodium _______ 139 mmol/L (134-144)", "Sodium"),
    ("Chloride .,.,.,., 101 mmol/L (96-106)", "Chloride"),
    ("Calcium ::::::: 9.1 mg/dL (8.6-10.3)", "Calcium"),
    ("Cholesterol, Total........ 212 mg/dL (100-199) H", "Cholesterol, Total"),
])
def test_leaders_of_other_debris_than_dots(words, name):
    texts = words.split()
    split = split_dotted([Word(t, 0, 0, 1, 1) for t in texts])
    assert split is not None and split[1] == name
    assert read_result(split[2]) is not None


def test_ocr_record_number_split_at_its_separator_is_one_identifier():
    page = _ocr_page([
        [("Patient", 40, 0.96), ("Name:", 80, 0.93), ("IKWUEMES!-DALGAARD,", 115, 0.42), ("PERPETUA", 220, 0.91)],
        [("Medical", 40, 0.95), ("Record", 80, 0.91), ("#:", 115, 0.91), ("CR:", 130, 0.5), ("760144", 150, 0.5)],
        [("Birth", 40, 0.96), ("Date:", 70, 0.96), ("1957-04-23", 100, 0.96)],
    ])
    result = extract_lab(NormalizedContent(source_kind="ocr", pages=[page]), "documents:1")
    ids = {i.kind: i for i in result.identifiers}
    assert ids[IdentifierKind.MRN].value == "CR:760144"
    assert ids[IdentifierKind.MRN].citation.quote_or_value.endswith("CR: 760144")
    assert ids[IdentifierKind.NAME].value == "IKWUEMES!-DALGAARD, PERPETUA"  # kept as read, judged by the gate
    typed = _extract(_page([[("Patient", 40), ("Name:", 80), ("IKWUEMES!-DALGAARD,", 115), ("PERPETUA", 220)],
                            [("MRN:", 40), ("CR-760144", 80), ("Ward", 140), ("4", 170)]]))
    assert not [i for i in typed.identifiers if i.kind is IdentifierKind.NAME]  # a text layer prints no "!"
    assert [i.value for i in typed.identifiers if i.kind is IdentifierKind.MRN] == ["CR-760144"]


# --------------------------------------------------------------------------- OCR marks inside a scanned table

def test_scanned_table_cells_read_through_ocr_marks():
    # A scanned table whose header OCR misread by a letter, a speck after a test name,
    # a unit split at its slash, a flag after a stray point, a range that lost its dash
    # and a name a letter off: each result is read, and what was taken for what it
    # stands for waits for a person.
    result = _ocr_extract(
        [("Descriptlon", 40, 0.62), ("Result", 190, 0.95), ("Units", 260, 0.95), ("Reference", 340, 0.95),
         ("Range", 400, 0.95)],
        [("Sodium", 40, 0.95), (":", 80, 0.3), ("139", 190, 0.95), ("mmol/L", 260, 0.95), ("134-144", 340, 0.95)],
        [("WBC", 40, 0.95), ("11.8", 190, 0.95), ("x10E3", 260, 0.9), ("/uL", 290, 0.9), ("3.4-10.8", 340, 0.95)],
        [("Glucose", 40, 0.95), ("105.H", 190, 0.93), ("mg/dL", 260, 0.95), ("65-99", 340, 0.95)],
        [("Potassium", 40, 0.95), ("4.1", 190, 0.95), ("mmol/L", 260, 0.95), ("3.55.2", 340, 0.9)],
        [("Creatinlne", 40, 0.9), ("0.91", 190, 0.95), ("mye/dl", 260, 0.7), ("0.57-1.00", 340, 0.95)],
    )
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert set(got) == {"Sodium", "WBC", "Glucose", "Potassium", "Creatinine"}
    sodium = got["Sodium"].structured_value
    assert (sodium["value"], sodium["unit"], sodium["reference_range"]) == ("139", "mmol/L", "134-144")
    assert got["WBC"].structured_value["unit"] == "x10E3/uL"
    glucose = got["Glucose"].structured_value
    assert (glucose["value"], glucose["abnormal_flag"]) == ("105", "high")
    potassium = got["Potassium"]
    assert potassium.structured_value["reference_range"] == "3.5-5.2"
    assert potassium.wants_review and "read by OCR as '3.55.2'" in potassium.review_reason
    creatinine = got["Creatinine"]
    assert creatinine.structured_value["unit"] == "mg/dL"
    assert creatinine.wants_review and "'Creatinlne'" in creatinine.review_reason and "'mye/dl'" in creatinine.review_reason
    assert "Creatinlne" in creatinine.citation.quote_or_value  # the quote keeps what OCR read


def test_a_fax_header_read_two_letters_off_still_names_its_column():
    # A standard-resolution fax printed "Reference" as "Roforence" (an e closed into an o,
    # twice): unread, the units column ran on over the ranges ("mmol/L 135 - 145").
    result = _ocr_extract(
        [("Test", 40, 0.9), ("Result", 190, 0.9), ("Flag", 250, 0.9), ("Units", 290, 0.9), ("Roforence", 380, 0.6)],
        [("Sodium", 40, 0.9), ("131", 190, 0.9), ("L", 250, 0.9), ("mmol/L", 290, 0.9), ("135", 380, 0.9),
         ("-", 400, 0.9), ("145", 410, 0.9)],
        [("Chloride", 40, 0.9), ("99", 190, 0.9), ("mmol/L", 290, 0.9), ("95-110", 380, 0.9)],
    )
    got = {f.structured_value["test_name"]: f.structured_value for f in result.facts}
    assert (got["Sodium"]["unit"], got["Sodium"]["reference_range"]) == ("mmol/L", "135 - 145")
    assert (got["Chloride"]["unit"], got["Chloride"]["abnormal_flag"]) == ("mmol/L", "normal")


def test_a_typed_label_ending_in_a_colon_is_still_no_result():
    # The speck rule is for OCR'd words standing apart; a typed "Comment :" row stays a label.
    result = _extract(_page([
        [("Collected:", 40), ("04/10/2026", 100)],
        [("Test", 40), ("Result", 190), ("Units", 260), ("Range", 340)],
        [("Sodium", 40), ("139", 190), ("mmol/L", 260), ("134-144", 340)],
        [("Comment", 40), (":", 80), ("12", 190), ("mg/dL", 260), ("1-20", 340)],
    ]))
    assert [f.structured_value["test_name"] for f in result.facts] == ["Sodium"]


# --------------------------------------------------------------------------- day and month
# A numeric date whose two numbers could each be the month is read the way the report
# prints its other dates; no other date: month first (the clinic's order); both ways on
# one report: the result goes to review saying so.

def _dated_report(dob: str, collected: str):
    return _extract(_page([
        [("Patient:", 40), ("Lindqvist,", 100), ("Oskar", 160)],
        [("Birth", 40), ("date:", 70), (dob, 110)],
        [("Specimen", 40), ("collected:", 90), (collected, 150)],
        [("Test", 40), ("Result", 200), ("Units", 260), ("Range", 320)],
        [("Sodium", 40), ("138", 200), ("mmol/L", 260), ("135-145", 320)],
    ]))


@pytest.mark.parametrize("dob, collected, expected_collected, expected_dob", [
    ("19/08/1967", "05/11/2026", "2026-11-05", "1967-08-19"),  # the birth date shows day first
    ("08/19/1967", "05/11/2026", "2026-05-11", "1967-08-19"),  # it shows month first
    ("05/06/1967", "05/11/2026", "2026-05-11", "1967-05-06"),  # nothing settles it: month first
    ("05/06/1967", "24/11/2026", "2026-11-24", "1967-06-05"),  # the collection date settles the birth date
])
def test_a_reports_own_dates_settle_day_and_month(dob, collected, expected_collected, expected_dob):
    result = _dated_report(dob, collected)
    [fact] = result.facts
    assert fact.structured_value["collection_date"] == expected_collected and not fact.wants_review
    assert [i.value for i in result.identifiers if i.kind == IdentifierKind.DOB] == [expected_dob]
    # only an open birth date carries its day-first reading, for the gate to weigh
    open_dob = [i.other_reading for i in result.identifiers if i.kind == IdentifierKind.DOB]
    assert open_dob == (["1967-06-05"] if (dob, collected) == ("05/06/1967", "05/11/2026") else [None])


def test_a_report_printing_dates_both_ways_sends_an_open_date_to_review():
    [fact] = _extract(_page([
        [("Birth", 40), ("date:", 70), ("19/08/1967", 110)],
        [("Reported:", 40), ("11/24/2026", 110)],
        [("Collected:", 40), ("05/11/2026", 110)],
        [("Test", 40), ("Result", 200), ("Units", 260), ("Range", 320)],
        [("Sodium", 40), ("138", 200), ("mmol/L", 260), ("135-145", 320)],
    ])).facts
    assert fact.wants_review and "may be 2026-05-11 or 2026-11-05" in fact.review_reason


# --------------------------------------------------------------------------- a name in parts

def _named(*label_rows):
    return _extract(_page([
        *label_rows,
        [("Collected:", 40), ("2026-11-05", 110)],
        [("Test", 40), ("Result", 200), ("Units", 260), ("Range", 320)],
        [("Sodium", 40), ("138", 200), ("mmol/L", 260), ("135-145", 320)],
    ]))


def test_a_name_printed_in_parts_on_one_row_is_one_cited_name():
    result = _named([("Family", 40), ("name:", 75), ("OYAMA-FENWICK", 110), ("First", 260), ("name:", 290),
                     ("Rosalind", 325), ("Middle", 420), ("name:", 455), ("Ines", 490)])
    [name] = [i for i in result.identifiers if i.kind == IdentifierKind.NAME]
    assert name.value == "OYAMA-FENWICK, Rosalind Ines"
    assert name.citation.quote_or_value.startswith("Family name: OYAMA-FENWICK") and name.citation.bounding_box


@pytest.mark.parametrize("rows", [
    # another field printed among the parts: one quote would not be what the page prints
    [[("Surname:", 40), ("OYAMA-FENWICK", 90), ("Sex:", 200), ("F", 225), ("Given:", 260), ("Rosalind", 300)]],
    # only one part
    [[("Surname:", 40), ("OYAMA-FENWICK", 90)]],
])
def test_name_parts_that_cannot_be_joined_are_not_half_a_name(rows):
    assert not [i for i in _named(*rows).identifiers if i.kind == IdentifierKind.NAME]


# --------------------------------------------------------------------------- a record label printed twice

@pytest.mark.parametrize("printed", [["MRN", "6620915"], ["UR", "no.", "6620915"], ["Hosp#", "6620915"]])
def test_a_record_label_printed_again_before_the_number_is_no_part_of_it(printed):
    # "Medical record no.: MRN 6620915" was read as the MRN "MRN", and a document of the
    # right patient was quarantined as another's
    row, x = [], 40
    for w in ["Medical", "record", "no.:", *printed]:
        row.append((w, x))
        x += 5 * len(w) + 6
    result = _named([("Patient:", 40), ("DUBOIS,", 90), ("Helene", 135)], row)
    [mrn] = [i for i in result.identifiers if i.kind == IdentifierKind.MRN]
    assert mrn.value == "6620915"
    assert mrn.citation.quote_or_value.endswith(" ".join(printed))


def test_a_record_number_that_opens_with_letters_keeps_them():
    result = _named([("MRN:", 40), ("AW-481530", 90)])
    [mrn] = [i for i in result.identifiers if i.kind == IdentifierKind.MRN]
    assert mrn.value == "AW-481530"


def test_a_fixed_width_report_with_units_after_the_names_and_a_starred_critical_flag():
    # A basic metabolic panel written after the rules, typed in Courier: "POTASSIUM
    # (mmol/L)  6.8 *CRIT*  3.5-5.1" was not read at all (the guard named it), and every
    # other line went to review for its "SODIUM (mmol/L)" name.
    from extract.values.flags import flag_meaning

    assert flag_meaning("*CRIT*") == "critical" and flag_meaning("** PANIC **") == "critical"
    assert flag_meaning("*H") == "critical_high"  # a starred letter keeps its own meaning
    result = _ocr_extract(
        [("SODIUM", 40, 0.95), ("(mmol/L)", 90, 0.95), ("131", 190, 0.95), ("L", 215, 0.95), ("136-145", 260, 0.95)],
        [("POTASSIUM", 40, 0.95), ("(mmol/L)", 110, 0.95), ("6.8", 190, 0.95), ("*CRIT*", 215, 0.9),
         ("3.5-5.1", 260, 0.95)],
    )
    got = {f.structured_value["test_name"]: f.structured_value for f in result.facts}
    assert (got["SODIUM"]["unit"], got["SODIUM"]["abnormal_flag"]) == ("mmol/L", "low")
    assert (got["POTASSIUM"]["value"], got["POTASSIUM"]["abnormal_flag"]) == ("6.8", "critical_high")
    assert not [f for f in result.facts if f.wants_review]


def test_an_ocr_line_read_in_part_keeps_its_value_and_critical_flag_for_a_person():
    # The same report faxed: the range's decimal point was lost ("3 5-5.1").
    result = _ocr_extract(
        [("POTASSIUM", 40, 0.95), ("(mmol/L)", 110, 0.95), ("6.8", 190, 0.95), ("*CRIT*", 215, 0.9),
         ("3", 260, 0.8), ("5-5.1", 270, 0.8)],
        [("HDL", 40, 0.95), ("22", 65, 0.95), ("mg/dL", 80, 0.95), ("and", 115, 0.95), ("falling", 135, 0.95)],
    )
    (k,) = [f for f in result.facts if f.structured_value["test_name"] == "POTASSIUM"]
    assert (k.structured_value["value"], k.structured_value["abnormal_flag"]) == ("6.8", "critical_high")
    assert not k.structured_value.get("reference_range")  # what was read of it may be wrong
    assert k.wants_review and "OCR did not read the line whole ('6.8 *CRIT* 3 5-5.1')" in k.review_reason
    # running text, read as before: a sentence's result, not a result line
    (hdl,) = [f for f in result.facts if f.structured_value["test_name"] == "HDL"]
    assert hdl.citation.field_or_chunk_id.startswith("text")
