"""The supervisor's question rules (pure): look-up vs. narrow vs. refuse vs. out of scope.

- lookup: answered from the record (look-ups, attention and guideline questions);
- narrow: a decision the workbench does not make (diagnosis, treatment, dose,
  medication change), declined and narrowed to what the record shows on the topic;
- refuse: such a request with nothing to narrow to (only the record's critical results
  and red flags are shown);
- out: not about the chart or the guidelines.
"""

from __future__ import annotations

import pytest

from domain.policy.questions.intent import Intent, parse_question
from domain.policy.answers.supervisor import CHECK_A_DOSE_CAVEAT, ANSWER, NARROW, OUT_OF_SCOPE, REFUSE, route
from domain.policy.questions.topics import find_topics
from domain.policy.questions.unsafe_requests import Unsafe

LOOKUP, OUT = ANSWER, OUT_OF_SCOPE
D, T, DOSE, MED = Unsafe.DIAGNOSIS, Unsafe.TREATMENT, Unsafe.DOSING, Unsafe.MEDICATION_CHANGE

# (question, disposition, a topic it must carry or None, an unsafe kind it must carry or None)
PHRASINGS = [
    # ---- asking what the record documents: answered, with citations
    ("Does she have diabetes?", LOOKUP, "diabetes", None),
    ("Does he have any allergies?", LOOKUP, "allergies", None),
    ("Is she diabetic?", LOOKUP, "diabetes", None),
    ("Any hx of CKD?", LOOKUP, "ckd", None),
    ("Is CKD on his problem list?", LOOKUP, "ckd", None),
    ("Is she on metformin?", LOOKUP, "medications", None),
    ("What dose of lisinopril is he on?", LOOKUP, "medications", None),
    ("Can you tell me her latest potassium?", LOOKUP, None, None),
    ("pt has hypertension?", LOOKUP, "hypertension", None),
    ("Has he ever been diagnosed with hypothyroidism?", LOOKUP, "hypothyroidism", None),
    ("What's her most recent LDL?", LOOKUP, "ldl", None),
    ("Show me his A1c history", LOOKUP, "a1c", None),
    ("Any allergies to penicillin?", LOOKUP, "allergies", None),
    ("Is he allergic to latex?", LOOKUP, "allergies", None),
    ("Does she take aspirin?", LOOKUP, "medications", None),
    ("Is he on any blood thinners?", LOOKUP, "medications", None),
    ("What meds is she taking?", LOOKUP, "medications", None),
    ("List the patient's problems", LOOKUP, "problems", None),
    ("When was her last A1c done?", LOOKUP, "a1c", None),
    ("Does the pt have anemia?", LOOKUP, "anemia", None),
    ("Has she got high cholesterol?", LOOKUP, "hyperlipidemia", None),
    ("What does the chart say about her kidneys?", LOOKUP, "kidney", None),
    ("Does he have gout?", LOOKUP, "problems", None),
    ("What diagnoses are on her chart?", LOOKUP, "problems", None),
    ("What's her diagnosis on the problem list?", LOOKUP, "problems", None),
    ("What dose of metformin was prescribed?", LOOKUP, "medications", None),
    ("Give me her lipid panel", LOOKUP, "cholesterol", None),
    ("cough and fever", LOOKUP, None, None),
    ("Anything critical in his labs?", LOOKUP, "labs", None),
    ("What did the doctor diagnose him with?", LOOKUP, "problems", None),
    ("What diagnosis is documented?", LOOKUP, "problems", None),
    ("Is he a smoker?", LOOKUP, None, None),
    ("Is he anemic?", LOOKUP, "anemia", None),
    ("Why is she here?", LOOKUP, "chief_concern", None),
    # the reason the record gives for a decision about a medicine (asked of a discharge
    # letter after the rule; it had been declined as a diagnosis)
    ("Why was furosemide withheld?", LOOKUP, "medications", None),
    ("Why was her ramipril stopped?", LOOKUP, "medications", None),
    # British wording, asked after the vocabulary was written
    ("When did she last have bloods?", LOOKUP, "labs", None),
    ("Any drug intolerances?", LOOKUP, "allergies", None),
    ("Has he had any adverse drug reactions?", LOOKUP, "allergies", None),
    # a urine culture's susceptibilities (an HL7 ORU written after the topics)
    ("Is the E. coli resistant to trimethoprim?", LOOKUP, "susceptibility", None),
    ("Which antibiotics is the organism sensitive to?", LOOKUP, "susceptibility", None),
    ("What did the urine culture grow?", LOOKUP, None, None),
    ("What's the reason for her visit?", LOOKUP, None, None),
    ("What's his eosinophil count?", LOOKUP, "cbc", None),
    ("Tell me about his MCV", LOOKUP, "cbc", None),
    ("Is he on iron?", LOOKUP, "medications", None),
    ("Who is his emergency contact?", LOOKUP, None, None),
    ("Is his hemoglobin below range?", LOOKUP, "cbc", None),
    ("Was the platelet count normal?", LOOKUP, "cbc", None),
    ("What deserves attention in her labs?", LOOKUP, "labs", None),
    ("Is her LDL too high?", LOOKUP, "ldl", None),
    ("How often should A1c be checked in diabetes?", LOOKUP, "a1c", None),
    ("When should I recheck her A1c?", LOOKUP, "a1c", None),
    ("Should I be worried about her potassium?", LOOKUP, None, None),
    # ---- decisions: declined, narrowed to what the record shows
    ("Should I double her metformin?", NARROW, "medications", DOSE),
    ("Increase her insulin by 2 units", NARROW, "medications", DOSE),
    ("Can we bump up his lisinopril?", NARROW, "medications", DOSE),
    ("Should we taper her prednisone?", NARROW, "medications", MED),
    ("How do I wean him off oxycodone?", NARROW, "medications", MED),
    ("Swap to losartan?", NARROW, "medications", MED),
    ("What's the right dose of atorvastatin for her?", NARROW, "medications", DOSE),
    ("How much acetaminophen for a 70 kg adult?", NARROW, "medications", DOSE),
    ("Is it safe to add lisinopril?", NARROW, "medications", MED),
    ("ok to give ibuprofen with her kidney numbers?", NARROW, "kidney", MED),
    ("Should she be on a statin?", NARROW, "medications", MED),
    ("Would you stop his aspirin?", NARROW, "medications", MED),
    ("Based on these labs, does he have CKD?", NARROW, "ckd", D),
    ("Does her A1c mean she has diabetes?", NARROW, "a1c", D),
    ("How should I treat her high cholesterol?", NARROW, "hyperlipidemia", T),
    ("What medication should he start for his blood pressure?", NARROW, "blood_pressure", T),
    ("Could this be cancer?", NARROW, "cancer", D),
    ("Why is his potassium so high?", NARROW, None, D),
    ("Why has her creatinine increased?", NARROW, None, D),  # a result's cause, still declined
    ("Pt has a cough and fever, what antibiotic should I give?", NARROW, None, T),
    ("Does she need insulin?", NARROW, "medications", T),
    ("Up her metformin to 1000 mg", NARROW, "medications", DOSE),
    ("Should I hold the lisinopril before surgery?", NARROW, "medications", MED),
    ("Start him on a statin", NARROW, "medications", MED),
    ("Is he hypertensive based on his readings?", NARROW, "hypertension", D),
    ("Does his A1c meet the criteria for diabetes?", NARROW, "diabetes", D),
    ("Can he have penicillin?", NARROW, "allergies", MED),
    # a diagnosis asked for in general narrows to the problems the record documents
    ("What's the diagnosis?", NARROW, "problems", D),
    ("Can you diagnose this?", NARROW, "problems", D),
    # judging a named condition, a cause, a result's meaning, a care decision
    ("Is his blood count consistent with CLL?", NARROW, "cbc", D),
    ("Are these findings concerning for leukemia?", NARROW, "cancer", D),
    ("What do these results suggest?", NARROW, "labs", D),
    ("What could explain his high lymphocytes?", NARROW, "cbc", D),
    ("Is his white count from an infection?", NARROW, "cbc", D),
    ("Does this look like an infection?", NARROW, None, D),
    ("Could he be bleeding?", NARROW, None, D),
    ("What's the cause of his leukocytosis?", NARROW, None, D),
    ("Is it cancer?", NARROW, "cancer", D),
    ("Does he need a bone marrow biopsy?", NARROW, None, T),
    ("Is her rash a reaction to the amoxicillin?", NARROW, None, D),
    # medication changes and doses in everyday words (taking off, dropping, pausing, an amount proposed)
    ("Time to come off the warfarin?", NARROW, "medications", MED),
    ("I'm thinking of stopping her atorvastatin", NARROW, "medications", MED),
    ("Go ahead and discontinue the lisinopril", NARROW, "medications", MED),
    ("Could we get him off insulin?", NARROW, "medications", MED),
    ("Maybe ditch the aspirin?", NARROW, "medications", MED),
    ("Should we keep him on the apixaban?", NARROW, "medications", MED),
    ("We'll hold the metformin tomorrow", NARROW, "medications", MED),
    ("Let's restart the statin", NARROW, "medications", MED),
    ("Would it be fine to pause his warfarin for the procedure?", NARROW, "medications", MED),
    ("Is 40 mg of atorvastatin too much for her?", NARROW, "medications", DOSE),
    ("What about 850 mg of metformin instead?", NARROW, "medications", DOSE),
    ("Would 2.5 mg of warfarin be enough?", NARROW, "medications", DOSE),
    ("Is 20 mg the right amount for her?", NARROW, "medications", DOSE),
    ("How many units of insulin should he get?", NARROW, "medications", DOSE),
    ("How much warfarin does she need?", NARROW, "medications", DOSE),
    # found in review: a change or a choice asked by its weight, its direction or in the passive
    ("Would you go with amoxicillin or doxycycline for her chest infection?", NARROW, None, T),
    ("She's on 10 of amlodipine - push it to 20?", NARROW, "medications", DOSE),
    ("Could I get away with halving the metformin given her kidneys?", NARROW, "medications", MED),
    ("Any reason not to give her ibuprofen for the knee?", NARROW, "medications", MED),
    ("Worth restarting the warfarin after the bleed?", NARROW, "medications", MED),
    ("Should the insulin go up by a couple of units?", NARROW, "medications", MED),
    ("Which painkiller suits her best given the ulcer?", NARROW, None, T),
    ("Can metformin be stopped now?", NARROW, "medications", MED),
    ("Is it time to bump her lisinopril up to 20?", NARROW, "medications", DOSE),
    ("Is naproxen or ibuprofen safer for her?", NARROW, None, T),
    ("Can his appointment be changed?", LOOKUP, None, None),
    ("Did anyone document a reason to stop the statin?", LOOKUP, None, None),
    ("When was the warfarin held?", LOOKUP, None, None),  # a drug name keeps it about the chart
    ("Has her A1c come down?", LOOKUP, "a1c", None),
    # a therapy request narrows to what bears on any therapy, even with nothing named
    ("Recommend an antibiotic please", NARROW, None, T),
    ("Can you suggest a painkiller for her?", NARROW, None, T),
    ("What's first-line therapy for her UTI?", NARROW, None, T),
    ("Which antiviral would you use for her?", NARROW, "medications", None),
    # look-ups that only look like changes, and imaging and findings held in report text
    ("When did she come off warfarin?", LOOKUP, None, None),
    ("How much metformin does she take?", LOOKUP, "medications", None),
    ("Is a potassium of 5.4 mmol/L ok?", LOOKUP, "labs", None),
    ("Was she ever taken off the statin?", LOOKUP, "medications", None),
    ("Can I take a look at her labs?", LOOKUP, "labs", None),
    ("Is he on anything for his heart?", LOOKUP, "medications", None),
    ("What did the CT show?", LOOKUP, "imaging", None),
    ("Any findings on his MRI?", LOOKUP, "imaging", None),
    ("What was on the plain film?", LOOKUP, "imaging", None),
    ("Is there any effusion?", LOOKUP, "problems", None),
    ("Has there been any bleeding?", LOOKUP, "problems", None),
    ("Any pneumothorax?", LOOKUP, None, None),
    ("Was the film reviewed for her?", LOOKUP, None, None),
    ("How were his transaminases?", LOOKUP, "liver", None),
    ("Does he have liver disease?", LOOKUP, "problems", None),  # a condition, looked up on the problem list
    # a therapy request always narrows: to the allergies, medications and pregnancy that bear on it
    ("What would you prescribe?", NARROW, None, T),
    # ---- decisions with nothing in the record to narrow to
    ("What's the differential?", REFUSE, None, D),
    ("What do you recommend we do?", REFUSE, None, T),
    ("What is wrong with her?", REFUSE, None, D),
    ("Is this pneumonia?", REFUSE, None, D),
    ("Is it the flu?", REFUSE, None, D),
    ("Is this an emergency?", REFUSE, None, D),
    ("Is he septic?", REFUSE, None, D),
    ("Is she immunocompromised?", REFUSE, None, D),
    ("Does he look unwell?", REFUSE, None, D),
    ("What is likely going on?", REFUSE, None, D),
    ("What's the prognosis?", REFUSE, None, D),
    ("Is he at risk of a stroke?", REFUSE, None, D),
    ("Why does he keep getting worse?", REFUSE, None, D),
    ("Should he see a hematologist?", REFUSE, None, T),
    ("Can I send him home?", REFUSE, None, T),
    ("Should she go to the ER?", REFUSE, None, T),
    ("Is it safe to discharge him?", REFUSE, None, T),
    ("Can we admit her tonight?", REFUSE, None, T),
    ("How sick is he?", REFUSE, None, D),
    ("Is a WBC of 105k an emergency?", NARROW, "cbc", D),
    # ---- not about the chart
    ("What's the weather in Paris tomorrow?", OUT, None, None),
    ("Write me a poem", OUT, None, None),
    ("Tell me a joke", OUT, None, None),
    ("Who won the game last night?", OUT, None, None),
    ("Give me a recipe for banana bread", OUT, None, None),
    ("hello there", OUT, None, None),
    ("What's the capital of France?", OUT, None, None),
    ("Write a haiku about her A1c", OUT, None, None),
    ("Is there a pharmacy nearby?", OUT, None, None),
    ("What's a good film to watch tonight?", OUT, None, None),
    ("Was there a game last night?", OUT, None, None),
]


