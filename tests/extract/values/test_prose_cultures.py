"""What a sentence says an organism fared against, and where such a run of antibiotics ends."""

from __future__ import annotations

import pytest

from extract.values.prose_cultures import susceptibilities_in, susceptibility_spans


def test_each_antibiotic_of_a_run_with_how_it_fared_and_its_own_quote():
    found = susceptibilities_in("The MSU grew Klebsiella, resistant to amoxicillin, cefalexin or co-amoxiclav, "
                                "intermediate to ciprofloxacin.")
    assert [(f.name, f.code) for f in found] == [("amoxicillin", "R"), ("cefalexin", "R"), ("co-amoxiclav", "R"),
                                                 ("ciprofloxacin", "I")]
    assert found[1].quote == "resistant to amoxicillin, cefalexin"


@pytest.mark.parametrize("sentence", [
    "She is sensitive to penicillin; her urine culture grew E. coli.",  # the allergy comes first
    "He is resistant to change and sensitive to criticism.",  # no culture in the sentence
    "Her urine culture grew E. coli; she is sensitive to penicillin.",  # another clause after the culture
])
def test_a_sentence_about_no_cultures_antibiotics_gives_none(sentence):
    assert susceptibility_spans(sentence) == [] and susceptibilities_in(sentence) == []


def test_a_run_after_a_semicolon_with_no_subject_goes_on_about_the_organism():
    # Written in the review: the resistance after ";" was left for the medicines reader.
    found = susceptibilities_in("MSU: Proteus mirabilis isolated, sensitive to cefalexin and co-amoxiclav; "
                                "resistant to nitrofurantoin.")
    assert [(f.name, f.code) for f in found] == [("cefalexin", "S"), ("co-amoxiclav", "S"), ("nitrofurantoin", "R")]
