"""Clinical context policy (ConText-style): one test per trigger family of the
lexicon, written on fresh sentences, plus questions, list items, red flags, the
whole-text hedge and the processing hook."""

from __future__ import annotations

import json
import time

import pytest

from core.models import Citation, FactProposal
from core.policy import context
from core.policy.context import LEXICON_PATH, apply_to, assess, hedge_cue, red_flag

# (sentence, target, attribute, expected) per family. Attribute is one of
# negated / experiencer / temporality / uncertain.
FAMILY_CASES: dict[str, list[tuple[str, str | None, str, object]]] = {
    "negation_forward": [
        ("She denies any palpitations.", "palpitations", "negated", True),
        ("Exam today without ankle edema or calf tenderness", "calf tenderness", "negated", True),
        ("Has not had any seizures since March", "seizures", "negated", True),
    ],
    "negation_backward": [
        ("Palpitations: denied.", "Palpitations", "negated", True),
        ("Resting tremor absent on exam", "tremor", "negated", True),
        ("Rapid strep negative", "strep", "negated", True),
        ("Night sweats - none", "Night sweats", "negated", True),
    ],
    "negation_self": [
        ("NKDA", None, "negated", True),
        ("Allergies: nkfa", None, "negated", True),
        ("no known drug allergies", None, "negated", True),
    ],
    "pseudo_negation": [
        ("No change in the rash since Monday", "rash", "negated", False),
        ("Gram negative cocci seen on smear", "cocci", "negated", False),
        ("No increase in wheeze with exercise", "wheeze", "negated", False),
        ("Acetaminophen not to exceed 3 g a day", "Acetaminophen", "negated", False),
    ],
    "family_experiencer": [
        ("Her father had colon cancer at 50.", "colon cancer", "experiencer", "family"),
        ("Glaucoma (maternal grandmother)", "Glaucoma", "experiencer", "family"),
        ("Celiac disease in her younger sister", "Celiac disease", "experiencer", "family"),
        ("Mother - type 2 diabetes; Father - gout", "gout", "experiencer", "family"),
        # backward only through a link word: the patient's own insulin stays hers
        ("I take insulin and my sister is a nurse", "insulin", "experiencer", "patient"),
    ],
    "family_history_phrase": [
        ("Family history of hemochromatosis", "hemochromatosis", "experiencer", "family"),
        ("Migraine runs in the family", "Migraine", "experiencer", "family"),
        # a diagnosis of the patient's own, seen in a USPSTF statin data-element sheet
        ("Familial hypercholesterolemia", "hypercholesterolemia", "experiencer", "patient"),
    ],
    "other_experiencer": [
        ("Roommate tested positive for influenza last week", "influenza", "experiencer", "other"),
        ("Her husband has hepatitis B", "hepatitis B", "experiencer", "other"),
    ],
    "pseudo_experiencer": [
        ("Per his mother, he has been wheezing at night", "wheezing", "experiencer", "patient"),
        ("Wife reports he snores loudly", "snores", "experiencer", "patient"),
        ("Accompanied by his daughter, he fell at home", "fell", "experiencer", "patient"),
        ("Name of the parent organization that sent the record", "record", "experiencer", "patient"),
    ],
    "historical_forward": [
        ("History of DVT on apixaban", "DVT", "temporality", "historical"),
        ("s/p cholecystectomy", "cholecystectomy", "temporality", "historical"),
        ("Previously took warfarin", "warfarin", "temporality", "historical"),
    ],
    "historical_backward": [
        ("Shingles 10 years ago", "Shingles", "temporality", "historical"),
        ("Eczema as a child", "Eczema", "temporality", "historical"),
        ("Rash on both arms has resolved", "Rash", "temporality", "historical"),
    ],
    "historical_bidirectional": [
        ("Left knee replacement in 2019", "knee replacement", "temporality", "historical"),
        ("In 2012 he had a TIA", "TIA", "temporality", "historical"),
    ],
    "pseudo_historical": [
        ("Hypertension since 2010", "Hypertension", "temporality", "current"),
        ("Productive cough for the past 3 days", "cough", "temporality", "current"),
        ("History of present illness: wheezing", "wheezing", "temporality", "current"),
        ("Statin started in 2021", "Statin", "temporality", "current"),
        ("This test should not be used to diagnose thrombophilia", "thrombophilia", "temporality", "current"),
    ],
    "hypothetical_forward": [
        ("Call the clinic if the fever returns", "fever", "temporality", "hypothetical"),
        ("Should she develop a rash, stop the drug", "rash", "temporality", "hypothetical"),
        ("Discussed the risk of bleeding on warfarin", "bleeding", "temporality", "hypothetical"),
    ],
    "pseudo_hypothetical": [
        ("Drug allergies (if any): latex", "latex", "temporality", "current"),
        ("If yes, which one: codeine", "codeine", "temporality", "current"),
    ],
    "uncertainty_forward": [
        ("Possible latex allergy", "latex", "uncertain", True),
        ("r/o appendicitis", "appendicitis", "uncertain", True),
        ("? gout in the left toe", "gout", "uncertain", True),
        ("Query asthma, awaiting spirometry", "asthma", "uncertain", True),
    ],
    "uncertainty_backward": [
        ("Allergies: walnuts?", "walnuts", "uncertain", True),
        ("Pneumonia not excluded", "Pneumonia", "uncertain", True),
        ("ibuprofen (?)", "ibuprofen", "uncertain", True),
    ],
    "uncertainty_bidirectional": [
        ("Amoxicillin - not sure", "Amoxicillin", "uncertain", True),
        ("Patient unsure about the codeine reaction", "codeine", "uncertain", True),
        ("Maybe ibuprofen", "ibuprofen", "uncertain", True),
        ("Can't remember if it was cefalexin", "cefalexin", "uncertain", True),
    ],
    "strike_marked": [
        ("~~aspirin~~ clopidogrel", "aspirin", "uncertain", True),
        ("<s>aspirin</s> clopidogrel", "aspirin", "uncertain", True),
        ("~~aspirin~~ clopidogrel", "clopidogrel", "uncertain", False),
    ],
    "strike_marker": [
        ("aspirin (crossed out)", "aspirin", "uncertain", True),
        ("[strikethrough] aspirin", "aspirin", "uncertain", True),
        ("Aspirin struck through, clopidogrel", "clopidogrel", "uncertain", False),
    ],
    "pseudo_uncertainty": [
        ("Please fax the results as soon as possible", "results", "uncertain", False),
        ("Seen asap for wound check", "wound check", "uncertain", False),
        ("Value set at https://example.org/view?oid=2.16.840", "Value set", "uncertain", False),
    ],
    "current_override": [
        ("Started metformin last year", "metformin", "temporality", "current"),
        ("Lisinopril since 2019, still taking it", "Lisinopril", "temporality", "current"),
        ("Return if rash, currently none", "rash", "temporality", "hypothetical"),
    ],
    "termination": [
        ("Denies fever but has a productive cough", "productive cough", "negated", False),
        ("No rash; itching on both forearms", "itching", "negated", False),
        ("Father had gout; psoriasis since my twenties", "psoriasis", "experiencer", "patient"),
    ],
    "termination_negation": [
        ("Denies nausea, reports heartburn after meals", "heartburn", "negated", False),
        ("No fever, endorses chills", "chills", "negated", False),
    ],
    "termination_experiencer": [
        ("Brother with gout, I have psoriasis", "psoriasis", "experiencer", "patient"),
    ],
    "termination_temporality": [
        ("History of asthma, now wheezing daily", "wheezing", "temporality", "current"),
        ("Previous smoker, currently vaping", "vaping", "temporality", "current"),
    ],
}


