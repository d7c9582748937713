"""Statements in one patient's record that cannot both be true (pure).

An answer flags such a pair and cites both sides; it never decides which is right. The
pairs are data (``PAIRS``): each names the two kinds of statement and says why they
cannot both hold. Pairs that look alike but can both be true are listed in
``NOT_CONTRADICTIONS`` with the reason, so nobody adds them by mistake.

What a "no known allergies" statement says there are none of, and whether an allergy is
to a drug, come from the one vocabulary the chart checks use
(``domain.policy.checks.vocabulary``, built on ``domain.policy.facts.no_known_allergies``).
Only the patient's own statements count: a relative's allergy or a hypothetical
medication contradicts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from domain.policy.facts.medication_schedule import comparable
from domain.policy.facts.no_known_allergies import NO_KNOWN_WORDS
from domain.policy.checks.vocabulary import (allergy_classes, ingredients_of, no_known_allergies, non_drug_allergen,
                                             words)

# id -> what each side is, the words an answer uses, and why the two cannot both be true.
PAIRS: dict[str, dict[str, str]] = {
    "no-known-allergies-vs-allergy": {
        "first": "a 'no known allergies' or 'no known drug allergies' statement",
        "second": "an allergy the same record documents (for 'no known drug allergies': to a drug)",
        "words": "the record says “{statement}”, and it also lists an allergy",
        "why": "NKA denies every allergy and NKDA every drug allergy; a documented allergy of that kind "
               "cannot stand beside it.",
    },
    "allergy-denied-vs-documented": {
        "first": "an allergy to a substance recorded as denied ('denies penicillin allergy')",
        "second": "an allergy to the same substance, or one of its class, recorded as present",
        "words": "the record denies an allergy that it also documents",
        "why": "the same allergy cannot be both absent and present.",
    },
    "medication-stopped-vs-current": {
        "first": "a medication recorded as stopped or no longer taken",
        "second": "the same medication (same ingredient) recorded as current, at the same dose or with a "
                  "dose on one side only",
        "words": "the record lists a medication as stopped and also as current",
        "why": "a medication is either taken now or not; which entry is older cannot be told from every "
               "source, so a person must check.",
    },
}

# Look alike, but both may be true: never flagged.
NOT_CONTRADICTIONS: dict[str, str] = {
    "NKDA beside a food, latex or sting allergy": "NKDA speaks of drugs only.",
    "NKFA beside any allergy": "the vocabulary cannot tell every food from latex or a sting, and NKFA says "
                               "nothing of drugs.",
    "a denied symptom beside the same symptom elsewhere": "symptoms come and go between visits.",
    "a relative's allergy or condition beside the patient's denial": "it is about someone else.",
    "a medication on hold beside the same medication current": "on hold is a pause, not a stop.",
    "a regimen stopped beside the same medication current at another dose": "a dose change: the old dose "
                                                                           "stopped, the new one taken.",
}

# Medication statuses that say it is no longer taken (a workbook's status column, FHIR's
# MedicationStatement.status as the FHIR reader keeps it).
STOPPED_STATUSES = frozenset({"stopped", "discontinued", "completed", "not-taken", "inactive", "ceased", "former"})


@dataclass(frozen=True, slots=True)
class Statement:
    """One entry of the record, as the answer's evidence holds it."""

    evidence_id: str
    fact_type: str | None
    value: Mapping[str, Any]
    text: str  # its words and the quote it cites
    negated: bool = False
    temporality: str = "current"  # current | historical | hypothetical
    experiencer: str = "patient"


@dataclass(frozen=True, slots=True)
class Contradiction:
    pair: str
    first: tuple[str, ...]  # evidence ids of one side
    second: tuple[str, ...]  # evidence ids of the other
    kind: str | None = None  # what a "no known ..." statement denies ("all", "drug")

    @property
    def words(self) -> str:
        return PAIRS[self.pair]["words"].format(statement=NO_KNOWN_WORDS.get(self.kind or "all", ""))


