"""The coverage guard (extract/coverage.py): result-like content no fact cites.

Pages are built word by word (no PDF needed): a line is a list of cells, each cell a
phrase drawn at an x position; cells far apart are columns. Each layout here was written
after the rule, unlike the ones the readers know."""

from __future__ import annotations

import pytest

from domain.content import NormalizedContent, PageContent, Section, Word
from domain.models import Citation, FactProposal
from domain.policy.facts.citations import quote_from_words, reading_rows
from extract.coverage import related_locators, summary_sentence, unread_content

CHAR = 5.0  # points per character
HEIGHT = 10.0


def page(lines: list[list[tuple[float, str]]], number: int = 1) -> PageContent:
    """A page whose line i holds ``(x, phrase)`` cells, 16 pt apart."""
    words: list[Word] = []
    for i, cells in enumerate(lines):
        y0 = 40 + 16 * i
        for x, phrase in cells:
            for token in phrase.split():
                words.append(Word(token, x, y0, x + CHAR * len(token), y0 + HEIGHT, index=len(words)))
                x += CHAR * (len(token) + 1)
    return PageContent(number=number, width=612, height=792, words=words)


def content(*pages: PageContent) -> NormalizedContent:
    return NormalizedContent(source_kind="pdf_text", pages=list(pages))


def fact_for(p: PageContent, text: str) -> FactProposal:
    """A fact citing the first row run of words that reads ``text``."""
    for row in reading_rows(p.words):
        tokens = [w.text for w in row]
        want = text.split()
        for i in range(len(tokens) - len(want) + 1):
            if tokens[i:i + len(want)] == want:
                quote, box = quote_from_words(p, row[i:i + len(want)])
                return FactProposal(fact_type="lab_result", fact_text=quote, confidence=0.9,
                                    citation=Citation(source_type="lab_pdf", source_id="documents:1",
                                                      page_or_section=f"page {p.number}", field_or_chunk_id="r",
                                                      quote_or_value=quote, page=p.number, bounding_box=box,
                                                      verified=True))
    raise AssertionError(f"{text!r} is not on the page")


def texts(regions) -> list[str]:
    return [r.text for r in regions]


# --------------------------------------------------------------------------- pages

def test_a_results_table_fully_cited_reports_nothing_and_each_dropped_row_is_reported():
    p = page([[(40, "Patient: LINDQVIST, Saoirse"), (300, "DOB: 02/03/1971")],
              [(40, "Analyte"), (200, "Value"), (260, "Units"), (330, "Interval")],
              [(40, "Potassium"), (200, "6.4 HH"), (260, "mmol/L"), (330, "3.5-5.1")],
              [(40, "Magnesium"), (200, "0.61 L"), (260, "mmol/L"), (330, "0.70-1.00")],
              [(40, "Page 1 of 1")]])
    facts = [fact_for(p, "Potassium 6.4 HH mmol/L 3.5-5.1"), fact_for(p, "Magnesium 0.61 L mmol/L 0.70-1.00")]
    assert unread_content(content(p), facts) == []
    missed = unread_content(content(p), facts[1:])
    assert texts(missed) == ["Potassium 6.4 HH mmol/L 3.5-5.1"]
    region = missed[0]
    assert region.page == 1 and region.locator == "page 1"
    assert region.box is not None and region.box.y == pytest.approx((40 + 32) / 792)
    assert "known test" in region.reason


def test_two_panels_side_by_side_half_read_reports_the_unread_panel_only():
    p = page([[(40, "Sodium"), (120, "133"), (160, "mmol/L"), (320, "Neutrophils"), (400, "9.8 ▲"), (450, "x10^9/L")],
              [(40, "Urea"), (120, "11.2"), (160, "mmol/L"), (320, "Lymphocytes"), (400, "0.7 ▼"), (450, "x10^9/L")]])
    facts = [fact_for(p, "Sodium 133 mmol/L"), fact_for(p, "Urea 11.2 mmol/L")]
    assert texts(unread_content(content(p), facts)) == ["Neutrophils 9.8 ▲ x10^9/L", "Lymphocytes 0.7 ▼ x10^9/L"]


