"""Allergies, medications, problems, lab values and vital signs told in a letter's
sentences ("She is allergic to penicillin, which gave her a rash. She takes warfarin 5 mg
orally once daily ... Her HbA1c was 8.1% in March. Her blood pressure was 148/86"), read
by the sentence readers of ``extract.values`` (``prose_allergies``, ``prose_meds``,
``prose_problems``, ``prose_labs``, ``prose_vitals``) and turned into ``Found`` items for
``extract.referral.facts``. Words read as a result or a reading name no medicine
("sodium 133 mmol/L" is no sodium salt, "saturation 94%" no drug at 94%).

A sentence is read less surely than a list: every item read here is held for review,
cited to its sentence (an allergy or a problem) or to its own words (a medication
with its dose, a result with its unit). A mention the context policy reads as not
the patient's ("no history of diabetes", "her mother takes warfarin", "if her INR
rises") is kept as a document fact with that context, never held as the patient's
finding; a result so told is not read at all (results carry no context downstream).
"""

from __future__ import annotations

from domain.content import Section
from domain.policy.context.mentions import assess_span
from domain.policy.facts.lab_vocabulary import susceptibility_test
from extract.referral.facts import Found
from extract.values.lists import no_known, parse_allergy
from extract.values.prose_allergies import allergies_in, no_known_allergies_in
from extract.values.prose_cultures import susceptibilities_in, susceptibility_spans
from extract.values.prose_labs import lab_values_in
from extract.values.prose_meds import medications_in
from extract.values.prose_problems import problems_in
from extract.values.prose_text import Span
from extract.values.prose_vitals import vital_values_in


def not_the_patients(sentence: str, span: Span) -> bool:
    """Whether the context policy reads the mention as negated, someone else's or hypothetical."""
    ctx = assess_span(sentence, span.start, span.end)
    return ctx.negated or ctx.experiencer != "patient" or ctx.temporality == "hypothetical"


def _within(span: Span, spans: list[tuple[int, int]]) -> bool:
    return any(start <= span.start and span.end <= end for start, end in spans)


def read_sentence(section: Section, sentence: Span) -> list[Found]:
    """What one sentence of ``section`` tells of allergies, medications, problems and
    results, as ``Found`` items of ``how="sentence"``. Offsets in the spans the
    readers return are the sentence's own."""
    text = sentence.text
    out: list[Found] = []
    # "grew E. coli, resistant to trimethoprim and sensitive to nitrofurantoin": antibiotics
    # an organism fared against, neither allergies nor medicines.
    fared = susceptibility_spans(text)
    allergies = [a for a in allergies_in(text) if not _within(a.substance, fared)]
    if (none := no_known_allergies_in(text)) is not None:
        exception = no_known(text[none.start:]).exception
        if exception is None:
            out.append(Found("allergies", none.text, section, "sentence", text, context=text,
                             parsed={"no_known_allergies": True, "status": none.value, "not_the_patients": False}))
        elif not any(a.substance.start >= none.end for a in allergies):
            # "no known drug allergies apart from codeine": the exception is an allergy
            allergy = parse_allergy(exception)
            out.append(Found("allergies", allergy["substance"], section, "sentence", text, context=text, parsed={
                "substance": allergy["substance"], "reaction": allergy["reaction"], "exception_to": none.value,
                "not_the_patients": False}))
    for a in allergies:
        out.append(Found("allergies", a.substance.text, section, "sentence", text, context=text, parsed={
            "substance": a.substance.text, "reaction": a.reaction.text if a.reaction else None,
            "not_the_patients": not_the_patients(text, a.substance)}))
    vitals = vital_values_in(text)
    labs = [r for r in lab_values_in(text) if not any(r.mention.start < v.mention.end and v.mention.start < r.mention.end
                                                      for v in vitals)]
    taken = [(a.substance.start, a.substance.end) for a in allergies]
    taken += [(r.mention.start, r.mention.end) for r in (*labs, *vitals)] + fared
    for m in medications_in(text, exclude=taken):
        out.append(Found("medications", m.name.text, section, "sentence", m.mention.text, context=text, parsed={
            "name": m.name.text, "dose": m.dose, "route": m.route, "frequency": m.frequency, "status": m.status,
            "not_the_patients": not_the_patients(text, m.name)}))
    for p in problems_in(text):
        out.append(Found("problems", p.description.text, section, "sentence", text, context=text, parsed={
            "description": p.description.text, "not_the_patients": not_the_patients(text, p.description)}))
    for r in labs:
        if not_the_patients(text, r.mention):
            continue  # "her mother's HbA1c", "if her potassium is 6": no result of the patient's
        out.append(Found("labs", r.test_name, section, "sentence", r.mention.text, context=text, parsed={
            "test_name": r.test_name, "value": r.value, "unit": r.unit, "analyte": r.analyte,
            "stated_when": r.when.text if r.when else None}))
    for f in susceptibilities_in(text):  # told as a letter tells a result: held for review, how it fared kept
        out.append(Found("labs", f.name, section, "sentence", f.quote, context=text, parsed={
            "test_name": susceptibility_test(f.name), "value": f.fared, "unit": "",
            "analyte": None, "printed_flag": f.code}))
    for v in vitals:
        if not_the_patients(text, v.mention):
            continue  # "if her blood pressure is above 160/100", "her husband's pulse": not her reading
        out.append(Found("vitals", v.label, section, "sentence", v.mention.text, context=text, parsed={
            "kind": v.reading.kind, "label": v.label, "value": v.reading.value, "unit": v.reading.unit,
            "systolic": v.reading.systolic, "diastolic": v.reading.diastolic, "doubts": v.reading.doubts or []}))
    return out
