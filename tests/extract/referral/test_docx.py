"""DOCX referral letters: the normalizer's locators, the extractor on two synthetic letter
layouts, real non-referral Word files, and broken input."""

from __future__ import annotations

import io
import zipfile

import pytest

from domain.errors import ExtractionError
from domain.models import DocType
from extract.formats.office.docx import normalize_docx
from extract.registry import EXTRACTORS, FORMATS, extractor_for
from extract.referral.extractor import extract_referral
from extract.referral.labels import label_field
from golden import office_fixtures as G
from tests.support.paths import SHARED_DATA
from tests.support.extract_support import identity, of_type, read_referral_docx
from tests.support.synthetic import docx_letter

SOURCE = "documents:21"
OFFICE = SHARED_DATA / "office"
REAL_DOCX = sorted(p.name for p in OFFICE.glob("*.docx")) if OFFICE.is_dir() else []


def run(data: bytes):
    """A letter read by the DOCX normaliser and the referral extractor; every citation verifies."""
    return read_referral_docx(data, SOURCE)


def referral_fields(result):
    return {f.structured_value["field"]: f.structured_value["value"] for f in of_type(result, "referral")}


def test_registered_for_referral_docx():
    assert extractor_for(DocType.REFERRAL_DOCX) is extract_referral
    assert FORMATS["docx"].accepts("docx", None) and FORMATS["docx"].accepts("zip", DocType.REFERRAL_DOCX)
    assert not FORMATS["docx"].accepts("zip", DocType.CLINICAL_WORKBOOK)
    assert EXTRACTORS[DocType.REFERRAL_DOCX].module == "extract.referral.extractor"  # imported on first use


def test_labels():
    assert label_field("Reason for Referral:") == "reason"
    assert label_field("D.O.B.") == "dob"
    assert label_field("Current medications") == "medications"
    assert label_field("Drug history:") == "medications" and label_field("DH:") == "medications"
    assert label_field("Allergies / Adverse reactions:") == "allergies"
    assert label_field("Coded Value") is None
    # allergy labels are read by meaning, in any wording
    for label in ("Drug sensitivities:", "Intolerances", "Allergies/ADRs", "Adverse drug reactions", "ADRs:"):
        assert label_field(label) == "allergies", label
    assert label_field("Allergy testing") is None and label_field("Allergic to penicillin") is None
    assert label_field("Unit no.") == "mrn" and label_field("Clinic ID") == "mrn"


@pytest.mark.parametrize("case,build", [(G.LETTER_PROSE, G.build_prose_letter), (G.LETTER_FORM, G.build_table_form)])
def test_synthetic_letters(case, build):
    content, result = run(build())
    assert identity(result) == {"name": case.identity.name, "dob": case.identity.dob, "mrn": case.identity.mrn}
    assert referral_fields(result) == case.referral
    assert all(f.document_fact_only for f in of_type(result, "referral"))

    problems = [(f.structured_value["description"], f.structured_value["code"]) for f in of_type(result, "problem")]
    assert problems == [(p.description, p.code) for p in case.problems]

    meds = of_type(result, "medication")
    assert [(m.structured_value["name"], m.structured_value["dose"], m.structured_value["frequency"]) for m in meds] \
        == [(m.name, m.dose, m.frequency) for m in case.medications]
    assert [m.wants_review for m in meds] == [m.needs_review for m in case.medications]

    allergies = of_type(result, "allergy")
    assert [(a.structured_value["substance"], a.structured_value["reaction"]) for a in allergies] \
        == [(a.substance, a.reaction) for a in case.allergies]
    assert [a.wants_review for a in allergies] == [a.needs_review for a in case.allergies]
    for a in allergies:
        if a.wants_review:
            assert "uncertain wording" in a.review_reason and a.confidence < 0.7
    assert not of_type(result, "lab_result")
    paths = [f.citation.field_or_chunk_id for f in result.facts]
    assert len(paths) == len(set(paths))


