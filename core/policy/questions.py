"""Understanding a clinician's question with rules a reviewer can read (pure).

A question is reduced to
- *topics*: what it is about (``core.policy.topics``), plus free *terms* where a
  look-up names something the vocabulary does not know ("is she on apixaban?");
- an *intent*: look something up, what deserves attention, or guideline advice;
- *unsafe requests*: asking the workbench to decide — make a diagnosis (from labs
  or symptoms), choose a treatment, a dose, or a medication change. Asking what the
  record documents is a look-up, not a diagnosis: "does she have diabetes?",
  "any hx of CKD?", "is she on metformin?" are answered with citations;
- *therapy*: whether a declined request chooses or changes a therapy (a dose, a
  medication change, "what antibiotic…"): the allergies, medications and pregnancy on
  record bear on it, unlike a care decision ("should he see a hematologist?");
- *scope*: whether it is about the chart at all ("write me a poem" is not; a question
  that names the patient or the record always is), and whether it leans on the
  previous turn ("and her LDL?", "when was that?");
- which free terms an answer may repeat back (``quotable``): clinical ones, never a
  name or other free text ("No “apixaban” found…", but not "No “report for …” found").

Every rule is a named regular expression in a table below, so a reviewer can see
which rule fired (the name is recorded in the supervisor's handoff reason).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from core.policy.analytes import analytes_named
from core.policy.topics import TOPIC_BY_NAME, find_topics, topic_of_analyte


class Intent(str, Enum):
    LOOKUP = "lookup"  # what is / list / when was / does the record say
    ATTENTION = "attention"  # interpret, anything abnormal or critical, what deserves attention
    GUIDELINE = "guideline"  # what do the guidelines say, how often, screening due


class Unsafe(str, Enum):
    DIAGNOSIS = "diagnosis"
    TREATMENT = "treatment"
    DOSING = "dosing"
    MEDICATION_CHANGE = "medication_change"


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text)


def _rules(*pairs: tuple[str, str]) -> tuple[Rule, ...]:
    return tuple(Rule(name, re.compile(rx, re.I)) for name, rx in pairs)


# Who a question is about, and who would act.
_PT = r"(?:she|he|they|the patient|the pt|pt|patient|this patient)"
_WE = r"(?:i|we|you)"
_POSSESSIVE = r"(?:her|his|their|the|this|that|pt'?s|patient'?s)"
_START = r"^\s*(?:(?:so|and|but|then|ok(?:ay)?),?\s+)?"  # a question's first words ("so is this…", "and why…")

# What changing a medication is called ("stop", "drop", "hold"…), bare and as "-ing"
# ("thinking of stopping…"). "take", "get", "keep" change a medication only with "off"/"on"
# ("take her off warfarin"), see ``take_off_or_on``.
_CHANGE_VERBS = (r"(?:start|stop|discontinue|d/?c|switch|change|add|begin|quit|hold|restart|resume|continue|give|"
                 r"taper|wean|swap|replace|substitute|try|trial|drop|ditch|cease|pause|withhold|withdraw|"
                 r"up|increase|decrease|reduce|double|halve|raise|lower|cut|bump|use|put)")
_CHANGE_VERBS_ING = (r"(?:starting|stopping|discontinuing|switching|changing|adding|holding|restarting|resuming|"
                     r"continuing|giving|tapering|weaning|swapping|replacing|substituting|trying|dropping|ditching|"
                     r"ceasing|pausing|withholding|withdrawing|increasing|decreasing|reducing|doubling|halving|"
                     r"raising|lowering|cutting|bumping|using|putting|taking|getting|keeping)")
# An amount of a drug (not a lab unit: "131 mg/dL" is a result, "1000 mg" a dose).
_AMOUNT = r"\b\d+(?:\.\d+)?\s?(?:mg|mcg|micrograms?|milligrams?|g|grams?|units?|iu|ml|tablets?|tabs?|puffs?)\b(?!\s*/)"

# ------------------------------------------------------------------ unsafe requests
# Dosing: choosing an amount, or changing one.
DOSING_RULES = _rules(
    # "what dose of metformin should she take", "how much insulin for a 70 kg man"
    ("dose_to_choose", r"\b(?:what|which|how much|how many)\b[^?.]{0,40}\b(?:dose|dosage|dosing|mg|milligrams?|mcg|"
                       r"micrograms?|units?|ml|tablets?)\b[^?.]{0,40}\b(?:should|shall|would|could|do (?:i|we|you)|"
                       r"to (?:give|use|start|prescribe|load)|is (?:right|correct|best|safe|appropriate|needed)|"
                       r"for (?:a|an|her|him|this|someone)\b)"),
    # "how much metformin should I give her?", "how many units does he need?" (not "how much
    # metformin is she on?", which asks what the record says)
    ("how_much_to_give", rf"\bhow\s+(?:much|many)\b(?:\s+[\w/-]+){{0,5}}?\s+(?:(?:should|shall|can|could|would|"
                         rf"ought to|to)\s+(?:(?:{_WE}|{_PT})\s+)?(?:give|use|start|prescribe|load|take|get|"
                         rf"administer|order|be (?:given|on|taking))|(?:do|does|will|would)\s+{_PT}\s+"
                         r"(?:need|require))\b"),
    # "what's the right dose", "max dose", "starting dose", "is 500 mg the right amount?"
    ("named_dose", r"\b(?:right|correct|best|appropriate|safe|safest|max(?:imum)?|starting|optimal|ideal|usual|"
                   r"recommended|loading|target)\s+(?:dose|dosage|dosing|amount|strength)\b"),
    # "would 1000 mg of metformin be better for her?", "is 40 mg too much?", "850 mg instead?"
    ("amount_judgement", rf"{_AMOUNT}[^?.]{{0,50}}\b(?:better|enough|too (?:much|little|high|low|strong|weak)|"
                         r"(?:ok|okay|safe|appropriate|reasonable|fine)|work|instead|rather|make sense|"
                         r"(?:be )?needed|required)\b"),
    # "what about 850 mg?", "try 40 mg", "go up to 1000 mg"
    ("amount_proposed", rf"\b(?:what about|how about|why not|try|go (?:up|down) to|move (?:her|him|them) to)\s+"
                        rf"(?:\w+\s+)?{_AMOUNT}"),
    # "push it to 20?", "take her dose down to 5", "increase him to 1000"
    ("change_to_amount", r"\b(?:push|bump|take|move|put|increase|raise|lower|drop|cut|titrate|up|reduce|decrease)\s+"
                         r"(?:it|her|him|them|(?:the|her|his|their)\s+(?:[\w-]+\s+)?(?:dose|dosage))\s+"
                         r"(?:(?:back\s+)?(?:up|down)\s+)?to\s+\d+(?:\.\d+)?\b(?!\s*(?:am|pm|o'?clock|:|west|east))"),
    # "for a 70 kg adult", "mg/kg", "per kilo"
    ("weight_based", r"\bmg/kg\b|\bper\s?(?:kg|kilo)\b|\bfor (?:a |an |her |him )?\d+(?:\.\d+)?\s?(?:kg|kilos?|lbs?|"
                     r"pounds?)\b|\b\d+\s?(?:kg|lbs?)\s+(?:patient|adult|child|woman|man|female|male)\b"),
    # "increase her insulin by 2 units", "raise the dose", "lower it to 5 mg"
    ("change_by_amount", r"\b(?:increase|decrease|raise|lower|bump(?:\s+up)?|titrate|adjust|reduce|cut|double|triple|"
                         r"halve|go up on|go down on|uptitrate)\b[^?.]{0,40}\b(?:dose|dosage|dosing|"
                         r"\d+(?:\.\d+)?\s?(?:mg|mcg|units?|ml)|by (?:\d|half|a third|one|two))"),
    # "up her metformin to 1000 mg", "should we up his dose" (not "look up her A1c")
    ("up_the_drug", r"(?:^\s*(?:please\s+)?|\b(?:should|shall|can|could|would|may)\s+(?:i|we|you)\s+)up\s+"
                    rf"{_POSSESSIVE}\b"),
    # "double her metformin", "bump up his lisinopril", "titrate the insulin"
    ("scale_the_drug", r"\b(?:double|triple|halve|bump(?:\s+up)?|titrate|uptitrate|max out|cut back)\s+(?:up\s+)?"
                       rf"(?:{_POSSESSIVE}|it|him|her)\b"),
)

# Medication change: start, stop, switch, hold, taper, give.
MEDICATION_CHANGE_RULES = _rules(
    # "should I stop her lisinopril", "can we add a statin", "would you switch…"
    ("should_we_act", rf"\b(?:should|shall|can|could|would|may|must|do|ought to)\s+{_WE}\b(?:\s+\w+){{0,2}}?\s+"
                      rf"{_CHANGE_VERBS}\b(?!\s+(?:me|us)\b)"),
    # "can I take her off warfarin?", "time to come off the statin?", "should we keep him on it?"
    ("take_off_or_on", rf"\b(?:should|shall|can|could|would|may|must|ought to|time to|ok to|okay to|safe to|"
                       rf"fine to|let'?s|need to|want to|going to|gonna|plan to|i'?ll|we'?ll)\s+"
                       rf"(?:(?:{_WE}|{_PT})\s+)?(?:just\s+|go ahead and\s+)?"
                       r"(?:(?:take|get|bring|put|keep|leave)\s+(?:(?:her|him|them|the patient|the pt|pt)\s+)?"
                       r"(?:back\s+)?(?:off|on|onto)|(?:come|go)\s+(?:back\s+)?off)\b"
                       r"(?!\s+(?:the\s+)?(?:phone|hold|list|waiting list|record|chart|file|call|schedule)\b)"),
    # "let's just drop the metformin", "let's go ahead and stop it"
    ("lets_act", rf"\blet'?s\s+(?:(?:just|now|then|go ahead and|try and|try to)\s+)*{_CHANGE_VERBS}\b"
                 r"(?!\s+(?:me|us)\b)"),
    # "I'm thinking of stopping her atorvastatin", "we'll hold the metformin", "I'd drop it"
    ("intend_to_act", rf"\b(?:i'?m|i am|we'?re|we are)\s+(?:going to|gonna|thinking (?:of|about)|planning (?:to|on)|"
                      rf"about to|considering|inclined to)\s+(?:{_CHANGE_VERBS}|{_CHANGE_VERBS_ING})\b|"
                      rf"\b(?:i'?ll|we'?ll|i will|we will|i'?d|we'?d|i would|we would|i want to|we want to|"
                      rf"i plan to|we plan to)\s+(?:just\s+|go ahead and\s+)?{_CHANGE_VERBS}\b(?!\s+(?:me|us)\b)"),
    # "can metformin be stopped now?", "should the warfarin be held?"
    ("passive_change", r"\b(?:should|shall|can|could|would|may|must|ought to)\s+"
                       r"(?!(?:(?:the|her|his|their|this|that)\s+)?(?:appointments?|visits?|dates?|times?|address|"
                       r"phone|numbers?|reports?|records?|charts?|notes?|names?|referrals?|bookings?|orders?|files?|"
                       r"forms?|letters?|documents?)\b)(?:(?:the|her|his|their|this|that)\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:now\s+|still\s+|just\s+)?be\s+(?:stopped|started|increased|"
                       r"decreased|reduced|held|restarted|resumed|continued|changed|switched|tapered|weaned|doubled|"
                       r"halved|titrated|adjusted|discontinued|withheld|withdrawn|added|given|swapped|replaced|cut|"
                       r"lowered|raised|bumped|dropped|paused|ceased|prescribed)\b"),
    # "should the insulin go up?", "can his dose come down?"
    ("dose_direction", r"\b(?:should|shall|can|could|would|may|must|ought to)\s+(?:(?:the|her|his|their|this|that)\s+)?"
                       r"[\w-]+(?:\s+[\w-]+)?\s+(?:go|come|be (?:pushed|moved|taken|brought))\s+(?:back\s+)?"
                       r"(?:up|down)\b"),
    # "worth restarting the warfarin?", "any reason not to give her ibuprofen?", "could I get
    # away with halving the metformin?", "is it time to bump her lisinopril?"
    ("weigh_a_change", rf"\b(?:worth|(?:any|good|no)\s+reasons?\s+(?:not\s+)?to|is there (?:a|any)\s+reasons?\s+(?:not\s+)?to|get away with|better (?:to|off)|wise to|sensible to|"
                       rf"advisable to|time to)\b(?:\s+[\w']+){{0,3}}?\s+(?:{_CHANGE_VERBS}|{_CHANGE_VERBS_ING})\b"
                       r"(?!\s+(?:me|us)\b)"),
    # "should she be on a statin", "can he take ibuprofen", "should she stop…"
    ("should_patient_take", rf"\b(?:should|shall|can|could|would|may|must|ought to)\s+{_PT}\s+(?:still\s+)?"
                            r"(?:be\s+(?:on|off|started|taking|switched|given|put on|prescribed|restarted|tapered|"
                            r"weaned)|start|stop|take|come off|go off|go on|continue|quit|restart|resume|switch|"
                            r"use|get)\b"),
    # "can he have penicillin" (could/might … have is a diagnosis question instead)
    ("can_patient_have", rf"\bcan\s+{_PT}\s+have\b"),
    # "ok to give ibuprofen?", "is it safe to add lisinopril?"
    ("safe_to_give", r"\b(?:ok|okay|safe|fine|alright|all right|reasonable|appropriate)\b[^?.]{0,20}\bto\s+"
                     rf"(?:{_CHANGE_VERBS}|prescribe|combine|take|mix)\b"),
    ("contraindicated", r"\bcontraindicat\w*"),
    # "taper her prednisone", "wean him off oxycodone"
    ("taper_or_wean", r"\b(?:taper|tapering|wean|weaning|deprescrib\w*)\b"),
    # "swap to losartan", "switch her from metformin to insulin" (not "change to 7.9")
    ("switch_to", r"\b(?:swap|switch|change|convert|transition)\b[^?.]{0,30}\b(?:to|onto|over to)\s+(?!\d)"
                  r"(?!(?:the |her |his )?(?:topic|subject|question|labs?|results?)\b)\w+"),
    # Imperatives: "start her on a statin", "stop the aspirin" (not "give me her labs")
    ("imperative", r"^\s*(?:(?:please|just|maybe|perhaps|so|then|now|ok(?:ay)?|go ahead and)[,\s]+)*"
                   r"(?:start|stop|discontinue|d/c|hold|restart|resume|begin|prescribe|taper|wean|switch|swap|add|"
                   r"increase|decrease|double|halve|titrate|bump|reduce|up|give|drop|ditch|cease|pause|withhold)\b"
                   r"(?!\s+(?:me|us)\b)"),
)

# Treatment: choosing what to do for the patient.
TREATMENT_RULES = _rules(
    # "how should I treat her cholesterol", "how do we get her A1c down"
    ("how_to_treat", rf"\bhow\s+(?:should|do|would|can|could|might|to)\s+(?:{_WE}\s+)?(?:best\s+)?(?:treat|manage|"
                     r"handle|control|fix|address|bring down|get down|lower|reduce|improve)\b"),
    ("how_to_get_down", rf"\bhow\s+(?:do|can|should|would)\s+{_WE}\s+get\b[^?.]{{0,40}}\b(?:down|up|under control|"
                        r"controlled|to goal)\b"),
    # "what medication should she be on", "which antibiotic for her"
    ("which_therapy", r"\b(?:what|which)\s+(?:treatment|therapy|therapies|medication|medicine|med|drug|antibiotic|"
                      r"regimen|management)s?\b[^?.]{0,30}\b(?:should|would|do you|to (?:use|give|start|try|prescribe)|"
                      r"is (?:best|right|indicated|recommended)|for (?:her|him|this|the|a)\b)"),
    # "what would you prescribe", "what do you recommend"
    ("your_choice", r"\bwhat\s+(?:would|should|do|could|will)\s+you\s+(?:prescribe|recommend|suggest|give|do|start|"
                    r"use|try|advise)\b"),
    ("what_should_we_do", rf"\bwhat\s+(?:should|shall|do|can)\s+{_WE}\s+(?:do|give|prescribe|start|try|use|offer)\b"),
    ("best_option", r"\b(?:best|first[- ]line|preferred|ideal)\s+(?:treatment|therapy|option|drug|medication|med|"
                    r"antibiotic|management|approach|choice)\b"),
    ("treatment_plan", r"\btreatment\s+(?:plan|options?|recommendations?)\b|\bmanagement plan\b"),
    # "recommend an antibiotic", "can you suggest a painkiller for her?"
    ("recommend_a_therapy", r"\b(?:recommend|suggest|pick|choose|propose|advise)\s+(?:me\s+)?(?:(?:a|an|some|the|one|"
                            r"which|what)\s+)?(?:[\w-]+\s+){0,2}?(?:treatment|therapy|medication|medicine|med|drug|"
                            r"antibiotic|antiviral|painkiller|analgesic|regimen|dose|inhaler|cream|ointment|pill|"
                            r"tablet|syrup|drops|spray|patch|lozenge|supplement|remedy|shot|vaccine)s?\b|"
                            r"\b(?:recommend|suggest|prescribe|give|offer)\s+(?:(?:her|him|them|the patient)\s+)?"
                            r"(?:something|anything)\s+for\b"),
    # "would you go with amoxicillin or doxycycline?", "is naproxen or ibuprofen safer for her?"
    ("choose_between", r"\b(?:go with|go for|pick|choose|prefer|opt for|decide between|rather use|rather give)\s+"
                       r"(?:[\w-]+\s+){1,3}?or\s+[\w-]+|\b[\w-]+\s+or\s+[\w-]+\s+(?:be\s+)?(?:better|safer|best|"
                       r"preferable|preferred|kinder|gentler)\b"),
    # "which painkiller suits her best?", "which one would you use?"
    ("which_suits", r"\bwhich\s+(?:[\w-]+\s+){0,2}?(?:suits?|is (?:best|better|safer|safest|preferred|kinder)|"
                    r"would (?:you|be best|be better|be safer|suit))\b"),
    # "would a statin help her?", "is she a candidate for…", "would he benefit from…"
    ("would_it_help", r"\b(?:would|will|could|might)\s+(?!you\b|me\b|i\b)(?:a |an |the |some |her |his )?[\w-]+"
                      r"(?:\s+[\w-]+)?\s+help\b|\b(?:candidate|eligible)\s+for\b|\bbenefit\s+from\b"),
    # "should we refer her to nephrology?", "should I order a TSH?", "can I send him home?"
    ("should_we_manage", rf"\b(?:should|shall|must|ought to|can|could|may|do)\s+{_WE}\s+(?:\w+\s+){{0,2}}?(?:refer|"
                         r"admit|send|order|treat|manage|operate|biopsy|consult|discharge|transfer|release|"
                         r"hospitali[sz]e|observe)\b(?!\s+(?:me|us)\b)"),
    # "should he see a hematologist?", "should she go to the ER?", "ok to discharge him?"
    ("patient_disposition", rf"\b(?:should|shall|must|can|could|may|ought to)\s+{_PT}\s+(?:need to\s+|have to\s+)?"
                            r"(?:see|be seen|be referred|go (?:to|home|back)|be sent|be admitted|be discharged|"
                            r"be transferred|be hospitali[sz]ed|be observed|stay|come back|return|follow up)\b|"
                            r"\b(?:ok|okay|safe|fine|alright|all right|reasonable|appropriate)\b[^?.]{0,20}\bto\s+"
                            r"(?:discharge|send|admit|transfer|release)\b"),
    ("prescribe", r"\bprescribe\b"),
    # "should she be treated", "does he need insulin", "does he need a biopsy"
    ("needs_treatment", rf"\b(?:should|does|do|will|would|might|may)\s+{_PT}\s+(?:still\s+|also\s+|really\s+)?"
                        rf"(?:need|require)s?\b|\b(?:should|does|do)\s+{_PT}\s+(?:need to\s+)?be\s+treat\w*"),
)

# Words after "is this …" that ask about the record, a value or a date, not a condition.
_NOT_A_CONDITION = (r"(?:normal|ok|okay|fine|good|bad|better|worse|correct|right|accurate|true|real|high|low|abnormal|"
                    r"elevated|raised|critical|significant|important|concerning|worrying|worrisome|alarming|"
                    r"dangerous|safe|recent|new|old|current|latest|last|newest|oldest|"
                    r"most|more|less|same|only|one|all|everything|anything|it|dated|from|in|on|for|about|with|"
                    r"recorded|documented|listed|verified|confirmed|reviewed|his|her|their|my|your|our|a|an|the|"
                    r"results?|values?|tests?|labs?|reports?|documents?|dates?|patient|chart|record|file|"
                    r"raining|sunny|snowing)")
# "is he septic?", "is she immunocompromised?": a state the vocabulary does not know as
# a condition on record is a judgement to make, not a look-up (known conditions are:
# "is she diabetic?"). Checked only when the question names no condition topic.
PATIENT_STATE = Rule("patient_state", re.compile(
    rf"{_START}(?:is|are|was|were)\s+{_PT}\s+"
    r"(?:(?:now|currently|still|really|actually)\s+)?+"
    r"(?!(?:on|off|taking|using|allergic|due|overdue|up|a|an|the|in|at|smoking|drinking|pregnant|married|single|"
    r"male|female|here|seen|scheduled|enrolled|insured|alive|eligible|older|younger|over|under)\b)"
    r"[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?\s*[?.!]*\s*$", re.I))

# Diagnosis: deciding what the patient has (not asking what the record says).
DIAGNOSIS_RULES = _rules(
    # "based on these labs does he have CKD?", "from her results, is she diabetic?"
    ("decide_from_data",
     r"(?=.*\b(?:based on|going by|judging (?:by|from)|given|from|according to|in light of|looking at)\s+"
     r"(?:these|those|the|her|his|their|this|that|today'?s)?\s*(?:labs?|lab results|lab values|results?|numbers|"
     r"values|findings|symptoms|data|tests?|test results|picture|presentation|blood ?work|a1c|readings)\b)"
     rf"(?=.*\b(?:(?:does|do|did|could|might|may|would)\s+{_PT}\s+have|(?:is|are)\s+{_PT}\s+(?:\w+ic|\w+ive|in\s+\w+)"
     r"|diagnos\w*|meets?\s+(?:the\s+)?criteria|qualif\w*\s+(?:as|for)|consistent with|indicat\w*|suggest\w*|"
     r"point\w* to|rule (?:in|out))\b)"),
    # "does her A1c mean she has diabetes?", "does this mean he has CKD?"
    ("results_mean", r"\b(?:do|does|did|would|could|can)\s+(?:these|those|the|her|his|their|this|that)\s+"
                     r"(?:[\w-]+\s+){0,2}?(?:mean|indicate|suggest|point to|confirm|prove|show that)\b[^?.]{0,30}"
                     r"\b(?:she|he|they|has|have|is|diagnos\w*|disease|condition|cancer|\w+itis|\w+a?emia|\w+osis|"
                     r"\w+pathy|diabet\w*|failure|infection|syndrome)\b"),
    # "could this be cancer?", "might she have lupus?", "could he be bleeding?", "is this a sign of kidney disease?"
    ("could_it_be", rf"\b(?:could|might|may|can)\s+(?:this|that|it|these|those)\s+(?:be|mean|indicate|represent|"
                    rf"signal)\b|\b(?:could|might|may)\s+{_PT}\s+(?:have|be)\b|"
                    r"\bis\s+(?:this|it|that)\s+(?:a |an )?(?:sign of|symptom of|cancer|malignan\w*|tumou?r|"
                    r"infection|\w+itis|\w+osis|\w+pathy|\w+a?emia|stroke|heart attack|diabet\w*|serious)\b"),
    # "what's the diagnosis?", "what is the likely dx", "what's the differential?"
    ("name_the_diagnosis", r"\bwhat(?:'s|\s+is|\s+are|\s+would\s+be|\s+could\s+be|\s+might\s+be)?\s+"
                           r"(?:the|your|a|her|his|their|my|our)?\s*(?:likely|most likely|probable|possible|working|"
                           r"leading)?\s*(?:diagnosis|dx|ddx|differentials?)\b"),
    # "is this pneumonia?", "is it the flu?", "is this an emergency?" (not "is that the latest?",
    # "is this result normal?", "is it on her problem list?")
    ("name_the_condition", rf"{_START}(?:is|was|are|were)\s+(?:this|it|that|these|those)\s+"
                           r"(?:(?:just|really|possibly|probably|likely|definitely|actually)\s+)?+"
                           r"(?:(?:a|an|the|some kind of|some sort of|some type of)\s+)?+"
                           rf"(?!{_NOT_A_CONDITION}\b)[a-z][\w'-]*(?:\s+[a-z][\w'-]*){{0,3}}\s*[?.!]*\s*$"),
    # "does this look like an infection?", "does he look septic?", "sounds like gout"
    ("looks_like", rf"\b(?:does|do|did)\s+(?:this|it|that|these|those|{_PT})\s+(?:look|sound|seem|appear)\b|"
                   r"\b(?:looks?|sounds?|seems?)\s+like\s+(?:a |an )?[a-z]"),
    # "is his blood count consistent with CLL?", "are these findings concerning for leukemia?"
    ("consistent_with", r"\b(?:consistent|compatible|in keeping|suggestive|indicative|concerning|worrisome|worrying|"
                        r"suspicious|diagnostic|typical|characteristic|classic|pathognomonic)\s+(?:with|of|for)\b"),
    # "what do these results suggest?", "what does her CBC indicate?"
    ("what_it_suggests", r"\bwhat\s+(?:do|does|did|could|might|would|can|may)\s+(?:these|those|this|that|it|the|"
                         r"her|his|their)\b[^?.]{0,40}\b(?:suggest|indicate|imply|point to|signify)\b"),
    # "what's wrong with her?", "what is likely going on?", "what's causing…", "what could explain
    # his high lymphocytes?", "why is her potassium so high?"
    ("explain_cause", r"\bwhat(?:'s|\s+is|\s+could be|\s+might be)\s+(?:likely\s+|probably\s+|really\s+|actually\s+)?"
                      r"(?:wrong|going on|happening)\b|"
                      r"\bwhat(?:'s|\s+is|\s+could be|\s+might be|\s+would be)\s+(?:causing|behind|the cause of|"
                      r"the reason for(?!\s+(?:the\s+|her\s+|his\s+|this\s+)?(?:visit|referral|appointment|consult)))|"
                      r"\bwhat\s+(?:could|might|would|can|may|does|do)?\s*(?:explains?|causes?|accounts? for)\b|"
                      r"\b(?:cause|causes|etiology|aetiology)\s+of\b|"
                      r"\bwhy\s+(?:is|are|was|were)\s+(?:her|his|their|the)\s+"
                      r"[\w\s-]{1,30}?\s+(?:so\s+)?(?:high|low|elevated|abnormal|raised|decreased|off)\b"),
    # "why does he have so many white cells?" — any why about the patient asks for a cause
    # (not "why is she here?", the reason for the visit)
    ("why", rf"{_START}why\b(?!\s+(?:is|was|did|does|has)\s+{_PT}\s+(?:here|seen|referred|come|coming|in|visiting|"
            r"booked)\b)"),
    # "is his white count from an infection?", "is the rash a reaction to the penicillin?"
    ("attributed_cause", r"\b(?:is|are|was|were|could|might|may|can)\b[^?.]{0,40}\b(?:due to|caused by|because of|"
                         r"secondary to|attributable to|(?:a\s+)?(?:side effect|reaction|complication)\s+"
                         r"(?:of|from|to)\b|"
                         r"from\s+(?:a|an)\s+(?!(?:lab|report|document|visit|test|outside|other|different|earlier|"
                         r"previous|new|recent|older)\b)[a-z])"),
    # "what's the prognosis?", "how long will he live?", "is she at risk of a stroke?"
    ("prognosis", rf"\bprognos\w*|\blife expectancy\b|\boutlook\b|\bhow long (?:does|will|would|might|could) {_PT} "
                  r"(?:have|live|survive|last)\b|\bsurviv\w*|\bchances? of\b"),
    ("risk_judgement", rf"\b(?:is|are|was)\s+{_PT}\s+(?:at\s+)?(?:(?:high|higher|increased|low|any|a)\s+)?risk\b|"
                       r"\bwhat(?:'s|\s+is)\s+(?:her|his|their|the patient'?s)\s+risk\b"),
    # "is a WBC of 105k an emergency?", "how sick is he?"
    ("triage", rf"\b(?:is|are|was|were)\b[^?.]{{0,40}}\b(?:an?\s+)?(?:emergency|life[- ]threatening)\b(?!\s+contact)|"
               r"\bhow\s+(?:sick|ill|unwell|bad|serious|severe|urgent)\s+(?:is|are|was|were)\s+"
               rf"(?:{_PT}|this|it|that)\b"),
    # "do you think she has…", "in your opinion is this…"
    ("your_judgement", r"\b(?:do you think|would you say|in your (?:opinion|view)|your (?:impression|assessment|"
                       r"opinion|take))\b[^?.]{0,40}\b(?:has|have|is|could|might|diagnos\w*|caus\w*|disease|"
                       r"condition|wrong)\b"),
    ("diagnose", r"\bdiagnose\b|\brule (?:in|out)\b|\bdifferential\b"),
    # "does her A1c meet the criteria for diabetes?"
    ("meets_criteria", r"\b(?:meet|meets|fulfil\w*|satisf(?:y|ies)|qualif(?:y|ies))\b[^?.]{0,25}\b(?:criteria|"
                       r"definition|diagnosis)\b"),
)

# The record, not the workbench, is asked: these turn a diagnosis- or dose-shaped
# question into a look-up ("what's her diagnosis on the problem list?",
# "what dose is listed for her metformin?"). Deciding from the data is never exempt.
RECORD_ANCHORS = _rules(
    ("on_a_list", r"\bon\s+(?:her|his|their|the)\s+(?:problem list|chart|record|med(?:ication)?s? list|list|file)\b"),
    ("recorded", r"\b(?:problem list|documented|recorded|listed|charted|coded|on file|prescribed)\b"),
    ("in_the_chart", r"\bin\s+(?:her|his|their|the)\s+(?:chart|record|notes?|history|documents?)\b"),
    ("diagnosed_before", r"\b(?:been\s+)?diagnosed\s+with\b|\b(?:history|hx|h/o)\s+of\b|\bknown\b"),
    # "what did the doctor diagnose him with?", "was he diagnosed by a hematologist?"
    ("someone_diagnosed", r"\b(?:did|has|have|had)\b[^?.]{0,30}\bdiagnos\w*|\bdiagnosed\b[^?.]{0,30}\bby\b"),
)

UNSAFE_RULES: tuple[tuple[Unsafe, tuple[Rule, ...]], ...] = (
    (Unsafe.DOSING, DOSING_RULES),
    (Unsafe.MEDICATION_CHANGE, MEDICATION_CHANGE_RULES),
    (Unsafe.TREATMENT, TREATMENT_RULES),
    (Unsafe.DIAGNOSIS, DIAGNOSIS_RULES),
)
_ANCHOR_EXEMPT = {Unsafe.DIAGNOSIS, Unsafe.DOSING}
_NEVER_EXEMPT = {"decide_from_data", "results_mean", "meets_criteria", "what_it_suggests"}
# In a dose request, giving, taking, needing or raising the drug is about the amount: "how
# much metformin should I give her?" asks for a dose, not a medication change, and "how much
# warfarin does she need?" not a treatment choice. A change or treatment rule that still
# fires without these words ("stop metformin and double the insulin") stands.
_DOSE_ACTIONS = re.compile(r"\b(?:give|use|take|get|have|be on|be taking|be given|up|increase|decrease|reduce|"
                           r"double|triple|halve|raise|lower|cut|bump|titrate|adjust|try|go up|go down|needs?|"
                           r"requires?)\b", re.I)

# A treatment request that chooses a therapy (a drug, a dose, a regimen), as opposed to a
# care decision (refer, admit, send home, order a test): the patient's allergies,
# medications and pregnancy bear on it (``core.policy.relevance.THERAPY_CONTEXT``).
_THERAPY_RULES = {"how_to_treat", "how_to_get_down", "which_therapy", "best_option", "treatment_plan", "prescribe",
                  "recommend_a_therapy"}
_THERAPY_WORDS = re.compile(r"\b(?:prescri\w*|treat\w*|therap\w*|medications?|medicines?|meds?|drugs?|"
                            r"antibiotics?|antivirals?|antifungals?|regimens?|pills?|tablets?|injections?|infusions?|"
                            r"doses?|dosing|dosage|painkillers?|analgesics?|inhalers?|steroids?|statins?|aspirin|"
                            r"insulin|opioids?|nsaids?|vaccines?)\b", re.I)

# ------------------------------------------------------------------ look-up frames
# What a look-up names that the vocabulary may not know: the free term narrows the
# record topic ("does he have gout?" -> problems mentioning gout).
_TERM = (r"(?P<term>[a-z][a-z0-9' /-]{1,40}?)\s*"
         r"(?:[?.!]|$|\s+(?:now|currently|still|anymore|at the moment|on file|on record))")
LOOKUP_FRAMES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (name, topic, re.compile(rx, re.I)) for name, topic, rx in (
        ("on_medication", "medications", rf"\b(?:is|was|are)\s+{_PT}\s+(?:currently\s+|still\s+|ever\s+)?(?:on|taking|"
                                         rf"using|prescribed)\s+(?:any\s+|a\s+|an\s+)?{_TERM}"),
        ("takes_medication", "medications", rf"\b(?:does|do|did)\s+{_PT}\s+(?:still\s+)?(?:take|use)\s+(?:any\s+|a\s+|"
                                            rf"an\s+)?{_TERM}"),
        ("allergic_to", "allergies", rf"\ballergic\s+to\s+(?:any\s+)?{_TERM}"),
        ("has_condition", "problems", rf"\b(?:does|do|did|has|have)\s+{_PT}\s+(?:ever\s+)?(?:have|had|got|get|been "
                                      rf"diagnosed with)\s+(?:a\s+|an\s+|any\s+)?(?:history of\s+|hx of\s+)?{_TERM}"),
        ("history_of", "problems", rf"\b(?:history|hx|h/o)\s+of\s+(?:any\s+)?{_TERM}"),
        ("diagnosed_with", "problems", rf"\bdiagnosed\s+with\s+(?:a\s+|an\s+|any\s+)?{_TERM}"),
        ("on_problem_list", "problems", r"\b(?:is|was|are)\s+(?P<term>[a-z][a-z0-9' /-]{1,40}?)\s+(?:on|in)\s+"
                                        r"(?:her|his|their|the)\s+(?:problem list|chart|record|history)\b"),
        # "was there a pneumothorax?", "has there been any bleeding?": a finding anywhere in the
        # record's text (a problem, a note, a report line); only for a clinical term (not
        # "is there a pharmacy nearby?")
        ("there_was", "problems", r"\b(?:(?:is|was|are|were)\s+there|has there been|have there been)\s+(?:ever\s+)?"
                                  rf"(?:a|an|any)\s+(?:sign of\s+|signs of\s+|evidence of\s+|mention of\s+)?{_TERM}"),
    ))
_CLINICAL_ONLY_FRAMES = {"there_was"}
# Words that name a kind of record rather than a thing in it.
_GENERIC_TERMS = re.compile(r"^(?:any(?:thing)?|something|allerg\w*|med\w*|drugs?|problems?|conditions?|issues?|"
                            r"diagnos\w*|history|illness(?:es)?|diseases?|that|this|it|them|those|these|"
                            r"(?:a |any )?known \w+)$", re.I)
# Not a thing to find in the record at all: what a frame caught is a place in the record
# ("on file"), or a document or list ("the report for …", "lab results").
_NOT_A_TERM = re.compile(r"^(?:on|in|at|for|from|to|of|with|about|by|under|into|within|anything|something|"
                         r"everything|nothing)\b|"
                         r"\b(?:reports?|documents?|files?|charts?|records?|notes?|letters?|forms?|lists?|faxe?s?|"
                         r"uploads?|paperwork|summar(?:y|ies)|results?|labs?|tests?|visits?|appointments?)\b", re.I)

# ------------------------------------------------------------------ clinical terms
# A free term is repeated back in an answer ("No “apixaban” found…") only when it is
# recognisably clinical: a test the analyte vocabulary knows, a word CLINICAL_SUBJECT knows
# by its ending, a common condition or finding without a telling ending, or a drug name
# built on a WHO INN stem. Anything else — a person's name above all — is said in general
# words ("nothing matching what you asked about").
_CLINICAL_NOUNS = re.compile(
    r"\b(?:gout|lupus|stroke|seizures?|epilepsy|hernias?|ulcers?|abscess\w*|cysts?|polyps?|nodules?|lesions?|"
    r"tumou?rs?|cancers?|sepsis|septic|dementia|pneumonia|influenza|flu|covid\w*|angina|edema|oedema|jaundice|"
    r"murmurs?|palpitations?|syncope|effusions?|embol\w*|thromb\w*|clots?|fibrillation|arrhythmi\w*|"
    r"atelecta\w*|consolidation|opacit\w*|shingles|measles|allerg\w*|insulin|aspirin|morphine|codeine|"
    r"steroids?|statins?|vaccin\w*|inhalers?|pacemaker|stents?|implants?|transplant\w*|dialysis|chemo\w*|"
    r"radiotherapy|smok\w*|alcohol|diseases?|disorders?|syndromes?|deficienc\w*|insufficienc\w*|failure|"
    r"sciatica|shellfish|peanuts?|tree nuts?|latex|eggs?|dairy|gluten|soy|bee stings?|iodine|contrast|"
    r"dvt|uti|gerd|ibs|afib|a-fib|tia|hiv|hcv|hbv|osa|bph|pcos|adhd|ptsd)\b", re.I)
_DRUG_STEMS = re.compile(
    r"\b[a-z]{2,}(?:xaban|parin|farin|pril|sartan|olol|alol|dipine|statin|formin|gliptin|gliflozin|glutide|"
    r"glinide|azole|prazole|tidine|cillin|mycin|micin|cycline|floxacin|vir|mab|nib|zepam|azolam|oxetine|"
    r"traline|triptan|profen|fenac|coxib|caine|sone|olone|lukast|terol|tropium|afil|setron|dronate|thiazide|"
    r"semide|pentin|tiapine|peridone|codone|morphone|oxine)\b|\bcef[a-z]{3,}\b", re.I)
# A capitalised word inside the question is a name (a person, a place, a brand): never repeated.
_PROPER_NAME = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?:[-'][A-Za-z]+)*")


def clinical_term(term: str) -> bool:
    """Whether a free term is recognisably clinical (see above)."""
    return bool(analytes_named(term) or CLINICAL_SUBJECT.search(term) or _CLINICAL_NOUNS.search(term)
                or _DRUG_STEMS.search(term))


def quotable(term: str, as_written: str) -> bool:
    """Whether an answer may repeat the term: clinical, and no name as the question wrote it."""
    return clinical_term(term) and not _PROPER_NAME.search(as_written)

# ------------------------------------------------------------------ intent
_ATTENTION = re.compile(
    r"\b(attention|concern(ing|s)?|worr(y|ied|ying|isome)|abnormal\w*|out of range|flag(ged)?|interpret\w*|"
    r"critical|urgent|alarming|dangerous|panic|significan\w*|what stands out|anything (important|notable|unusual)|"
    r"(well |poorly |un)?controlled|at goal|on target|"
    r"red flags?|is (this|that|it) (normal|high|low|ok)|too high|too low|elevated|summar\w*|overview|review|"
    r"what should (i|we) (know|look at|watch))\b", re.I)
_GUIDELINE = re.compile(
    r"\b(guidelines?|recommend\w*|how often|when should|screening|due for|target|goal|threshold|"
    r"standard of care|uspstf|ada|acc|aha|kdigo|evidence|recheck\w*|repeat\w*|retest\w*|"
    r"should (her|his|their|the) [\w-]+ be)\b", re.I)

# ------------------------------------------------------------------ scope
# Never what this workbench answers, whatever else the question says.
OFF_TOPIC_ALWAYS = _rules(
    ("creative_writing", r"\b(?:poem|poetry|haiku|limerick|sonnet|song|lyrics|rap|story|stories|joke|jokes|"
                         r"riddle|essay)\b"),
    ("about_the_assistant", r"\b(?:who|what)\s+are\s+you\b|\bare you (?:a |an )?(?:human|robot|ai|real|alive)\b|"
                            r"\byour (?:name|favou?rite)\b|\bhow are you\b"),
    ("programming", r"\b(?:python|javascript|sql query|regex|code snippet|write (?:a |some )?code)\b"),
)
# The outside world: off topic unless the question also names something in the chart.
OFF_TOPIC_WORLD = _rules(
    ("weather", r"\b(?:weather|forecast|raining|sunny|snowing)\b"),
    ("news_and_markets", r"\b(?:news|headlines|stocks?|shares|crypto|bitcoin|exchange rate|election|president|"
                         r"prime minister)\b"),
    ("sport_and_entertainment", r"\b(?:who won|football|soccer|basketball|baseball|nba|nfl|movies?|films?|"
                                r"tv show|netflix|celebrity)\b"),
    ("travel_and_food", r"\b(?:recipes?|restaurants?|flights?|hotels?|vacation|holiday|tourist|directions to)\b"),
    ("general_knowledge", r"\b(?:capital of|population of|translate|meaning of life|tallest|how far is)\b"),
)
# Words that put a question without a known topic inside the chart: the patient,
# the record, or clinical subject matter (symptoms, body, conditions by their endings).
PATIENT_REFERENCE = re.compile(r"\b(?:she|he|her|his|him|hers|they|their|them|pt|pt's|patient|patient's|mrn)\b", re.I)
RECORD_WORDS = re.compile(
    r"\b(?:chart|record|notes?|documents?|visit|encounter|labs?|results?|values?|levels?|readings?|tests?|vitals?|"
    r"hx|dx|meds?|medications?|prescri\w*|dose|allerg\w*|problems?|diagnos\w*|conditions?|complain\w*|referr\w*|"
    r"follow[- ]?up|guidelines?|reports?|impressions?|findings?|on file|on record)\b", re.I)


def about_the_record(text: str) -> bool:
    """The question names the patient ("his", "her", "the patient") or the record ("on record")."""
    return bool(PATIENT_REFERENCE.search(text) or RECORD_WORDS.search(text))


CLINICAL_SUBJECT = re.compile(
    r"\b(?:pain\w*|ache\w*|cough\w*|fever\w*|nause\w*|vomit\w*|diarrh\w*|constipat\w*|rash\w*|itch\w*|dizz\w*|"
    r"headache\w*|migraine\w*|fatigue\w*|tired\w*|swell\w*|swollen|bleed\w*|bruis\w*|breath\w*|wheez\w*|chest|"
    r"heart|lungs?|kidneys?|liver|skin|bones?|joints?|blood|urine|stool|weight|bmi|sleep\w*|mood|anxi\w*|"
    r"depress\w*|pregnan\w*|infect\w*|injur\w*|wound\w*|fractur\w*|sprain\w*|sodium|potassium|calcium|"
    r"magnesium|iron|ferritin|vitamin\w*|protein|lipo\w*|triglycerid\w*|electrolytes?|imaging|x-?rays?|scans?|"
    r"mri|ultrasound|biopsy|vaccin\w*|immuni[sz]\w*|surgery|surgical|procedure|smok\w*|alcohol|"
    r"(?!(?:diagnosis|prognosis|dx)\b)\w+(?:itis|a?emia|osis|pathy|oma|ectomy|algia|uria|thorax|megaly|rrhage|"
    r"rrho?ea|plegia|penia|cardia|otomy|ostomy|plasty|scopy))\b", re.I)

# ------------------------------------------------------------------ follow-ups
# A follow-up leans on the previous clinical topic by a connective, a bare
# possessive, a pronoun or a time ellipsis; the last two only in a short question.
FOLLOW_UP_CUES = _rules(
    ("connective", r"^\s*(?:and|also|plus|then|so|ok(?:ay)?,?\s+(?:and|what about)|what about|how about|"
                   r"same (?:for|with)|what of)\b"),
    ("bare_possessive", r"^\s*(?:her|his|their|its|the)\s+[\w-]+(?:\s+[\w-]+)?\s*\??\s*$"),
)
SHORT_FOLLOW_UP_CUES = _rules(
    ("pronoun", r"\b(?:it|that|this|those|these|them|the same|the (?:result|results|value|values|level|reading|"
                r"number|test|one|last one|previous one|earlier one|date|trend))\b"),
    ("time_ellipsis", r"\b(?:last|previous|prior|earlier|before|since)\s+(?:year|month|week|time|visit|one|result|"
                      r"reading|value|that)s?\b|\btrend\b|\bover time\b"),
)
_SHORT = 8  # words
_CONNECTIVE = re.compile(r"^\s*(?:and|also|plus|then|so|ok(?:ay)?,?|what about|how about|same (?:for|with)|what of)"
                         r"(?:\s+(?:what about|how about))?\s+", re.I)
_WHEN = re.compile(r"\b(?:19|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\b|\b(?:today|yesterday|"
                   r"now|then|ago|recently|lately)\b", re.I)
# Record kinds an ellipsis may name something new in ("is she on metformin?" -> "and
# apixaban?" asks about a medication); any other topic is a lab or a problem.
_RECORD_KINDS = ("medications", "allergies", "family_history")


@dataclass(frozen=True)
class ParsedQuestion:
    text: str
    topics: tuple[str, ...]
    intent: Intent
    unsafe: tuple[Unsafe, ...] = ()
    follow_up: bool = False
    inherited: tuple[str, ...] = field(default=())  # what came from the previous turn
    terms: tuple[tuple[str, str], ...] = ()  # (record topic, free term) named by a look-up frame
    # The free terms an answer may repeat back (clinical, not a name: ``quotable``); any
    # other term is said in general words.
    quotable: tuple[str, ...] = ()
    # The request chooses or changes a therapy (``chooses_therapy``): the patient's
    # allergies, medications and pregnancy bear on it.
    therapy: bool = False
    analytes: tuple[str, ...] = ()  # canonical lab analytes the question names ("his eGFR and creatinine")
    out_of_scope: bool = False
    clinical_subject: bool = False  # names symptoms, body or conditions (something to narrow to)
    rules: tuple[str, ...] = ()  # names of the rules that fired, for the trace

    @property
    def conditions(self) -> tuple[str, ...]:
        return tuple(t for t in self.topics if TOPIC_BY_NAME[t].is_condition)


def _fired(rules: tuple[Rule, ...], text: str) -> list[str]:
    return [r.name for r in rules if r.search(text)]


def unsafe_requests(text: str, topics: tuple[str, ...] = ()) -> tuple[tuple[Unsafe, ...], list[str]]:
    """Which decisions the question asks the workbench to make, and the rules that said so.
    ``topics``: what the question names (a known condition makes "is she X?" a look-up)."""
    anchored = bool(_fired(RECORD_ANCHORS, text))
    names_condition = any(TOPIC_BY_NAME[t].is_condition for t in topics)
    kinds: list[Unsafe] = []
    fired: list[str] = []
    for kind, rules in UNSAFE_RULES:
        names = _fired(rules, text)
        if kind is Unsafe.DIAGNOSIS and not names_condition and PATIENT_STATE.search(text):
            names.append(PATIENT_STATE.name)
        if anchored and kind in _ANCHOR_EXEMPT:
            names = [n for n in names if n in _NEVER_EXEMPT]
        if names:
            kinds.append(kind)
            fired += [f"{kind.value}:{n}" for n in names]
    if Unsafe.DOSING in kinds:
        masked = _DOSE_ACTIONS.sub(" ", text)
        for kind, rules in ((Unsafe.MEDICATION_CHANGE, MEDICATION_CHANGE_RULES), (Unsafe.TREATMENT, TREATMENT_RULES)):
            if kind in kinds and not _fired(rules, masked):
                kinds.remove(kind)
                fired = [f for f in fired if not f.startswith(kind.value + ":")]
                fired.append(f"{kind.value}:only_the_dose")
    return tuple(kinds), fired


def chooses_therapy(text: str, unsafe: tuple[Unsafe, ...], rules: list[str] | tuple[str, ...],
                    topics: tuple[str, ...]) -> bool:
    """Whether the request chooses or changes a therapy: a dose, a medication change, or a
    treatment choice (named by its rule or its words: "what antibiotic…", "best treatment
    for…", "does she need insulin?"). A care decision alone ("should he see a
    hematologist?", "can I send him home?") is not one."""
    if Unsafe.DOSING in unsafe or Unsafe.MEDICATION_CHANGE in unsafe:
        return True
    if Unsafe.TREATMENT not in unsafe:
        return False
    named = {r.split(":", 1)[1] for r in rules if r.startswith(Unsafe.TREATMENT.value + ":")}
    return bool(named & _THERAPY_RULES) or bool(_THERAPY_WORDS.search(text) or _DRUG_STEMS.search(text)) \
        or "medications" in topics


@dataclass(frozen=True)
class LookupTerms:
    terms: tuple[tuple[str, str], ...]  # (record topic, free term)
    fired: tuple[str, ...]  # the frames, for the trace
    quotable: tuple[str, ...]  # the terms an answer may repeat back (``quotable``)
    kinds: tuple[str, ...]  # record topics a frame names by its verb alone ("is he on anything for…")


# Frames whose verb names the kind of record whatever the term ("is he on anything for his heart?").
_KIND_FRAMES = {"on_medication", "takes_medication", "allergic_to"}


def lookup_terms(text: str) -> LookupTerms:
    """Free terms a look-up frame names that no specific topic covers, and the frames."""
    found: list[tuple[str, str]] = []
    fired: list[str] = []
    speakable: list[str] = []
    kinds: list[str] = []
    for name, topic, pattern in LOOKUP_FRAMES:
        m = pattern.search(text)
        if not m:
            continue
        if name in _KIND_FRAMES and topic not in kinds:
            kinds.append(topic)
        written = re.sub(r"\s+", " ", m.group("term").strip(" '-/"))
        written = re.sub(r"^(?:any|a|an|the|her|his|their)\s+", "", written, flags=re.I)
        term = written.lower()
        if not term or _GENERIC_TERMS.match(term) or _NOT_A_TERM.search(term):
            continue
        if set(find_topics(term)) - {"labs", "problems", "medications", "allergies"}:
            continue  # the vocabulary knows it ("diabetes", "metformin")
        if name in _CLINICAL_ONLY_FRAMES and not clinical_term(term):
            continue
        if (topic, term) not in found:
            found.append((topic, term))
            fired.append(f"lookup:{name}")
            if quotable(term, written) and term not in speakable:
                speakable.append(term)
    return LookupTerms(tuple(found), tuple(fired), tuple(speakable), tuple(kinds))


def off_topic(text: str, topics: tuple[str, ...]) -> str | None:
    """The rule that puts the question outside the chart, if any. The outside world's
    words ("film", "news") do not put a question about the patient or the record outside
    it ("the impression of his chest film", "anything new on record?")."""
    for rule in OFF_TOPIC_ALWAYS:
        if rule.search(text):
            return rule.name
    if not topics and not about_the_record(text):
        for rule in OFF_TOPIC_WORLD:
            if rule.search(text):
                return rule.name
    return None


def _follow_up_cue(text: str) -> str | None:
    for rule in FOLLOW_UP_CUES:
        if rule.search(text):
            return rule.name
    if len(text.split()) <= _SHORT:
        for rule in SHORT_FOLLOW_UP_CUES:
            if rule.search(text):
                return rule.name
    return None


def _ellipsis_term(text: str) -> str | None:
    """What a connective follow-up names beyond pronouns and times ("and her ferritin?"
    -> "ferritin"); None when it only points back ("and the date?", "what about last year?")."""
    said = _CONNECTIVE.sub("", text, count=1).strip(" ?.!,")
    bare = any(r.name == "bare_possessive" and r.search(text) for r in FOLLOW_UP_CUES)  # "her ferritin?"
    if (said == text.strip(" ?.!,") and not bare) or _WHEN.search(said) or \
            any(rule.search(said) for rule in SHORT_FOLLOW_UP_CUES):
        return None
    rest = re.sub(r"^(?:her|his|their|its|the|any|a|an)\s+", "", said, flags=re.I)
    rest = re.sub(r"\s+(?:levels?|values?|results?|readings?|numbers?|tests?)$", "", rest, flags=re.I)
    if not rest or len(rest.split()) > 4:
        return None
    return rest  # as written (``quotable`` reads the capitals)


def _record_kind(topics: tuple[str, ...]) -> str:
    for topic in topics:
        if topic in _RECORD_KINDS:
            return topic
        if TOPIC_BY_NAME[topic].is_lab:
            return "labs"
    return "problems"


def parse_question(text: str, previous: ParsedQuestion | None = None) -> ParsedQuestion:
    """Pure: topics, named tests, intent, unsafe requests, scope and follow-up grounding of one turn."""
    topics = find_topics(text)
    off = off_topic(text, topics)
    if off:
        return ParsedQuestion(text=text, topics=(), intent=Intent.LOOKUP, out_of_scope=True,
                              rules=(f"out_of_scope:{off}",))
    unsafe, rules = unsafe_requests(text, topics)
    if _ATTENTION.search(text):
        intent = Intent.ATTENTION
    elif _GUIDELINE.search(text):
        intent = Intent.GUIDELINE
    else:
        intent = Intent.LOOKUP
    terms: tuple[tuple[str, str], ...] = ()
    speakable: tuple[str, ...] = ()
    if not unsafe:
        framed = lookup_terms(text)
        terms, speakable = framed.terms, framed.quotable
        rules += framed.fired
        topics += tuple(k for k in framed.kinds if k not in topics)
    if "family_history" in topics:
        # "a family history of diabetes" is about relatives: the condition narrows the
        # family history, it is not a question about the patient's own diabetes.
        named = [t for t in topics if TOPIC_BY_NAME[t].is_condition]
        terms += tuple(("family_history", TOPIC_BY_NAME[t].label) for t in named)
        speakable += tuple(TOPIC_BY_NAME[t].label for t in named)  # the vocabulary's own words
        topics = tuple(t for t in topics if t not in named)
    # Tests the question names, unless a look-up frame names them as something else
    # ("is he on iron?" asks about a medication, not the iron result).
    framed = {a for _, term in terms for a in analytes_named(term)}
    analytes = tuple(a for a in analytes_named(text) if a not in framed)
    for topic in [*(t for t, _ in terms), *(topic_of_analyte(a) for a in analytes)]:
        if topic not in topics and not (topic == "labs" and any(TOPIC_BY_NAME[t].is_lab for t in topics)):
            topics += (topic,)

    cue = _follow_up_cue(text)
    grounded = previous is not None and not previous.out_of_scope and bool(previous.topics)
    follow_up = grounded and cue is not None
    inherited: list[str] = []
    if follow_up and previous is not None:
        rules.append(f"follow_up:{cue}")
        written = _ellipsis_term(text) if not topics else None
        if written:
            # Same question about something the vocabulary does not know: search the
            # same kind of record for it, not the previous topic.
            kind = _record_kind(previous.topics)
            new_term = written.lower()
            topics, terms = (kind,), ((kind, new_term),)
            speakable = (new_term,) if quotable(new_term, written) else ()
            inherited.append(f"the kind of record ({kind})")
        elif not topics:
            topics, terms, analytes = previous.topics, previous.terms, previous.analytes
            speakable = previous.quotable
            inherited.append("topics")
        if intent is Intent.LOOKUP and previous.intent is not Intent.LOOKUP:
            intent = previous.intent
            inherited.append("intent")
    if not topics and {Unsafe.DOSING, Unsafe.MEDICATION_CHANGE} & set(unsafe):
        topics = ("medications",)  # a dose or a medication change is about her medications
        inherited.append("topics implied by the request")
    clinical_subject = bool(topics) or bool(CLINICAL_SUBJECT.search(text) or _DRUG_STEMS.search(text))
    in_chart = clinical_subject or about_the_record(text) or bool(unsafe) or intent is not Intent.LOOKUP
    if not in_chart:
        rules.append("out_of_scope:nothing_about_the_chart")
    therapy = chooses_therapy(text, unsafe, rules, topics)
    if therapy:
        rules.append("therapy:allergies_medications_pregnancy_bear_on_it")
    return ParsedQuestion(text=text, topics=topics, intent=intent, unsafe=unsafe, follow_up=follow_up,
                          inherited=tuple(inherited), terms=terms, quotable=speakable, therapy=therapy,
                          analytes=analytes, out_of_scope=not in_chart, clinical_subject=clinical_subject,
                          rules=tuple(rules))