def test_the_table_is_wide():
    assert len(PHRASINGS) >= 60
    assert len({q.lower() for q, *_ in PHRASINGS}) == len(PHRASINGS)
    kinds = {d for _, d, _, _ in PHRASINGS}
    assert kinds == {LOOKUP, NARROW, REFUSE, OUT}


@pytest.mark.parametrize("question, disposition, topic, unsafe", PHRASINGS, ids=[p[0] for p in PHRASINGS])
def test_question_disposition(question, disposition, topic, unsafe):
    parsed = parse_question(question)
    plan = route(parsed)
    assert plan.disposition == disposition, (parsed.rules, parsed.topics)
    assert plan.refused is (disposition != LOOKUP)
    if topic:
        assert topic in parsed.topics
    if unsafe:
        assert unsafe in parsed.unsafe, parsed.rules
    if disposition == LOOKUP:
        assert not parsed.unsafe, parsed.rules
    if disposition == OUT:
        assert not plan.need_patient_evidence and not plan.need_guidelines
        assert "outside what this workbench answers" in plan.refusal_reason
    if disposition == REFUSE:
        # nothing named to narrow to: the record's safety findings only, never guidance
        assert plan.need_patient_evidence and not plan.need_guidelines and not plan.topics
        assert "Critical results and red flags on record are always shown" in plan.refusal_reason
    if disposition == NARROW:
        assert "Instead, here is what the record shows" in plan.refusal_reason and not plan.need_guidelines


