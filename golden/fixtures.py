"""The default synthetic lab reports and intake forms: patients, cases, and the PDFs they draw.

Every patient, clinic and value here is invented. A case's ground truth (its
``results`` / expected fields, ``golden.ground_truth``) is what an extractor must find;
its *layout* (``golden.lab_layouts``, ``golden.intake_forms``) draws it in a visibly
different way. Extractors never see these objects, only the PDF bytes ``render_lab`` /
``render_intake`` return. This module is the fixtures' front door: ``__all__`` names
the types, layouts and renderers along with the default cases.
"""

from __future__ import annotations

from dataclasses import replace

from golden.ground_truth import ExpectedAllergy, ExpectedLab, ExpectedMedication, IntakeCase, LabCase, Patient
from golden.intake_forms import INTAKE_LAYOUTS, render_intake
from golden.lab_layouts import LAB_LAYOUTS, render_lab

# --------------------------------------------------------------------------- default cases

MARISOL = Patient("Marisol", "Quenneville", "1958-07-22", "QX-20417", middle="Teodora", sex="F")
TOBIAS = Patient("Tobias", "Ferreira-Lund", "1971-03-09", "884213", sex="M")
ODALYS = Patient("Odalys", "Brannigan", "1990-11-30", "A0031977", sex="F")
KASIMIR = Patient("Kasimir", "Oyelaran-Voss", "1946-01-05", "551-207-9", sex="M")
WREN = Patient("Wren", "Achterberg", "1983-09-14", "MR77120", sex="M")

L = ExpectedLab
CBC = ("Complete Blood Count", (
    L("WBC", "11.8", "x10E3/uL", "3.4-10.8", "high", "H"),
    L("RBC", "4.52", "x10E6/uL", "3.77-5.28", "normal"),
    L("Hemoglobin", "13.1", "g/dL", "11.1-15.9", "normal"),
    L("Hematocrit", "39.6", "%", "34.0-46.6", "normal"),
    L("Platelets", "142", "x10E3/uL", "150-450", "low", "L"),
))
CMP = ("Comprehensive Metabolic Panel", (
    L("Glucose", "105", "mg/dL", "65-99", "high", "H"),
    L("BUN", "18", "mg/dL", "6-24", "normal"),
    L("Creatinine", "0.91", "mg/dL", "0.57-1.00", "normal"),
    L("Sodium", "139", "mmol/L", "134-144", "normal"),
    L("Potassium", "6.8", "mmol/L", "3.5-5.2", "critical_high", "HH"),
    L("eGFR", ">60", "mL/min/1.73m2", ">59", "normal"),
))
LIPIDS = ("Lipid Panel", (
    L("Cholesterol, Total", "212", "mg/dL", "100-199", "high", "H"),
    L("LDL Cholesterol", "148", "mg/dL", "<100", "high", "H"),
    L("HDL Cholesterol", "38", "mg/dL", ">39", "low", "L"),
    L("Triglycerides", "131", "mg/dL", "0-149", "normal"),
))
A1C = ("Hemoglobin A1c", (L("Hemoglobin A1c", "7.9", "%", "<5.7", "high", "H"),))
URINE = ("Urinalysis", (
    L("Urine Protein", "Negative", "", "Negative", "normal"),
    L("Specific Gravity", "1.015", "", "1.005-1.030", "normal"),
    L("Urine Glucose", "Positive", "", "Negative", "abnormal", "A"),
))

LAB_CASES: list[LabCase] = [
    LabCase("classic_cbc_lipids", "classic", MARISOL, "2026-04-10", (CBC, LIPIDS, A1C)),
    LabCase("split_range_cmp", "split_range", TOBIAS, "2026-04-10", (CBC, CMP, LIPIDS, A1C),
            lab_name="Northgate Clinical Reference Lab"),
    LabCase("units_in_range_mixed", "units_in_range", ODALYS, "2026-07-22", (CMP, LIPIDS, URINE),
            lab_name="Meridian Diagnostics"),
    LabCase("dotted_cbc_urine", "dotted", KASIMIR, "2026-07-22", (CBC, A1C, URINE),
            lab_name="Lakeshore Community Hospital Laboratory"),
    LabCase("two_page_panels", "two_page", TOBIAS, "2026-04-10", (CMP, LIPIDS, CBC, A1C),
            lab_name="Cascade Regional Laboratory Services"),
    LabCase("landscape_courier_lipids", "landscape_courier", WREN, "2026-04-10", (LIPIDS, CMP, A1C),
            lab_name="Bayfront Outpatient Lab"),
]