def test_a_cumulative_row_read_for_one_date_reports_the_other_dates():
    p = page([[(40, "Test"), (200, "12/06/26"), (260, "05/06/26"), (320, "29/05/26")],
              [(40, "Creatinine (umol/L)"), (200, "188 H"), (260, "156 H"), (320, "121")]])
    newest = fact_for(p, "188 H")
    assert texts(unread_content(content(p), [newest])) == ["Creatinine (umol/L) 188 H 156 H 121"]
    everything = [newest, fact_for(p, "156 H"), fact_for(p, "121")]
    assert unread_content(content(p), everything) == []


def test_an_unknown_test_counts_with_a_unit_a_range_or_a_flag_but_not_bare():
    p = page([[(40, "Zonulin"), (200, "71.4"), (260, "ng/mL")],
              [(40, "Calprotectin index"), (200, "310"), (260, "*")],
              [(40, "Lactoferrin"), (200, "12"), (260, "0 - 7.2")],
              [(40, "Visits this year"), (200, "4")]])
    assert texts(unread_content(content(p), [])) == ["Zonulin 71.4 ng/mL", "Calprotectin index 310 *",
                                                      "Lactoferrin 12 0 - 7.2"]


def test_a_cultures_count_as_a_power_of_ten_is_a_result_no_reader_read():
    # A held-out microbiology report's "Culture: Escherichia coli >10^5 CFU/mL" was not
    # reported; these lines were written after the rule.
    p = page([[(40, "MSU culture:"), (150, "Klebsiella pneumoniae"), (330, "1x10^6 cfu/L")],
              [(40, "Blood culture bottle 2:"), (200, "Staph. epidermidis"), (330, "10E3 CFU/mL")],
              [(40, "Counts above 10^5 CFU/mL are significant.")]])  # a threshold, no result
    found = texts(unread_content(content(p), []))
    assert found[0] == "MSU culture: Klebsiella pneumoniae 1x10^6 cfu/L"
    assert found[1].endswith("Staph. epidermidis 10E3 CFU/mL") and len(found) == 2


def test_an_antibiotics_mic_beside_how_the_organism_fared_is_a_result_no_reader_read():
    # Two rows of a typed culture report were missed when its reader was made to miss them.
    p = page([[(40, "Gentamicin"), (230, "Resistant"), (320, ">8")],
              [(40, "Meropenem"), (230, "S"), (320, "<=0.25")],
              [(40, "Ward"), (230, "R"), (320, "12")],  # an address-like row: a ward is no test
              [(40, "Resistant to: tetracycline.")]])  # no value: not result-like
    assert texts(unread_content(content(p), [])) == ["Gentamicin Resistant >8", "Meropenem S <=0.25"]


def test_a_result_printed_as_a_word_counts_beside_an_unknown_name_with_a_flag_or_a_unit():
    p = page([[(40, "Clarity"), (200, "Hazy"), (280, "Clear"), (360, "Abnormal")],
              [(40, "Bacteria"), (200, "Few"), (280, "None seen"), (360, "/hpf")],
              [(40, "Casts"), (200, "Rare"), (280, "/lpf")],
              [(40, "Smoker"), (200, "Negative")],
              [(40, "Appearance of the wound"), (200, "clear")]])
    assert texts(unread_content(content(p), [])) == ["Clarity Hazy Clear Abnormal", "Bacteria Few None seen /hpf",
                                                      "Casts Rare /lpf"]
    read = [fact_for(p, "Clarity Hazy Clear Abnormal"), fact_for(p, "Bacteria Few None seen /hpf")]
    assert texts(unread_content(content(p), read)) == ["Casts Rare /lpf"]