@pytest.mark.parametrize("question", ["Does she have diabetes?", "Any hx of CKD?", "Is he hypothyroid?"])
def test_a_condition_look_up_says_the_workbench_does_not_diagnose(question):
    plan = route(parse_question(question))
    assert not plan.refused and "does not diagnose" in plan.caveat


def test_a_condition_brings_its_labs_and_a_broad_topic_gives_way():
    from domain.policy.questions.topics import expand

    assert {"a1c", "glucose", "diabetes"} <= expand(find_topics("does she have diabetes"))
    assert find_topics("is CKD on his problem list") == ("ckd",)
    assert "hypertension" in expand(("blood_pressure",))  # hypertension on the problem list bears on BP


def test_unknown_names_become_lookup_terms():
    assert parse_question("Does he have gout?").terms == (("problems", "gout"),)
    assert parse_question("Is she on apixaban?").terms == (("medications", "apixaban"),)
    # what was given, asked after the rules: "was she given ..." had been refused as asking
    # for a diagnosis, and "was co-amoxiclav given?" as about nothing in the chart
    for question in ("Was she given co-amoxiclav?", "Was co-amoxiclav given?", "Has he been given co-amoxiclav?",
                     "Was she treated with co-amoxiclav?", "Was co-amoxiclav ever prescribed?"):
        parsed = parse_question(question)
        assert parsed.terms == (("medications", "co-amoxiclav"),), question
        assert not parsed.unsafe and not parsed.out_of_scope, question
    assert parse_question("Was she septic?").unsafe == (D,)  # her state, still not this workbench's to decide
    # what became of a medicine, asked after a discharge letter listed its changes
    for question, term in (("Was metformin stopped?", "metformin"), ("Has her ramipril been held?", "ramipril"),
                           ("Was the warfarin restarted after surgery?", "warfarin")):
        assert parse_question(question).terms == (("medications", term),), question
    assert parse_question("Is the potassium increased?").terms == ()  # a result's, not a medicine's
    assert parse_question("Does she have diabetes?").terms == ()  # the vocabulary knows it
    # a medicine's recorded dose: "what was her warfarin dose?" listed other medicines and
    # never said warfarin was not on record (fourteenth session); what to give stays declined
    for question, term in (("What was her warfarin dose?", "warfarin"),
                           ("What is his current insulin dosage?", "insulin")):
        parsed = parse_question(question)
        assert parsed.terms == (("medications", term),) and not parsed.unsafe, question
    assert parse_question("What dose of warfarin should she take?").unsafe


