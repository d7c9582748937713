"""The chart-check table (domain/policy/checks) on pairs written for this test, not
taken from any fixture: each row a small chart, the alerts it must raise and, as
important, the near misses that must raise none."""

from __future__ import annotations

import itertools

import pytest

from domain.policy.checks.evaluate import ChartFact, counts_for_checks, evaluate
from domain.policy.checks.rules import KINDS, PRIORITIES, all_rules
from domain.policy.checks.vocabulary import allergy_classes, ingredients_of, medication_classes, no_known_allergies

_ids = itertools.count(1)

MISSING_INDICATION = "missing-indication.no-documented-indication"


def med(name: str, doc: int = 1) -> ChartFact:
    return ChartFact(next(_ids), "medication", {"name": name}, name, doc)


def lab(test: str, value: str, unit: str | None, date: str | None = "2025-06-02", doc: int = 2) -> ChartFact:
    return ChartFact(next(_ids), "lab_result", {"test_name": test, "value": value, "unit": unit,
                                                 "collection_date": date}, f"{test} {value}", doc)


def allergy(substance: str, reaction: str | None = None, doc: int = 3) -> ChartFact:
    return ChartFact(next(_ids), "allergy", {"substance": substance, "reaction": reaction}, substance, doc)


def none_known(said: str, doc: int = 4) -> ChartFact:
    return ChartFact(next(_ids), "allergy", {"substance": "", "status": "no_known_allergies"}, said, doc)


def problem(description: str, code: str | None = None) -> ChartFact:
    return ChartFact(next(_ids), "problem", {"description": description, "code": code}, description, 5)


RAS = "drug-lab.ras-inhibitor-potassium-high"
KSPARING = "drug-lab.potassium-sparing-potassium-high"
KSUPP = "drug-lab.potassium-supplement-potassium-high"
INR_HIGH = "drug-lab.warfarin-inr-high"
INR_ABSENT = "drug-lab.warfarin-inr-absent"
METFORMIN = "drug-lab.metformin-egfr-low"
DIGOXIN = "drug-lab.digoxin-potassium-low"
SAME = "drug-allergy.same-ingredient"
PEN = "drug-allergy.penicillins"
PEN_CEPH = "drug-allergy.penicillin-cephalosporin"
CEPH = "drug-allergy.cephalosporins"
SULFA = "drug-allergy.sulfonamide-antibiotics"
NSAID = "drug-allergy.nsaids"
ACEI = "drug-allergy.ace-inhibitors"
NKDA = "record-consistency.no-known-allergies-vs-allergy"

