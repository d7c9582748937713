"""What evidence an answer includes and in which order (pure): topics of an item,
how a mention was meant, red flags, lab series for attention answers."""

from __future__ import annotations

import pytest

from domain.models import Citation, ClinicalContext, EvidenceItem
from domain.policy.answers.lab_series import attention_order, build_series, lookup_order, trend_text
from domain.policy.answers.relevance import context_of, raises_red_flag, relevant, safety_finding, with_context
from domain.policy.questions.topics import primary_topic, topics_of

DENIED = ClinicalContext(negated=True, triggers=("denies",))
FAMILY = ClinicalContext(experiencer="family", triggers=("mother",))
HYPOTHETICAL = ClinicalContext(temporality="hypothetical", triggers=("return if",))
HISTORICAL = ClinicalContext(temporality="historical", triggers=("history of",))


@pytest.mark.parametrize("fact_type, text, context, counts", [
    ("problem", "History: Type 2 diabetes", None, True),
    ("problem", "Type 2 diabetes mellitus (E11.9)", HISTORICAL, True),  # past history is still hers
    ("problem", "Denies diabetes", DENIED, False),
    ("other", "Mother has diabetes", FAMILY, False),
    ("other", "Call if sugars run high or diabetes symptoms appear", HYPOTHETICAL, False),
    ("family_history", "Family history: Mother - type 2 diabetes", None, False),
])
def test_a_condition_is_the_patients_only_when_affirmed_and_hers(fact_type, text, context, counts):
    assert ("diabetes" in topics_of(fact_type, {}, text, context)) is counts


def test_a_condition_question_takes_problems_and_related_labs():
    assert relevant(topics_of("lab_result", {"test_name": "Hemoglobin A1c"}, ""), ("diabetes",))
    assert relevant(topics_of("problem", {}, "Problem: DM2 (E11.9)"), ("diabetes",))
    assert not relevant(topics_of("lab_result", {"test_name": "Potassium"}, ""), ("diabetes",))


def test_a_referrals_provider_or_clinic_names_a_specialty_not_a_topic():
    # "Acute Medicine" made the receiving consultant a finding of every medication answer
    provider = topics_of("referral", {"field": "receiving_provider", "value": "Dr H. Lindqvist, Acute Medicine"},
                         "Referral receiving provider: Dr H. Lindqvist, Acute Medicine")
    assert "medications" not in provider
    reason = topics_of("referral", {"field": "reason", "value": "review of her metformin"},
                       "Referral reason: review of her metformin")
    assert "medications" in reason


def test_the_item_text_says_how_a_mention_was_meant():
    assert with_context("Chest pain", DENIED) == "Chest pain (denied)"
    # a drug the letter says was avoided was not "denied" (written after the tag words)
    assert with_context("Medication: co-amoxiclav", DENIED, "medication") == (
        "Medication: co-amoxiclav (not given or not taken)")
    assert with_context("Medication: aspirin - patient does not take", DENIED, "medication") == (
        "Medication: aspirin - patient does not take")
    assert with_context("Problem: asthma", HISTORICAL) == "Problem: asthma (historical)"
    # a medicine whose own status says it is not taken needs no vaguer "(historical)"
    assert with_context("Medication: Ramipril 5 mg (STOPPED)", HISTORICAL, "medication", status="STOPPED") == (
        "Medication: Ramipril 5 mg (STOPPED)")
    assert with_context("Medication: Furosemide 40 mg (withheld)", HISTORICAL, "medication", status="withheld") == (
        "Medication: Furosemide 40 mg (withheld)")
    assert with_context("Medication: Aspirin 75 mg (new)", HISTORICAL, "medication", status="new") == (
        "Medication: Aspirin 75 mg (new) (historical)")
    family = context_of("family_history", None)
    assert family.experiencer == "family"
    assert with_context("Family history: Father - heart disease", family) == "Family history: Father - heart disease"
    assert context_of("problem", {"negated": True}).negated and context_of("problem", None) is None


