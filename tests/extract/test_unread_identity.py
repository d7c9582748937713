"""The identity sweep (extract.unread_identity): identity values a page prints that its
reader did not attribute are reported, cited, never left "absent"; values that are not
the patient's identity are not. The pages below were written after the rule, with
labels and layouts it was not written against."""

from __future__ import annotations

from datetime import date

import pytest

from domain.models import Citation, DocType, ExtractionResult, IdentifierKind, IdentityCandidate
from domain.policy.facts.citations import union_box, verify_citations
from extract.unread_identity import identifier_like, sweep_identity
from tests.support.synthetic import words_page

TODAY = date(2026, 11, 5)
SOURCE = "documents:9"


def _sweep(rows, identifiers=(), facts=()):
    content = words_page(rows)
    result = ExtractionResult(doc_type=DocType.LAB_PDF, identifiers=list(identifiers), facts=list(facts))
    return content, sweep_identity(content, result, SOURCE, today=TODAY)


def _line(text: str, x0: float = 50) -> list[tuple[str, float]]:
    out, x = [], x0
    for w in text.split(" "):
        out.append((w, x))
        x += 5 * len(w) + 5
    return out


def test_a_birth_date_and_number_under_labels_no_reader_took_are_reported_with_their_place():
    content, found = _sweep([
        _line("Geburtsdatum: 21.06.1958"),
        _line("Kennung: 4471-22"),
        _line("Entnahme: 02.11.2026"),
    ])
    got = {(u.kind, u.value) for u in found.unread}
    assert got == {("dob", "21.06.1958"), ("identifier", "4471-22")}
    for u in found.unread:
        assert u.citation.page == 1 and u.citation.bounding_box is not None
    assert all(c.verified for c in verify_citations([u.citation for u in found.unread], content))


def test_a_known_label_whose_value_the_reader_did_not_read_is_unread_not_absent():
    _, found = _sweep([_line("Surname: PELLINGHAM"), _line("Given: Rosamund"), _line("Pt DOB 3/9/1947")])
    kinds = sorted(u.kind for u in found.unread)
    assert kinds == ["dob", "name", "name"]
    assert {u.label for u in found.unread} == {"Surname", "Given", "Pt DOB"}


def test_a_record_number_after_a_facility_code_is_reported_when_not_read():
    """"UR No.: RMH 0442917": the value opens with the hospital's letter code, then the
    number. Before, the sweep saw a word without a digit and reported nothing."""
    _, found = _sweep([_line("UR No.: RMH 0442917"), _line("Medicare: 2951 44817 3")])
    assert [(u.kind, u.value) for u in found.unread] == [("record_number", "RMH 0442917")]


def test_a_patients_birth_date_whose_colon_was_lost_is_reported_though_a_note_cites_it():
    """A faxed paediatric form: "Child's date of birth 03/14/2019" (the colon lost) was
    set down as a margin note, and the note's citation counted as the date read; the
    form was verified on name and chart number with the birth date never compared."""
    from domain.models import FactProposal

    content = words_page([_line("Child's name: Theodore Reyes"), _line("Child's date of birth 03/14/2019")])
    note = FactProposal(fact_type="other", fact_text="Note: Child's date of birth 03/14/2019",
                        structured_value={"note": "Child's date of birth 03/14/2019", "location": "margin"},
                        citation=Citation(source_type="intake_form", source_id=SOURCE, page_or_section="page 1",
                                          field_or_chunk_id="other_document_facts[0]",
                                          quote_or_value="Child's date of birth 03/14/2019", page=1),
                        confidence=0.5, document_fact_only=True)
    result = ExtractionResult(doc_type=DocType.INTAKE_FORM, facts=[note])
    found = sweep_identity(content, result, SOURCE, today=TODAY)
    assert [(u.kind, u.value) for u in found.unread if u.kind == "dob"] == [("dob", "03/14/2019")]
    # Another person's date of birth without its colon is still no label the sweep takes.
    _, found = _sweep([_line("Mother's date of birth 11/02/1988")])
    assert not [u for u in found.unread if u.kind == "dob"]


def test_a_bare_birth_date_beside_the_printed_name_is_reported():
    _, found = _sweep([_line("MARCHETTI, Ilaria"), _line("07/30/1969"), _line("Reported 11/04/2026")])
    (u,) = found.unread
    assert (u.kind, u.label, u.value) == ("dob", None, "07/30/1969")


def test_what_the_reader_read_is_not_reported_again():
    content = words_page([_line("Pat: NAKASHIMA, Ren"), _line("Born: 1 May 1944")])
    words = content.pages[0].words
    box = lambda ws: Citation(source_type="lab_pdf", source_id=SOURCE, page_or_section="page 1",  # noqa: E731
                              field_or_chunk_id="patient", quote_or_value=" ".join(w.text for w in ws), page=1,
                              bounding_box=union_box(content.pages[0], ws))
    ids = [IdentityCandidate(kind=IdentifierKind.NAME, value="NAKASHIMA, Ren", citation=box(words[:3])),
           IdentityCandidate(kind=IdentifierKind.DOB, value="1944-05-01", citation=box(words[3:]))]
    result = ExtractionResult(doc_type=DocType.LAB_PDF, identifiers=ids)
    assert sweep_identity(content, result, SOURCE, today=TODAY).unread == []