# (case id, facts, rule ids that must alert). Missing-indication notes are left out of
# these rows (a chart without problems would raise one per medication); they have rows
# of their own below.
CASES = [
    # RAS inhibitors and potassium >= 5.5
    ("lisinopril-k-6.9", [med("Lisinopril 20 mg daily"), lab("Potassium", "6.9", "mmol/L")], {RAS}),
    ("lisinopril-k-5.5-exactly", [med("lisinopril"), lab("K", "5.5", "mmol/L")], {RAS}),
    ("near-miss-lisinopril-k-5.4", [med("Lisinopril 10mg"), lab("Potassium", "5.4", "mmol/L")], set()),
    ("enalapril-k-meq", [med("Vasotec 5 mg"), lab("Serum potassium", "5.8", "mEq/L")], {RAS}),
    ("losartan-k-comma", [med("Losartan 50 mg"), lab("Potassium", "6,1", "mmol/L")], {RAS}),
    ("valsartan-brand-k", [med("Diovan 80mg PO"), lab("K+", "5.9", "mmol/L")], {RAS}),
    ("near-miss-amlodipine-k-6.2", [med("Amlodipine 5 mg"), lab("Potassium", "6.2", "mmol/L")], set()),
    ("near-miss-ras-k-old-high-new-normal", [med("Ramipril 5 mg"), lab("Potassium", "6.4", "mmol/L", "2024-01-10"),
                                             lab("Potassium", "4.3", "mmol/L", "2025-02-01")], set()),
    ("ras-k-old-normal-new-high", [med("Ramipril 5 mg"), lab("Potassium", "4.3", "mmol/L", "2024-01-10"),
                                   lab("Potassium", "6.0", "mmol/L", "2025-02-01")], {RAS}),
    ("near-miss-ras-k-in-mg-dl", [med("Lisinopril"), lab("Potassium", "22", "mg/dL")], set()),
    ("combination-zestoretic", [med("Zestoretic 20-12.5 mg"), lab("Potassium", "5.6", "mmol/L")], {RAS}),
    ("near-miss-ras-sodium-high", [med("Lisinopril"), lab("Sodium", "148", "mmol/L")], set()),
    # potassium-sparing diuretics and supplements
    ("spironolactone-k-5.7", [med("Spironolactone 25 mg"), lab("Potassium", "5.7", "mmol/L")], {KSPARING}),
    ("spironolactone-and-lisinopril", [med("Aldactone 25 mg"), med("Lisinopril 10 mg"),
                                       lab("Potassium", "6.3", "mmol/L")], {KSPARING, RAS}),
    ("near-miss-spironolactone-k-5.2", [med("Spironolactone"), lab("Potassium", "5.2", "mmol/L")], set()),
    ("kcl-k-5.9", [med("Potassium chloride ER 20 mEq"), lab("Potassium", "5.9", "mmol/L")], {KSUPP}),
    ("klor-con-brand", [med("Klor-Con M20"), lab("Potassium", "5.5", "mEq/L")], {KSUPP}),
    ("near-miss-furosemide-k-6", [med("Furosemide 40 mg"), lab("Potassium", "6.0", "mmol/L")], set()),
    # warfarin and INR
    ("warfarin-inr-3.9", [med("Warfarin 5 mg"), lab("INR", "3.9", None)], {INR_HIGH}),
    ("near-miss-warfarin-inr-2.5", [med("Warfarin 5 mg"), lab("INR", "2.5", None)], set()),
    ("near-miss-warfarin-inr-3.0", [med("Coumadin 3 mg"), lab("PT INR", "3.0", "ratio")], set()),
    ("coumadin-inr-3.1", [med("Coumadin 3 mg"), lab("International normalized ratio", "3.1", "")], {INR_HIGH}),
    ("warfarin-no-inr", [med("Jantoven 2.5 mg"), lab("Potassium", "4.1", "mmol/L")], {INR_ABSENT}),
    ("near-miss-apixaban-no-inr", [med("Eliquis 5 mg BID")], set()),
    ("warfarin-inr-above-bound", [med("Warfarin"), lab("INR", ">8.0", None)], {INR_HIGH}),
    # metformin and eGFR
    ("metformin-egfr-24", [med("Metformin 1000 mg BID"), lab("eGFR", "24", "mL/min/1.73m2")], {METFORMIN}),
    ("near-miss-metformin-egfr-30", [med("Metformin 500 mg"), lab("eGFR", "30", "mL/min/1.73m2")], set()),
    ("near-miss-metformin-egfr-over-60", [med("Glucophage"), lab("eGFR", ">60", "mL/min/1.73 m2")], set()),
    ("janumet-egfr-under-15", [med("Janumet 50/1000"), lab("Estimated GFR", "<15", "mL/min/{1.73_m2}")], {METFORMIN}),
    ("near-miss-glipizide-egfr-20", [med("Glipizide 5 mg"), lab("eGFR", "20", "mL/min/1.73m2")], set()),
    # digoxin and potassium < 3.5
    ("digoxin-k-3.1", [med("Digoxin 0.125 mg"), lab("Potassium", "3.1", "mmol/L")], {DIGOXIN}),
    ("near-miss-digoxin-k-3.5", [med("Lanoxin 125 mcg"), lab("Potassium", "3.5", "mmol/L")], set()),
    # drug-allergy
    ("penicillin-allergy-amoxicillin", [allergy("Penicillin", "hives"), med("Amoxicillin 500 mg TID")], {PEN}),
    ("pcn-allergy-augmentin", [allergy("PCN"), med("Augmentin 875 mg")], {PEN}),
    ("amoxicillin-allergy-amoxicillin", [allergy("amoxicillin", "rash"), med("Amoxicillin 250 mg")], {SAME}),
    ("near-miss-sulfa-allergy-amoxicillin", [allergy("Sulfa drugs", "rash"), med("Amoxicillin 500 mg")], set()),
    ("sulfa-allergy-bactrim", [allergy("Sulfa"), med("Bactrim DS")], {SULFA}),
    ("near-miss-sulfa-allergy-furosemide", [allergy("Sulfonamides"), med("Furosemide 20 mg")], set()),
    ("penicillin-allergy-cephalexin", [allergy("Penicillin", "anaphylaxis"), med("Cephalexin 500 mg")], {PEN_CEPH}),
    ("cephalosporin-allergy-ceftriaxone", [allergy("Cephalosporins"), med("Rocephin 1 g IV")], {CEPH}),
    ("ibuprofen-allergy-naproxen", [allergy("Ibuprofen", "angioedema"), med("Naproxen 500 mg")], {NSAID}),
    ("nsaid-allergy-ibuprofen", [allergy("NSAIDs"), med("Advil 400 mg")], {NSAID}),
    ("ace-allergy-enalapril", [allergy("Lisinopril", "angioedema"), med("Enalapril 10 mg")], {ACEI}),
    ("near-miss-codeine-allergy-amoxicillin", [allergy("Codeine", "nausea"), med("Amoxicillin")], set()),
    ("near-miss-nkda-only-amoxicillin", [none_known("NKDA"), med("Amoxicillin 500 mg")], set()),
    ("near-miss-peanut-allergy-lisinopril", [allergy("Peanuts"), med("Lisinopril 10 mg")], set()),
    # record consistency
    ("nkda-and-penicillin", [none_known("NKDA", doc=7), allergy("Penicillin", "rash", doc=8)], {NKDA}),
    ("nka-and-peanut", [none_known("No known allergies"), allergy("Peanut", "swelling")], {NKDA}),
    ("near-miss-nkda-and-peanut", [none_known("No known drug allergies"), allergy("Peanuts", "hives")], set()),
    ("near-miss-nkfa-and-penicillin", [none_known("NKFA"), allergy("Penicillin")], set()),
    ("near-miss-nkda-twice", [none_known("NKDA", doc=1), none_known("no known drug allergies", doc=2)], set()),
    ("nkda-and-unknown-substance", [none_known("NKDA"), allergy("Iodinated contrast", "hives")], {NKDA}),
]