def _own(s: Statement) -> bool:
    return s.experiencer == "patient" and s.temporality != "hypothetical"


def _substance(s: Statement) -> str:
    return str(s.value.get("substance") or "").strip()


def _same_allergen(a: str, b: str) -> bool:
    """Same words, a shared ingredient, or a shared drug class ("penicillin" and
    "amoxicillin")."""
    if words(a) == words(b):
        return True
    return bool(ingredients_of(a) & ingredients_of(b)) or bool(allergy_classes(a) & allergy_classes(b))


def _allergy_pairs(statements: list[Statement]) -> list[Contradiction]:
    allergies = [s for s in statements if s.fact_type == "allergy" and _own(s)]
    kinds = {s.evidence_id: no_known_allergies(dict(s.value), s.text) for s in allergies}
    documented = [s for s in allergies if kinds[s.evidence_id] is None and _substance(s) and not s.negated]
    denials = [s for s in allergies if kinds[s.evidence_id] is not None]
    out = []
    for kind in ("all", "drug"):
        said = [s for s in denials if kinds[s.evidence_id] == kind]
        against = [s for s in documented if kind == "all" or not non_drug_allergen(_substance(s))]
        if said and against:
            out.append(Contradiction("no-known-allergies-vs-allergy", tuple(s.evidence_id for s in said),
                                     tuple(s.evidence_id for s in against), kind))
    for denied in (s for s in allergies if s.negated and kinds[s.evidence_id] is None and _substance(s)):
        same = [s for s in documented if _same_allergen(_substance(denied), _substance(s))]
        if same:
            out.append(Contradiction("allergy-denied-vs-documented", (denied.evidence_id,),
                                     tuple(s.evidence_id for s in same)))
    return out


def _stopped(s: Statement) -> bool:
    status = str(s.value.get("status") or "").strip().lower()
    return status in STOPPED_STATUSES or s.temporality == "historical"


def _medication_key(s: Statement) -> frozenset[str]:
    """The ingredients a medication entry names, or its name's words when the class
    table does not know it (an unknown medication matches only its own spelling)."""
    name = str(s.value.get("name") or "")
    return ingredients_of(name) or (frozenset({words(name).strip()}) if name.strip() else frozenset())


def _another_dose(a: Statement, b: Statement) -> bool:
    """Both entries state a dose and the doses differ (1 g and 1000 mg are one dose)."""
    da, db = a.value.get("dose"), b.value.get("dose")
    return bool(da and db) and comparable("dose", str(da).strip().lower()) != comparable("dose", str(db).strip().lower())


def _medication_pairs(statements: list[Statement]) -> list[Contradiction]:
    meds = [s for s in statements if s.fact_type == "medication" and _own(s) and not s.negated and _medication_key(s)]
    stopped = [s for s in meds if _stopped(s)]
    current = [s for s in meds if not _stopped(s) and str(s.value.get("status") or "").lower() != "on-hold"]
    # Each current entry with the stopped entries it disagrees with (same ingredient, not
    # another dose); entries that disagree about one medication make one flag.
    groups: list[tuple[list[Statement], list[Statement]]] = []
    for o in current:
        against = [st for st in stopped if _medication_key(st) & _medication_key(o) and not _another_dose(st, o)]
        if not against:
            continue
        group = next((g for g in groups if {x.evidence_id for x in g[0]} & {x.evidence_id for x in against}), None)
        if group is None:
            groups.append((against, [o]))
        else:
            group[0].extend(a for a in against if a not in group[0])
            group[1].append(o)
    return [Contradiction("medication-stopped-vs-current", tuple(x.evidence_id for x in first),
                          tuple(x.evidence_id for x in second)) for first, second in groups]


def find_contradictions(statements: list[Statement]) -> list[Contradiction]:
    """Every pair of ``PAIRS`` the statements hold, each side with all its entries."""
    return [*_allergy_pairs(statements), *_medication_pairs(statements)]
