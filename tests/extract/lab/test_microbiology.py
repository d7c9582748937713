"""A microbiology report read as an HL7 culture is: what grew, and each antibiotic's
susceptibility, every one cited and held for a person. A held-out urine culture (E. coli
with an "Antibiotic | Result | MIC (mg/L)" table) gave no finding at all and a job that
said nothing was kept; the layouts here (a wound swab, a one-line list, OCR'd pages) were
written after the rule."""

from __future__ import annotations

from core.services.answer.evidence_items import _lab_text
from domain.content import NormalizedContent, PageContent, Word
from domain.policy.facts.lab_vocabulary import susceptibility_code
from extract.coverage import unread_content
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from golden.drawing import placed_text_pdf
from tests.support.synthetic import assert_page_citations_verify

IDENTITY = "Patient: DUNMORE-ASHE, Petra   DOB: 1962-09-17   MRN: 5518042   Collected: 2026-11-30 08:15"


def _read(lines: list[tuple]):
    content = normalize_pdf(placed_text_pdf([(40, 40, "WOUND SWAB - MICROBIOLOGY", 12, "hebo"),
                                             (40, 58, IDENTITY), *lines]))
    result = extract_lab(content, "documents:9")
    assert_page_citations_verify(content, result)
    return content, result


def _by_name(result) -> dict[str, dict]:
    return {f.structured_value["test_name"]: f for f in result.facts}


def _table(rows: list[tuple[str, str, str]], header=("Agent", "S/I/R", "MIC (ug/mL)"), y=110) -> list[tuple]:
    lines = [(x, y, text) for x, text in zip((40, 230, 300), header)]
    for i, row in enumerate(rows):
        lines += [(x, y + 14 * (i + 1), text) for x, text in zip((40, 230, 300), row) if text]
    return lines


def test_an_isolate_and_its_susceptibility_table_are_read_as_results_for_review():
    _, result = _read([(40, 80, "Specimen: Wound swab, left heel"),
                       (40, 94, "Isolate: Pseudomonas aeruginosa (heavy growth)"),
                       *_table([("Piperacillin/tazobactam", "S", "8"), ("Ciprofloxacin", "I", "1"),
                                ("Gentamicin", "R", ">8"), ("Meropenem", "S", "<=0.25")]),
                       (40, 196, "S = susceptible  I = intermediate  R = resistant")])
    got = _by_name(result)
    assert set(got) == {"Culture", "Piperacillin/tazobactam [Susceptibility]", "Ciprofloxacin [Susceptibility]",
                        "Gentamicin [Susceptibility]", "Meropenem [Susceptibility]"}
    assert got["Culture"].structured_value["value"] == "Pseudomonas aeruginosa (heavy growth)"
    genta = got["Gentamicin [Susceptibility]"].structured_value
    assert (genta["value"], genta["unit"], genta["flags_as_printed"], genta["abnormal_flag"]) == (
        ">8", "ug/mL", ["R"], "abnormal")
    assert genta["collection_date"] == "2026-11-30"
    assert got["Meropenem [Susceptibility]"].structured_value["abnormal_flag"] == "normal"
    # An answer says how the organism fared, not merely "abnormal".
    assert "(resistant)" in _lab_text(genta) and "(intermediate)" in got["Ciprofloxacin [Susceptibility]"].fact_text
    assert all(f.wants_review and "microbiology" in f.review_reason for f in result.facts)


def test_a_culture_named_by_its_specimen_and_a_finding_without_its_advice():
    _, result = _read([(40, 80, "Specimen: Catheter urine"),
                       (40, 94, "Culture: No significant growth. Please send a repeat sample if symptoms persist.")])
    (culture,) = result.facts
    assert culture.structured_value["test_name"] == "Urine culture"
    assert culture.structured_value["value"] == "No significant growth."
    assert culture.wants_review


def test_a_susceptibility_list_on_one_line_and_a_list_its_label_says_how_they_fared():
    _, result = _read([(40, 80, "Antibiotic sensitivities: cefalexin S; co-trimoxazole R; fosfomycin S"),
                       (40, 94, "Resistant to: ampicillin, trimethoprim.")])
    got = {k: v.structured_value["flags_as_printed"] for k, v in _by_name(result).items()}
    assert got == {"Cefalexin [Susceptibility]": ["S"], "Co-trimoxazole [Susceptibility]": ["R"],
                   "Fosfomycin [Susceptibility]": ["S"], "Ampicillin [Susceptibility]": ["R"],
                   "Trimethoprim [Susceptibility]": ["R"]}


def test_a_row_whose_interpretation_does_not_read_is_kept_with_the_doubt_not_dropped():
    _, result = _read([(40, 94, "Organism isolated: Klebsiella pneumoniae"),
                       *_table([("Ceftriaxone", "Not tested", ""), ("Amikacin", "S", "4")],
                               header=("Antibiotic", "Interpretation", "MIC mg/L"))])
    got = _by_name(result)
    untested = got["Ceftriaxone [Susceptibility]"]
    assert untested.structured_value["value"] == "Not tested" and "flags_as_printed" not in untested.structured_value
    assert "the report gives no result for this test: it says 'Not tested'" in untested.review_reason
    assert got["Amikacin [Susceptibility]"].structured_value["unit"] == "mg/L"


