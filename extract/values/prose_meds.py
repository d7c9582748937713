"""Medications told in sentences (pure): "She takes warfarin 5 mg orally once daily,
metformin 500 mg twice daily and lisinopril 10 mg daily", "He was started on
apixaban 5 mg bd", "continues on levothyroxine 75 micrograms each morning".

A drug is named by a WHO INN stem the question vocabulary already knows
(``domain.policy.questions.clinical_terms.DRUG_STEMS``: warfarin, metformin,
lisinopril...) or by the list of common drugs without a telling stem below (data); in
a sentence that speaks of taking medicines, any word printed right before a dose
("Zyloric 100 mg daily") is one too, unless it names a test or a vital sign
("saturations 96%"). Its dose, route and frequency are what the
sentence prints after the name, up to the next drug or the end of the clause, read
by ``extract.values.lists.parse_medication``. A drug named without a dose counts
only in a sentence that speaks of taking it ("on", "takes", "was started on"...).
Whether the patient takes it (not her mother, not "if") is the context policy's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.analytes import known_name
from domain.policy.facts.medication_schedule import dose_amount_pattern
from domain.policy.facts.medication_status import status_in_sentence
from domain.policy.facts.vital_signs import sign_of_label
from domain.policy.questions.clinical_terms import DRUG_STEMS
from extract.values.lists import parse_medication
from extract.values.prose_text import Span, strip_span

# --------------------------------------------------------------------------- vocabulary (data)

# Common drugs whose names carry no stem DRUG_STEMS knows.
NAMED_DRUGS = frozenset("""
aspirin clopidogrel ticagrelor prasugrel digoxin amiodarone insulin metformin gliclazide glimepiride paracetamol
acetaminophen codeine morphine tramadol oxycodone fentanyl buprenorphine salbutamol albuterol tiotropium
levothyroxine thyroxine carbimazole allopurinol colchicine febuxostat tamsulosin finasteride spironolactone
eplerenone indapamide bendroflumethiazide hydrochlorothiazide chlorthalidone verapamil diltiazem doxazosin
hydralazine isosorbide nicorandil ivabradine ranolazine methotrexate hydroxychloroquine sulfasalazine leflunomide
azathioprine mycophenolate tacrolimus ciclosporin cyclosporine prednisolone prednisone hydrocortisone
dexamethasone lithium sodium valproate lamotrigine levetiracetam carbamazepine phenytoin gabapentin pregabalin
amitriptyline nortriptyline mirtazapine venlafaxine duloxetine citalopram escitalopram quetiapine olanzapine
haloperidol donepezil memantine levodopa co-careldopa madopar ropinirole pramipexole baclofen tizanidine
alendronate risedronate denosumab calcium colecalciferol cholecalciferol vitamin ferrous folic iron
lansoprazole ranitidine famotidine sucralfate loperamide senna lactulose macrogol docusate bisacodyl
amoxicillin co-amoxiclav flucloxacillin penicillin doxycycline clarithromycin azithromycin erythromycin
trimethoprim nitrofurantoin cefalexin ciprofloxacin metronidazole
apixaban rivaroxaban edoxaban dabigatran heparin enoxaparin dalteparin warfarin acenocoumarol
empagliflozin dapagliflozin canagliflozin sitagliptin linagliptin semaglutide liraglutide dulaglutide
pioglitazone nitrofurantoin beclometasone budesonide fluticasone montelukast ipratropium formoterol vit
""".split())
# The letter (and number) that names a vitamin after its word: "Vitamin D3", "vit B12".
_VITAMIN = frozenset({"vitamin", "vit"})
_VITAMIN_LETTER = re.compile(r"[A-K]\d{0,2}|[a-k]\d{1,2}")
# Words that go with a drug's name ("insulin glargine", "isosorbide mononitrate").
NAME_PARTS = frozenset("""
glargine detemir degludec aspart lispro isophane mononitrate dinitrate sodium potassium calcium succinate
tartrate hydrochloride modified-release mr sr xl er acid carbonate fumarate sulphate sulfate
""".split())
# Words that make a sentence speak of medicines being taken.
MEDICATION_CUES = re.compile(
    r"\b(?:takes?|taking|took|on|started|commenced|initiated|continues?|continuing|remains|prescribed|"
    r"medications?|medicines?|meds|tablets?|treated|treatment|therapy|uses|using|dose|dosage|increased|"
    r"reduced|titrated|stopped|discontinued|switched|inhalers?|injections?)\b", re.I)
# A word right before a dose that is no drug's name.
NOT_A_DRUG = frozenset("""
a an the of to at was were is are and or with from by her his their its this that than about around over
under up down only total daily dose doses taking takes took on was reduced increased last weight lost gained
inhaler inhalers puffer tablet tablets capsule capsules injection injections patch patches cream spray drops
solution liquid suspension pen
above below beneath than exceeds exceeded exceeding rises rose risen falls fell fallen reaches reached target
targets goal level levels between within approximately roughly nearly almost least most
""".split())
# How often, in words the list reader does not know ("each morning", "three times a week").
MORE_FREQUENCIES = re.compile(
    r"\b(?:(?:each|every) (?:morning|evening|night|day|week|month)|(?:once|twice|three times) (?:a|per|each) "
    r"(?:week|day|month)|(?:at|before) breakfast|with (?:food|breakfast|meals)|on alternate days|"
    r"(?:once|twice) weekly|four[- ]hourly|six[- ]hourly|hourly)\b", re.I)
# At most this many words between a drug's name and its dose, route or frequency.
MAX_GAP_WORDS = 2

_WORD = re.compile(r"[A-Za-z][\w'\u2019-]*")
_DOSE_START = re.compile(rf"\s*\(?{dose_amount_pattern()}", re.I)
# "from 2.5 mg to 5 mg" right after the name or its verb ("bisoprolol increased from ..."):
# the dose it was changed to.
_DOSE_CHANGE = re.compile(
    rf"\s*(?:(?:was|has been|is)\s+)?(?:(?:dose\s+)?(?:increased|reduced|decreased|changed|titrated|up|down)\s+)?"
    rf"from\s+{dose_amount_pattern(strengths=False)}\s+to\s+({dose_amount_pattern(strengths=False)})", re.I)
# Only a list's joints between two medicines: the second shares the first's verb.
_JOINED = re.compile(r"\s*(?:,|and|or|&|,\s*and)\s*", re.I)
_CLAUSE_END = re.compile(r"[;.!?](?:\s|$)|,\s*(?:which|who|but|although|as|because|and (?:she|he|they|her|his))\b"
                         r"|\s(?:which|who|but|although|because|for (?:her|his|their))\b", re.I)


@dataclass(frozen=True, slots=True)
class MedicationMention:
    """A medication told in a sentence: its name, and the whole mention as printed
    (name through dose, route and frequency) with those parts read from it."""

    name: Span
    mention: Span
    dose: str | None = None
    route: str | None = None
    frequency: str | None = None
    status: str | None = None  # "stopped" of "stop amlodipine 5 mg", as ``status_in_sentence`` reads it


def is_drug_name(word: str) -> bool:
    """Whether one word names a drug: a common drug listed above or a name with a known stem."""
    w = word.lower()
    return w in NAMED_DRUGS or bool(DRUG_STEMS.fullmatch(w))


def _names(sentence: str, cued: bool) -> list[Span]:
    """Where drugs are named in the sentence, each with a word that goes with its name."""
    out: list[Span] = []
    words = list(_WORD.finditer(sentence))
    for i, m in enumerate(words):
        word = m.group(0)
        known = is_drug_name(word)
        before_dose = cued and bool(_DOSE_START.match(sentence, m.end())) and word.lower() not in NOT_A_DRUG \
            and not known_name(word) and not sign_of_label(word) and word[:1].isalpha()
        if not known and not before_dose:
            continue
        start, end = m.start(), m.end()
        if not known and word.lower() in NAME_PARTS and i > 0 and not sentence[words[i - 1].end(): start].strip():
            start = words[i - 1].start()  # "alendronic acid 70 mg": the part names the drug with the word before
        if i + 1 < len(words) and not sentence[m.end(): words[i + 1].start()].strip() and (
                words[i + 1].group(0).lower() in NAME_PARTS
                or word.lower() in _VITAMIN and _VITAMIN_LETTER.fullmatch(words[i + 1].group(0))):
            end = words[i + 1].end()
        if out and out[-1].end >= start:
            continue
        out.append(Span(sentence[start: end], start, end))
    return out


def medications_in(sentence: str, exclude: list[tuple[int, int]] = (), *,
                   listed: bool = False) -> list[MedicationMention]:
    """Every medication the sentence tells of, in order; names inside ``exclude`` (an
    allergy's substance: "penicillin gave her a rash") are not medications. ``listed``:
    the text is a medicines list's ("Meds: ... glipizide 5mg qAM, ASA 81mg daily"), whose
    label speaks of taking them as a cue word would."""
    cued = listed or bool(MEDICATION_CUES.search(sentence))
    names = [n for n in _names(sentence, cued) if not any(n.start < e and s < n.end for s, e in exclude)]
    out: list[MedicationMention] = []
    for k, name in enumerate(names):
        stop = _CLAUSE_END.search(sentence, name.end)
        limit = min([stop.start() if stop else len(sentence)] + ([names[k + 1].start] if k + 1 < len(names) else []))
        window = sentence[name.end: limit]
        parsed = parse_medication(sentence[name.start: limit])
        if (change := _DOSE_CHANGE.match(window)) is not None:
            parsed["dose"] = change.group(1)  # "increase bisoprolol from 2.5 mg to 5 mg": taken at 5 mg
        if not parsed["frequency"] and (more := MORE_FREQUENCIES.search(window)):
            parsed["frequency"] = more.group(0)
        details = [p for p in (parsed["dose"], parsed["route"], parsed["frequency"]) if p]
        if not details and not cued:
            continue  # "penicillin was the likely cause": named, not taken
        end = name.end
        start = change.end() if change is not None else 0  # words after "from 2.5 mg to 5 mg" count from there
        if change is not None:
            end = name.end + change.end()
        for part in details:
            at = change.start(1) if change is not None and part == parsed["dose"] else window.find(part, start)
            if at >= 0 and len(window[start: max(at, start)].split()) <= MAX_GAP_WORDS + len(" ".join(details).split()):
                end = max(end, name.end + at + len(part))
        mention = strip_span(sentence, name.start, end, " \t\n,;:(")
        printed = sentence[name.start: end]
        clause = max((m.end() for m in _CLAUSE_END.finditer(sentence, 0, name.start)), default=0)
        # after the dose; a change of dose says its verb before the doses ("was increased from")
        status = status_in_sentence(sentence[clause: name.start], window if change else sentence[mention.end: limit])
        if status is None and out and _JOINED.fullmatch(sentence[out[-1].mention.end: name.start]):
            status = out[-1].status  # "stop amlodipine and ramipril": both
        out.append(MedicationMention(
            name=name, mention=mention,
            dose=parsed["dose"] if parsed["dose"] and parsed["dose"] in printed else None,
            route=parsed["route"] if parsed["route"] and parsed["route"] in printed else None,
            frequency=parsed["frequency"] if parsed["frequency"] and parsed["frequency"] in printed else None,
            status=status))
    return out