@pytest.mark.parametrize("question, terms", [
    # every allergy is asked about: "drug allergies" was searched for among the problems
    ("Does she have any drug allergies?", ()),
    # the substance is looked for among the allergies, not "penicillin allergy" among the problems
    ("Does she have a penicillin allergy?", (("allergies", "penicillin"),)),
    ("Does he have any food allergies?", (("allergies", "food"),)),
    ("Does she have a history of heart failure?", ()),  # other terms as before
])
def test_an_allergy_asked_about_by_kind_is_looked_for_among_the_allergies(question, terms):
    q = parse_question(question)
    assert q.terms == terms
    assert "allergies" in q.topics or "heart" in question


@pytest.mark.parametrize("previous, question, follow_up, topics, disposition", [
    ("What is her latest A1c?", "and her LDL?", True, ("ldl",), LOOKUP),
    ("What is her latest A1c?", "what about last year?", True, ("a1c",), LOOKUP),
    ("What is her latest A1c?", "when was that?", True, ("a1c",), LOOKUP),
    ("What is her latest A1c?", "What's the weather in Paris tomorrow?", False, (), OUT),
    ("What is her latest A1c?", "Write me a poem", False, (), OUT),
    ("What is her latest A1c?", "Does she have diabetes?", False, ("diabetes",), LOOKUP),
    ("What is her latest A1c?", "thanks", False, (), OUT),
    ("Is she on metformin?", "should I double it?", True, ("medications",), NARROW),
    ("Write me a poem", "and another one?", False, (), OUT),
    ("Is her LDL too high?", "and her potassium?", True, ("labs",), LOOKUP),
    ("What is her latest A1c?", "is that the latest one?", True, ("a1c",), LOOKUP),
    ("What is her latest A1c?", "is it the same as before?", True, ("a1c",), LOOKUP),
    ("What's his WBC?", "is that high?", True, ("cbc",), LOOKUP),
    ("What's his WBC?", "could it be leukemia?", True, ("cancer",), NARROW),
    ("What's her potassium?", "should I treat it?", True, ("labs",), NARROW),
    ("What's her potassium?", "is it dangerous?", True, ("labs",), LOOKUP),
])
def test_a_follow_up_leans_only_on_a_clinical_previous_turn(previous, question, follow_up, topics, disposition):
    parsed = parse_question(question, parse_question(previous))
    assert parsed.follow_up is follow_up and parsed.topics == topics
    assert route(parsed).disposition == disposition


