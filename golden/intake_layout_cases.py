"""The intake layout cases: who each ``golden.intake_layouts`` form is about and what
it prints, with the facts an extractor must find in it. Every person, number and clinic
here is invented."""

from __future__ import annotations

from dataclasses import replace

from golden.fixtures import MARISOL
from golden.ground_truth import ExpectedAllergy, ExpectedMedication, Patient
from golden.intake_layouts import LayoutCase, OtherPerson

M = ExpectedMedication
A = ExpectedAllergy


CASES: list[LayoutCase] = [
    LayoutCase(
        name="one_line_slip",
        layout="one_line",
        patient=MARISOL,
        phone="(541) 555-0142",
        chief_concern="Dizzy spells for two weeks",
        medications=(M("Metformin", "500 mg", "twice daily", "Metformin 500 mg twice daily"),
                     M("Lisinopril", "10 mg", "once daily", "Lisinopril 10 mg once daily")),
        allergies_printed="Penicillin (hives), shellfish?",
        allergies=(A("Penicillin", "hives"), A("shellfish", None, needs_review=True)),
        others=(OtherPerson("Emergency contact", "Rosalind", "Quenneville", "1985-03-02", "daughter"),
                OtherPerson("Policy holder", "Rafael", "Quenneville", "1955-11-04")),
        doctor="Dr. Anneke Solberg",
    ),
    LayoutCase(
        name="label_table_sheet",
        layout="label_table",
        patient=Patient("Ifeoma", "Castellanos-Reid", "1979-02-03", "PN-5530981", sex="F"),
        phone="503-555-0163",
        chief_concern="Itchy rash on both forearms since Sunday",
        medications=(M("Levothyroxine", "75 mcg", "every morning", "Levothyroxine 75 mcg every morning"),
                     M("Cetirizine", "10 mg", "at bedtime", "Cetirizine 10 mg at bedtime"),
                     M("Sertraline", "50 mg", "daily", "Sertraline 50 mg daily")),
        allergies_printed="Sulfa drugs - rash; latex - patient not sure",
        allergies=(A("Sulfa drugs", "rash"), A("latex", "patient not sure", needs_review=True)),
        others=(OtherPerson("Person to call in an emergency", "Joaquin", "Castellanos", "1976-09-18", "husband"),),
        doctor="Dr. Tomasz Wierzbicki",
    ),
    LayoutCase(
        name="boxed_grid_form",
        layout="boxed_grid",
        patient=Patient("Beatrix", "Okonjo-Hale", "1966-05-27", "NF-0093314", sex="F"),
        phone="07700 900461",
        chief_concern="Painful left knee after a fall on the ice",
        medications=(M("Ramipril", "2.5 mg", "once daily", "Ramipril 2.5 mg once daily"),
                     M("Paracetamol", "1 g", "four times daily", "Paracetamol 1 g four times daily")),
        allergies_printed="Aspirin - stomach upset; possible nuts",
        allergies=(A("Aspirin", "stomach upset"), A("possible nuts", None, needs_review=True)),
        others=(OtherPerson("Next of kin", "Desmond", "Hale", "1963-12-08", "husband"),),
        doctor="Dr. Hilde Marchetti",
    ),
    LayoutCase(
        name="leader_lines_questionnaire",
        layout="leader_lines",
        patient=Patient("Aniela", "Kowalczyk", "1952-02-14", "RK-552031", sex="F"),
        phone="07700 900815",
        chief_concern="Cough with green phlegm for ten days",
        medications=(M("Amlodipine", "10 mg", "once daily", "Amlodipine 10 mg once daily"),
                     M("Salbutamol inhaler", "2 puffs", "as needed", "Salbutamol inhaler 2 puffs as needed")),
        allergies_printed="Penicillin - swollen lips; plasters?",
        allergies=(A("Penicillin", "swollen lips"), A("plasters", None, needs_review=True)),
        others=(OtherPerson("Contact", "Marek", "Kowalczyk", "1978-06-30", "son"),),
        doctor="Dr. Sunniva Eriksen",
    ),
    LayoutCase(
        name="spaced_colons_sheet",
        layout="spaced_colons",
        patient=Patient("Theo", "Marchbanks", "2011-04-17", "00412-7", sex="M"),
        phone="01632 960122",
        chief_concern="Swollen right ankle after football",
        medications=(M("Montelukast", "5 mg", "at bedtime", "Montelukast 5 mg at bedtime"),
                     M("Beclometasone inhaler", "2 puffs", "twice daily", "Beclometasone inhaler 2 puffs twice daily")),
        allergies_printed="Codeine (vomiting), query latex",
        allergies=(A("Codeine", "vomiting"), A("query latex", None, needs_review=True)),
        others=(OtherPerson("Parent / guardian", "Helena", "Marchbanks", "1980-10-02", "mother"),),
    ),
    LayoutCase(
        name="caps_underlined_registration",
        layout="caps_underlined",
        patient=Patient("Henrike", "Abernathy-Osei", "1991-06-19", "RF-0048213", sex="F"),
        phone="(608) 555-0117",
        chief_concern="Burning when passing urine for three days",
        medications=(M("Sertraline", "100 mg", "once daily", "Sertraline 100 mg once daily"),
                     M("Ferrous sulfate", "325 mg", "twice daily", "Ferrous sulfate 325 mg twice daily")),
        allergies_printed="Trimethoprim (rash), maybe latex",
        allergies=(A("Trimethoprim", "rash"), A("maybe latex", None, needs_review=True)),
        others=(OtherPerson("Emergency contact", "Kwame", "Abernathy-Osei", "1988-01-09", "husband"),),
        doctor="Dr. Lucia Ferraro-Banks",
        pregnant="Not sure",
    ),
    LayoutCase(
        name="bilingual_tick_boxes",
        layout="bilingual_ticks",
        patient=Patient("Itzel", "Baeza Montoya", "1984-10-27", "CPV-77310", sex="F"),
        phone="(915) 555-0148",
        chief_concern="Dolor de garganta y fiebre / sore throat and fever since Monday",
        medications=(M("Metformina", "850 mg", "twice daily", "Metformina 850 mg twice daily"),),
        allergies_printed="Penicilina (ronchas), ¿mariscos?",
        allergies=(A("Penicilina", "ronchas"), A("mariscos", None, needs_review=True)),
        others=(OtherPerson("Contacto de emergencia / Emergency contact", "Rogelio", "Baeza", "1957-03-21",
                            "padre / father"),),
        pregnant="No sé / Not sure",
    ),
]