def test_results_written_in_a_sentence_are_found_and_targets_are_not():
    p = page([[(40, "On review her ferritin was 8 ug/L and the platelet count 512 x10^9/L.")],
              [(40, "We aim for a haemoglobin above 115 g/L and an HbA1c under 7%.")]])
    assert texts(unread_content(content(p), [])) == [
        "On review her ferritin was 8 ug/L and the platelet count 512 x10^9/L."]


def test_vital_signs_told_in_a_sentence_are_readings_and_other_numbers_beside_them_are_not():
    # A geriatrician's letter written after the rule: its "blood pressure was 148/86,
    # pulse 92 and irregular, and saturations 96% on air" named no test, so a reader
    # that missed them would have been missed by the guard too.
    told = "She stopped ramipril in October. Her pulse was 92 and irregular, and saturations 96% on air."
    p = page([[(40, told)],
              [(40, "Her pulse check is due in 2 weeks and she walks with a frame.")],
              [(40, "She was seen by 3 nurses on the ward.")]])
    assert texts(unread_content(content(p), [])) == [told]
    c = NormalizedContent(source_kind="docx", sections=[Section("paragraph 1", told, "paragraph")])
    (region,) = unread_content(c, [])
    assert region.reason == "a vital sign (pulse) with a value (92, 96%)"


def test_a_number_in_a_conditions_name_is_no_result():
    # a held-out letter's unread "type 2 diabetes" was reported as a result beside its HbA1c
    p = page([[(40, "He has type 2 diabetes and stage 3 kidney disease; his HbA1c was 78 mmol/mol.")]])
    read = [fact_for(p, "HbA1c was 78 mmol/mol.")]
    assert unread_content(content(p), read) == []
    assert len(unread_content(content(p), [])) == 1


def test_a_day_and_month_after_from_or_to_is_a_value_when_a_unit_follows():
    p = page([[(40, "His TSH has risen to 14.2 mU/L this month.")],
              [(40, "Her potassium was normal on 14.2 and her review is booked from 3.4 onwards.")]])
    assert texts(unread_content(content(p), [])) == ["His TSH has risen to 14.2 mU/L this month."]


def test_a_sentence_wrapped_between_a_tests_name_and_its_value_is_judged_across_the_wrap():
    p = page([[(40, "She was seen in clinic on Monday and her serum potassium was")],
              [(40, "5.9 mmol/L, so her ramipril was held. We checked her ferritin")],
              [(40, "2 weeks ago and will repeat it; her white blood cells")],
              [(40, "14, on the film."), (300, "Signed: C. Okafor")]])
    found = unread_content(content(p), [])
    assert texts(found) == ["potassium was 5.9 mmol/L, so her ramipril was held. We checked her ferritin",
                            "white blood cells 14, on the film."]
    assert found[0].box.y < 60 / 792 < found[0].box.y + found[0].box.height  # both lines of the wrap
    read = [fact_for(p, "potassium was"), fact_for(p, "5.9 mmol/L,"), fact_for(p, "white blood cells"),
            fact_for(p, "14,")]
    assert unread_content(content(p), read) == []


def test_a_range_whose_dash_ocr_lost_is_no_unread_value():
    p = page([[(40, "Sodium"), (150, "138"), (200, "135"), (250, "131*"), (320, "mmol/L"), (400, "135 145")],
              [(40, "Urea"), (150, "9.8*"), (200, "12.4*"), (250, "15.1*"), (320, "mmol/L"), (400, "7.8 2.5")]])
    read = [fact_for(p, "Sodium 138 135 131*"), fact_for(p, "Urea 9.8* 12.4* 15.1*")]
    # Sodium's "135 145" rises: its range. Urea's "7.8 2.5" does not: still two unread numbers.
    assert texts(unread_content(content(p), read)) == ["Urea 9.8* 12.4* 15.1* mmol/L 7.8 2.5"]
    assert len(unread_content(content(p), [])) == 2


