"""Which decisions a question asks the workbench to make (pure): the refusal rule tables.

Making a diagnosis (from labs or symptoms), choosing a treatment, a dose, or a
medication change is declined. Asking what the record documents is a look-up, not a
diagnosis: "does she have diabetes?", "any hx of CKD?", "is she on metformin?" are
answered with citations (``RECORD_ANCHORS``). ``chooses_therapy`` tells a request that
chooses or changes a therapy (the allergies, medications and pregnancy on record bear on
it) from a care decision ("should he see a hematologist?").

Every rule is a named regular expression in a table below, so a reviewer can see which
rule fired (the name is recorded in the supervisor's handoff reason).
"""

from __future__ import annotations

import re
from enum import Enum

from domain.policy.facts.medication_schedule import dose_amount_pattern
from domain.policy.questions.clinical_terms import DRUG_STEMS
from domain.policy.questions.patterns import POSSESSIVE, PT, START, WE, Rule, named_rules
from domain.policy.questions.topics import TOPIC_BY_NAME


class Unsafe(str, Enum):
    DIAGNOSIS = "diagnosis"
    TREATMENT = "treatment"
    DOSING = "dosing"
    MEDICATION_CHANGE = "medication_change"


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
_AMOUNT = rf"\b{dose_amount_pattern(strengths=False)}(?!\s*/)"


# ------------------------------------------------------------------ unsafe requests
# Dosing: choosing an amount, or changing one.
DOSING_RULES = named_rules(
    # "what dose of metformin should she take", "how much insulin for a 70 kg man"
    ("dose_to_choose", r"\b(?:what|which|how much|how many)\b[^?.]{0,40}\b(?:dose|dosage|dosing|mg|milligrams?|mcg|"
                       r"micrograms?|units?|ml|tablets?)\b[^?.]{0,40}\b(?:should|shall|would|could|do (?:i|we|you)|"
                       r"to (?:give|use|start|prescribe|load)|is (?:right|correct|best|safe|appropriate|needed)|"
                       r"for (?:a|an|her|him|this|someone)\b)"),
    # "how much metformin should I give her?", "how many units does he need?" (not "how much
    # metformin is she on?", which asks what the record says)
    ("how_much_to_give", rf"\bhow\s+(?:much|many)\b(?:\s+[\w/-]+){{0,5}}?\s+(?:(?:should|shall|can|could|would|"
                         rf"ought to|to)\s+(?:(?:{WE}|{PT})\s+)?(?:give|use|start|prescribe|load|take|get|"
                         rf"administer|order|be (?:given|on|taking))|(?:do|does|will|would)\s+{PT}\s+"
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
                    rf"{POSSESSIVE}\b"),
    # "double her metformin", "bump up his lisinopril", "titrate the insulin"
    ("scale_the_drug", r"\b(?:double|triple|halve|bump(?:\s+up)?|titrate|uptitrate|max out|cut back)\s+(?:up\s+)?"
                       rf"(?:{POSSESSIVE}|it|him|her)\b"),
)