@pytest.mark.parametrize("line", [
    "Specimen drawn: 11/02/2026 07:40",         # a collection date
    "Printed on: 11/04/2026",                    # a recent date under an unknown label
    "Lab phone: (503) 555-0199",                 # a phone number
    "Accession #: A26-004127",                   # an accession number
    "CLIA #: 05D0642827",                        # a laboratory's CLIA number
    "Page 1 of 2",                               # a page number
    "Ferritin: 1200 ng/mL",                      # a result written as a label
    "Glucose: 5.4 mmol/L",
    "Fasting: 12 h",
    "Control ID: L6608812",                      # a requisition's control number
    "Age(y/m/d): 069/09/21",                     # an age written as years/months/days
    "Age(y//d): 069/09/21",                      # ... as a fax's OCR read it: the bracket is a note
    "Phone (home): 503 555 0199",
    "Date entered: 11/30/2026",
])
def test_what_is_not_the_patients_identity_is_not_reported(line):
    _, found = _sweep([_line("Reported: 11/04/2026"), _line(line)])
    assert found.unread == []


def test_account_visit_and_nhs_numbers_are_read_as_other_identifiers_never_unread():
    _, found = _sweep([_line("Acct: 90-33187"), _line("Visit no.: V-88120"), _line("NHS No: 485 777 3456")])
    assert found.unread == []
    assert {(c.kind, c.value) for c in found.other_ids} == {
        (IdentifierKind.OTHER_ID, "90-33187"), (IdentifierKind.OTHER_ID, "V-88120"),
        (IdentifierKind.OTHER_ID, "485 777 3456")}


@pytest.mark.parametrize("text,expected", [
    ("4471-22", True), ("QX-20417", True), ("0045871", True), ("H-552013", True),
    ("11.8", False), ("250", False), ("1200", False), ("(503)", False), ("(503) 555-0199", False),
    ("06/21/1958", False), ("2026-11-02", False), ("mmol/L", False),
])
def test_identifier_shape(text, expected):
    assert identifier_like(text) is expected


def test_old_dates_far_below_the_header_are_not_birth_dates():
    rows = [_line("Reported: 11/04/2026")] + [[] for _ in range(30)]
    rows += [_line("Test Result Previous"), _line("03/02/2023")]  # a cumulative column's old date
    rows = [r or _line(".") for r in rows]
    _, found = _sweep(rows)
    assert found.unread == []


def test_a_sheets_label_cell_beside_its_value_is_swept_like_a_page():
    from golden.documents import build_spec
    from domain.limits import Limits
    from extract.formats.office.xlsx import normalize_xlsx
    from extract.workbook.extractor import extract_workbook

    data, _ = build_spec({"kind": "xlsx", "sheets": {"Results": [
        ["Patient", "Ann Lee"], ["Hosp#", "4471-22"], ["DOB", "1958-06-21"], ["Geb. Datum", "03/04/1949"],
        ["Visit #", "V-20931"], ["Collected", "2026-10-01"], ["Test", "Result", "Units"], ["Glucose", "5.4", "mmol/L"],
        ["Platelets", "250000", "/uL"], ["Medication", "Dose", "Route", "Started"],
        ["Metformin", "500 mg", "oral", "2019-06-01"]]}}, {})  # a table row's old start date is no birth date
    content = normalize_xlsx(data, Limits())
    result = extract_workbook(content, SOURCE)
    found = sweep_identity(content, result, SOURCE, today=TODAY)
    assert [(u.kind, u.label, u.value, u.citation.page_or_section) for u in found.unread] == [
        ("dob", "Geb. Datum", "03/04/1949", "Results!A4:B4")]
    assert [c.value for c in found.other_ids] == ["V-20931"]


def test_an_unread_value_on_a_fax_page_belongs_to_that_pages_part():
    from domain.content import NormalizedContent

    first, second = words_page([_line("Patient: Ada Ilves")]), words_page([_line("Hosp#: 4471-22")])
    second.pages[0].number = 2
    content = NormalizedContent(source_kind="pdf_text", pages=first.pages + second.pages)
    cited = Citation(source_type="fax_packet", source_id=SOURCE, page_or_section="page 2", field_or_chunk_id="x",
                     quote_or_value="Hosp#:", page=2)
    result = ExtractionResult(doc_type=DocType.FAX_PACKET, identifiers=[
        IdentityCandidate(kind=IdentifierKind.NAME, value="Ada Ilves", scope="page 1", citation=cited.model_copy(
            update={"page": 1, "quote_or_value": "Patient: Ada Ilves"})),
        IdentityCandidate(kind=IdentifierKind.DOB, value="1950-01-01", scope="page 2", citation=cited)])
    (u,) = sweep_identity(content, result, SOURCE, today=TODAY).unread
    assert (u.value, u.scope, u.citation.page) == ("4471-22", "page 2", 2)


def test_a_record_number_after_its_label_printed_again_is_reported_when_no_reader_took_it():
    content, found = _sweep([_line("Medical record no.: MRN 6620915")])
    (u,) = found.unread
    assert (u.kind, u.value) == ("record_number", "6620915")
    assert u.citation.quote_or_value == "Medical record no.: MRN 6620915"
    assert all(c.verified for c in verify_citations([u.citation], content))


def test_a_number_and_birth_date_under_labels_without_colons_in_a_title_cell_are_swept():
    # An anticoagulation clinic's workbook (written after the rule) printed them in its
    # title: "Anticoagulation clinic - Ann Lee - MRN 4471-22 - DOB 21/06/1958".
    from domain.content import NormalizedContent, Section

    content = NormalizedContent(source_kind="xlsx", sections=[
        Section("Log!A1:A1", "Anticoagulation clinic - Ann Lee - MRN 4471-22 - DOB 21/06/1958", "row")])
    result = ExtractionResult(doc_type=DocType.CLINICAL_WORKBOOK, source_id=SOURCE)
    found = sweep_identity(content, result, SOURCE, today=TODAY)
    assert sorted((u.kind, u.label, u.value) for u in found.unread) == [
        ("dob", "DOB", "21/06/1958"), ("record_number", "MRN", "4471-22")]