def test_an_ocr_misread_interpretation_is_never_corrected_into_one():
    # OCR read a printed "S" as "Ss": kept as printed, with no interpretation.
    rows = [[("Antibiotic", 40), ("Result", 230), ("MIC", 300)], [("Nitrofurantoin", 40), ("Ss", 230), ("16", 300)]]
    words = [Word(t, x, 100 + 20 * r, x + 6 * len(t), 112 + 20 * r, conf=0.9 if t != "Ss" else 0.55)
             for r, row in enumerate(rows) for t, x in row]
    for i, w in enumerate(words):
        w.index = i
    result = extract_lab(NormalizedContent(source_kind="ocr", pages=[PageContent(1, 612, 792, words)]), "documents:9")
    (nitro,) = result.facts
    assert nitro.structured_value["value"] == "16" and "flags_as_printed" not in nitro.structured_value
    assert nitro.structured_value["abnormal_flag"] == "unknown" and "'Ss'" in nitro.review_reason
    assert susceptibility_code("Ss") is None and susceptibility_code("Resistant") == "R"


def test_a_drug_level_table_is_no_susceptibility_table():
    _, result = _read([(x, 94, t) for x, t in ((40, "Drug"), (230, "Result"), (300, "Units"), (360, "Range"))]
                      + [(x, 108, t) for x, t in ((40, "Phenytoin"), (230, "Therapeutic"))]  # a row no reader reads
                      + [(x, 122, t) for x, t in ((40, "Digoxin"), (230, "1.1"), (300, "ug/L"), (360, "0.5-2.0"))])
    assert not any("[Susceptibility]" in f.structured_value["test_name"] for f in result.facts)


def test_prose_about_a_culture_is_no_finding_and_a_finding_to_follow_says_so():
    _, result = _read([(40, 94, "The culture was sent on Monday and the organism grew overnight.")])
    assert not result.facts  # no label: prose, not a finding
    _, result = _read([(40, 94, "Organism: to follow")])
    (pending,) = result.facts
    assert pending.structured_value["value"] == "to follow" and "gives no result" in pending.review_reason


def test_a_read_susceptibility_table_leaves_nothing_for_the_coverage_guard():
    content, result = _read(_table([("Amoxicillin", "R", ">32"), ("Nitrofurantoin", "S", "16")], y=94))
    assert len(result.facts) == 2
    assert not unread_content(content, result.facts)


def test_an_answer_line_says_how_it_fared_once():
    _, result = _read([(40, 94, "Resistant to: ampicillin.")])
    (ampicillin,) = result.facts
    assert _lab_text(ampicillin.structured_value).startswith("Ampicillin [Susceptibility] resistant, collected")
    assert ampicillin.fact_text == "Ampicillin [Susceptibility] resistant"


def test_a_table_with_a_column_per_organism_gives_each_organisms_susceptibility():
    # Two organisms side by side were dropped without a word (no number for the guard);
    # written after the rule: organisms named in the header, a blank cell for one not tested.
    lines = [(40, 94, "Isolates: Escherichia coli; Enterococcus faecalis")]
    lines += [(x, 110, t) for x, t in ((40, "Antimicrobial"), (230, "E. coli"), (320, "E. faecalis"))]
    for i, (name, one, two) in enumerate([("Amoxicillin", "R", "S"), ("Nitrofurantoin", "S", "S"),
                                          ("Trimethoprim", "R", ""), ("Vancomycin", "", "S")]):
        lines += [(x, 124 + 14 * i, t) for x, t in ((40, name), (230, one), (320, two)) if t]
    _, result = _read(lines)
    fared = sorted((f.structured_value["test_name"], f.structured_value["organism"], f.structured_value["flags_as_printed"][0])
                   for f in result.facts if "organism" in f.structured_value)
    assert fared == [("Amoxicillin [Susceptibility]", "E. coli", "R"), ("Amoxicillin [Susceptibility]", "E. faecalis", "S"),
                     ("Nitrofurantoin [Susceptibility]", "E. coli", "S"),
                     ("Nitrofurantoin [Susceptibility]", "E. faecalis", "S"),
                     ("Trimethoprim [Susceptibility]", "E. coli", "R"), ("Vancomycin [Susceptibility]", "E. faecalis", "S")]
    amoxicillin = next(f for f in result.facts if f.structured_value.get("organism") == "E. faecalis")
    assert "organism E. faecalis" in _lab_text(amoxicillin.structured_value)


def test_a_culture_heading_makes_its_reports_label_the_finding():
    # A held-out US report's "CULTURE, URINE" over "FINAL REPORT: Greater than 100,000
    # CFU/mL Escherichia coli" was lost without a word; this wording was written after the rule.
    _, result = _read([(40, 80, "Blood Culture (aerobic bottle)"),
                       (40, 94, "Preliminary report: No growth at 24 hours"),
                       (40, 108, "Report: see the final report")])  # the culture's finding was read already
    (culture,) = result.facts
    assert (culture.structured_value["test_name"], culture.structured_value["value"]) == (
        "Blood culture", "No growth at 24 hours")


def test_a_comment_column_is_said_with_its_result_and_an_unreadable_mic_kept_as_printed():
    # Written in the review: the comment ("synergy lost") was dropped from the result.
    lines = [(x, 94, t) for x, t in ((40, "Antimicrobial agent"), (200, "MIC (ug/mL)"), (300, "Interpretation"),
                                     (400, "Comments"))]
    lines += [(x, 108, t) for x, t in ((40, "Gentamicin (high level)"), (200, ">500"), (300, "Resistant"),
                                       (400, "synergy lost"))]
    lines += [(x, 122, t) for x, t in ((40, "Ampicillin"), (200, "see note"), (300, "Susceptible"))]
    _, result = _read(lines)
    got = _by_name(result)
    genta = got["Gentamicin (high level) [Susceptibility]"]
    assert genta.structured_value["unit"] == "ug/mL" and "the report's comment on it: 'synergy lost'" in genta.review_reason
    ampicillin = got["Ampicillin [Susceptibility]"]
    assert ampicillin.structured_value["value"] == "see note" and "does not read as a number" in ampicillin.review_reason