def test_prose_letter_locators():
    content, result = run(G.build_prose_letter())
    sections = {s.locator: s for s in content.sections}
    assert sections["paragraph 1"].text == "14 March 2024"
    assert "paragraph 2" not in sections  # an empty paragraph is counted but not emitted
    assert sections["paragraph 4"].text.startswith("Re: Marisol QUENTARA")
    assert sections["header 1"].text.startswith("Quillfeather Family Practice")
    assert sections["footer 1"].text.startswith("Confidential")
    meds = of_type(result, "medication")
    assert [m.citation.page_or_section for m in meds] == ["paragraph 15", "paragraph 16", "paragraph 17"]
    assert meds[0].citation.quote_or_value == "Metformin 500 mg twice daily"
    assert sections["paragraph 15"].meta["list"]
    sulfa = of_type(result, "allergy")[1]
    assert sulfa.citation.page_or_section == "paragraph 18" and sulfa.citation.quote_or_value == "? sulfa - patient unsure"
    signer = next(f for f in of_type(result, "referral") if f.structured_value["field"] == "referring_provider")
    assert signer.structured_value["inferred_from"] == "signature" and signer.confidence < 0.7


def test_table_form_locators():
    content, result = run(G.build_table_form())
    sections = {s.locator: s for s in content.sections}
    assert sections["table 1 row 1"].text == "PATIENT DETAILS"  # the merged row appears once
    assert "table 1 row 1 col 2" not in sections
    assert sections["table 1 row 2 col 2"].text == "Oskar BELLAMIRE-TOTH"
    assert sections["table 2 row 2"].text == "Metformin | 1000 mg | twice daily"
    name = next(i for i in result.identifiers if i.kind.value == "name")
    assert name.citation.page_or_section == "table 1 row 2 col 2"
    codeine = of_type(result, "allergy")[0]
    assert codeine.citation.page_or_section == "table 3 row 2" and codeine.structured_value["severity"] == "moderate"


def test_merged_cells_header_tables_and_content_controls():
    """A merged cell is read once, a neighbour with the same text is kept, header tables
    and paragraphs inside a content control are read (extract/formats/office/docx_internals.py)."""
    import docx
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    doc = docx.Document()
    doc.add_paragraph("Before the control")
    body = doc.element.body  # its last child is the section properties
    body.insert(len(body) - 1, parse_xml(
        f"<w:sdt {nsdecls('w')}><w:sdtContent><w:p><w:r><w:t>Inside the control</w:t></w:r></w:p>"
        "</w:sdtContent></w:sdt>"))
    table = doc.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Merged"
    table.cell(0, 2).text = "Merged"
    table.cell(1, 0).text, table.cell(1, 1).text, table.cell(1, 2).text = "a", "a", "b"
    header_table = doc.sections[0].header.add_table(rows=1, cols=3, width=doc.sections[0].page_width)
    header_table.cell(0, 0).merge(header_table.cell(0, 1)).text = "Clinic"
    header_table.cell(0, 2).text = "Clinic"
    buf = io.BytesIO()
    doc.save(buf)

    content = normalize_docx(buf.getvalue())
    by = {s.locator: s.text for s in content.sections}
    assert by["paragraph 1"] == "Before the control" and by["paragraph 2"] == "Inside the control"
    assert by["table 1 row 1"] == "Merged | Merged" and "table 1 row 1 col 2" not in by
    assert by["table 1 row 1 col 3"] == "Merged"
    assert by["table 1 row 2"] == "a | a | b"
    assert [t for loc, t in by.items() if loc.startswith("header")] == ["Clinic", "Clinic"]


def test_hedged_reason_and_no_known_allergies():
    _, result = run(docx_letter("Patient: Tamsin ORVELLE", "DOB: 2 September 1990",
                            "Reason for referral: possible coeliac disease, ? iron deficiency",
                            "Allergies: NKDA", "Medications: Ferrous sulfate"))
    reason = next(f for f in of_type(result, "referral") if f.structured_value["field"] == "reason")
    assert reason.wants_review and "uncertain wording" in reason.review_reason
    (nkda,) = of_type(result, "allergy")
    assert nkda.structured_value["no_known_allergies"] and nkda.document_fact_only
    (med,) = of_type(result, "medication")
    assert med.wants_review and med.review_reason == "dose not stated"
    assert identity(result) == {"name": "Tamsin ORVELLE", "dob": "1990-09-02"}