@pytest.mark.parametrize("context", [DENIED, FAMILY, HYPOTHETICAL])
def test_a_stored_context_silences_a_red_flag(context):
    assert raises_red_flag("Chest pain when climbing stairs", None) == "chest pain"
    assert raises_red_flag("Chest pain when climbing stairs", context) is None


def _lab(n, name, value, flag, date, topic="labs"):
    cit = Citation(source_type="lab_pdf", source_id=f"documents:{n}", page_or_section="page 1",
                   field_or_chunk_id=f"results[{n}]", quote_or_value=f"{name} {value}")
    return EvidenceItem(evidence_id=f"fact:{n}", kind="document_fact", fact_type="lab_result", topic=topic,
                        text=f"{name} {value}", citations=[cit], date=date,
                        structured={"test_name": name, "value": value, "unit": "u", "abnormal_flag": flag})


def test_attention_order_is_critical_then_recent_and_grouped_by_topic():
    items = [
        _lab(1, "LDL Cholesterol", "150", "high", "2026-01-05", "ldl"),
        _lab(2, "Hemoglobin A1c", "8.1", "high", "2026-03-01", "a1c"),
        _lab(3, "Potassium", "6.9", "critical_high", "2025-11-01"),
        _lab(4, "HDL Cholesterol", "35", "low", "2026-02-01", "hdl"),
        _lab(5, "Glucose", "140", "high", "2025-12-01", "glucose"),
        _lab(6, "LDL Cholesterol", "170", "high", "2025-06-01", "ldl"),
    ]
    ordered = [s.test_name for s in attention_order(build_series(items))]
    # the critical result first even though older; A1c (newest) pulls glucose next to it;
    # then the lipids together, newest first.
    assert ordered == ["Potassium", "Hemoglobin A1c", "Glucose", "HDL Cholesterol", "LDL Cholesterol"]
    ldl = next(s for s in build_series(items) if s.test_name == "LDL Cholesterol")
    assert ldl.latest.structured["value"] == "150" and trend_text(ldl) == "previous 170 u on 2025-06-01 (high)"


def test_every_critical_result_leads_before_any_groups_abnormal_ones():
    # A held-out chart: a critical potassium came after the abnormal lipids that a
    # critical triglyceride's group brought along.
    items = [
        _lab(1, "Triglyceride", ">10.0", "critical_high", "2026-12-03", "cholesterol"),
        _lab(2, "HDL Cholesterol", "0.9", "low", "2026-12-03", "hdl"),
        _lab(3, "Cholesterol", "6.8", "high", "2026-12-03", "cholesterol"),
        _lab(4, "Potassium", "6.4", "critical_high", "2026-12-03"),
        _lab(5, "Sodium", "133", "low", "2026-12-03"),
    ]
    ordered = [s.test_name for s in attention_order(build_series(items))]
    assert ordered[:2] == ["Triglyceride", "Potassium"] or ordered[:2] == ["Potassium", "Triglyceride"], ordered
    assert set(ordered[2:]) == {"HDL Cholesterol", "Cholesterol", "Sodium"}


def test_lookup_order_is_the_latest_test_first_and_each_series_newest_first():
    items = [_lab(1, "A1c", "8.4", "high", "2025-10-01", "a1c"), _lab(2, "A1c", "7.9", "high", "2026-04-10", "a1c"),
             _lab(3, "TSH", "2.1", "normal", "2025-01-01", "thyroid")]
    series = lookup_order(build_series(items))
    assert [s.test_name for s in series] == ["A1c", "TSH"]
    assert [i.structured["value"] for i in series[0].items] == ["7.9", "8.4"] and trend_text(series[1]) == ""


