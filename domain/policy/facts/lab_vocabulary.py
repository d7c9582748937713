"""Known lab units and analyte names, for judging OCR reads (pure).

A text layer says exactly what was printed; OCR can turn "A1c" into "Aic",
"x10E3/uL" into "x lOE3/uL" or "7.9" into "79". A lab result read by OCR is
therefore promoted only when its test name and unit are ones we know and its
value is of a plausible size for its reference range; anything else stays
visible in review with the reason. Names and spellings come from the one analyte
vocabulary (``domain.policy.facts.analytes``): a unit is known when an analyte there lists it
or it is one of the general units below.
"""

from __future__ import annotations

import re
from functools import lru_cache

from domain.policy.facts.analytes import all_analytes, known_name, normalize_unit

# Units beyond those the vocabulary lists for its analytes (other tests, other spellings).
_UNITS = """
% mg/dl g/dl g/l mg/l ug/dl mcg/dl ug/l mcg/l ng/ml ng/dl pg/ml pg fl mmol/l umol/l nmol/l pmol/l meq/l
u/l iu/l mu/l miu/l uiu/ml miu/ml mciu/ml units/l x10e3/ul x10e6/ul x10e9/l x10e12/l 10*3/ul 10*6/ul 10^3/ul
10^6/ul k/ul m/ul thou/ul mill/ul /ul cells/ul /hpf /lpf ml/min/1.73m2 ml/min mg/g mg/mmol mg/24h g/24h
mm/hr sec seconds ratio index mosm/kg mmhg bpm kg cm copies/ml au/ml titer ug/ml mcg/ml cfu/ml cfu/l org/ml
"""
KNOWN_UNITS = frozenset(_UNITS.split())

_NUMBER = re.compile(r"^[<>]?=?\s*(\d+(?:\.\d+)?)$")
_BOUNDS = re.compile(r"(\d+(?:\.\d+)?)")


@lru_cache(maxsize=1)
def _all_known_units() -> frozenset[str]:
    listed = {normalize_unit(u) for a in all_analytes() for u in a.units}
    return KNOWN_UNITS | (listed - {""})


def known_unit(unit: str) -> bool:
    return normalize_unit(unit) in _all_known_units()


def known_analyte(name: str) -> bool:
    """A test name the analyte vocabulary (``domain.policy.facts.analytes``) knows."""
    return known_name(name)


def implausible_magnitude(value: str, reference_range: str) -> bool:
    """True when a numeric value is more than ten times beyond its reference range:
    the signature of a decimal point lost in reading ("79" for "7.9")."""
    m = _NUMBER.match(value.strip())
    bounds = [float(b) for b in _BOUNDS.findall(reference_range or "")]
    if not m or not bounds:
        return False
    number, top = float(m.group(1)), max(bounds)
    low = min(bounds) if len(bounds) > 1 else None
    if top > 0 and number > 10 * top:
        return True
    return low is not None and low > 0 and number < low / 10


# What an organism's susceptibility result prints for how it fared (HL7 table 0078).
SUSCEPTIBILITY_FLAGS = {"R": "resistant", "S": "susceptible", "I": "intermediate", "MS": "moderately susceptible",
                        "VS": "very susceptible", "SDD": "susceptible, dose dependent"}
_SUSCEPTIBILITY_TEST = re.compile(r"susceptib|sensitivit|\bmic\b", re.I)


# A microbiology report's words, kept as data: the labels over a culture's finding
# ("Culture: Escherichia coli >10^5 CFU/mL", "Gram stain: ...", each with what it is), the column labels of a susceptibility
# table ("Antibiotic | Result | MIC (mg/L)"), the labels of a susceptibility list on
# one line ("Sensitivities: amoxicillin R, nitrofurantoin S"), and the words a report
# prints for how an organism fared, as their HL7 code.
CULTURE_LABELS = {**dict.fromkeys(("culture", "culture result", "culture results", "culture report",
                                    "result of culture", "organism", "organisms", "organism isolated",
                                    "organisms isolated", "isolate", "isolates", "isolated", "growth"), "culture"),
                  **dict.fromkeys(("gram stain", "gram film", "gram"), "Gram stain")}