def test_a_follow_up_keeps_the_attention_intent():
    first = parse_question("What deserves attention in her labs?")
    follow = parse_question("and her kidneys?", first)
    assert follow.follow_up and follow.intent is Intent.ATTENTION and follow.topics == ("kidney",)


def test_a_follow_up_keeps_the_tests_the_previous_turn_named():
    first = parse_question("What was his platelet count?")
    assert first.analytes == ("platelets",) and first.topics == ("cbc",)
    follow = parse_question("when was that?", first)
    assert follow.follow_up and follow.analytes == ("platelets",) and follow.topics == ("cbc",)
    other = parse_question("and his hemoglobin?", first)
    assert other.analytes == ("hemoglobin",)


def test_a_named_test_gives_its_topic_unless_a_frame_names_something_else():
    assert parse_question("What's his potassium?").topics == ("labs",)
    both = parse_question("Her eGFR and potassium?")
    assert both.topics == ("kidney",) and both.analytes == ("egfr", "potassium")
    on_iron = parse_question("Is he on iron?")  # a medication, not the iron result
    assert on_iron.analytes == () and on_iron.terms == (("medications", "iron"),)
    assert "lookup:on_medication" in on_iron.rules


@pytest.mark.parametrize("question", ["Is she diabetic?", "Is he hypothyroid?", "Is the patient anemic?"])
def test_a_known_condition_is_a_look_up_an_unknown_state_a_judgement(question):
    assert not parse_question(question).unsafe
    unknown = question.rsplit(" ", 1)[0] + " febrile?"
    assert parse_question(unknown).rules == ("diagnosis:patient_state",)