def _flatten():
    for family, cases in FAMILY_CASES.items():
        for sentence, target, attribute, expected in cases:
            yield pytest.param(sentence, target, attribute, expected, id=f"{family}:{sentence[:30]}")


@pytest.mark.parametrize("sentence, target, attribute, expected", list(_flatten()))
def test_trigger_families(sentence, target, attribute, expected):
    ctx = assess(sentence, target)
    assert getattr(ctx, attribute) == expected, ctx


def test_every_lexicon_family_has_its_tests():
    assert set(context.families()) == set(FAMILY_CASES)


def test_lexicon_is_well_formed_data():
    data = json.loads(LEXICON_PATH.read_text(encoding="utf-8"))
    directions = {"forward", "backward", "bidirectional", "self", "pseudo", "terminate"}
    categories = set(context.CATEGORIES) | {"pseudo", "terminate"}
    for name, spec in data["families"].items():
        assert spec["direction"] in directions, name
        assert spec["category"] in categories, name
        assert spec.get("phrases") or spec.get("patterns"), name
        phrases = [p.lower() for p in spec.get("phrases", ())]
        assert len(phrases) == len(set(phrases)), f"duplicate phrase in {name}"
        if spec["direction"] == "terminate":
            assert set(spec["ends"]) <= set(context.CATEGORIES), name
        assert (spec["direction"] == "pseudo") == (spec["category"] == "pseudo"), name


def test_leftmost_longest_trigger_wins():
    # "not sure" is a hedge, not a negation; "no history of" negates, it is no history
    ctx = assess("Not sure about penicillin", "penicillin")
    assert ctx.uncertain and not ctx.negated
    ctx = assess("No history of asthma", "asthma")
    assert ctx.negated and ctx.temporality == "current"


def test_scope_stays_inside_the_sentence():
    text = "Denies chest pain. Has had a cough for a week."
    assert assess(text, "chest pain").negated
    assert not assess(text, "cough").negated


def test_glued_question_mark_hedges_its_list_item_only():
    text = "Penicillin (hives), shellfish?"
    assert assess(text, "shellfish").uncertain
    assert not assess(text, "Penicillin").uncertain
    assert assess("shellfish?").triggers == ("?",)


def test_several_attributes_and_trigger_order():
    ctx = assess("Possible history of stroke in her mother", "stroke")
    assert ctx.uncertain and ctx.temporality == "historical" and ctx.experiencer == "family"
    assert ctx.triggers[0] == "Possible"  # hedges are listed first
    assert not ctx.affirmed_current_patient