# Under a culture's heading ("CULTURE, URINE"), the label of its report is its finding's.
CULTURE_REPORT_LABELS = frozenset({"final report", "report", "result", "final result", "preliminary report",
                                   "preliminary result", "interim report"})
ANTIBIOTIC_COLUMNS = ("antibiotic", "antibiotics", "antimicrobial", "antimicrobials", "antibiotic tested",
                      "antimicrobial agent", "agent", "drug")
INTERPRETATION_COLUMNS = ("interpretation", "interp", "sensitivity", "susceptibility", "s/i/r", "sir", "s/r",
                          "result", "reading")
MIC_COLUMNS = ("mic",)
SUSCEPTIBILITY_LIST_LABELS = {"sensitivities": None, "susceptibilities": None, "antibiotic sensitivities": None,
                              "antibiotic susceptibilities": None, "antibiogram": None,
                              "sensitive to": "S", "susceptible to": "S", "resistant to": "R",
                              "intermediate to": "I"}
_SUSCEPTIBILITY_SAID = {"SENSITIVE": "S", "SUSCEPTIBLE": "S", "SENS": "S", "RESISTANT": "R", "RES": "R",
                        "INTERMEDIATE": "I", "INT": "I"}


def susceptibility_code(text: str) -> str | None:
    """The HL7 code ("R", "S", "I", "SDD"...) of how an organism fared, as a report
    prints it ("R", "Resistant", "sensitive"), or None for anything else."""
    key = (text or "").strip().strip("().,;:*").upper()
    return key if key in SUSCEPTIBILITY_FLAGS else _SUSCEPTIBILITY_SAID.get(key)


_SUSCEPTIBILITY_NAME = re.compile(r"^(?P<drug>.+?)\s*\[susceptibility\]", re.I)


def susceptibility_test(antibiotic: str) -> str:
    """A susceptibility result's test name, as HL7 cultures name theirs:
    "amoxicillin" -> "Amoxicillin [Susceptibility]" (``antibiotic_of`` reads it back)."""
    name = antibiotic.strip()
    return f"{name[:1].upper()}{name[1:]} [Susceptibility]"


def antibiotic_of(test_name: str) -> str | None:
    """The antibiotic a susceptibility result is of ("Trimethoprim [Susceptibility]" ->
    "trimethoprim"; "Gentamicin (high level) [Susceptibility]" -> "gentamicin"), None for
    any other result."""
    m = _SUSCEPTIBILITY_NAME.match(test_name or "")
    return re.sub(r"\s*\(.*\)\s*$", "", m["drug"]).strip().lower() if m else None


def susceptibility_words(test_name: str, printed_flags) -> str | None:
    """"resistant" for a susceptibility result printed R (a flag the result reads only as
    abnormal), None for any other result or flag."""
    if not _SUSCEPTIBILITY_TEST.search(test_name or ""):
        return None
    words = [SUSCEPTIBILITY_FLAGS[f.upper()] for f in printed_flags or () if f.upper() in SUSCEPTIBILITY_FLAGS]
    return ", ".join(words) or None


# A blood group as a report prints it for the test that types it ("ABO group | O",
# "Blood group | A Rh D negative"): capital letters no other result is read as.
_BLOOD_GROUP_TEST = re.compile(r"\b(?:abo|blood\s+(?:group|type|grouping))\b", re.I)
_BLOOD_GROUP = re.compile(r"(?:O|A|B|AB)(?:\s*(?i:rh\s*\(?d\)?|rhd|rh)?\s*(?i:pos|positive|neg|negative|\+|-|\u2212))?")


BLOOD_GROUP_DOUBT = "a blood group read from its letters: check it against the page before it is charted"


def blood_group_result(test_name: str, value: str) -> bool:
    """Whether ``value`` is a blood group printed for a blood grouping test."""
    return bool(_BLOOD_GROUP_TEST.search(test_name or "")) and bool(_BLOOD_GROUP.fullmatch((value or "").strip()))