def test_a_test_name_ocr_misread_by_a_letter_still_makes_a_result():
    # A faxed lab's comment line "Previous potassium 5.4 mmol/L on 21/11/2026" read as "potasslum ...
    # mmol/t.": nothing read it and nothing said so.
    p = page([[(40, "Previous potasslum 5.4 mmol/t. on 21/11/2026.")]])
    assert texts(unread_content(content(p), [])) == []  # a text layer's spelling is the print's
    for w in p.words:
        w.conf = 0.9
    scanned = NormalizedContent(source_kind="ocr", pages=[p])
    (region,) = unread_content(scanned, [])
    assert region.text.startswith("Previous potasslum 5.4") and "as OCR read it" in region.reason


def test_identity_contact_address_dates_doses_and_page_numbers_are_not_results():
    p = page([[(40, "Larchmont Diagnostics, 88 Ferry Road, Suite 12, Dunmore DM3 4RT")],
              [(40, "Phone (415) 555-0199"), (300, "Fax 415.555.0123")],
              [(40, "Pt: OYELARAN, Tunde"), (300, "Born 1955-10-30"), (420, "Hosp# 7731204")],
              [(40, "Age 70"), (200, "Collected 14 Jun 2026 06:55")],
              [(40, "Medicines: atorvastatin 40 mg at night, cholecalciferol 1000 units daily")],
              [(40, "Reference intervals: potassium 3.5-5.1 mmol/L")],
              [(40, "Printed 15/06/2026 08:02"), (400, "Page 2 of 3")]])
    assert unread_content(content(p), []) == []


def test_a_flag_word_counts_only_beside_the_value():
    p = page([[(40, "The swallow study was normal with 2 views taken")],
              [(40, "Anti-Xa activity"), (200, "1.4"), (240, "HIGH")]])
    assert texts(unread_content(content(p), [])) == ["Anti-Xa activity 1.4 HIGH"]


def test_a_quote_that_wraps_covers_its_own_words_not_the_whole_box():
    p = page([[(40, "Lipids: total cholesterol 5.9 mmol/L, HDL"), (320, "1.1 mmol/L")],
              [(40, "and LDL 3.8 mmol/L were measured fasting")]])
    words = reading_rows(p.words)
    hdl = [w for w in words[0] if w.text in ("HDL", "1.1", "mmol/L")][-3:]
    quote, box = quote_from_words(p, hdl)
    wide = FactProposal(fact_type="lab_result", fact_text=quote, confidence=0.9, citation=Citation(
        source_type="lab_pdf", source_id="documents:1", page_or_section="page 1", field_or_chunk_id="r",
        quote_or_value=quote, page=1, bounding_box=box.model_copy(update={"height": 30 / 792, "width": 0.9,
                                                                          "x": 0.05}), verified=True))
    found = unread_content(content(p), [wide])
    assert any("5.9" in t for t in texts(found)) and any("3.8" in t for t in texts(found))


def test_a_citation_on_another_page_covers_nothing_here():
    one, two = page([[(40, "Ferritin"), (200, "9 L"), (240, "ug/L")]], 1), page([[(40, "Ferritin"), (200, "9 L"),
                                                                                  (240, "ug/L")]], 2)
    fact = fact_for(one, "Ferritin 9 L ug/L")
    regions = unread_content(content(one, two), [fact])
    assert [(r.page, r.text) for r in regions] == [(2, "Ferritin 9 L ug/L")]
    assert summary_sentence(regions) == "1 result on page 2 was not read"


# --------------------------------------------------------------------------- sections

def _section_fact(locator: str, quote: str, value: dict | None = None) -> FactProposal:
    return FactProposal(fact_type="lab_result", fact_text=quote, structured_value=value or {}, confidence=0.9,
                        citation=Citation(source_type="clinical_workbook", source_id="documents:1",
                                          page_or_section=locator, field_or_chunk_id="r", quote_or_value=quote,
                                          verified=True))