def _alerting(facts: list[ChartFact]) -> set[str]:
    return {a.rule_id for a in evaluate(facts).alerts if a.rule_id != MISSING_INDICATION}


@pytest.mark.parametrize("case_id,facts,expected", CASES, ids=[c[0] for c in CASES])
def test_rule_table(case_id, facts, expected):
    assert _alerting(facts) == expected


def test_the_table_has_forty_pairs_and_near_misses():
    assert len(CASES) >= 40
    assert sum(1 for c in CASES if not c[2]) >= 15


def test_an_alert_cites_every_fact_it_rests_on():
    spiro, lis, k = med("Spironolactone 25 mg"), med("Lisinopril 10 mg", doc=9), lab("Potassium", "6.9", "mmol/L")
    again = med("lisinopril 10 mg", doc=10)  # the same medication, listed by another document
    alerts = {a.rule_id: a for a in evaluate([spiro, lis, k, again]).alerts}
    assert alerts[RAS].fact_ids == tuple(sorted((lis.fact_id, k.fact_id, again.fact_id)))
    assert alerts[KSPARING].fact_ids == tuple(sorted((spiro.fact_id, k.fact_id)))
    assert "6.9" in alerts[RAS].message and "Lisinopril" in alerts[RAS].message


def test_both_latest_results_of_one_day_and_an_undated_one_are_checked():
    m = med("Lisinopril")
    same_day = [lab("Potassium", "4.0", "mmol/L", "2025-01-02"), lab("Potassium", "5.9", "mmol/L", "2025-01-02")]
    undated = lab("Potassium", "6.2", "mmol/L", None)
    alerts = [a for a in evaluate([m, *same_day, undated]).alerts if a.rule_id == RAS]
    assert sorted(a.fact_ids for a in alerts) == sorted([(m.fact_id, same_day[1].fact_id),
                                                         (m.fact_id, undated.fact_id)])


