"""Problems told in sentences after a cue ("background of", "PMH:", "diagnosed
with", "known to have", "suffers from"), cut into items; words that are no
condition are left out. Written after the rules."""

from __future__ import annotations

import pytest

from extract.values.prose_problems import problems_in


def told(sentence: str) -> list[str]:
    return [m.description.text for m in problems_in(sentence)]


@pytest.mark.parametrize("sentence, expected", [
    ("Past medical history includes COPD, osteoporosis and a previous TIA.", ["COPD", "osteoporosis", "previous TIA"]),
    ("PMHx: HTN, HLD, T2DM.", ["HTN", "HLD", "T2DM"]),
    ("He has a background of ischaemic heart disease (CABG 2012) and gout.",
     ["ischaemic heart disease (CABG 2012)", "gout"]),
    ("She was diagnosed with rheumatoid arthritis three years ago.", ["rheumatoid arthritis"]),
    ("Mr Amos suffers from chronic migraine, for which he sees neurology.", ["chronic migraine"]),
    ("Comorbidities include heart failure with reduced ejection fraction; he is otherwise well.",
     ["heart failure with reduced ejection fraction"]),
    ("He is known to have polymyalgia rheumatica and a hiatus hernia.", ["polymyalgia rheumatica", "hiatus hernia"]),
    # held-out letters: a condition said to be long held
    ("She has longstanding hypertension and type 2 diabetes, and had a left total hip replacement in 2019.",
     ["hypertension", "type 2 diabetes"]),
    ("He has long-standing atrial fibrillation on warfarin.", ["atrial fibrillation"]),
    ("She has established chronic kidney disease stage 3b.", ["chronic kidney disease stage 3b"]),
    ("Mr Taufa has established type 2 diabetes and long-standing gout.", ["type 2 diabetes", "long-standing gout"]),
    # a plain "has" before a condition the workbench knows by name; only such items
    ("Mrs Okafor has chronic kidney disease stage 3b and atrial fibrillation.",
     ["chronic kidney disease stage 3b", "atrial fibrillation"]),
    ("He also has COPD, hypothyroidism and a DVT in 2021.", ["COPD", "hypothyroidism", "DVT"]),
    ("She has hypertension and walks daily.", ["hypertension"]),
    ("Both of her brothers have CKD.", ["CKD"]),  # whose it is: the context policy's to say
    # how a referral introduces its patient: "a 65 year old man with ..."; named conditions only
    ("Thank you for seeing Mr Fenwick-Arden, a 65 year old man with type 2 diabetes and chronic kidney disease "
     "stage 3b, who I am referring for review.", ["type 2 diabetes", "chronic kidney disease stage 3b"]),
    ("I saw Ms Adeyemi, a 59-year-old woman with atrial fibrillation and hypertension, today.",
     ["atrial fibrillation", "hypertension"]),
    ("Mrs Bell is an 81 yo female with heart failure on furosemide.", ["heart failure"]),
    ("This 47 yr old patient with a swollen left calf and a DVT in 2019 was seen.", ["DVT"]),
    # Common conditions beyond the medication indications (conditions.json), written after a held-out
    # letter's "and also has gout and obstructive sleep apnoea" was read as nothing.
    ("She was diagnosed with angina in 2020 and has osteoarthritis and OSA, for which she uses CPAP.",
     ["angina", "osteoarthritis", "OSA"]),
    ("Mr Ngata is a 70 year old man with COPD and gout.", ["COPD", "gout"]),
    # a name kept with its apostrophe or hyphen as spaces still matches as printed (it never had)
    ("He also has Parkinson’s disease and gastro-oesophageal reflux disease.",
     ["Parkinson’s disease", "gastro-oesophageal reflux disease"]),
])
def test_problems_after_a_cue(sentence, expected):
    assert told(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "She has been well until last month.",
    "I would be grateful for your advice on her management.",
    "He takes ramipril 5 mg daily.",
    "They have established care with a new practice.",
    "The practice has established a weekly clinic.",
    "The ward has a heart failure nurse specialist.",
    "She has pad changes twice a day.",  # an abbreviation counts only in capitals
    "He has had chest pain on exertion.",
    "She has a heart failure nurse who visits weekly.",
    "Who has heart failure in the family?",  # a question asks, it tells nobody's condition
    "A 40 year old woman with a two-week cough and fever.",  # nothing named as a condition
    "He brought his 12-year-old son with a note from school.",
    "She has anxiety about the operation.",  # a feeling, not the disorder
    "The practice referred him and has asthma nurses.",
])
def test_sentences_that_list_no_problem(sentence):
    assert told(sentence) == []


def test_a_negated_history_is_read_for_the_context_policy_to_judge():
    # "no history of" is a negation trigger of the context policy; the reader only finds the words.
    sentence = "There is no past history of epilepsy or head injury."
    assert told(sentence) == ["epilepsy", "head injury"]


# Numbered assessment items, in phrasings written after the rule.
@pytest.mark.parametrize("sentence, expected", [
    ("1) Hypothyroidism - TSH today; continue levothyroxine.", ["Hypothyroidism"]),
    ("2. CHF: euvolemic on exam, continue furosemide.", ["CHF"]),
    ("3. Type 1 diabetes mellitus, pump settings reviewed.", ["Type 1 diabetes mellitus"]),
    ("(4) Hypercholesterolaemia - diet only", ["Hypercholesterolaemia"]),
    ("10. GERD", ["GERD"]),
])
def test_a_numbered_assessment_item_opens_with_its_problem(sentence, expected):
    assert [p.description.text for p in problems_in(sentence)] == expected


@pytest.mark.parametrize("sentence", [
    "1. Diabetes education booked with the practice nurse.",
    "2) Asthma action plan given.",
    "3. Metformin 500 mg twice daily.",
    "4. htn follow-up in clinic",  # an abbreviation counts only in capitals
    "Page 2. Hypertension clinic address",
])
def test_a_numbered_item_about_something_else_names_no_problem(sentence):
    assert problems_in(sentence) == []


@pytest.mark.parametrize("sentence, expected", [
    ("She has a history of asthma since childhood, poorly controlled.", ["asthma"]),
    ("PMH: epilepsy, in remission, and psoriasis", ["epilepsy", "psoriasis"]),
    ("Background of stable angina and untreated hypertension.", ["stable angina", "untreated hypertension"]),
])
def test_a_state_after_a_condition_is_no_condition_of_its_own(sentence, expected):
    assert [p.description.text for p in problems_in(sentence)] == expected