def test_workbook_rows_are_covered_by_a_fact_citing_the_row_or_a_cell_of_it():
    sections = [Section("Bloods!A1:D1", "Test | Result | Unit | Range", "row"),
                Section("Bloods!A2:D2", "Albumin | 29 | g/L | 35-50", "row"),
                Section("Bloods!A3:E3", "CRP | 88 | 41 | mg/L | <5", "row"),
                Section("Obs!A2:C2", "Pulse | 118 | bpm", "row"),
                Section("Obs!A3:C3", "Weight (kg) | 64 | 2026-06-01", "row"),
                Section("Obs!A4:C4", "Visit | 3 | 2026-06-01", "row")]
    c = NormalizedContent(source_kind="xlsx", sections=sections)
    facts = [_section_fact("Bloods!B2", "29"), _section_fact("Bloods!A3:E3", "88", {"value": "88"})]
    found = unread_content(c, facts)
    # The CRP row prints two results (two dates); one is read. The observations sheet is
    # not read at all: its pulse and weight are measurements, its visit number is not.
    assert [(r.locator, r.text) for r in found] == [("Bloods!A3:E3", "CRP 88 41 mg/L <5"),
                                                    ("Obs!A2:C2", "Pulse 118 bpm"),
                                                    ("Obs!A3:C3", "Weight (kg) 64 2026-06-01")]
    assert summary_sentence(found) == "3 results in sheet Bloods and sheet Obs were not read"


def test_a_paragraph_of_a_letter_is_judged_like_a_line():
    sections = [Section("paragraph 1", "Re: Mrs Dunleavy, DOB 4 April 1950, hospital number 4410223", "paragraph"),
                Section("paragraph 2", "Her INR was 4.8 on Monday and 3.1 today.", "paragraph"),
                Section("paragraph 3", "She takes warfarin 3 mg daily.", "paragraph")]
    c = NormalizedContent(source_kind="docx", sections=sections)
    assert texts(unread_content(c, [])) == ["Her INR was 4.8 on Monday and 3.1 today."]
    partly = [_section_fact("paragraph 2", "INR was 4.8", {"value": "4.8"})]
    assert texts(unread_content(c, partly)) == ["Her INR was 4.8 on Monday and 3.1 today."]
    both = partly + [_section_fact("paragraph 2", "3.1 today", {"value": "3.1"})]
    assert unread_content(c, both) == []


def _obx(n: int, vt: str, code: str, value: str, unit: str = "", ref: str = "", flag: str = "") -> list[Section]:
    loc = f"OBX[{n}]"
    text = f"OBX|{n}|{vt}|{code}||{value}|{unit}|{ref}|{flag}"
    fields = {2: vt, 3: code, 5: value, 6: unit, 7: ref, 8: flag}
    return [Section(loc, text, "segment")] + [Section(f"{loc}-{k}", v, "field") for k, v in fields.items() if v]


def test_an_hl7_observation_is_a_result_by_its_value_type_and_text_lines_by_their_words():
    sections = (_obx(1, "NM", "2951-2^Sodium^LN", "128", "mmol/L", "135-145", "L")
                + _obx(2, "ST", "94500-6^SARS-CoV-2 RNA^LN", "Detected", flag="A")
                + _obx(3, "TX", "18782-3^Study observation^LN", "PATIENT NAME:")
                + _obx(4, "TX", "18782-3^Study observation^LN", "Troponin I 2.31 ng/mL at 02:00"))
    c = NormalizedContent(source_kind="hl7", sections=sections)
    found = unread_content(c, [])
    assert [r.locator for r in found] == ["OBX[1]", "OBX[2]", "OBX[4]"]
    read = [_section_fact("OBX[1]-5", "128"), _section_fact("OBX[2]-5", "Detected")]
    assert [r.locator for r in unread_content(c, read)] == ["OBX[4]"]


def test_a_text_observation_saying_a_known_test_has_no_result_is_reported_when_unread():
    sections = (_obx(1, "TX", "13457-7^LDL Cholesterol calculated^LN", "Unable to calculate: triglycerides above 400")
                + _obx(2, "TX", "18782-3^Study observation^LN", "Not performed")  # no test it names
                + _obx(3, "TX", "13457-7^LDL Cholesterol calculated^LN", "See lipid clinic letter"))
    c = NormalizedContent(source_kind="hl7", sections=sections)
    (region,) = unread_content(c, [])
    assert region.locator == "OBX[1]" and region.reason.startswith("a known test the report gives no result for")
    assert unread_content(c, [_section_fact("OBX[1]-5", "Unable to calculate: triglycerides above 400")]) == []