def test_mother_states_is_an_informant_not_the_experiencer():
    assert assess("Mother states she has had fevers", "fevers").experiencer == "patient"


@pytest.mark.parametrize("text, target, expected", [
    ("Have you ever had a seizure? No", "seizure", {"negated": True}),
    ("Have you ever had a seizure? Yes, in May", "seizure", {"negated": False, "temporality": "current"}),
    ("Do you get chest pain when walking?", "chest pain", {"temporality": "hypothetical", "uncertain": False}),
    ("Any allergies? Peanuts?", "Peanuts", {"uncertain": True}),
    ("Smoker? No", "Smoker", {"negated": True, "uncertain": False}),
    ("Pregnant? Not sure", "Pregnant", {"uncertain": True}),
])
def test_questions_ask_rather_than_hedge(text, target, expected):
    ctx = assess(text, target)
    for attribute, value in expected.items():
        assert getattr(ctx, attribute) == value, ctx


@pytest.mark.parametrize("text, flag", [
    ("denies chest pain", None),
    ("Patient denies chest pain or shortness of breath today.", None),
    ("Mother had a stroke at 70", None),
    ("Return to the ED if short of breath", None),
    ("History of stroke, no residual weakness", None),
    ("Do you have chest pain?", None),
    ("Chest pain since this morning", "chest pain"),
    ("? chest pain on exertion", "chest pain"),  # a hedged red flag still needs a clinician
    ("No fever. Fainted twice at work today.", "fainted"),
    ("Denies headache but coughing up blood", "coughing up blood"),
])
def test_red_flag_only_when_affirmed_current_and_the_patients(text, flag):
    assert red_flag(text) == flag


@pytest.mark.parametrize("text, cue", [
    ("Shellfish?", "?"),
    ("possible sulfa reaction", "possible"),
    ("codeine ~~penicillin~~", "~~penicillin~~"),
    ("Penicillin (hives)", None),
    ("Please call back as soon as possible", None),
    ("Which pharmacy do you use?", None),
])
def test_hedge_cue_on_whole_text(text, cue):
    assert hedge_cue(text) == cue


def _proposal(fact_type, fact_text, quote, value=None, context_text=None):
    return FactProposal(
        fact_type=fact_type, fact_text=fact_text, structured_value=value or {},
        citation=Citation(source_type="intake_form", source_id="documents:1", page_or_section="page 1",
                          field_or_chunk_id="problems[0]", quote_or_value=quote),
        confidence=0.95, context_text=context_text)


def test_apply_to_retypes_a_relatives_problem_as_family_history():
    p = apply_to(_proposal("problem", "History: mother had breast cancer", "mother had breast cancer",
                           {"description": "mother had breast cancer"}))
    assert p.fact_type == "family_history" and p.context.experiencer == "family"
    assert p.fact_text == "Family history: mother had breast cancer"
    assert p.structured_value["relative"] == "mother"


def test_apply_to_reads_context_text_and_targets_the_subject():
    p = apply_to(_proposal("allergy", "Allergy: shellfish", "shellfish", {"substance": "shellfish"},
                           context_text="Penicillin (hives); shellfish?"))
    assert p.context.uncertain and p.fact_type == "allergy"
    other = apply_to(_proposal("allergy", "Allergy: Penicillin", "Penicillin", {"substance": "Penicillin"},
                               context_text="Penicillin (hives); shellfish?"))
    assert not other.context.uncertain


def test_apply_to_leaves_table_values_and_identifiers_alone():
    lab = _proposal("lab_result", "LDL 148", "LDL ? 148", {"test_name": "LDL", "value": "148"})
    assert apply_to(lab).context is None
    assert apply_to(_proposal("demographic", "Name: Ann Lee?", "Ann Lee?")).context is None


def test_fast_enough_for_every_page():
    sentences = [f"Patient {i} denies chest pain, reports cough for {i} days; mother had diabetes in 20{i % 90 + 10}."
                 for i in range(600)]
    start = time.perf_counter()
    for s in sentences:
        assess(s, "cough")
    per_call = (time.perf_counter() - start) / len(sentences)
    assert per_call < 0.005, f"{per_call * 1000:.2f} ms per sentence"


@pytest.mark.parametrize("text, target", [
    ("Not sure: penicillin, sulfa", "sulfa"),
    ("Unsure - penicillin, latex", "latex"),
    ("Maybe: codeine, shellfish", "shellfish"),
])
def test_a_hedge_heading_the_answer_covers_every_item_after_it(text, target):
    assert assess(text, target).uncertain


@pytest.mark.parametrize("answer", ["Not sure", "maybe", "Unsure."])
def test_an_answer_that_is_only_a_hedge_is_uncertain(answer):
    assert assess(answer).uncertain and hedge_cue(answer)


def test_a_glued_question_mark_still_hedges_only_its_own_item():
    assert assess("penicillin, shellfish?", "shellfish").uncertain
    assert not assess("penicillin, shellfish?", "penicillin").uncertain