# The units-in-range layout prints units only inside the range cell, so a result
# without a range cannot carry a unit there; its cases avoid such rows.

M = ExpectedMedication
INTAKE_CASES: list[IntakeCase] = [
    IntakeCase(
        name="two_column_pregnancy_note",
        layout="two_column",
        patient=ODALYS,
        phone="(541) 555-0199",
        address=("77 Larkspur Lane", "Bend, OR 97702"),
        chief_concern="Persistent cough and low-grade fever for 5 days",
        medications=(
            M("Metformin", "500 mg", "twice daily", "Metformin 500 mg twice daily"),
            M("Lisinopril", "10 mg", "once daily", "Lisinopril 10 mg once daily"),
            M("Vitamin D", "1000 IU", "daily", "Vitamin D 1000 IU daily"),
        ),
        allergies_printed="Penicillin (hives); Codeine - nausea",
        allergies=(ExpectedAllergy("Penicillin", "hives"), ExpectedAllergy("Codeine", "nausea")),
        family_history=("Mother - type 2 diabetes; Father - heart attack at 62",),
        preferences=(("Preferred appointment time", "Weekday mornings"), ("Preferred contact method", "Text message")),
        notes=("Thinks she might be pregnant, last period unsure.",),
        review_terms=("pregnant",),
        past_history="Type 2 diabetes, hypertension",
    ),
    IntakeCase(
        name="questions_margin_sulfa",
        layout="questions",
        patient=WREN,
        phone="541-555-0123",
        address=(),
        chief_concern="Chest pain when climbing stairs, started last week",
        medications=(
            M("Atorvastatin", "20 mg", "at bedtime", "Atorvastatin 20 mg at bedtime"),
            M("Aspirin", "81 mg", "daily", "Aspirin 81 mg daily"),
            M("Albuterol inhaler", "2 puffs", "as needed", "Albuterol inhaler 2 puffs as needed"),
        ),
        allergies_printed="NKDA",
        allergies=(),
        family_history=("Father - heart disease", "Sister - breast cancer"),
        preferences=(("When is the best time to reach you?", "After 5 pm on weekdays"),),
        margin_note="? sulfa",
        review_terms=("sulfa", "Chest pain"),
    ),
]


def lab_case(name: str) -> LabCase:
    return next(c for c in LAB_CASES if c.name == name)


def intake_case(name: str) -> IntakeCase:
    return next(c for c in INTAKE_CASES if c.name == name)


def with_layout(case: LabCase, layout: str) -> LabCase:
    """The same results drawn in another layout (layouts are interchangeable)."""
    return replace(case, name=f"{case.name}@{layout}", layout=layout)


def write_all(out_dir) -> list[str]:
    """Write every default case as a PDF into ``out_dir`` (for eyeballing and the eval)."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for case in LAB_CASES:
        path = out / f"lab_{case.name}.pdf"
        path.write_bytes(render_lab(case))
        written.append(str(path))
    for case in INTAKE_CASES:
        path = out / f"intake_{case.name}.pdf"
        path.write_bytes(render_intake(case))
        written.append(str(path))
    return written


__all__ = [
    "Patient", "ExpectedLab", "LabCase", "ExpectedMedication", "ExpectedAllergy", "IntakeCase",
    "LAB_LAYOUTS", "INTAKE_LAYOUTS", "LAB_CASES", "INTAKE_CASES", "render_lab", "render_intake",
    "lab_case", "intake_case", "with_layout", "write_all",
]