# Medication change: start, stop, switch, hold, taper, give.
MEDICATION_CHANGE_RULES = named_rules(
    # "should I stop her lisinopril", "can we add a statin", "would you switch…"
    ("should_we_act", rf"\b(?:should|shall|can|could|would|may|must|do|ought to)\s+{WE}\b(?:\s+\w+){{0,2}}?\s+"
                      rf"{_CHANGE_VERBS}\b(?!\s+(?:me|us)\b)"),
    # the same asked indirectly: "check whether I should increase her metformin", "if we can stop it"
    ("whether_we_act", rf"\b(?:whether|if)\s+{WE}\s+(?:should|shall|can|could|may|must|ought to|need to)\b"
                       rf"(?:\s+\w+){{0,2}}?\s+{_CHANGE_VERBS}\b(?!\s+(?:me|us)\b)"),
    # "can I take her off warfarin?", "time to come off the statin?", "should we keep him on it?"
    ("take_off_or_on", rf"\b(?:should|shall|can|could|would|may|must|ought to|time to|ok to|okay to|safe to|"
                       rf"fine to|let'?s|need to|want to|going to|gonna|plan to|i'?ll|we'?ll)\s+"
                       rf"(?:(?:{WE}|{PT})\s+)?(?:just\s+|go ahead and\s+)?"
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
    ("should_patient_take", rf"\b(?:should|shall|can|could|would|may|must|ought to)\s+{PT}\s+(?:still\s+)?"
                            r"(?:be\s+(?:on|off|started|taking|switched|given|put on|prescribed|restarted|tapered|"
                            r"weaned)|start|stop|take|come off|go off|go on|continue|quit|restart|resume|switch|"
                            r"use|get)\b"),
    # "can he have penicillin" (could/might … have is a diagnosis question instead)
    ("can_patient_have", rf"\bcan\s+{PT}\s+have\b"),
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
TREATMENT_RULES = named_rules(
    # "how should I treat her cholesterol", "how do we get her A1c down"
    ("how_to_treat", rf"\bhow\s+(?:should|do|would|can|could|might|to)\s+(?:{WE}\s+)?(?:best\s+)?(?:treat|manage|"
                     r"handle|control|fix|address|bring down|get down|lower|reduce|improve)\b"),
    ("how_to_get_down", rf"\bhow\s+(?:do|can|should|would)\s+{WE}\s+get\b[^?.]{{0,40}}\b(?:down|up|under control|"
                        r"controlled|to goal)\b"),
    # "what medication should she be on", "which antibiotic for her"
    ("which_therapy", r"\b(?:what|which)\s+(?:treatment|therapy|therapies|medication|medicine|med|drug|antibiotic|"
                      r"regimen|management)s?\b[^?.]{0,30}\b(?:should|would|do you|to (?:use|give|start|try|prescribe)|"
                      r"is (?:best|right|indicated|recommended)|for (?:her|him|this|the|a)\b)"),
    # "what would you prescribe", "what do you recommend"
    ("your_choice", r"\bwhat\s+(?:would|should|do|could|will)\s+you\s+(?:prescribe|recommend|suggest|give|do|start|"
                    r"use|try|advise)\b"),
    ("what_should_we_do", rf"\bwhat\s+(?:should|shall|do|can)\s+{WE}\s+(?:do|give|prescribe|start|try|use|offer)\b"),
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
    ("should_we_manage", rf"\b(?:should|shall|must|ought to|can|could|may|do)\s+{WE}\s+(?:\w+\s+){{0,2}}?(?:refer|"
                         r"admit|send|order|treat|manage|operate|biopsy|consult|discharge|transfer|release|"
                         r"hospitali[sz]e|observe)\b(?!\s+(?:me|us)\b)"),
    # "should he see a hematologist?", "should she go to the ER?", "ok to discharge him?"
    ("patient_disposition", rf"\b(?:should|shall|must|can|could|may|ought to)\s+{PT}\s+(?:need to\s+|have to\s+)?"
                            r"(?:see|be seen|be referred|go (?:to|home|back)|be sent|be admitted|be discharged|"
                            r"be transferred|be hospitali[sz]ed|be observed|stay|come back|return|follow up)\b|"
                            r"\b(?:ok|okay|safe|fine|alright|all right|reasonable|appropriate)\b[^?.]{0,20}\bto\s+"
                            r"(?:discharge|send|admit|transfer|release)\b"),
    ("prescribe", r"\bprescribe\b"),
    # "should she be treated", "does he need insulin", "does he need a biopsy"
    ("needs_treatment", rf"\b(?:should|does|do|will|would|might|may)\s+{PT}\s+(?:still\s+|also\s+|really\s+)?"
                        rf"(?:need|require)s?\b|\b(?:should|does|do)\s+{PT}\s+(?:need to\s+)?be\s+treat\w*"),
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
    rf"{START}(?:is|are|was|were)\s+{PT}\s+"
    r"(?:(?:now|currently|still|really|actually)\s+)?+"
    r"(?!(?:on|off|taking|using|allergic|due|overdue|up|a|an|the|in|at|smoking|drinking|pregnant|married|single|"
    r"male|female|here|seen|scheduled|enrolled|insured|alive|eligible|older|younger|over|under|"
    # what was done to or for the patient, as the record tells it: "was she given co-amoxiclav?"
    r"given|prescribed|started|commenced|treated|admitted|discharged|vaccinated|immuni[sz]ed|tested|screened|"
    r"referred|offered|dispensed|administered|switched|put)\b)"
    r"[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?\s*[?.!]*\s*$", re.I))

# Diagnosis: deciding what the patient has (not asking what the record says).
DIAGNOSIS_RULES = named_rules(
    # "based on these labs does he have CKD?", "from her results, is she diabetic?"
    ("decide_from_data",
     r"(?=.*\b(?:based on|going by|judging (?:by|from)|given|from|according to|in light of|looking at)\s+"
     r"(?:these|those|the|her|his|their|this|that|today'?s)?\s*(?:labs?|lab results|lab values|results?|numbers|"
     r"values|findings|symptoms|data|tests?|test results|picture|presentation|blood ?work|a1c|readings)\b)"
     rf"(?=.*\b(?:(?:does|do|did|could|might|may|would)\s+{PT}\s+have|(?:is|are)\s+{PT}\s+(?:\w+ic|\w+ive|in\s+\w+)"
     r"|diagnos\w*|meets?\s+(?:the\s+)?criteria|qualif\w*\s+(?:as|for)|consistent with|indicat\w*|suggest\w*|"
     r"point\w* to|rule (?:in|out))\b)"),
    # "does her A1c mean she has diabetes?", "does this mean he has CKD?"
    ("results_mean", r"\b(?:do|does|did|would|could|can)\s+(?:these|those|the|her|his|their|this|that)\s+"
                     r"(?:[\w-]+\s+){0,2}?(?:mean|indicate|suggest|point to|confirm|prove|show that)\b[^?.]{0,30}"
                     r"\b(?:she|he|they|has|have|is|diagnos\w*|disease|condition|cancer|\w+itis|\w+a?emia|\w+osis|"
                     r"\w+pathy|diabet\w*|failure|infection|syndrome)\b"),
    # "could this be cancer?", "might she have lupus?", "could he be bleeding?", "is this a sign of kidney disease?"
    ("could_it_be", rf"\b(?:could|might|may|can)\s+(?:this|that|it|these|those)\s+(?:be|mean|indicate|represent|"
                    rf"signal)\b|\b(?:could|might|may)\s+{PT}\s+(?:have|be)\b|"
                    r"\bis\s+(?:this|it|that)\s+(?:a |an )?(?:sign of|symptom of|cancer|malignan\w*|tumou?r|"
                    r"infection|\w+itis|\w+osis|\w+pathy|\w+a?emia|stroke|heart attack|diabet\w*|serious)\b"),
    # "what's the diagnosis?", "what is the likely dx", "what's the differential?"
    ("name_the_diagnosis", r"\bwhat(?:'s|\s+is|\s+are|\s+would\s+be|\s+could\s+be|\s+might\s+be)?\s+"
                           r"(?:the|your|a|her|his|their|my|our)?\s*(?:likely|most likely|probable|possible|working|"
                           r"leading)?\s*(?:diagnosis|dx|ddx|differentials?)\b"),
    # "is this pneumonia?", "is it the flu?", "is this an emergency?" (not "is that the latest?",
    # "is this result normal?", "is it on her problem list?")
    ("name_the_condition", rf"{START}(?:is|was|are|were)\s+(?:this|it|that|these|those)\s+"
                           r"(?:(?:just|really|possibly|probably|likely|definitely|actually)\s+)?+"
                           r"(?:(?:a|an|the|some kind of|some sort of|some type of)\s+)?+"
                           rf"(?!{_NOT_A_CONDITION}\b)[a-z][\w'-]*(?:\s+[a-z][\w'-]*){{0,3}}\s*[?.!]*\s*$"),
    # "does this look like an infection?", "does he look septic?", "sounds like gout"
    ("looks_like", rf"\b(?:does|do|did)\s+(?:this|it|that|these|those|{PT})\s+(?:look|sound|seem|appear)\b|"
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
    # (not "why is she here?", the reason for the visit, nor "why was metformin stopped?",
    # the reason the record gives for a decision about a medicine already taken)
    ("why", rf"{START}why\b(?!\s+(?:is|was|did|does|has)\s+{PT}\s+(?:here|seen|referred|come|coming|in|visiting|"
            r"booked)\b)"
            r"(?!\s+(?:was|were|has|have|had)\s+(?:her\s+|his\s+|their\s+|the\s+)?[a-z][\w/-]*(?:\s+[a-z][\w/-]*)?"
            r"\s+(?:been\s+)?(?:stopped|withheld|held|discontinued|ceased|suspended|paused|restarted|switched|"
            r"started)\b)"),  # not "increased": "why has her creatinine increased?" asks for a cause
    # "is his white count from an infection?", "is the rash a reaction to the penicillin?"
    ("attributed_cause", r"\b(?:is|are|was|were|could|might|may|can)\b[^?.]{0,40}\b(?:due to|caused by|because of|"
                         r"secondary to|attributable to|(?:a\s+)?(?:side effect|reaction|complication)\s+"
                         r"(?:of|from|to)\b|"
                         r"from\s+(?:a|an)\s+(?!(?:lab|report|document|visit|test|outside|other|different|earlier|"
                         r"previous|new|recent|older)\b)[a-z])"),
    # "what's the prognosis?", "how long will he live?", "is she at risk of a stroke?"
    ("prognosis", rf"\bprognos\w*|\blife expectancy\b|\boutlook\b|\bhow long (?:does|will|would|might|could) {PT} "
                  r"(?:have|live|survive|last)\b|\bsurviv\w*|\bchances? of\b"),
    ("risk_judgement", rf"\b(?:is|are|was)\s+{PT}\s+(?:at\s+)?(?:(?:high|higher|increased|low|any|a)\s+)?risk\b|"
                       r"\bwhat(?:'s|\s+is)\s+(?:her|his|their|the patient'?s)\s+risk\b"),
    # "is a WBC of 105k an emergency?", "how sick is he?"
    ("triage", rf"\b(?:is|are|was|were)\b[^?.]{{0,40}}\b(?:an?\s+)?(?:emergency|life[- ]threatening)\b(?!\s+contact)|"
               r"\bhow\s+(?:sick|ill|unwell|bad|serious|severe|urgent)\s+(?:is|are|was|were)\s+"
               rf"(?:{PT}|this|it|that)\b"),
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
RECORD_ANCHORS = named_rules(
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
# medications and pregnancy bear on it (``domain.policy.answers.relevance.THERAPY_CONTEXT``).
_THERAPY_RULES = {"how_to_treat", "how_to_get_down", "which_therapy", "best_option", "treatment_plan", "prescribe",
                  "recommend_a_therapy"}
_THERAPY_WORDS = re.compile(r"\b(?:prescri\w*|treat\w*|therap\w*|medications?|medicines?|meds?|drugs?|"
                            r"antibiotics?|antivirals?|antifungals?|regimens?|pills?|tablets?|injections?|infusions?|"
                            r"doses?|dosing|dosage|painkillers?|analgesics?|inhalers?|steroids?|statins?|aspirin|"
                            r"insulin|opioids?|nsaids?|vaccines?)\b", re.I)


def _fired(rules: tuple[Rule, ...], text: str) -> list[str]:
    return [r.name for r in rules if r.search(text)]


# "Double-check her metformin dose" asks to look the dose up again, not to double it: a
# checking verb is read as "check" before the rules run (a request to change the dose in
# the same question still fires: "double-check it, then double it").
_CHECKING = re.compile(r"\b(?:double|triple|cross|re)[- ]?check(?=\w*\b)", re.I)


_CHECK_A_DOSE = re.compile(r"\b(?:(?:double|triple|cross|re)[- ]?)?(?:check|verify|confirm)\w*\b[^?.]{0,40}"
                           r"\b(?:dose|doses|dosage|dosing|strength|how much)\b", re.I)


def asks_to_check_a_dose(text: str) -> bool:
    """"Can you double-check her metformin dose?": a look-up of the recorded dose, answered
    with the dose as cited and a note that no dose is judged."""
    return _CHECK_A_DOSE.search(text) is not None


def unsafe_requests(text: str, topics: tuple[str, ...] = ()) -> tuple[tuple[Unsafe, ...], list[str]]:
    """Which decisions the question asks the workbench to make, and the rules that said so.
    ``topics``: what the question names (a known condition makes "is she X?" a look-up)."""
    text = _CHECKING.sub("check", text)
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
    return bool(named & _THERAPY_RULES) or bool(_THERAPY_WORDS.search(text) or DRUG_STEMS.search(text)) \
        or "medications" in topics
