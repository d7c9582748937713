"""The one identity label vocabulary (extract.values.identity_labels) and every reader
that takes its labels from it: the same printed label means the same field whichever
reader meets it. The spellings below were written after the vocabulary, in other
cases, spacing and punctuation than its phrases."""

from __future__ import annotations

import pytest

from extract.lab.extractor import FIELD_LABELS
from extract.layout import norm_token
from extract.referral.labels import label_field
from extract.values.identity_labels import (COMPARED_MEANINGS, IDENTITY_MEANINGS, VOCABULARY, phrase_table)
from extract.values.labels import read_label
from extract.workbook.labels import id_kind
from tests.support.synthetic import words_page


def _lab_key(label: str) -> str | None:
    words = words_page([[(w, 50 + 60 * i) for i, w in enumerate(label.split())]]).pages[0].words
    hit = FIELD_LABELS.match_at(words, 0)
    return hit.key if hit is not None and hit.end == len(words) else None


# printed label -> (lab key, intake kind, referral field, workbook kind)
AGREE = {
    "PT:": ("name", "name", "patient_name", "name"),
    "Pat. name": ("name", "name", "patient_name", "name"),
    "Patient Name:": ("name", "name", "patient_name", "name"),
    "BORN": ("dob", "dob", "dob", "dob"),
    "d.o.b:": ("dob", "dob", "dob", "dob"),
    "Birth Date": ("dob", "dob", "dob", "dob"),
    "HOSP NO.": ("mrn", "mrn", "mrn", "mrn"),
    "Hosp #": ("mrn", "mrn", "mrn", "mrn"),
    "UR NO:": ("mrn", "mrn", "mrn", "mrn"),
    "URN": ("mrn", "mrn", "mrn", "mrn"),
    "MR #:": ("mrn", "mrn", "mrn", "mrn"),
    "Record No.": ("mrn", "mrn", "mrn", "mrn"),
    "Chart number": ("mrn", "mrn", "mrn", "mrn"),
}


@pytest.mark.parametrize("label", sorted(AGREE))
def test_every_reader_reads_an_identity_label_by_the_same_meaning(label):
    lab, intake, referral, workbook = AGREE[label]
    assert _lab_key(label) == lab
    assert read_label(label).kind == intake
    assert label_field(label) == referral
    assert id_kind(label) == workbook


@pytest.mark.parametrize("label", ["ACCT NO", "Account #:", "Visit #", "Encounter No.", "NHS NUMBER:",
                                   "Medicare no", "Health Card #", "HCN:"])
def test_other_identifiers_are_never_a_record_number_in_any_reader(label):
    assert _lab_key(label) == "other_id"
    assert read_label(label).kind == "other_id"
    assert label_field(label) != "mrn"
    assert id_kind(label) is None


@pytest.mark.parametrize("label,part", [("SURNAME:", "last_name"), ("Given Names", "first_name"),
                                        ("Family name", "last_name"), ("Forename", "first_name")])
def test_a_name_in_two_fields_is_read_as_its_parts(label, part):
    assert read_label(label).kind == part
    assert id_kind(label) == part
    assert _lab_key(label) == part  # the lab joins the parts when they sit side by side on one row


@pytest.mark.parametrize("label", ["Specimen Drawn", "DATE/TIME DRAWN:", "Coll. date", "Drawn", "Sample taken:",
                                   "DATE/TIME TAKEN"])
def test_collection_labels_are_never_a_birth_date(label):
    assert _lab_key(label) == "collected"
    assert id_kind(label) == "collected"


def test_each_phrase_has_one_meaning_and_the_tables_say_which_are_compared():
    seen: dict[str, str] = {}
    for meaning, phrases in VOCABULARY.items():
        for phrase in phrases:
            assert seen.setdefault(phrase, meaning) == meaning, phrase
    assert "record_number" in COMPARED_MEANINGS and "other_identifier" not in COMPARED_MEANINGS
    assert "other_identifier" in IDENTITY_MEANINGS
    assert {"nhs no", "acct", "visit no", "medicare", "health card"} <= set(VOCABULARY["other_identifier"])
    assert {"ur no", "hosp#", "mrn", "chart"} <= set(VOCABULARY["record_number"])


def test_a_reader_that_cannot_tell_two_phrases_apart_keeps_the_first_meaning():
    fold = lambda p: tuple(t for t in map(norm_token, p.split()) if t)  # noqa: E731 ("#" dropped)
    table = phrase_table({"name": "name", "record_number": "mrn"}, fold=fold)
    assert table["patient"] == "name" and "patient #" not in table  # "Patient #" reads as "Patient" there
    assert table["mrn"] == "mrn" and "mrn #" not in table  # one phrase per folded spelling


@pytest.mark.parametrize("line,key", [("PT: 13.2 s", None), ("Pt: OYELARAN, Winifred", "name"),
                                      ("Patient: 4471", None), ("Pat.: Ilves, Ada", "name")])
def test_a_name_label_followed_by_a_number_is_no_name_label_in_the_lab(line, key):
    words = words_page([[(w, 50 + 60 * i) for i, w in enumerate(line.split())]]).pages[0].words
    hit = FIELD_LABELS.match_at(words, 0)
    assert (hit.key if hit else None) == key
