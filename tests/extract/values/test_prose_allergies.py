"""Allergies told in sentences: substances with their reactions, in British and
American wording, lists of them, the no-known-allergies statement; sentences that
tell of no allergy give none. Written after the rules, in wording they were not
built against."""

from __future__ import annotations

import pytest

from extract.values.prose_allergies import allergies_in, no_known_allergies_in


def told(sentence: str) -> list[tuple[str, str | None]]:
    return [(m.substance.text, m.reaction.text if m.reaction else None) for m in allergies_in(sentence)]


@pytest.mark.parametrize("sentence, expected", [
    ("He is allergic to amoxicillin, which caused hives.", [("amoxicillin", "hives")]),
    ("Mrs Dunne is allergic to latex and to elastoplast.", [("latex", None), ("elastoplast", None)]),
    ("She is intolerant of nothing but is allergic to trimethoprim (rash) and nitrofurantoin (nausea).",
     [("trimethoprim", "rash"), ("nitrofurantoin", "nausea")]),
    ("He reports a sensitivity to sulfonamides with a widespread rash in 2015.", [("sulfonamides", "widespread rash")]),
    ("Her cefalexin allergy (angioedema) is documented.", [("cefalexin", "angioedema")]),
    ("She has an aspirin allergy \u2013 wheeze.", [("aspirin", "wheeze")]),
    ("Erythromycin gave him severe diarrhoea.", [("Erythromycin", "diarrhoea")]),
    ("The ibuprofen made her wheeze.", [("ibuprofen", "wheeze")]),
    ("The patient is allergic to her own cat.", [("own cat", None)]),
    # "intolerant of": a held-out letter's trimethoprim allergy went unread, and nothing said so
    ("She is intolerant of trimethoprim, which gave her a widespread rash, and reports a mild reaction to latex "
     "gloves.", [("trimethoprim", "rash"), ("latex gloves", None)]),
    ("He has an intolerance of codeine (vomiting) and morphine.", [("codeine", "vomiting"), ("morphine", None)]),
    # "allergic" as a fax printed it: OCR read its c as o, or an l as 1
    ("She is allergio to sulfonamides, which gave her an urticarial rash in 2019.",
     [("sulfonamides", "urticarial rash")]),
    ("He is a1lergic to co-amoxiclav.", [("co-amoxiclav", None)]),
    # the reaction told before the drug that caused it: a held-out letter's "angioedema on ramipril" was read
    # as ramipril taken
    ("He developed angioedema on ramipril in 2019.", [("ramipril", "angioedema")]),
    ("She had a rash after amoxicillin as a child.", [("amoxicillin", "rash")]),
    ("A dry cough with lisinopril, so switched to losartan.", [("lisinopril", "dry cough")]),
    ("He was nauseated on metformin and stopped it.", [("metformin", "nauseated")]),
])
def test_allergies_with_their_reactions(sentence, expected):
    assert told(sentence) == expected


@pytest.mark.parametrize("sentence, expected", [
    # A held-out referral: the second allergy sat in the first list's clause, unread.
    ("She is allergic to sulfonamides (widespread rash) and reports latex sensitivity.",
     [("sulfonamides", "widespread rash"), ("latex", None)]),
    ("Allergic to penicillin (rash), codeine (vomiting) and has a peanut allergy.",
     [("penicillin", "rash"), ("codeine", "vomiting"), ("peanut", None)]),
    ("He is allergic to morphine and an iodine contrast allergy.", [("morphine", None), ("iodine contrast", None)]),
    ("Allergic to clindamycin and has also had a chlorhexidine reaction - hives.",
     [("clindamycin", None), ("chlorhexidine", "hives")]),
])
def test_an_allergy_told_after_a_list_in_the_same_sentence_is_read_too(sentence, expected):
    assert told(sentence) == expected


@pytest.mark.parametrize("sentence, expected", [
    # Written after a held-out letter's "could not tolerate" went unread and its
    # "anaphylactic reaction to peanuts" gave a substance called "anaphylactic".
    ("She had an anaphylactic reaction to peanuts in 2011.", [("peanuts", "anaphylactic reaction")]),
    ("He could not tolerate metformin because of diarrhoea.", [("metformin", "diarrhoea")]),
    ("She was unable to tolerate atorvastatin due to muscle aches, so takes ezetimibe.",
     [("atorvastatin", "muscle aches")]),
    ("He didn't tolerate simvastatin.", [("simvastatin", None)]),
    ("Rosuvastatin caused myalgia last spring.", [("Rosuvastatin", "myalgia")]),
    ("She developed an itchy rash due to flucloxacillin.", [("flucloxacillin", "rash")]),
])
def test_intolerances_told_with_a_verb_and_the_kind_of_reaction(sentence, expected):
    assert told(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "She did not tolerate the CPAP mask.",  # no drug, and nothing it caused
    "He tolerates ramipril well.",
])
def test_what_a_patient_tolerates_or_a_device_is_no_allergy(sentence):
    assert told(sentence) == []


def test_a_reaction_told_after_a_list_goes_to_each_substance_without_one():
    assert told("She is allergic to penicillin and flucloxacillin, which both gave her a rash.") == [
        ("penicillin", "rash"), ("flucloxacillin", "rash")]


@pytest.mark.parametrize("sentence", [
    "The oxycodone gave her good relief overnight.",  # a benefit, not a reaction
    "He takes amlodipine 10 mg daily.",
    "She was seen in the allergy clinic last year.",
    "Her blood pressure reacts well to rest.",
    # how ill the patient is on a treatment, or a reaction to no drug, is no allergy
    "She remains breathless on bisoprolol and furosemide.",
    "He has had a rash on his forearm for two weeks.",
    "Her cough with exertion is worse.",
])
def test_sentences_that_tell_of_no_allergy(sentence):
    assert told(sentence) == []


@pytest.mark.parametrize("sentence, printed", [
    ("She has no known drug allergies.", "no known drug allergies"),
    ("Allergic history: NKDA.", "NKDA"),
    # the narrower reading wins: "no known allergies to medicines" says nothing of foods for sure
    ("He has no known allergies to medicines or foods.", "no known allergies to medicines"),
    ("There are no drug allergies recorded.", "no drug allergies recorded"),
])
def test_no_known_allergies_in_a_sentence(sentence, printed):
    found = no_known_allergies_in(sentence)
    assert found is not None and found.text == printed and sentence[found.start:found.end] == printed
    assert told(sentence) == []  # "no known allergies to medicines": no substance


def test_offsets_quote_the_sentence_exactly():
    sentence = "Mr Yeo is allergic to co-trimoxazole (Stevens-Johnson syndrome)."
    (m,) = allergies_in(sentence)
    assert sentence[m.substance.start:m.substance.end] == "co-trimoxazole"
    assert sentence[m.reaction.start:m.reaction.end] == "Stevens-Johnson syndrome"


def test_a_second_opener_in_a_list_starts_a_list_of_its_own():
    # A GP letter written after the rule: "allergic to penicillin (hives) and intolerant of
    # codeine" gave an allergy to "intolerant of codeine" beside the one to codeine.
    said = allergies_in("She is allergic to penicillin (hives) and intolerant of codeine, which constipates her.")
    assert [(m.substance.text, m.reaction.text if m.reaction else None) for m in said] == [
        ("penicillin", "hives"), ("codeine", None)]