def test_locators_are_related_when_one_lies_inside_the_other():
    assert related_locators("message 2 OBX[1]", "message 2 OBX[1]-5")
    assert not related_locators("OBX[1]", "OBX[11]-5")
    assert related_locators("S!A7:F7", "S!B7") and not related_locators("S!A7:F7", "S!B8")
    assert related_locators("table 1 row 3", "table 1 row 3 col 2") and not related_locators("table 1 row 3",
                                                                                              "table 1 row 30")


# --------------------------------------------------------------------------- tables whose headers name the results

def _sheet(name: str, rows: dict[int, list]) -> list[Section]:
    """Row sections of a sheet as the XLSX normalizer makes them: ``rows`` maps a row
    number to its cells from column A (None leaves a cell empty)."""
    out = []
    for r, values in rows.items():
        cells = [{"col": c, "coord": f"{chr(64 + c)}{r}", "text": str(v)}
                 for c, v in enumerate(values, start=1) if v is not None]
        out.append(Section(f"{name}!{cells[0]['coord']}:{cells[-1]['coord']}", " | ".join(x["text"] for x in cells),
                           "row", {"sheet": name, "row": r, "cells": cells}))
    return out


def _docx_table(t: int, rows: list[list[str]]) -> list[Section]:
    return [Section(f"table {t} row {r}", " | ".join(c for c in cells if c), "table_row",
                    {"table": t, "row": r, "cells": list(enumerate(cells, start=1))})
            for r, cells in enumerate(rows, start=1)]


def _vital(locator: str, quote: str, value: str, **parts: str) -> FactProposal:
    fact = _section_fact(locator, quote, {"kind": "x", "value": value, **parts})
    return fact.model_copy(update={"fact_type": "vital_sign"})


def test_a_wide_vitals_sheet_is_judged_by_its_column_headers_and_each_reading_is_covered_by_its_own_fact():
    sections = _sheet("Nursing obs", {1: ["Ward 4B observations"],
                                      3: ["Taken at", "BP", "Heart rate", "Sats", "T", "RR", "Nurse"],
                                      4: ["03/02/2026 06:00", "104/61", 94, 94, 38.4, 24, "KM"],
                                      5: ["03/02/2026 10:00", "111/70", 88, 96, 37.9, 20, "KM"]})
    c = NormalizedContent(source_kind="xlsx", sections=sections)
    off = unread_content(c, [])
    assert [r.text for r in off if r.locator == "Nursing obs!A4:G4"] == [
        "03/02/2026 06:00 · BP 104/61", "03/02/2026 06:00 · Heart rate 94", "03/02/2026 06:00 · Sats 94",
        "03/02/2026 06:00 · T 38.4", "03/02/2026 06:00 · RR 24"]
    assert len(off) == 10 and all("vital sign" in r.reason for r in off)
    row4 = [_vital("Nursing obs!A4:G4", q, v) for q, v in (("104/61", "104/61"), ("94", "94"), ("94", "94"),
                                                           ("38.4", "38.4"), ("24", "24"))]
    row5 = [_vital("Nursing obs!A5:G5", q, v) for q, v in (("111/70", "111/70"), ("88", "88"), ("96", "96"),
                                                           ("37.9", "37.9"), ("20", "20"))]
    assert unread_content(c, row4 + row5) == []
    # The pulse and the saturation both print 94: with one of the two facts gone, the
    # other covers one cell only, and the blood pressure's 61 covers neither.
    missing = unread_content(c, row4[:2] + row4[3:] + row5)
    assert [(r.locator, r.text) for r in missing] == [("Nursing obs!A4:G4", "03/02/2026 06:00 · Sats 94")]
    assert texts(unread_content(c, row4 + row5[1:])) == ["03/02/2026 10:00 · BP 111/70"]