def test_synonyms_of_one_test_form_one_trend():
    items = [_lab(1, "HbA1c", "8.4", "high", "2025-10-01", "a1c"),
             _lab(2, "Hemoglobin A1c", "7.9", "high", "2026-04-10", "a1c")]
    series = build_series(items)
    assert len(series) == 1 and [i.structured["value"] for i in series[0].items] == ["7.9", "8.4"]


def test_a_negation_the_text_already_says_is_not_tagged_again():
    assert with_context("No known allergies reported", DENIED) == "No known allergies reported"


@pytest.mark.parametrize("test_name, loinc, unit, topic", [
    ("Leukocytes [#/volume] in Blood by Automated count", "6690-2", "10*3/uL", "cbc"),
    ("Hemoglobin [Mass/volume] in Blood", None, "g/dL", "cbc"),  # not hemoglobin A1c
    ("Hemoglobin A1c/Hemoglobin.total in Blood", "4548-4", "%", "a1c"),
    ("Neutrophils [#/volume] in Blood", None, "10*3/uL", "cbc"),
    ("Creatinine [Mass/volume] in Serum or Plasma", "2160-0", "mg/dL", "kidney"),
    ("Glucose [Mass/volume] in Urine", None, "mg/dL", "urine"),  # urine glucose is not the blood sugar
    ("Glucose (urine)", None, "", "urine"),  # as a urinalysis panel's result is named
    ("Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma", "1742-6", "U/L", "liver"),
    ("SGOT", None, "U/L", "liver"),
    ("Platelet morphology finding [Identifier] in Blood", None, None, "cbc"),  # unknown test: its name decides
])
def test_a_lab_result_gets_its_topic_from_its_canonical_analyte(test_name, loinc, unit, topic):
    value = {"test_name": test_name, "loinc": loinc, "unit": unit}
    assert primary_topic(topics_of("lab_result", value, test_name)) == topic


def test_safety_findings_are_critical_results_and_affirmed_red_flags():
    critical = _lab(1, "Potassium", "6.9", "critical_high", "2026-01-01")
    high = _lab(2, "Potassium", "5.4", "high", "2025-01-01")
    assert safety_finding(critical, critical.text, None) and not safety_finding(high, high.text, None)
    note = EvidenceItem(evidence_id="fact:9", kind="needs_review", fact_type="chief_concern", text="Chest pain",
                        citations=[])
    assert safety_finding(note, "Chest pain on exertion", None)
    assert not safety_finding(note, "Chest pain on exertion", DENIED)


# ---------------------------------------------------------------- text reports, therapy context, low results
def test_a_report_line_that_names_the_study_is_about_imaging():
    assert "imaging" in topics_of("other", {}, "Report text: Chest x-ray shows clear lungs")
    assert "imaging" in topics_of("problem", {}, "MRI lumbar spine: disc bulge at L4-5")
    assert "imaging" not in topics_of("other", {}, "Report text: approximately 20-25% pneumothorax persisting.")


def test_a_text_report_is_one_report_and_its_furniture_is_not_a_finding():
    from domain.policy.questions.topics import report_furniture, report_kinds

    lines = ["PATIENT NAME:", "DOE, JANE", "DATE:", "3/4/26", "EXAM:", "ULTRASOUND ABDOMEN", "FINDINGS:",
             "The gallbladder contains several small stones", "without wall thickening.", "IMPRESSION:",
             "Cholelithiasis.", "Read by: A. Radiologist", "Accession: 55XK0192", "ELECTRONIC SIGNATURE ON FILE",
             "7C2F99AB01E4"]
    assert report_kinds(lines) == {"imaging"}
    kept = [line for line, furniture in zip(lines, report_furniture(lines)) if not furniture]
    assert kept == ["ULTRASOUND ABDOMEN", "The gallbladder contains several small stones", "without wall thickening.",
                    "Cholelithiasis."]
    assert report_kinds(["Patient seen for follow-up.", "Doing well on current therapy."]) == set()