def test_what_cannot_be_compared_is_reported_not_taken_as_safe():
    k_mg = lab("Potassium", "22", "mg/dL")
    egfr = lab("eGFR", ">25", "mL/min/1.73m2")  # above 25 may or may not be below 30
    text = lab("INR", "see comment", None)
    out = evaluate([med("Lisinopril"), k_mg, med("Metformin"), egfr, med("Warfarin"), text])
    reasons = {n.rule_id: n.reason for n in out.not_checked}
    assert "mg/dL" in reasons[RAS]
    assert "bound" in reasons[METFORMIN]
    assert "not a number" in reasons[INR_HIGH]
    assert not {RAS, METFORMIN, INR_HIGH} & {a.rule_id for a in out.alerts}


def test_missing_indication_is_a_low_note_and_a_problem_answers_it():
    lis, met = med("Lisinopril 10 mg"), med("Metformin 500 mg")
    notes = [a for a in evaluate([lis, met, problem("Essential hypertension")]).alerts if a.rule_id == MISSING_INDICATION]
    assert [a.fact_ids for a in notes] == [(met.fact_id,)] and notes[0].priority == "low"
    by_code = evaluate([med("Metformin"), problem("Chronic condition", "E11.9")]).alerts
    assert not [a for a in by_code if a.rule_id == MISSING_INDICATION]
    unknown = evaluate([med("Zzyzxumab 100 mg")])
    assert not unknown.alerts and "class table" in unknown.not_checked[0].reason


def test_same_facts_same_alert_keys_whatever_the_order():
    facts = [med("Warfarin 5 mg"), lab("INR", "4.2", None), allergy("Penicillin"), med("Amoxicillin")]
    first = [a.key for a in evaluate(facts).alerts]
    assert first == [a.key for a in evaluate(list(reversed(facts))).alerts]
    assert len(set(first)) == len(first)


def test_no_message_recommends_a_treatment():
    # The verifier refuses advice; the table's own words must never give any.
    advice = ("stop", "hold ", "reduce", "increase", "discontinue", "switch", "start", "should", "consider", "dose ")
    for rule in all_rules():
        assert not [w for w in advice if w in rule.message.lower()], rule.id
        assert rule.references and rule.kind in KINDS and rule.priority in PRIORITIES


@pytest.mark.parametrize("name,classes", [
    ("Amoxicillin-clavulanate 875-125 mg", {"penicillins", "beta_lactamase_inhibitor"}),
    ("HCTZ 25 mg", {"thiazide_diuretic"}), ("Entresto 49/51", {"arb", "neprilysin_inhibitor"}),
    ("sulfasalazine 500 mg", set()), ("Penicillin V potassium 500 mg", {"penicillins"}),
])
def test_medication_classes(name, classes):
    assert medication_classes(name) == classes


def test_allergy_words_name_classes():
    assert allergy_classes("Penicillin (hives)") == {"penicillins"}
    assert allergy_classes("beta-lactams") == {"penicillins", "cephalosporins"}
    assert allergy_classes("Sulpha") == {"sulfonamide_antibiotics"}
    assert ingredients_of("Bactrim DS") == {"sulfamethoxazole", "trimethoprim"}
    assert no_known_allergies({"substance": "", "status": "no_known_allergies"}, "NKDA") == "drug"
    assert no_known_allergies({"substance": "Penicillin"}, "Penicillin") is None


def test_only_verified_facts_and_no_known_allergy_statements_count():
    assert counts_for_checks("medication", "verified", {"name": "x"}, "x")
    assert not counts_for_checks("medication", "document_fact", {"name": "lisinopril"}, "stopped lisinopril")
    assert counts_for_checks("allergy", "document_fact", {"substance": "", "status": "no_known_allergies"}, "NKDA")
    assert not counts_for_checks("allergy", "needs_review", {"substance": "", "status": "no_known_allergies"}, "NKDA")
    assert not counts_for_checks("vital_sign", "verified", {}, "")