# Identity under abbreviated labels (golden.intake_layouts' last six layouts), drawn
# after the shared identity vocabulary was written.
CASES += [
    LayoutCase(
        name="ur_slip_outpatient",
        layout="ur_slip",
        patient=Patient("Matilda", "Fairweather-Dunn", "1948-11-23", "0045871", sex="F"),
        phone="(02) 5550 1188",
        chief_concern="Swollen ankles for a week",
        medications=(M("Furosemide", "40 mg", "every morning", "Furosemide 40 mg every morning"),
                     M("Atorvastatin", "20 mg", "at night", "Atorvastatin 20 mg at night")),
        allergies_printed="Erythromycin (nausea)",
        allergies=(A("Erythromycin", "nausea"),),
        others=(OtherPerson("Next of kin", "Rupert", "Dunn", "1975-04-09", "son"),),
    ),
    LayoutCase(
        name="pat_abbrev_visit",
        layout="pat_abbrev",
        patient=Patient("Casimir", "Wendlebury", "1970-01-30", "H-552013", sex="M"),
        phone="(503) 555-0127",
        chief_concern="Heartburn after meals",
        medications=(M("Omeprazole", "20 mg", "once daily", "Omeprazole 20 mg once daily"),),
        allergies_printed="Penicillin (rash)",
        allergies=(A("Penicillin", "rash"),),
        others=(),
        doctor="Dr. Ottilie Brandvold",
    ),
    LayoutCase(
        name="health_card_new_patient",
        layout="health_card",
        patient=Patient("Noelani", "Barrowclough", "1986-07-08", "C-88123", sex="F"),
        phone="(807) 555-0164",
        chief_concern="Migraines twice a week",
        medications=(M("Sumatriptan", "50 mg", "as needed", "Sumatriptan 50 mg as needed"),
                     M("Propranolol", "40 mg", "twice daily", "Propranolol 40 mg twice daily")),
        allergies_printed="Sulfa drugs (hives)",
        allergies=(A("Sulfa drugs", "hives"),),
        others=(OtherPerson("Emergency contact", "Keoni", "Barrowclough", "1984-02-17", "husband"),),
    ),
    LayoutCase(
        name="nhs_minor_injuries",
        layout="nhs_form",
        patient=Patient("Percival", "Ashdown", "1939-03-14", "RM-204477", sex="M"),
        phone="01632 960455",
        chief_concern="Cut to left hand from a kitchen knife",
        medications=(M("Warfarin", "3 mg", "once daily", "Warfarin 3 mg once daily"),),
        allergies_printed="Codeine (vomiting)",
        allergies=(A("Codeine", "vomiting"),),
        others=(),
    ),
    LayoutCase(
        name="mr_hash_check_in",
        layout="mr_hash",
        patient=Patient("Jolanta", "Szczepanik", "1995-12-02", "88-22107", sex="F"),
        phone="(414) 555-0190",
        chief_concern="Sore throat and fever since Friday",
        medications=(M("Levonorgestrel", "0.15 mg", "once daily", "Levonorgestrel 0.15 mg once daily"),),
        allergies_printed="Amoxicillin (swelling)",
        allergies=(A("Amoxicillin", "swelling"),),
        others=(),
    ),
    LayoutCase(
        name="record_encounter_questionnaire",
        layout="record_encounter",
        patient=Patient("Evander", "Quillfeather", "1962-08-19", "R-7730914", sex="M"),
        phone="(970) 555-0136",
        chief_concern="Lower back pain after lifting",
        medications=(M("Ibuprofen", "400 mg", "three times daily", "Ibuprofen 400 mg three times daily"),
                     M("Metformin", "1000 mg", "twice daily", "Metformin 1000 mg twice daily")),
        allergies_printed="Latex (itching)",
        allergies=(A("Latex", "itching"),),
        others=(OtherPerson("Emergency contact", "Philippa", "Quillfeather", "1964-05-27", "wife"),),
        doctor="Dr. Bartosz Lindqvist",
    ),
]


def case(name: str) -> LayoutCase:
    return next(c for c in CASES if c.name == name)


def with_allergies(base: LayoutCase, printed: str, allergies: tuple[ExpectedAllergy, ...] = ()) -> LayoutCase:
    """The same form with another allergy answer (``()`` for a "none known" answer)."""
    return replace(base, name=f"{base.name}+{printed}", allergies_printed=printed, allergies=allergies)


__all__ = ["CASES", "case", "with_allergies"]
