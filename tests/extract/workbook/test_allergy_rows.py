"""Allergies in a workbook: a labelled row (beside or under a medicines table, or one
cell "Allergies: ..."), and an allergy table. Layouts written after the rule
(``extract.workbook.allergy_rows``)."""

from __future__ import annotations

from extract.formats.office.xlsx import normalize_xlsx
from extract.workbook.extractor import extract_workbook
from tests.support.extract_support import of_type, read_and_extract
from tests.support.file_builders import sheets_workbook

SOURCE = "documents:78"
ID_ROWS = [["Patient name", "Rua Tipene"], ["DOB", "1970-02-14"], ["NHI", "ZKT4471"], []]


def run(sheets):
    return read_and_extract(sheets_workbook(sheets), normalize_xlsx, extract_workbook, SOURCE)


def test_an_allergy_row_under_the_medicines_is_no_medicine():
    _, result = run({"Summary": ID_ROWS + [
        ["Drug", "Strength", "Directions"],
        ["Ramipril", "5 mg", "once daily"],
        ["Drug allergies", "Codeine - vomiting; latex (hives)"],
    ]})
    assert [f.structured_value["name"] for f in of_type(result, "medication")] == ["Ramipril"]
    allergies = {f.structured_value["substance"]: f for f in of_type(result, "allergy")}
    assert sorted(allergies) == ["Codeine", "latex"]
    assert allergies["Codeine"].structured_value["reaction"] == "vomiting"
    assert allergies["latex"].citation.quote_or_value == "latex (hives)"
    assert all(f.wants_review for f in allergies.values())  # a workbook row: a person checks it is current


def test_no_known_allergies_in_one_cell_is_a_document_statement():
    _, result = run({"Summary": ID_ROWS + [["Allergies: NKDA"], ["Drug", "Dose"], ["Aspirin", "100 mg"]]})
    none, = of_type(result, "allergy")
    assert none.document_fact_only and none.structured_value["no_known_allergies"]


def test_an_allergy_table_is_read_and_its_header_is_no_allergy():
    _, result = run({"Alerts": ID_ROWS + [
        ["Allergen", "Reaction", "Severity"],
        ["Amoxicillin", "anaphylaxis", "Severe"],
        ["Shellfish"],
        [],
        ["Reviewed with the patient at the last visit"],
    ]})
    got = {f.structured_value["substance"]: f.structured_value for f in of_type(result, "allergy")}
    assert sorted(got) == ["Amoxicillin", "Shellfish"]  # the note after the empty row is not an allergen
    assert (got["Amoxicillin"]["reaction"], got["Amoxicillin"]["severity"]) == ("anaphylaxis", "severe")
    assert got["Shellfish"]["reaction"] is None