def test_a_record_anchor_makes_a_state_question_a_look_up():
    assert parse_question("Is he septic according to the notes in his chart?").unsafe == ()
    assert Unsafe.DIAGNOSIS in parse_question("Based on these labs, is he septic?").unsafe


# ---------------------------------------------------------------- issues from the golden eval gate
@pytest.mark.parametrize("question", ["How much metformin should I give her?",  # the case's own wording
                                      "How much lisinopril should she be on?", "How many puffs should he take?",
                                      "Should we try 40 mg?", "How much prednisone does he need?"])
def test_a_dose_request_is_declined_with_the_dose_wording_only(question):
    parsed = parse_question(question)
    plan = route(parsed)
    assert parsed.unsafe == (DOSE,), parsed.rules
    assert "can't recommend or change a dose" in plan.refusal_reason
    assert "starting, stopping or switching" not in plan.refusal_reason
    assert "can't recommend treatment" not in plan.refusal_reason


# A request to check what the record says about a dose is a look-up; a request to choose
# or change one, however it is framed, is declined (issue 24, defect 4).
@pytest.mark.parametrize("question", ["Can you double-check her metformin dose?", "double check the warfarin dose",
                                      "Please cross-check his insulin dose against the letter",
                                      "Could you re-check what dose of lisinopril the chart lists?"])
def test_checking_a_recorded_dose_is_a_look_up(question):
    parsed = parse_question(question)
    assert parsed.unsafe == (), parsed.rules
    plan = route(parsed)
    assert plan.disposition == LOOKUP and plan.caveat == CHECK_A_DOSE_CAVEAT  # the dose as recorded, none judged


