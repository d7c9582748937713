"""Understanding a clinician's question with rules a reviewer can read (pure).

A question is reduced to
- *topics*: what it is about (``core.policy.topics``), plus free *terms* where a
  look-up names something the vocabulary does not know ("is she on apixaban?");
- an *intent*: look something up, what deserves attention, or guideline advice;
- *unsafe requests*: asking the workbench to decide — make a diagnosis (from labs
  or symptoms), choose a treatment, a dose, or a medication change. Asking what the
  record documents is a look-up, not a diagnosis: "does she have diabetes?",
  "any hx of CKD?", "is she on metformin?" are answered with citations;
- *scope*: whether it is about the chart at all ("write me a poem" is not), and
  whether it leans on the previous turn ("and her LDL?", "when was that?").

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

# ------------------------------------------------------------------ unsafe requests
# Dosing: choosing an amount, or changing one.
DOSING_RULES = _rules(
    # "what dose of metformin should she take", "how much insulin for a 70 kg man"
    ("dose_to_choose", r"\b(?:what|which|how much|how many)\b[^?.]{0,40}\b(?:dose|dosage|dosing|mg|milligrams?|mcg|"
                       r"micrograms?|units?|ml|tablets?)\b[^?.]{0,40}\b(?:should|shall|would|could|do (?:i|we|you)|"
                       r"to (?:give|use|start|prescribe|load)|is (?:right|correct|best|safe|appropriate|needed)|"
                       r"for (?:a|an|her|him|this|someone)\b)"),
    # "what's the right dose", "max dose", "starting dose"
    ("named_dose", r"\b(?:right|correct|best|appropriate|safe|safest|max(?:imum)?|starting|optimal|ideal|usual|"
                   r"recommended|loading|target)\s+(?:dose|dosage|dosing)\b"),
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
                      r"(?:start|stop|discontinue|d/?c|switch|change|add|begin|quit|hold|restart|resume|continue|"
                      r"give|taper|wean|swap|replace|substitute|try|trial|up|increase|decrease|reduce|"
                      r"double|halve|raise|lower|cut|bump|use|put)\b(?!\s+(?:me|us)\b)"),
    # "should she be on a statin", "can he take ibuprofen", "should she stop…"
    ("should_patient_take", rf"\b(?:should|shall|can|could|would|may|must|ought to)\s+{_PT}\s+(?:still\s+)?"
                            r"(?:be\s+(?:on|off|started|taking|switched|given|put on|prescribed|restarted|tapered|"
                            r"weaned)|start|stop|take|come off|go off|go on|continue|quit|restart|resume|switch|"
                            r"use|get)\b"),
    # "can he have penicillin" (could/might … have is a diagnosis question instead)
    ("can_patient_have", rf"\bcan\s+{_PT}\s+have\b"),
    # "ok to give ibuprofen?", "is it safe to add lisinopril?"
    ("safe_to_give", r"\b(?:ok|okay|safe|fine|alright|all right|reasonable|appropriate)\b[^?.]{0,20}\bto\s+"
                     r"(?:give|add|start|stop|use|prescribe|continue|combine|switch|take|restart|resume|hold|"
                     r"increase|decrease|double|mix)\b"),
    ("contraindicated", r"\bcontraindicat\w*"),
    # "taper her prednisone", "wean him off oxycodone"
    ("taper_or_wean", r"\b(?:taper|tapering|wean|weaning|deprescrib\w*)\b"),
    # "swap to losartan", "switch her from metformin to insulin" (not "change to 7.9")
    ("switch_to", r"\b(?:swap|switch|change|convert|transition)\b[^?.]{0,30}\b(?:to|onto|over to)\s+(?!\d)"
                  r"(?!(?:the |her |his )?(?:topic|subject|question|labs?|results?)\b)\w+"),
    # Imperatives: "start her on a statin", "stop the aspirin" (not "give me her labs")
    ("imperative", r"^\s*(?:please\s+)?(?:start|stop|discontinue|d/c|hold|restart|resume|begin|prescribe|taper|wean|"
                   r"switch|swap|add|increase|decrease|double|halve|titrate|bump|reduce|up|give)\b"
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
    ))
# Words that name a kind of record rather than a thing in it.
_GENERIC_TERMS = re.compile(r"^(?:any(?:thing)?|something|allerg\w*|med\w*|drugs?|problems?|conditions?|issues?|"
                            r"diagnos\w*|history|illness(?:es)?|diseases?|that|this|it|them|those|these|"
                            r"(?:a |any )?known \w+)$", re.I)

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
    r"follow[- ]?up|guidelines?)\b", re.I)
CLINICAL_SUBJECT = re.compile(
    r"\b(?:pain\w*|ache\w*|cough\w*|fever\w*|nause\w*|vomit\w*|diarrh\w*|constipat\w*|rash\w*|itch\w*|dizz\w*|"
    r"headache\w*|migraine\w*|fatigue\w*|tired\w*|swell\w*|swollen|bleed\w*|bruis\w*|breath\w*|wheez\w*|chest|"
    r"heart|lungs?|kidneys?|liver|skin|bones?|joints?|blood|urine|stool|weight|bmi|sleep\w*|mood|anxi\w*|"
    r"depress\w*|pregnan\w*|infect\w*|injur\w*|wound\w*|fractur\w*|sprain\w*|sodium|potassium|calcium|"
    r"magnesium|iron|ferritin|vitamin\w*|protein|lipo\w*|triglycerid\w*|electrolytes?|imaging|x-?rays?|scans?|"
    r"mri|ultrasound|biopsy|vaccin\w*|immuni[sz]\w*|surgery|surgical|procedure|smok\w*|alcohol|"
    r"(?!(?:diagnosis|prognosis|dx)\b)\w+(?:itis|a?emia|osis|pathy|oma|ectomy|algia|uria))\b", re.I)

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
    return tuple(kinds), fired


def lookup_terms(text: str) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """Free terms a look-up frame names that no specific topic covers, and the frames."""
    found: list[tuple[str, str]] = []
    fired: list[str] = []
    for name, topic, pattern in LOOKUP_FRAMES:
        m = pattern.search(text)
        if not m:
            continue
        term = re.sub(r"\s+", " ", m.group("term").strip(" '-/")).lower()
        term = re.sub(r"^(?:any|a|an|the|her|his|their)\s+", "", term)
        if not term or _GENERIC_TERMS.match(term):
            continue
        if set(find_topics(term)) - {"labs", "problems", "medications", "allergies"}:
            continue  # the vocabulary knows it ("diabetes", "metformin")
        if (topic, term) not in found:
            found.append((topic, term))
            fired.append(f"lookup:{name}")
    return tuple(found), fired


def off_topic(text: str, topics: tuple[str, ...]) -> str | None:
    """The rule that puts the question outside the chart, if any."""
    for rule in OFF_TOPIC_ALWAYS:
        if rule.search(text):
            return rule.name
    if not topics:
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
    return rest.lower()


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
    if not unsafe:
        terms, frames = lookup_terms(text)
        rules += frames
    if "family_history" in topics:
        # "a family history of diabetes" is about relatives: the condition narrows the
        # family history, it is not a question about the patient's own diabetes.
        named = [t for t in topics if TOPIC_BY_NAME[t].is_condition]
        terms += tuple(("family_history", TOPIC_BY_NAME[t].label) for t in named)
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
        new_term = _ellipsis_term(text) if not topics else None
        if new_term:
            # Same question about something the vocabulary does not know: search the
            # same kind of record for it, not the previous topic.
            kind = _record_kind(previous.topics)
            topics, terms = (kind,), ((kind, new_term),)
            inherited.append(f"the kind of record ({kind})")
        elif not topics:
            topics, terms, analytes = previous.topics, previous.terms, previous.analytes
            inherited.append("topics")
        if intent is Intent.LOOKUP and previous.intent is not Intent.LOOKUP:
            intent = previous.intent
            inherited.append("intent")
    if not topics and {Unsafe.DOSING, Unsafe.MEDICATION_CHANGE} & set(unsafe):
        topics = ("medications",)  # a dose or a medication change is about her medications
        inherited.append("topics implied by the request")
    clinical_subject = bool(topics) or bool(CLINICAL_SUBJECT.search(text))
    in_chart = clinical_subject or bool(RECORD_WORDS.search(text)) or bool(PATIENT_REFERENCE.search(text)) or \
        bool(unsafe) or intent is not Intent.LOOKUP
    if not in_chart:
        rules.append("out_of_scope:nothing_about_the_chart")
    return ParsedQuestion(text=text, topics=topics, intent=intent, unsafe=unsafe, follow_up=follow_up,
                          inherited=tuple(inherited), terms=terms, analytes=analytes, out_of_scope=not in_chart,
                          clinical_subject=clinical_subject, rules=tuple(rules))
