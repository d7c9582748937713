"""Which statements of one record cannot both be true (domain/policy/answers/contradictions.py)."""

from __future__ import annotations

import pytest

from domain.policy.answers.contradictions import NOT_CONTRADICTIONS, PAIRS, Statement, find_contradictions


def allergy(eid, substance="", *, text="", status=None, **ctx):
    value = {"substance": substance} | ({"status": status} if status else {})
    return Statement(eid, "allergy", value, text or substance, **ctx)


def med(eid, name, *, status=None, dose=None, **ctx):
    value = {"name": name} | ({"status": status} if status else {}) | ({"dose": dose} if dose else {})
    return Statement(eid, "medication", value, name, **ctx)


def pairs(statements):
    return [(c.pair, c.first, c.second) for c in find_contradictions(statements)]


def test_every_pair_says_why_and_in_plain_words():
    for pair in PAIRS.values():
        assert pair["words"] and pair["why"] and "_" not in pair["words"]
    assert NOT_CONTRADICTIONS  # what looks alike but is not, written down beside them


@pytest.mark.parametrize("statement, substance, flagged", [
    ("NKDA", "Penicillin", True),
    ("No known drug allergies", "amoxicillin", True),
    ("NKDA", "Latex", False),  # NKDA speaks of drugs only
    ("NKDA", "Peanuts", False),
    ("NKA", "Latex", True),  # no known allergies of any kind
    ("No known allergies", "bee stings", True),
    ("NKFA", "Penicillin", False),  # food only: says nothing of drugs
])
def test_a_no_known_allergies_statement_beside_an_allergy(statement, substance, flagged):
    found = pairs([allergy("fact:1", text=statement), allergy("chart_allergies:4", substance)])
    assert found == ([("no-known-allergies-vs-allergy", ("fact:1",), ("chart_allergies:4",))] if flagged else [])


def test_the_no_known_kind_comes_from_the_status_the_readers_set():
    nkda = allergy("fact:1", status="no_known_drug_allergies", text="Allergies: none to medicines")
    assert pairs([nkda, allergy("fact:2", "Cephalexin")])[0][0] == "no-known-allergies-vs-allergy"
    assert pairs([nkda, allergy("fact:2", "Shellfish")]) == []


def test_a_relatives_allergy_or_a_denied_one_does_not_contradict_nkda():
    assert pairs([allergy("fact:1", text="NKDA"), allergy("fact:2", "Penicillin", experiencer="family")]) == []
    assert pairs([allergy("fact:1", text="NKDA"), allergy("fact:2", "Penicillin", negated=True)]) == []


def test_a_denied_allergy_beside_the_same_allergy_documented():
    denied = allergy("fact:1", "penicillin", negated=True)
    assert pairs([denied, allergy("fact:2", "Amoxicillin")]) == [
        ("allergy-denied-vs-documented", ("fact:1",), ("fact:2",))]  # the same class
    assert pairs([denied, allergy("fact:2", "Sulfa")]) == []


def test_a_medication_stopped_in_one_place_and_current_in_another():
    found = pairs([med("fact:1", "Metformin 500 mg", status="Stopped"), med("chart_medications:2", "metformin"),
                   med("fact:3", "Gliclazide")])
    assert found == [("medication-stopped-vs-current", ("fact:1",), ("chart_medications:2",))]
    # stopped by the words around it (historical), and matched by ingredient through a brand
    assert pairs([med("fact:1", "Glucophage", temporality="historical"), med("fact:2", "Metformin XR")]) == [
        ("medication-stopped-vs-current", ("fact:1",), ("fact:2",))]


@pytest.mark.parametrize("other", [
    med("fact:2", "Lisinopril"),  # another medication
    med("fact:2", "Metformin", status="on-hold"),  # a pause, not a stop
    med("fact:2", "Metformin", temporality="hypothetical"),  # "if her sugars rise, start metformin"
    med("fact:2", "Metformin", experiencer="family"),
    med("fact:2", "Metformin", status="discontinued"),  # both stopped: they agree
])
def test_a_stopped_medication_beside_what_is_not_the_same_current_one(other):
    assert pairs([med("fact:1", "Metformin", status="stopped"), other]) == []


def test_a_medication_the_table_does_not_know_matches_only_its_own_name():
    assert pairs([med("fact:1", "Zorbatinib", status="stopped"), med("fact:2", "zorbatinib")]) != []
    assert pairs([med("fact:1", "Zorbatinib", status="stopped"), med("fact:2", "Zorbavir")]) == []


def test_a_dose_change_is_no_contradiction_but_the_same_dose_stopped_and_taken_is():
    old = med("fact:1", "Metformin", dose="500 mg", status="Stopped")
    assert pairs([old, med("fact:2", "Metformin", dose="1000 mg")]) == []  # the old dose stopped, a new one taken
    assert pairs([old, med("fact:2", "Metformin", dose="500mg")]) != []  # one dose, written two ways
    assert pairs([med("fact:1", "Metformin", dose="1 g", status="stopped"), med("fact:2", "metformin", dose="1000 mg")])
    assert pairs([old, med("fact:2", "Metformin")]) != []  # no dose on one side: it may be the same


def test_one_flag_per_medication_citing_every_entry_on_each_side():
    found = pairs([med("fact:1", "Metformin", status="stopped"), med("fact:2", "Glucophage", status="Stopped"),
                   med("fact:3", "Metformin 500 mg"), med("chart_medications:4", "metformin"),
                   med("fact:5", "Lisinopril", status="stopped")])
    assert found == [("medication-stopped-vs-current", ("fact:1", "fact:2"), ("fact:3", "chart_medications:4"))]


def test_the_flag_words_a_no_known_statement_by_its_kind():
    (nkda,) = find_contradictions([allergy("fact:1", text="NKDA"), allergy("fact:2", "Penicillin")])
    (nka,) = find_contradictions([allergy("fact:1", text="NKA"), allergy("fact:2", "Latex")])
    assert nkda.words == "the record says “no known drug allergies”, and it also lists an allergy"
    assert nka.words == "the record says “no known allergies”, and it also lists an allergy"