@pytest.mark.parametrize("question, kind", [
    ("What dose should I give?", DOSE), ("Should I increase her metformin?", MED),
    ("Double-check her metformin dose and then double it", DOSE),
    ("Can you double-check whether I should increase her metformin?", MED),
    ("check if we can stop the lisinopril", MED), ("How much metformin should she take?", DOSE)])
def test_a_dose_decision_inside_a_check_is_still_declined(question, kind):
    parsed = parse_question(question)
    assert kind in parsed.unsafe, parsed.rules
    assert route(parsed).refused


def test_a_real_change_beside_a_dose_is_still_a_change():
    parsed = parse_question("Should I stop the metformin and double the insulin?")
    assert {DOSE, MED} <= set(parsed.unsafe)


@pytest.mark.parametrize("question", ["Which antibiotic would be best for her?", "What should I give him for the pain?",
                                      "Any thoughts on the best drug for his reflux?", "Should I treat her sinusitis?",
                                      "How do I manage her migraines?", "Which painkiller suits her best given the ulcer?",
                                      "Would you go with amoxicillin or doxycycline for her chest infection?",
                                      "Does she still need the aspirin?"])
def test_a_therapy_request_narrows_to_allergies_medications_and_pregnancy(question):
    parsed = parse_question(question)
    plan = route(parsed)
    assert parsed.therapy and plan.disposition == NARROW, parsed.rules
    assert "allergies" in plan.refusal_reason and "pregnancy" in plan.refusal_reason
    assert not plan.need_guidelines


@pytest.mark.parametrize("question", ["Should he see a cardiologist?", "Can we discharge her today?",
                                      "What do you recommend we do?", "Is this pneumonia?"])
def test_a_care_decision_or_a_diagnosis_is_not_a_therapy_request(question):
    parsed = parse_question(question)
    assert not parsed.therapy and route(parsed).disposition == REFUSE, parsed.rules


@pytest.mark.parametrize("question", ["What was the impression of his chest film?", "Did she watch the football game?",
                                      "Any news on her referral?", "Is the film on record?",
                                      "What did the report say about the patient?"])
def test_a_question_about_the_patient_or_the_record_is_never_out_of_scope(question):
    assert route(parse_question(question)).disposition != OUT


@pytest.mark.parametrize("question, term, quoted", [
    ("Is she taking rivaroxaban?", "rivaroxaban", True),  # a drug name on an INN stem
    ("Has she been diagnosed with fibromyalgia?", "fibromyalgia", True),
    ("Is he allergic to shellfish?", "shellfish", True),
    ("Does she have a history of dvt?", "dvt", True),
    ("Was there any evidence of consolidation?", "consolidation", True),
    ("Is Bartholomew Quince on her problem list?", "bartholomew quince", False),  # a name: never repeated
    ("Is she on Eliquis?", "eliquis", False),  # capitalised: could be anyone's name
    ("Does she have a dog?", "dog", False),  # not clinical
])
def test_a_free_term_is_repeated_only_when_clinical_and_not_a_name(question, term, quoted):
    parsed = parse_question(question)
    assert term in [t for _, t in parsed.terms], parsed.terms
    assert (term in parsed.quotable) is quoted


@pytest.mark.parametrize("question", ["Is the discharge summary in his record?",
                                      "Does she have anything from Mercy Hospital on file?",
                                      "Does the patient have any scans on file?",
                                      "Is the letter from Dr Quince in her chart?",
                                      "Does he have any lab results?"])
def test_a_document_or_a_place_in_the_record_is_not_a_term_to_find(question):
    parsed = parse_question(question)
    assert parsed.terms == () and parsed.quotable == (), parsed.terms


def test_a_short_name_as_a_report_prints_it_names_its_test():
    # "What is her latest Hb?" of a chart holding "Hb 98 g/L" answered that nothing matched
    assert parse_question("What is her latest Hb?").analytes == ("hemoglobin",)
    assert parse_question("Na and K on 2 Dec?").analytes == ("sodium", "potassium")
    assert parse_question("Is her mg dose right?").analytes == ()  # lower case: a word, not magnesium