SCRIPT, IMG, URL = "<script>alert(1)</script>", "![x](http://127.0.0.1:9/a.png)", "http://127.0.0.1:9/m"


def test_markup_or_a_link_as_an_allergy_medication_or_problem_is_held_for_review_verbatim():
    from domain.models import Certainty
    from domain.policy.facts.certainty import classify
    from domain.policy.context.mentions import apply_to

    _, result = run(docx_letter(
        "Patient: Tamsin ORVELLE", "DOB: 2 September 1990", f"Allergies: {SCRIPT} - hives", "Allergies: latex - rash",
        "Current medications:", f"{SCRIPT} 500 mg twice daily", f"{URL} 10 mg daily", "Metformin 500 mg twice daily",
        f"Problems: {IMG}", "Past medical history: www.example.com/pmh; asthma"))
    decided = {}
    for f in result.facts:
        if f.fact_type in ("allergy", "medication", "problem"):
            name = f.structured_value[{"allergy": "substance", "medication": "name"}.get(f.fact_type, "description")]
            decided[name] = classify(apply_to(f), citation_verified=True, paged=False)
    for payload in (SCRIPT, URL, IMG, "www.example.com/pmh"):  # stored as written, never verified
        assert decided[payload].certainty is Certainty.NEEDS_REVIEW, payload
        assert "markup or a web address" in decided[payload].reason
    assert {n for n, d in decided.items() if d.certainty is Certainty.VERIFIED} == {"latex", "Metformin", "asthma"}


def test_identifiers_sharing_a_line():
    _, result = run(docx_letter("Patient: Tamsin ORVELLE (DOB 2 September 1990)", "DOB: 09/02/1990  MRN: QF-100234"))
    assert identity(result) == {"name": "Tamsin ORVELLE", "dob": "1990-09-02", "mrn": "QF-100234"}


@pytest.mark.parametrize("other, dob, warned", [
    ("Her creatinine was 176 umol/L on 28/10/2026.", "1944-08-02", False),  # the letter prints days first
    ("Her creatinine was 176 umol/L on 10/28/2026.", "1944-02-08", False),  # ... months first
    ("Her creatinine was 176 umol/L on 05/10/2026.", "1944-02-08", True),  # nothing settles it: month first
])
def test_a_letters_other_dates_settle_an_open_date_of_birth(other, dob, warned):
    # a held-out letter's "02/08/1944" was read as 8 February and the right patient quarantined
    _, result = run(docx_letter("Patient: Ngaire WHITFIELD-TANE", "Date of birth: 02/08/1944", other))
    assert identity(result)["dob"] == dob
    assert ("docx_ambiguous_date" in {w.code for w in result.warnings}) is warned
    # an open date carries its day-first reading for the gate to weigh
    [cand] = [i for i in result.identifiers if i.kind.value == "dob"]
    assert cand.other_reading == ("1944-08-02" if warned else None)


@pytest.mark.parametrize("line, expected", [
    # any label of the shared vocabulary, as the lab and form readers take them: an
    # other identifier (New Zealand's NHI, a visit number) or the record number
    ("Re: Mr Piripi HOKIANGA, DOB 11/03/1950, NHI ZAB1234",
     {"name": "Mr Piripi HOKIANGA", "dob": "1950-11-03", "other_id": "ZAB1234"}),
    ("Re: Mrs Ann FIN, DOB 2 May 1950, Visit no. 20931",
     {"name": "Mrs Ann FIN", "dob": "1950-05-02", "other_id": "20931"}),
    ("Re: Mr Sione TAUFA (DOB 9 October 1961), Med rec # 40029177",
     {"name": "Mr Sione TAUFA", "dob": "1961-10-09", "mrn": "40029177"}),
    ("Re: Mrs Ana LOTO, DOB 9 October 1961, File no. C-88123",
     {"name": "Mrs Ana LOTO", "dob": "1961-10-09", "mrn": "C-88123"}),
    # a label word inside a name is no label when no number follows it
    ("Re: Mr Chi WONG, DOB 2 May 1950", {"name": "Mr Chi WONG", "dob": "1950-05-02"}),
    ("Re: Mrs Ursula CHARTWELL, DOB 9 October 1961", {"name": "Mrs Ursula CHARTWELL", "dob": "1961-10-09"}),
])
def test_an_identifier_printed_inline_is_read_under_any_label_of_the_vocabulary(line, expected):
    _, result = run(docx_letter(line, "Dear Colleague,", "Thank you for seeing him."))
    assert identity(result) == expected