def test_a_lab_table_with_one_column_per_test_and_one_row_per_date_in_a_letter():
    sections = [Section("paragraph 1", "Results since January:", "paragraph")] + _docx_table(1, [
        ["Date", "Na", "K", "Creatinine (umol/L)", "eGFR", "Comment"],
        ["12 Jan 2026", "131", "5.9", "201", "24", "haemolysed"],
        ["", "", "", "", "", "repeat requested"],
        ["19 Jan 2026", "134", "4.8", "176", "29", ""]])
    c = NormalizedContent(source_kind="docx", sections=sections)
    off = unread_content(c, [])
    assert [r.text for r in off] == ["12 Jan 2026 · Na 131", "12 Jan 2026 · K 5.9", "12 Jan 2026 · Creatinine "
                                     "(umol/L) 201", "12 Jan 2026 · eGFR 24", "19 Jan 2026 · Na 134",
                                     "19 Jan 2026 · K 4.8", "19 Jan 2026 · Creatinine (umol/L) 176",
                                     "19 Jan 2026 · eGFR 29"]
    assert all("names a test" in r.reason for r in off)
    # A lab reader citing each cell: the row is read once every column is.
    facts = [_section_fact(f"table 1 row {r} col {col}", v, {"value": v})
             for r, values in ((2, ("131", "5.9", "201", "24")), (4, ("134", "4.8", "176", "29")))
             for col, v in zip((2, 3, 4, 5), values)]
    assert unread_content(c, facts) == []
    assert texts(unread_content(c, facts[:2] + facts[3:])) == ["12 Jan 2026 · Creatinine (umol/L) 201"]


def test_numbers_that_are_not_results_under_headers_that_name_no_test():
    sections = _sheet("Stores", {1: ["Item", "On hand", "Reorder at", "Last counted", "Supplier phone", "Code"],
                                 2: ["Glucose test strips", 140, 50, "2026-02-01", "(020) 7946 0321", "88213047"],
                                 3: ["Potassium chloride 600 mg tablets", 28, 30, "2026-01-28", "0161 496 0733",
                                     "88213052"],
                                 5: ["Clinic", "Room", "Opens", "Closes"],
                                 6: ["Diabetes", 12, "08:30", "16:00"]})
    sections += _docx_table(1, [["Medicine", "Dose", "Started"], ["Warfarin", "5 mg", "14/01/2026"],
                                ["Atorvastatin", "40 mg", "2019"]])
    c = NormalizedContent(source_kind="xlsx", sections=sections)
    assert unread_content(c, []) == []


def test_a_header_below_closes_the_one_above_and_a_comment_row_does_not():
    sections = _sheet("Log", {1: ["Date", "INR"], 2: ["2026-03-02", 3.4], 3: ["2026-03-03", "dose held"],
                              4: ["2026-03-05", 2.6], 6: ["Date", "Tablets left"], 7: ["2026-03-06", 14]})
    c = NormalizedContent(source_kind="xlsx", sections=sections)
    assert texts(unread_content(c, [])) == ["2026-03-02 · INR 3.4", "2026-03-05 · INR 2.6"]


def test_a_reading_joined_from_two_rows_covers_both_and_a_lone_half_stays_unread():
    sections = _sheet("Clinic", {1: ["Sign", "Reading", "Unit"], 2: ["Systolic", 141, "mmHg"],
                                 3: ["Diastolic", 77, "mmHg"], 4: ["Pulse", 66, "/min"], 5: ["Diastolic", 79, "mmHg"],
                                 6: ["Resp", 16]})
    c = NormalizedContent(source_kind="xlsx", sections=sections)
    joined = _vital("Clinic!A2:C2", "141", "141/77", systolic="141", diastolic="77")
    pulse = _vital("Clinic!A4:C4", "66", "66")
    resp = _vital("Clinic!A6:B6", "16", "16")
    assert [r.locator for r in unread_content(c, [joined, pulse, resp])] == ["Clinic!A5:C5"]
    # The first cell naming a sign is evidence enough without a unit.
    assert [r.text for r in unread_content(c, [joined, pulse])] == ["Diastolic 79 mmHg", "Resp 16"]


