"""Vital signs told in sentences of a letter: a sign's printed label, a few linking
words, the reading and its unit; targets, thresholds, ranges and everyday words are
no readings. Written after the rule, on wordings of letters it was not built from."""

from __future__ import annotations

import pytest

from extract.values.prose_vitals import vital_values_in


def told(sentence: str) -> list[tuple[str, str, str, str]]:
    return [(m.reading.kind, m.reading.value, m.reading.unit, m.mention.text) for m in vital_values_in(sentence)]


@pytest.mark.parametrize("sentence, expected", [
    ("On examination his blood pressure was 148/86 mmHg, pulse 92 and irregular, and oxygen saturation 94% on "
     "room air.",
     [("blood_pressure", "148/86", "mmHg", "blood pressure was 148/86 mmHg"), ("heart_rate", "92", "/min", "pulse 92"),
      ("spo2", "94", "%", "oxygen saturation 94%")]),
    ("Obs: BP 132/78, HR 64 bpm, RR 18, SpO2 97%.",
     [("blood_pressure", "132/78", "mmHg", "BP 132/78"), ("heart_rate", "64", "/min", "HR 64 bpm"),
      ("respiratory_rate", "18", "/min", "RR 18"), ("spo2", "97", "%", "SpO2 97%")]),
    ("Her temperature was 38.2C this morning and her weight is now 61.5 kg.",
     [("temperature", "38.2", "°C", "temperature was 38.2C"), ("weight", "61.5", "kg", "weight is now 61.5 kg")]),
    ("He has a BMI of 31.2 kg/m2 and a heart rate of 110 beats per minute.",
     [("bmi", "31.2", "kg/m2", "BMI of 31.2 kg/m2"), ("heart_rate", "110", "/min", "heart rate of 110 beats per minute")]),
    ("Sats were 91 % on air.", [("spo2", "91", "%", "Sats were 91 %")]),
    ("and saturations 96% on air.", [("spo2", "96", "%", "saturations 96%")]),  # a British letter's plural
    # a held-out letter's "he weighs 128 kg" went unread
    ("She weighed 71.4 kg at the pre-assessment.", [("weight", "71.4", "kg", "weighed 71.4 kg")]),
])
def test_readings_in_a_sentence(sentence, expected):
    assert told(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "Her target blood pressure is below 140/90.",  # a target
    "Please call if his pulse rises above 120.",  # a threshold
    "A pulse of 60 to 100 is normal.",  # a range
    "Her weight has fallen from 82 to 76 kg.",  # a change: which number is now, a person reads
    "He sat 3 exams last year.",  # "sat" is a verb
    "The hr 2 appointment was moved.",  # a label in lower case is no label in a sentence
    "Blood pressure control has been difficult.",  # no reading
])
def test_no_reading(sentence):
    assert told(sentence) == []


def test_a_temperature_without_a_unit_is_read_by_its_size_and_says_so():
    (mention,) = vital_values_in("Temperature 37.9 on arrival.")
    assert (mention.reading.value, mention.reading.unit) == ("37.9", "°C")
    assert mention.reading.doubts and "by its size" in mention.reading.doubts[0]


@pytest.mark.parametrize("sentence, readings", [
    ("Vitals: P 64, T 99.1F, R 16", [("T", "99.1", "°F")]),
    ("Obs stable - RR 20, T 38.4 C, sats 95%", [("RR", "20", "/min"), ("T", "38.4", "°C"), ("sats", "95", "%")]),
    ("T: 37.0", []),  # a bare "T" with no unit printed is no temperature
    ("Staged T 3 N 1 on imaging", []),
])
def test_a_bare_t_is_a_temperature_only_with_its_unit(sentence, readings):
    assert [(v.label, v.reading.value, v.reading.unit) for v in vital_values_in(sentence)] == readings
