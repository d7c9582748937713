"""Referral letters written as prose (DOCX), with their ground truth.

``golden.office_fixtures`` has a letter whose referral details sit under labels
("Reason for referral: ..."). Real letters more often say it in a sentence, put the
patient on a "Re:" line, greet the receiving clinician ("Dear Dr ...") and end with
a signature block; and they carry other people's names and dates (next of kin, the
referring doctor's details box) that must never identify the patient. Each builder
here writes one such letter in its own wording. ``e_referral`` was written after
the reading rules had been reviewed, to check them on a letter they were not built
against: an e-referral printout with "Priority: Urgent" and the reason as a label
in the middle of a paragraph, and a carer's date of birth in the prose.

Every person, number and clinic here is invented. Extractors never see these
objects, only the bytes ``build`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from golden.drawing import placed_text_pdf
from golden.ground_truth import ExpectedAllergy, ExpectedMedication
from golden.office_fixtures import ExpectedIdentity, document_bytes

M = ExpectedMedication
A = ExpectedAllergy


@dataclass(frozen=True)
class LetterCase:
    name: str
    identity: ExpectedIdentity
    # field -> value, as the extractor reports it ("urgency" as its level)
    referral: dict[str, str]
    medications: tuple[ExpectedMedication, ...] = ()
    allergies: tuple[ExpectedAllergy, ...] = ()
    nkda: bool = False
    # Names and dates of other people printed in the letter: never identifiers.
    not_the_patient: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)


def _new():
    import docx
    from docx.shared import Pt

    doc = docx.Document()
    doc.styles["Normal"].font.name = "Calibri"
    doc.styles["Normal"].font.size = Pt(11)
    return doc


# --------------------------------------------------------------------------- letters


def _grateful_letter() -> bytes:
    """Address block, a "Re:" line with DOB and NHS number, the request in one sentence,
    a next-of-kin block with its own name and date of birth, signature after a closing."""
    doc = _new()
    doc.sections[0].header.paragraphs[0].text = "Larkspur Row Surgery, 4 Tidewater Lane, Eastmere EM2 9PL"
    for line in ("3 June 2024", "", "Dr Priyanka Raghunathan", "Consultant Cardiologist",
                 "Eastmere General Hospital", ""):
        doc.add_paragraph(line)
    doc.add_paragraph("Re: Mr Halvard PETTERSEN, DOB 12/03/1961, NHS No 943 476 5919")
    doc.add_paragraph("Dear Dr Raghunathan,")
    doc.add_paragraph(
        "I would be grateful if you could see Mr Pettersen in the rapid access chest pain clinic for exertional "
        "chest tightness of six weeks' duration. The discomfort comes on after about two hundred metres on the "
        "flat and settles within minutes of rest; his resting ECG today was unremarkable.")
    doc.add_paragraph("His symptoms are progressing and I would be grateful if he could be seen urgently.")
    doc.add_paragraph("Current medications:")
    for item in ("Amlodipine 5 mg once daily", "Atorvastatin 20 mg at night"):
        doc.add_paragraph(item, style="List Bullet")
    doc.add_paragraph("Allergies: none known")
    doc.add_paragraph("Next of kin", style="Heading 2")
    doc.add_paragraph("Name: Ingrid Pettersen (wife)")
    doc.add_paragraph("Date of birth: 02/07/1963")
    doc.add_paragraph("If his pain becomes more frequent before your appointment he knows to call 999.")
    doc.add_paragraph("Yours sincerely,")
    doc.add_paragraph("Dr Amara Okafor")
    doc.add_paragraph("General Practitioner")
    return document_bytes(doc)


def _refer_to_service_letter() -> bytes:
    """"Dear Colleague", the patient on a "Patient:" line with DOB and hospital number,
    a referring-physician details table whose "Name" row is the doctor, a struck-out
    allergy, a signature inside the closing paragraph."""
    doc = _new()
    doc.add_paragraph("Patient: Mrs Ebele OKONKWO-BAINES    Date of birth: 21/09/1974    Hospital No: RX-771203")
    doc.add_paragraph("Dear Colleague,")
    doc.add_paragraph(
        "I am writing to refer Mrs Okonkwo-Baines to your rheumatology clinic regarding painful swelling of both "
        "wrists and morning stiffness lasting over an hour. Her CRP was 31 mg/L last week. This is a routine "
        "referral.")
    table = doc.add_table(rows=3, cols=2)
    title = table.rows[0].cells[0].merge(table.rows[0].cells[1])
    title.text = "REFERRING PHYSICIAN"
    table.rows[1].cells[0].text = "Name"
    table.rows[1].cells[1].text = "Dr Nadia Bellweather"
    table.rows[2].cells[0].text = "Practice"
    table.rows[2].cells[1].text = "Saltmarsh Medical Centre"
    doc.add_paragraph("")
    meds = doc.add_table(rows=3, cols=3)
    for r, row in enumerate((("Medication", "Dose", "Frequency"), ("Naproxen", "500 mg", "twice daily"),
                             ("Omeprazole", "20 mg", "once daily"))):
        for c, text in enumerate(row):
            meds.rows[r].cells[c].text = text
    allergy = doc.add_paragraph("Allergies: Ibuprofen (wheeze); ")
    struck = allergy.add_run("amoxicillin")
    struck.font.strike = True
    doc.add_paragraph("Kind regards,\nDr Nadia Bellweather\nGP Partner")
    return document_bytes(doc)


def _thank_you_letter() -> bytes:
    """A "Re:" line left empty before the greeting, the patient in a details table, a
    "Referring physician" heading over the doctor's own name line, a question-marked
    allergy and a reason given as "who has had ..."."""
    doc = _new()
    doc.add_paragraph("14 August 2024")
    doc.add_paragraph("Re:")
    doc.add_paragraph("Dear Dr Vasquez-Lindgren,")
    details = doc.add_table(rows=1, cols=4)
    for c, text in enumerate(("Patient", "Ottilie FERRAND-ACHEBE", "Date of birth", "30/01/1988")):
        details.rows[0].cells[c].text = text
    doc.add_paragraph("MRN: KV-448120")
    doc.add_paragraph(
        "Thank you for seeing this 36-year-old woman, who has had intermittent palpitations since January. "
        "I would value a cardiology opinion and would appreciate it if she could be seen as soon as possible.")
    doc.add_paragraph("Medication: Propranolol 10 mg as required")
    doc.add_paragraph("Allergies: Penicillin (rash); shellfish?")
    doc.add_paragraph("Referring physician", style="Heading 2")
    doc.add_paragraph("Name: Dr Ruairi Castellane")
    doc.add_paragraph("Telephone: 0161 555 0190")
    doc.add_paragraph("With best wishes,")
    doc.add_paragraph("Ruairi Castellane")
    return document_bytes(doc)


def _e_referral() -> bytes:
    """An e-referral printout: one "Label: value" per paragraph at the top ("Priority:
    Urgent", "Service: ..."), the patient with NHS number and DOB on one line, the
    reason as a label in the middle of a clinical-details paragraph, a carer named
    with her own date of birth in that paragraph; no salutation, no signature."""
    doc = _new()
    doc.add_paragraph("e-Referral Service - Referral request", style="Title")
    doc.add_paragraph("UBRN: 0004 4471 2290    Sent: 21/05/2024")
    doc.add_paragraph("Patient: Mr Bartholomew ISINGLASS    NHS No: 485 777 3456    DOB: 17-Oct-1949")
    doc.add_paragraph("Requested by: Dr Yusuf Adeleke-Brandt, Mossgate Health Centre")
    doc.add_paragraph("Service: Respiratory medicine - Hillcrest Hospital")
    doc.add_paragraph("Priority: Urgent")
    doc.add_paragraph(
        "Clinical details: 75-year-old ex-smoker (40 pack-years) seen today with his daughter. Reason for "
        "request: persistent cough for three months with weight loss of 5 kg and a right upper lobe opacity on "
        "chest X-ray. He lives with his daughter, Clementine Isinglass (DOB 04/05/1978), who is his main carer "
        "and may attend with him.")
    doc.add_paragraph("Current medication: Tiotropium 18 mcg once daily; Salbutamol 100 mcg inhaler as required")
    doc.add_paragraph("Allergies: Doxycycline - photosensitivity; possible penicillin")
    doc.add_paragraph("Referrer contact: 0161 555 0144 (bypass line)")
    return document_bytes(doc)


# --------------------------------------------------------------------------- clinical details in prose
# Letters whose allergies, medications, problems and results are told only in sentences
# (issue 23, item 5), written after the sentence readers of ``extract.values.prose_*``
# to test them on wording they were not built against; two are printed to PDF.


def _pdf_letter(paragraphs: list[str], width: int = 92) -> bytes:
    """A typed PDF letter: each paragraph wrapped to ``width`` characters, a blank line between."""
    import textwrap

    from golden.scan import typed_pdf

    lines: list[str] = []
    for para in paragraphs:
        lines += textwrap.wrap(para, width) or [""]
        lines.append("")
    return typed_pdf(lines, fontsize=10, origin=(60, 70), leading=1.5)


_ANTICOAG = [
    "12 September 2024",
    "Re: Mrs Wilhelmina ASHGROVE, DOB 14/02/1951, NHS No 401 223 9087",
    "Dear Dr Ferris,",
    "I would be grateful if you could see Mrs Ashgrove in the anticoagulation clinic for review of her "
    "unstable INR. She has a background of type 2 diabetes and hypertension, with no history of stroke. "
    "She is allergic to penicillin, which gave her a rash. She takes warfarin 5 mg orally once daily, "
    "metformin 500 mg twice daily and lisinopril 10 mg daily. Her HbA1c was 8.1% in March, potassium "
    "5.9 mmol/L and INR 3.4 last week.",
    "Her mother, who lives with her, also takes warfarin and has atrial fibrillation. If her INR rises "
    "above 5 before you see her, we will hold a dose.",
    "Yours sincerely,",
    "Dr Amos Kettle",
]


def _anticoag_docx() -> bytes:
    """The letter of the issue: everything clinical is in one paragraph of sentences,
    and a paragraph about her mother and a plan "if her INR rises"."""
    doc = _new()
    for text in _ANTICOAG:
        doc.add_paragraph(text)
    return document_bytes(doc)


def _renal_pdf() -> bytes:
    """A US nephrology referral printed to PDF: "PMH:" and "Allergies:" opening
    sentences inside a paragraph, "was started on", "continues on", results in mg/dL,
    a brother's diabetes and a denied allergy."""
    return _pdf_letter([
        "Cedar Ridge Family Medicine - 1180 Orchard Avenue, Dayton, OH",
        "October 3, 2024",
        "Patient: Desmond OKAFOR-LINDQVIST    DOB: 07/22/1958    MRN: CR-558201",
        "Dear Dr. Halvorsen,",
        "Thank you for seeing Mr. Okafor-Lindqvist regarding his declining kidney function. PMH: AF, CKD "
        "stage 3, gout. Allergies: sulfa (hives). He denies any allergy to iodinated contrast. He was "
        "started on apixaban 5 mg PO bid in June and continues on furosemide 40 mg PO daily and allopurinol "
        "100 mg daily. His creatinine was 2.1 mg/dL on 09/18/2024 with an eGFR of 32. His brother has type 1 "
        "diabetes.",
        "Sincerely,",
        "Maribel Santos-Whitfield, MD",
    ])


def _nkda_pdf() -> bytes:
    """A UK letter printed to PDF with no known allergies said in a sentence, the
    medicines after "Current medications:" inside a sentence, a diagnosis told with
    "was diagnosed with" and results with "has risen to"."""
    return _pdf_letter([
        "Harrowgate Lane Surgery",
        "21 January 2025",
        "Re: Mr Tobias FENWICK-ADEYEMI, DOB 03/09/1967, NHS No 612 884 2071",
        "Dear Dr Nakamura-Price,",
        "I would be grateful if you could see Mr Fenwick-Adeyemi urgently in the endocrinology clinic. He "
        "was diagnosed with hypothyroidism in 2016 and is known to have obstructive sleep apnoea. He has no "
        "known drug allergies. Current medications: levothyroxine 100 micrograms each morning and "
        "atorvastatin 20 mg at night. His TSH has risen to 14.2 mU/L and his free T4 was 7.9 pmol/L this "
        "month.",
        "Kind regards,",
        "Dr Imogen Castellanos",
    ])


def _asthma_docx() -> bytes:
    """A British GP letter (DOCX): an allergy told as "X made her vomit" and as "a
    penicillin allergy - swelling", an inhaler and a steroid told in sentences, a
    "no history of" and a hypothetical result that are not the patient's."""
    doc = _new()
    for text in (
        "Re: Ms Perpetua LINDGREN-OSEI, DOB 28/11/1984, NHS No 733 190 4462",
        "Dear Dr Abernethy,",
        "Please could you see Ms Lindgren-Osei in the respiratory clinic regarding her poorly controlled "
        "asthma. She is known to have asthma and eczema, and there is no history of smoking-related lung "
        "disease. Codeine made her vomit, and she has a penicillin allergy - swelling of the lips. She uses "
        "a salbutamol inhaler 100 micrograms as required and was started on prednisolone 30 mg once daily "
        "for five days. Her haemoglobin was 118 g/L and eosinophils 0.9 x10^9/L in August. If her peak flow "
        "falls below 200 she will attend A&E.",
        "With best wishes,",
        "Dr Callum Rhys-Bannerman",
    ):
        doc.add_paragraph(text)
    return document_bytes(doc)


def _consult_tables_pdf() -> bytes:
    """A US consultation request printed to PDF whose lists are tables: a numbered
    "Active problem list:", "Medications (reconciled ...):" over a Medication | Dose |
    Route | Frequency | Status table with a discontinued medicine, an Allergen |
    Reaction | Severity table, and "heat intolerance" in the review of systems."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 48.0

    def put(x: float, text: str, bold: bool = False, size: float = 9.5) -> None:
        page.insert_text((x, y), text, fontsize=size, fontname="hebo" if bold else "helv")

    put(50, "Lakeview Internal Medicine", True, 13)
    for row in (((50, "REFERRAL FOR CONSULTATION - ENDOCRINOLOGY"),), ((50, "Patient: Rosalind Achebe-Whitford"),
                (330, "DOB: 09/23/1971"), (460, "MRN: LIM-208815")),
                ((50, "Referring provider: Gideon Park, MD"), (330, "Date: 12/01/2026"))):
        y += 20
        for x, text in row:
            put(x, text, text.isupper())
    y += 26
    put(50, "Reason for referral:", True)
    y += 14
    put(62, "Suppressed TSH with weight loss and palpitations; please evaluate for hyperthyroidism.")
    y += 22
    put(50, "Active problem list:", True)
    for item in ("1. Subclinical hyperthyroidism", "2. Essential hypertension", "3. Generalized anxiety disorder",
                 "4. Osteopenia"):
        y += 13
        put(62, item)
    tables = (("Medications (reconciled 11/20/2026):", (62, 200, 270, 320, 450),
               ("Medication", "Dose", "Route", "Frequency", "Status"),
               (("Amlodipine", "5 mg", "PO", "once daily", "Active"), ("Sertraline", "50 mg", "PO", "once daily", "Active"),
                ("Propranolol", "10 mg", "PO", "three times daily PRN", "Active"),
                ("Hydrochlorothiazide", "25 mg", "PO", "once daily", "Discontinued"))),
              ("Allergies/Intolerances:", (62, 200, 330), ("Allergen", "Reaction", "Severity"),
               (("Sulfa drugs", "Hives", "Moderate"), ("Latex", "Contact dermatitis", "Mild"))))
    for title, xs, header, rows in tables:
        y += 22
        put(50, title, True)
        y += 14
        for x, text in zip(xs, header):
            put(x, text, True, 9)
        for row in rows:
            y += 13
            for x, text in zip(xs, row):
                put(x, text)
    y += 22
    put(50, "Review of systems:", True)
    y += 14
    put(62, "Reports heat intolerance and tremor. Denies chest pain, syncope or diarrhea.")
    y += 22
    put(50, "Thank you for seeing her.  Gideon Park, MD")
    data = doc.tobytes()
    doc.close()
    return data


def _cardio_problem_table_pdf() -> bytes:
    """A British-style cardiology letter printed to PDF: a "Diagnosis | ICD-10 | Status"
    problem table whose first name nearly reaches the code column and whose last row is
    "Resolved", and a "Drug | Dose | Directions | Stopped" table with a stop date."""
    return placed_text_pdf([
        (50, 50, "Summit Cardiology Associates", 12, "hebo"),
        (50, 76, "Re: Mr Anders LINDQVIST-OBI, DOB 02/11/1955, MRN SC-88213"),
        (50, 96, "Dear Dr Patel,"),
        (50, 116, "Thank you for seeing Mr Lindqvist-Obi, who has worsening exertional dyspnoea."),
        (50, 140, "Problem list", 10, "hebo"),
        (62, 156, "Diagnosis", 9, "hebo"), (260, 156, "ICD-10", 9, "hebo"), (330, 156, "Status", 9, "hebo"),
        (62, 170, "Heart failure with reduced ejection fraction"), (260, 170, "I50.2"), (330, 170, "Active"),
        (62, 184, "Atrial fibrillation"), (260, 184, "I48.91"), (330, 184, "Active"),
        (62, 198, "Community-acquired pneumonia"), (260, 198, "J18.9"), (330, 198, "Resolved"),
        (50, 222, "Current medications", 10, "hebo"),
        (62, 238, "Drug", 9, "hebo"), (200, 238, "Dose", 9, "hebo"), (280, 238, "Directions", 9, "hebo"),
        (430, 238, "Stopped", 9, "hebo"),
        (62, 252, "Sacubitril/valsartan"), (200, 252, "49/51 mg"), (280, 252, "twice daily"),
        (62, 266, "Apixaban"), (200, 266, "5 mg"), (280, 266, "twice daily"),
        (62, 280, "Amiodarone"), (200, 280, "200 mg"), (280, 280, "once daily"), (430, 280, "10/2026"),
        (50, 304, "No known drug allergies."),
        (50, 328, "Kind regards,"), (50, 342, "Dr Yusuf Adeyemi"),
    ], height=792, size=9.5)


BUILDERS: dict[str, Callable[[], bytes]] = {
    "grateful_letter": _grateful_letter,
    "refer_to_service_letter": _refer_to_service_letter,
    "thank_you_letter": _thank_you_letter,
    "e_referral": _e_referral,
    "prose_anticoag_docx": _anticoag_docx,
    "prose_renal_pdf": _renal_pdf,
    "prose_nkda_pdf": _nkda_pdf,
    "prose_asthma_docx": _asthma_docx,
    "consult_tables_pdf": _consult_tables_pdf,  # written after the PDF table rule (issue 23, 2026-12-07)
    "cardio_problem_table_pdf": _cardio_problem_table_pdf,  # written after it too, same day
}

CASES: list[LetterCase] = [
    LetterCase(
        name="grateful_letter",
        identity=ExpectedIdentity("Mr Halvard PETTERSEN", "1961-12-03", "943 476 5919"),
        referral={"letter_date": "2024-06-03", "receiving_provider": "Dr Raghunathan",
                  "reason": "exertional chest tightness of six weeks' duration",
                  "requested_service": "rapid access chest pain clinic", "urgency": "urgent",
                  "referring_provider": "Dr Amara Okafor"},
        medications=(M("Amlodipine", "5 mg", "once daily"), M("Atorvastatin", "20 mg", "at night")),
        nkda=True,
        not_the_patient=("Ingrid", "1963-07-02", "Okafor", "Raghunathan"),
    ),
    LetterCase(
        name="refer_to_service_letter",
        identity=ExpectedIdentity("Mrs Ebele OKONKWO-BAINES", "1974-09-21", "RX-771203"),
        referral={"reason": "painful swelling of both wrists and morning stiffness lasting over an hour",
                  "requested_service": "rheumatology clinic", "urgency": "routine",
                  "referring_provider": "Dr Nadia Bellweather", "referring_clinic": "Saltmarsh Medical Centre"},
        medications=(M("Naproxen", "500 mg", "twice daily"), M("Omeprazole", "20 mg", "once daily")),
        allergies=(A("Ibuprofen", "wheeze"), A("amoxicillin", None, needs_review=True)),
        not_the_patient=("Bellweather", "Colleague"),
    ),
    LetterCase(
        name="thank_you_letter",
        identity=ExpectedIdentity("Ottilie FERRAND-ACHEBE", "1988-01-30", "KV-448120"),
        referral={"letter_date": "2024-08-14", "receiving_provider": "Dr Vasquez-Lindgren",
                  "reason": "intermittent palpitations since January",
                  "requested_service": "cardiology opinion", "urgency": "soon",
                  "referring_provider": "Dr Ruairi Castellane"},
        medications=(M("Propranolol", "10 mg", "as required", needs_review=False),),
        allergies=(A("Penicillin", "rash"), A("shellfish?", None, needs_review=True)),
        not_the_patient=("Vasquez", "Castellane", "Dear"),
    ),
    LetterCase(
        name="e_referral",
        identity=ExpectedIdentity("Mr Bartholomew ISINGLASS", "1949-10-17", "485 777 3456"),
        referral={"referring_provider": "Dr Yusuf Adeleke-Brandt, Mossgate Health Centre",
                  "requested_service": "Respiratory medicine - Hillcrest Hospital", "urgency": "urgent",
                  "reason": "persistent cough for three months with weight loss of 5 kg and a right upper lobe "
                            "opacity on chest X-ray"},
        medications=(M("Tiotropium", "18 mcg", "once daily"), M("Salbutamol", "100 mcg", "as required")),
        allergies=(A("Doxycycline", "photosensitivity"), A("possible penicillin", None, needs_review=True)),
        not_the_patient=("Clementine", "1978-05-04", "1978-04-05", "Adeleke"),
    ),
]


def build(name: str) -> bytes:
    return BUILDERS[name]()


def case(name: str) -> LetterCase:
    return next(c for c in CASES if c.name == name)


__all__ = ["LetterCase", "BUILDERS", "CASES", "build", "case"]