def test_a_number_inside_a_table_rows_name_cell_is_part_of_the_name():
    sections = _sheet("Theatre", {1: ["Product", "Boxes", "Par level"],
                                  2: ["Lidocaine 1% 5 mL ampoules", 12, 20],
                                  3: ["Chlorhexidine 2% wipes", 7, 15],
                                  5: ["Marker", "Result", "Units", "Ref"],
                                  6: ["CA 125", 88, "U/mL", "0-35"],
                                  7: ["Vitamin B12", 141, "ng/L", "180-900"]})
    c = NormalizedContent(source_kind="xlsx", sections=sections)
    assert texts(unread_content(c, [])) == ["CA 125 88 U/mL 0-35", "Vitamin B12 141 ng/L 180-900"]


def test_the_guards_column_per_test_layouts_are_now_read_whole():
    # golden.coverage_layouts: a workbook and a Word letter with tests as column headers;
    # the readers now read every printed result, so the guard has nothing left to report.
    from domain.policy.facts.citations import verify_citations
    from extract.formats.office.docx import normalize_docx
    from extract.formats.office.xlsx import normalize_xlsx
    from extract.referral.extractor import extract_referral
    from extract.workbook.extractor import extract_workbook
    from golden.coverage_layouts import LAYOUTS

    for name, normalize, extract in (("workbook with a column per test", normalize_xlsx, extract_workbook),
                                     ("Word letter with a column per test", normalize_docx, extract_referral)):
        layout = LAYOUTS[name]
        content = normalize(layout.build())
        facts = [f for f in extract(content, "documents:1").facts if f.fact_type == "lab_result"]
        assert len(facts) == len(layout.truth), name
        assert all(c.verified for c in verify_citations([f.citation for f in facts], content)), name
        assert unread_content(content, facts) == [], name


def test_a_problem_citing_its_whole_sentence_does_not_cover_a_result_told_in_it():
    # A scan lost the stop between two sentences: the problem read from the second cites
    # the run-together sentence, potassium and all; the potassium is still not read.
    p = page([[(40, "Her potassium was 5.9 mmol/L last week She has atrial fibrillation.")]])
    problem = fact_for(p, "Her potassium was 5.9 mmol/L last week She has atrial fibrillation.")
    problem = problem.model_copy(update={"fact_type": "problem", "structured_value": {"description": "atrial fibrillation"}})
    assert texts(unread_content(content(p), [problem])) == [
        "Her potassium was 5.9 mmol/L last week She has atrial fibrillation."]
    result = fact_for(p, "potassium was 5.9 mmol/L")
    assert unread_content(content(p), [problem, result]) == []


def test_a_sentence_partly_read_names_the_values_left_and_a_duration_is_no_result():
    # An emergency discharge summary (written after the rule): the reason named the four
    # results that were read, not the lactate that was not; "repeat U&E in 48 hours"
    # was reported as a result.
    told = "Investigations: CRP 148 mg/L, WCC 15.2 x10^9/L, sodium 131 mmol/L, creatinine 142 umol/L, lactate 1.8 mmol/L."
    sections = [Section("paragraph 7", told, "paragraph"),
                Section("paragraph 10", "Plan: GP to repeat U&E in 48 hours and restart ramipril.", "paragraph")]
    c = NormalizedContent(source_kind="docx", sections=sections)
    read = [_section_fact("paragraph 7", q, {"value": q.split()[1]})
            for q in ("CRP 148 mg/L", "WCC 15.2 x10^9/L", "sodium 131 mmol/L", "creatinine 142 umol/L")]
    (region,) = unread_content(c, read)
    assert region.locator == "paragraph 7" and region.reason.endswith("(1.8)")