def test_allergies_medications_and_pregnancy_bear_on_a_therapy_request():
    from domain.policy.questions.intent import parse_question
    from domain.policy.answers.relevance import review_bears_on, therapy_context

    note = EvidenceItem(evidence_id="fact:3", kind="needs_review", fact_type="other",
                        text="Thinks she might be pregnant", citations=[])
    pregnancy = topics_of("other", {}, note.text)
    therapy = parse_question("Can you suggest a cough syrup for her?")
    assert therapy.therapy and therapy_context(pregnancy, therapy)
    assert review_bears_on(note, pregnancy, therapy, source_text=note.text, context=None)
    care = parse_question("Should she see an ENT about the cough?")
    assert not care.therapy and not therapy_context({"allergies"}, care)


@pytest.mark.parametrize("flag, hint, key", [
    ("critical_low", "hypoglycemia", "glucose:low"), ("low", "hypoglycemia", "glucose:low"),
    ("high", "diabetes screening", "glucose"), ("critical_high", "diabetes screening", "glucose"),
])
def test_a_low_glucose_is_searched_as_hypoglycemia_not_diabetes_screening(flag, hint, key):
    from domain.policy.answers.relevance import guidance_hint, guidance_key

    assert hint in guidance_hint("glucose", flag) and guidance_key("glucose", flag) == key
    assert guidance_key("ldl", "low") == "ldl"  # a topic without low-direction guidance keeps one key
    assert guidance_key("test:analyte:potassium", "critical_low") == "test:analyte:potassium"


def test_a_susceptibility_result_says_resistant_or_susceptible():
    # A urine culture's "Ampicillin [Susceptibility] >=32 ug/mL R" was shown as "flagged abnormal"
    from core.services.answer.evidence_items import describe
    from domain.policy.facts.lab_vocabulary import susceptibility_words

    assert susceptibility_words("Ampicillin [Susceptibility]", ["R"]) == "resistant"
    assert susceptibility_words("Potassium", ["H"]) is None and susceptibility_words("Potassium", ["R"]) is None
    text = describe("lab_result", {"test_name": "Nitrofurantoin [Susceptibility]", "value": "<=16", "unit": "ug/mL",
                                   "abnormal_flag": "normal", "flags_as_printed": ["S"]}, "")
    assert text.startswith("Nitrofurantoin [Susceptibility] <=16 ug/mL (susceptible)")


def test_a_question_naming_its_test_is_not_about_other_results_held_from_the_same_sentence():
    # "What was her lactate?" showed the CRP, white cell count, sodium and creatinine told
    # in the same sentence of a discharge summary, all held for review (written after the rule).
    from domain.policy.questions.intent import parse_question
    from domain.policy.answers.relevance import review_bears_on

    told = "Investigations: CRP 148 mg/L, lactate 1.8 mmol/L."
    crp = EvidenceItem(evidence_id="fact:4", kind="needs_review", fact_type="lab_result", text="CRP 148 mg/L",
                       citations=[], structured={"test_name": "CRP", "value": "148", "unit": "mg/L"})
    topics = topics_of("lab_result", crp.structured, crp.text)
    assert not review_bears_on(crp, topics, parse_question("What was her lactate?"), source_text=told, context=None)
    assert review_bears_on(crp, topics, parse_question("What are her latest labs?"), source_text=told, context=None)


@pytest.mark.parametrize("question", ["What does her urine dipstick show?", "Is there blood in her urine?",
                                      "What did the urinalysis show?"])
def test_a_question_about_the_urine_is_about_its_tests(question):
    from domain.policy.questions.intent import parse_question

    asked = parse_question(question)
    assert asked.topics == ("urine",)
    nitrite = topics_of("lab_result", {"test_name": "Nitrite", "unit": ""}, "Nitrite Positive")
    assert relevant(nitrite, asked.topics)
    assert not relevant(topics_of("lab_result", {"test_name": "Glucose", "unit": "mmol/L"}, "Glucose 9.2"),
                        asked.topics)