@pytest.mark.parametrize("line", [
    "Re: Helene DUBOIS, DOB 03-Sep-1957, Medical record no.: MRN 6620915",
    "Medical record no.: MRN 6620915",
    "Re: Helene DUBOIS, DOB 03-Sep-1957, Medical record no.: Hosp# 6620915",  # any label of the vocabulary
])
def test_a_record_label_printed_again_before_the_number_is_no_part_of_it(line):
    # the number had gone unread, and nothing said so
    _, result = run(docx_letter("Patient: Helene DUBOIS", "DOB: 03-Sep-1957", line))
    assert identity(result)["mrn"] == "6620915"


def test_a_british_drug_history_is_the_medicines_list_and_a_stopped_drug_in_a_sentence_is_no_current_one():
    # A geriatrician's letter written after the rules: its "Drug history" was read as
    # sentences, and "saturations 96% on air" became a medicine named "saturations".
    _, result = run(docx_letter(
        "Re: Mrs Fatima BELLO, DOB 14/03/1948, Hospital No. RX449102",
        "Drug history:", "Apixaban 2.5 mg twice daily", "Bisoprolol 2.5mg OD", "",
        "She stopped ramipril in October because of a dry cough. On examination her pulse was 92 and "
        "irregular, and saturations 96% on air."))
    meds = {f.structured_value["name"]: f for f in of_type(result, "medication")}
    assert set(meds) == {"Apixaban", "Bisoprolol", "ramipril"}
    assert not meds["Apixaban"].wants_review and not meds["Bisoprolol"].wants_review
    assert [f.structured_value["kind"] for f in of_type(result, "vital_sign")] == ["heart_rate", "spo2"]


def test_list_label_does_not_swallow_later_prose():
    _, result = run(docx_letter("Current medications:", "", "", "", "I saw her in clinic today and she is well."))
    assert not of_type(result, "medication")


@pytest.mark.shared_data
@pytest.mark.parametrize("name", REAL_DOCX or ["(shared data absent)"])
def test_real_word_files_are_not_referrals(shared_data, name):
    content, result = run((shared_data / "office" / name).read_bytes())
    assert len([s for s in content.sections if s.section_type == "paragraph"]) > 20
    clinical = [f for f in result.facts if f.fact_type in ("lab_result", "medication", "allergy", "problem")]
    assert clinical == [] and result.identifiers == []
    assert len(result.facts) <= 2
    assert "docx_not_a_referral" in {w.code for w in result.warnings}


# ---------------------------------------------------------------------------- broken input


def _encrypted_ole() -> bytes:
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    return header + "EncryptedPackage".encode("utf-16-le") + b"\x00" * 64


@pytest.mark.parametrize(
    "make,code,words",
    [
        (lambda: b"", "empty_file", "empty"),
        (lambda: G.build_prose_letter()[: len(G.build_prose_letter()) // 2], "corrupt_file", "damaged"),
        (lambda: b"Dear Dr Smith, please see Mr Jones.\n", "not_docx", "plain text"),
        (lambda: G.build_results_workbook(), "not_docx", "Excel workbook"),
        (lambda: _encrypted_ole(), "encrypted_file", "password"),
        (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "not_docx", ".doc"),
        (lambda: b"%PDF-1.7\n1 0 obj", "not_docx", "PDF"),
    ],
)
def test_broken_input_is_a_coded_error(make, code, words):
    with pytest.raises(ExtractionError) as err:
        normalize_docx(make())
    assert err.value.code == code
    assert words.lower() in str(err.value).lower()


def test_a_zip_with_a_broken_document_part():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", "<w:document><unclosed>")
    with pytest.raises(ExtractionError) as err:
        normalize_docx(buf.getvalue())
    assert err.value.code == "corrupt_file"
