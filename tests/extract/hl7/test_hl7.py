"""HL7 v2: the tolerant normalizer and the extractor, on real third-party messages and on
small synthetic ones that isolate one quirk each."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from domain.errors import ExtractionError
from domain.models import DocType
from extract.formats.hl7.normalize import normalize_hl7
from extract.hl7.facts import extract_hl7
from extract.formats.hl7.parse import Encoding, unescape
from extract.registry import extractor_for
from tests.support.paths import SHARED_DATA
from tests.support.extract_support import identity, of_type, read_and_extract

SOURCE = "documents:12"
HL7_DIR = SHARED_DATA / "hl7"
HL7_FILES = sorted(p.name for p in HL7_DIR.glob("*.hl7")) if HL7_DIR.is_dir() else []


def run(data: bytes):
    """Normalise and extract HL7 bytes, every citation checked (tests/support/extract_support.py)."""
    return read_and_extract(data, normalize_hl7, extract_hl7, SOURCE)


def real(shared_data, name: str):
    return run((shared_data / "hl7" / name).read_bytes())


def labs(result):
    return of_type(result, "lab_result")


def by_locator(result, locator):
    matches = [f for f in result.facts if f.citation.page_or_section == locator]
    assert len(matches) == 1, f"expected one fact at {locator}, got {[f.fact_text for f in matches]}"
    return matches[0]


# ---------------------------------------------------------------------------- synthetic messages

MSH = "MSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|20240312093000-0500||ORU^R01^ORU_R01|MSG0001|P|2.5.1"
PID = "PID|1||WB-204118^^^CLINIC^MR~998877^^^STATE^SS||QUENTARA^MARISOL^J^^^^L||19780314|F|||12 Larkspur Row^^Eastmere^ST^11111"
OBR = "OBR|1|ORD1|FIL1|24323-8^Metabolic panel^LN|||20240312081500-0500|||||||||||||||20240312093000|||F"


def message(*segments: str, sep: str = "\r") -> bytes:
    return sep.join((MSH, PID, OBR) + segments).encode()


GLUCOSE = "OBX|1|NM|2345-7^Glucose^LN||182|mg/dL^^UCUM|70-99|H|||F|||20240312081500-0500"


def test_registered_for_hl7_doc_type():
    assert extractor_for(DocType.HL7V2_MESSAGE) is extract_hl7


def test_a_message_naming_two_patients_goes_to_review_and_fails_the_identity_gate():
    from domain.models import IdentityStatus
    from domain.policy.identity.gate import check_identity

    second = "PID|2||WB-999001^^^CLINIC^MR||ROE^JANE||19800202|F"
    other_order = OBR.replace("OBR|1|ORD1|FIL1|", "OBR|2|ORD2|FIL2|")
    _, result = run(message(MSH, PID, OBR, GLUCOSE, second, other_order, GLUCOSE.replace("|182|", "|95|")))
    assert "hl7_several_patients" in {w.code for w in result.warnings}
    assert {i.value for i in result.identifiers if i.kind.value == "mrn"} == {"WB-204118", "WB-999001"}
    results = [f for f in labs(result) if f.structured_value.get("value")]
    assert len(results) == 2 and all(f.wants_review and "2 patients" in f.review_reason for f in results)
    chart = {"first_name": "Marisol", "last_name": "Quentara", "dob": "1978-03-14", "mrn": "WB-204118"}
    assert check_identity(result.identifiers, chart).status is IdentityStatus.MISMATCH


def test_a_plain_result_with_identity_and_structure_check():
    content, result = run(message(GLUCOSE))
    (fact,) = labs(result)
    sv = fact.structured_value
    assert (sv["test_name"], sv["value"], sv["unit"], sv["reference_range"]) == ("Glucose", "182", "mg/dL", "70-99")
    assert (sv["abnormal_flag"], sv["collection_date"], sv["result_status"]) == ("high", "2024-03-12", "F")
    assert fact.citation.page_or_section == "OBX[1]-5" and fact.citation.field_or_chunk_id == "results[0]"
    assert fact.citation.quote_or_value == "182" and fact.citation.source_type == "hl7v2_message"
    assert not fact.wants_review and not fact.document_fact_only and fact.confidence >= 0.9
    assert identity(result) == {"name": "QUENTARA, MARISOL J", "dob": "1978-03-14", "mrn": "WB-204118"}
    check = content.meta["messages"][0]["structure_check"]
    assert check["ok"] and check["structure"] == "ORU_R01"
    assert {s.locator for s in content.sections} >= {"MSH[1]", "MSH[1]-9", "PID[1]-5", "OBX[1]-5", "OBX[1]"}
    assert next(s for s in content.sections if s.locator == "MSH[1]-2").text == "^~\\&"


@pytest.mark.parametrize("sep", ["\r", "\n", "\r\n"])
def test_separators_bom_and_trailing_spaces_do_not_matter(sep):
    data = b"\xef\xbb\xbf" + sep.join(s + "   " for s in (MSH, PID, OBR, GLUCOSE)).encode() + sep.encode()
    _, result = run(data)
    (fact,) = labs(result)
    assert fact.structured_value["value"] == "182" and fact.citation.page_or_section == "OBX[1]-5"


def test_escape_sequences():
    enc = Encoding()
    assert unescape(r"A\F\B\S\C\T\D\R\E\E\F", enc) == "A|B^C&D~E\\F"
    assert unescape("line one\\.br\\line two\\X0D0A\\end \\X41\\", enc) == "line one\nline two\r\nend A"
    assert unescape(r"keep C:\temp\file and \H\bold\N\ text", enc) == "keep C:\\temp\\file and bold text"
    assert unescape(r"trailing \ alone", enc) == "trailing \\ alone"
    _, result = run(message(r"OBX|1|ST|1234-5^Ratio text^L||Ratio 1\S\2 \T\ more||||||F"))
    assert labs(result)[0].structured_value["value"] == "Ratio 1^2 & more"


def test_repeating_flags_and_structured_numeric():
    _, result = run(message("OBX|1|SN|5198-7^HCV Ab^LN||>^11.0|{s_co_ratio}|<1.0|H~POS|||F",
                            "OBX|2|SN|2345-7^Glucose^LN||^182|mg/dL||H|||F",
                            "OBX|3|SN|1-1^Titer^L||^1^:^128||||||F"))
    values = [f.structured_value["value"] for f in labs(result)]
    assert values == [">11.0", "182", "1:128"]
    assert labs(result)[0].structured_value["abnormal_flag"] == "high"
    assert labs(result)[0].citation.quote_or_value == ">^11.0"


def test_status_drives_certainty():
    _, result = run(message(
        "OBX|1|NM|1-1^Final^L||5|mg|||||F",
        "OBX|2|NM|1-2^Prelim^L||5|mg|||||P",
        "OBX|3|NM|1-3^NoStatus^L||5|mg|||||",
        "OBX|4|NM|1-4^Pending^L||5|mg|||||I",
        "OBX|5|NM|1-5^Corrected^L||6|mg|||||C",
    ))
    final, prelim, nostatus, pending, corrected = labs(result)
    assert not final.wants_review and not final.document_fact_only
    assert prelim.document_fact_only and "Preliminary" in prelim.fact_text and not prelim.wants_review
    assert nostatus.wants_review and "status missing" in nostatus.review_reason
    assert pending.wants_review and pending.review_reason == "result pending"
    assert pending.structured_value["value"] == "" and pending.citation.quote_or_value == "Pending"
    assert "Corrected" in corrected.fact_text and not corrected.wants_review
    assert final.confidence > corrected.confidence > prelim.confidence > nostatus.confidence


def test_empty_results_never_carry_a_value():
    _, result = run(message("OBX|1|NM|1-1^Empty final^L||||||||F", 'OBX|2|NM|1-2^Explicit null^L||""||||||X',
                            "OBX|3|TX|1-3^Report^L||||||||F"))
    empty, null = labs(result)  # the blank TX line is a blank report line, not a result
    assert empty.structured_value["value"] == "" and empty.review_reason == "no result value given"
    assert null.structured_value["value"] == "" and null.review_reason.startswith("result cannot be obtained")
    assert all(f.wants_review for f in (empty, null))


def test_text_saying_no_result_was_given_is_held_with_no_value_for_the_chart():
    # A held-out lipid panel: the calculated LDL's OBX carried the lab's sentence, and it
    # was charted as verified, an LDL whose "value" was "Unable to calculate: ...".
    from domain.policy.facts.chart_row_checks import approval_refusal

    _, result = run(message(
        "OBX|1|TX|13457-7^LDL Cholesterol calculated^LN||Unable to calculate: triglycerides above 400 mg/dL||||||F",
        "OBX|2|ST|33914-3^eGFR^LN||Not calculated||||||F",
        "OBX|3|ST|5778-6^Color of Urine^LN||Dark yellow||||||F"))
    ldl, egfr, colour = labs(result)
    for fact in (ldl, egfr):
        assert fact.wants_review and "the report gives no result for this test" in fact.review_reason
        assert approval_refusal("lab_result", fact.structured_value) is not None
    assert ldl.fact_text == "LDL Cholesterol calculated: no result (Unable to calculate: triglycerides above 400 mg/dL)"
    assert not colour.wants_review  # a result printed as words is a result


def test_order_without_results_is_pending():
    _, result = run(message())
    (fact,) = labs(result)
    assert fact.wants_review and fact.review_reason == "result pending"
    assert fact.citation.page_or_section == "OBR[1]-4" and fact.citation.quote_or_value == "Metabolic panel"


def test_shifted_fields_are_flagged_not_guessed():
    _, result = run(message("OBX|1|SN|5198-7^HCV Ab^LN|1|||>^11.0|1^^UCUM^^^^1.6^^s/co ratio||H~POS|||F"))
    (fact,) = labs(result)
    assert fact.citation.page_or_section == "OBX[1]-7" and fact.structured_value["value"] == ">11.0"
    assert fact.wants_review and "shifted by 2" in fact.review_reason
    _, plain = run(message(GLUCOSE))
    assert not labs(plain)[0].wants_review


def test_allergies_and_diagnoses_in_a_result_message_can_be_verified():
    _, result = run(message(GLUCOSE, "AL1|1|DA^Drug allergy^HL70127|70618^Penicillin^RXNORM|SV^Severe|Hives~Wheeze",
                            "DG1|1|I10|E11.9^Type 2 diabetes mellitus^I10||20240101|F"))
    allergy = next(f for f in result.facts if f.fact_type == "allergy")
    assert allergy.structured_value == {"substance": "Penicillin", "reaction": "Hives, Wheeze", "severity": "severe",
                                        "allergen_type": "Drug allergy", "code": "70618"}
    assert not allergy.document_fact_only and allergy.citation.page_or_section == "AL1[1]-3"
    problem = next(f for f in result.facts if f.fact_type == "problem")
    assert problem.structured_value["code"] == "E11.9"
    assert problem.structured_value["description"] == "Type 2 diabetes mellitus"
    assert problem.structured_value["coding_system"] == "I10"


def test_adt_content_is_document_facts_only():
    adt = "\r".join([
        MSH.replace("ORU^R01^ORU_R01", "ADT^A01^ADT_A01"), "EVN|A01|20240312", PID, "PV1|1|I",
        "AL1|1|DA|^Sulfa drugs||Rash", "DG1|1|I10|I10^Essential hypertension^I10||20240101|A",
    ]).encode()
    _, result = run(adt)
    assert {f.fact_type for f in result.facts} == {"demographic", "allergy", "problem"}
    assert all(f.document_fact_only for f in result.facts)
    demo = {f.structured_value["field"]: f.structured_value["value"] for f in result.facts if f.fact_type == "demographic"}
    assert demo == {"name": "QUENTARA, MARISOL J", "date_of_birth": "1978-03-14", "sex": "female",
                    "address": "12 Larkspur Row, Eastmere ST 11111"}


def test_concatenated_messages_are_scoped():
    other = PID.replace("WB-204118", "QF-778201").replace("QUENTARA^MARISOL^J", "BELLAMIRE-TOTH^OSKAR")
    data = "\r".join([MSH, PID, OBR, GLUCOSE, MSH.replace("MSG0001", "MSG0002"), other, OBR, GLUCOSE]).encode()
    content, result = run(data)
    assert len(content.meta["messages"]) == 2
    assert identity(result, "message 1")["mrn"] == "WB-204118" and identity(result, "message 2")["mrn"] == "QF-778201"
    assert [f.citation.page_or_section for f in labs(result)] == ["message 1 OBX[1]-5", "message 2 OBX[1]-5"]
    assert [f.scope for f in labs(result)] == ["message 1", "message 2"]


def test_literal_backslash_r_and_space_separated_segments_are_recovered():
    one_line = " ".join([MSH, PID, OBR, GLUCOSE]).encode()
    content, result = run(one_line)
    assert labs(result)[0].structured_value["value"] == "182"
    assert "hl7_segments_split_inline" in {w.code for w in result.warnings}
    literal = "\\r".join([MSH, PID, OBR, GLUCOSE]).encode()
    _, result = run(literal)
    assert labs(result)[0].structured_value["value"] == "182"
    assert "hl7_literal_separator" in {w.code for w in result.warnings}


def test_a_test_name_that_looks_like_a_segment_is_not_split():
    _, result = run(message("OBX|1|ST|MBCPCR^BLOOD CULTURE PCR^L|2.1|NO TARGETS DETECTED||||||F"))
    assert labs(result)[0].structured_value["test_name"] == "BLOOD CULTURE PCR"


def test_invalid_bytes_and_latin1():
    latin = message(GLUCOSE).replace(b"MARISOL", "MAR\u00cdSOL".encode("latin-1"))
    _, result = run(latin)
    assert identity(result)["name"] == "QUENTARA, MAR\u00cdSOL J"
    assert "hl7_decoded_latin1" in {w.code for w in result.warnings}
    mixed = message(GLUCOSE).replace(b"MARISOL", "MAR\u00cdSOL".encode()) + b"\rNTE|1||bad \xff byte"
    _, result = run(mixed)
    assert identity(result)["name"] == "QUENTARA, MAR\u00cdSOL J"
    assert "hl7_invalid_utf8" in {w.code for w in result.warnings}


def test_hl7apy_failure_is_reported_not_fatal():
    data = message(GLUCOSE).replace(b"|P|2.5.1", b"|P|9.9")
    content, result = run(data)
    assert not content.meta["messages"][0]["structure_check"]["ok"]
    assert "hl7apy_parse_failed" in {w.code for w in result.warnings}
    assert labs(result)[0].structured_value["value"] == "182"


@pytest.mark.parametrize(
    "data,code,words",
    [
        (b"", "empty_file", "empty"),
        (b" \r\n\t ", "empty_file", "empty"),
        (f"{PID}\r{OBR}\r{GLUCOSE}".encode(), "hl7_parse_error", "MSH segment missing"),
        (b"FHS|^~\\&|LAB\rBHS|^~\\&|LAB\rBTS|0\rFTS|1", "hl7_parse_error", "MSH segment missing"),
        (b"Dear colleague, please find the results attached.", "not_hl7", "no MSH"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "not_hl7", "no MSH"),
        (bytes(range(256)) * 4, "not_hl7", "binary"),
        (b"MSHA|bad", "not_hl7", "no MSH"),
        (b"MSH|^~\\&|A|B|C|D|20240101||ACK^A01|1|P|2.5\rMSA|AA|1", "no_clinical_content", "no patient data"),
    ],
)
def test_bad_input_is_a_coded_error(data, code, words):
    with pytest.raises(ExtractionError) as err:
        run(data)
    assert err.value.code == code
    assert words.lower() in str(err.value).lower()


# ---------------------------------------------------------------------------- every real file


@pytest.mark.shared_data
def test_manifest_lists_every_sample(shared_data):
    listed = {line.split(",", 1)[0] for line in (shared_data / "hl7" / "MANIFEST.csv").read_text().splitlines()[1:]}
    assert listed == set(HL7_FILES)


# What each real file must yield, derived from the reader and checked by eye against the
# raw messages (e.g. the CBC's 28 final OBX, STARLIMS' 16 OBX with status X plus an age
# question, the amylase order with no OBX, Mayo's PID of template words "LAST NAME",
# "DOB", "MRN"). ``facts``: count by fact type; ``verified``: lab results that can be
# verified (no review asked, not document-only); ``pending``: lab results without a
# value; ``identity``: identifier kinds by identity scope; ``warnings``: the exact codes.
# No real file is unreadable: each must read, so one that starts to fail (any
# ExtractionError) fails here with its code. Files that must fail are in the malformed
# corpus (tests/support/malformed_corpus.py).


@dataclass(frozen=True)
class Reads:
    facts: dict[str, int]
    verified: int = 0
    pending: int = 0
    identity: dict[str | None, str] = field(default_factory=lambda: {None: "dob mrn name"})
    warnings: frozenset[str] = frozenset()


def _w(*codes: str) -> frozenset[str]:
    return frozenset(codes)


def _each_message(n: int, kinds: str) -> dict[str | None, str]:
    return {f"message {i}": kinds for i in range(1, n + 1)}


ADT_FACTS = {"demographic": 4}
REAL_FILES: dict[str, Reads] = {
    "athena_ORU_R01_v2.5.1_LRI_amylase.hl7": Reads({"lab_result": 1}, pending=1),
    "cdc_iis_VXU_V04_v2.5.1_broken_encoding_2msgs.hl7": Reads(
        {"other": 8}, identity={"message 1": "dob mrn name"},  # message 2's PID is cut to "ID|"
        warnings=_w("hl7_replacement_chars", "hl7_unknown_segment")),
    "cdc_ti_ADT_A01_v2.3_MN_newborn.hl7": Reads({**ADT_FACTS, "other": 1}),
    "cdc_ti_ADT_A01_v2.8_GHH.hl7": Reads(ADT_FACTS),
    "cdc_ti_ORM_O01_v2.5.1_OBX_NM_value_NOVALUE.hl7": Reads({"other": 1}, identity={}),  # no PID; an AOE answer
    "cdc_ti_ORU_R01_v2.3_Epic_MayoRefLab_factorV.hl7": Reads(
        {"lab_result": 3}, verified=1, identity={}, warnings=_w("hl7_invalid_dob", "hl7_placeholder_identity")),
    "cdc_ti_ORU_R01_v2.3_Oracle_urine_albumin_creatinine.hl7": Reads({"lab_result": 3}, verified=3),
    "cdc_ti_ORU_R01_v2.5.1_TX_newborn_screening_large.hl7": Reads(
        {"lab_result": 22, "other": 11}, verified=20, warnings=_w("hl7_segments_split_inline")),
    "cdc_ti_ORU_R01_v2.5.1_micro_sign_utf8.hl7": Reads({"lab_result": 1}, verified=1, identity={None: "mrn name"}),
    "cerner_HealthSentry_ORU_R01_v2.5.1_bordetella.hl7": Reads({"lab_result": 1}, verified=1),
    "cerner_HealthSentry_ORU_R01_v2.5.1_lead.hl7": Reads({"lab_result": 1}, verified=1),
    "hl7_ELR_IG_ORU_R01_v2.5.1_animal_rabies.hl7": Reads({"lab_result": 1}, warnings=_w("hl7_non_human_subject")),
    "hl7_ELR_IG_ORU_R01_v2.5.1_campylobacter_multiOBR.hl7": Reads({"lab_result": 2}, verified=1),  # one is P
    "hl7_ELR_IG_ORU_R01_v2.5.1_hepC_SN.hl7": Reads(
        {"lab_result": 1, "other": 2}, warnings=_w("hl7_shifted_fields")),
    "lfh_ADT_A01_v2.6_CRLF_literal_backslash_r.hl7": Reads(
        {**ADT_FACTS, "allergy": 2, "problem": 1, "other": 1},
        warnings=_w("hl7_encoding_chars_repaired", "hl7_literal_separator")),
    "lfh_ADT_A01_v2.6_LF_literal_backslash_r.hl7": Reads(
        {**ADT_FACTS, "allergy": 2, "problem": 1, "other": 1},
        warnings=_w("hl7_encoding_chars_repaired", "hl7_literal_separator")),
    "lfh_ORU_R01_v2.6_echo_report_TX_redacted.hl7": Reads({"lab_result": 3}, pending=1),
    "mangled_ADT_A01_v2.3_space_separated_segments.hl7": Reads(
        {**ADT_FACTS, "problem": 1}, warnings=_w("hl7_segments_split_inline")),
    "mangled_MDM_T04_v2.3_pdf_wrapped_radiology.hl7": Reads(
        {"other": 32}, identity={None: "mrn name"},
        warnings=_w("hl7_segments_split_inline", "hl7_stray_line", "hl7_wrapped_lines_joined")),
    "nist_ELR_ORU_R01_v2.5.1_case1_lead_NM.hl7": Reads({"lab_result": 1}, verified=1),
    "nist_ELR_ORU_R01_v2.5.1_case3.hl7": Reads({"lab_result": 1}, verified=1),
    "nist_ELR_ORU_R01_v2.5.1_case4.hl7": Reads({"lab_result": 1}, verified=1),
    "nist_ELR_ORU_R01_v2.5.1_case6_stool_culture_ST.hl7": Reads({"lab_result": 3}, verified=3),
    "nist_LRI_ORU_R01_v2.5.1_CBC_28obx.hl7": Reads({"lab_result": 28}, verified=28),
    "pyhl7_ADT_A01_v2.3_HNAM_insurance.hl7": Reads({**ADT_FACTS, "problem": 1}),
    "pyhl7_FHS_BHS_batch_ADT_A04_v2.5_VINAH.hl7": Reads(
        {"demographic": 6}, identity=_each_message(3, "mrn"),  # name XXXXXXXXXX, DOB 10131113
        warnings=_w("hl7_invalid_dob", "hl7_placeholder_identity")),
    "pyhl7_ORU_R01_v2.4_GHH_glucose_SN_FN.hl7": Reads(
        {"lab_result": 2}, verified=1, identity={None: "mrn name"}, warnings=_w("hl7_invalid_dob")),
    "rs_BATCH_FHS_BHS_20x_ORU_R01_v2.5.1_CR.hl7": Reads(
        {"lab_result": 20, "other": 100}, verified=17, identity=_each_message(20, "dob mrn name")),
    "rs_ORU_R01_v2.3_Orchard_hospital_SARSCoV2_ST.hl7": Reads({"lab_result": 1}, verified=1),
    "rs_ORU_R01_v2.5.1_CDC_STARLIMS_specimen_rejected.hl7": Reads(
        {"lab_result": 16, "other": 1}, pending=16, warnings=_w("hl7_replacement_chars")),
    "rs_ORU_R01_v2.5.1_Ellume_home_test_CWE.hl7": Reads(
        {"lab_result": 1}, identity={None: "mrn"}, warnings=_w("hl7_placeholder_identity", "hl7_wrapped_lines_joined")),
    "rs_ORU_R01_v2.5.1_MARS_OTC_selftest_BinaxNOW.hl7": Reads(
        {"lab_result": 1, "other": 1}, verified=1, identity={None: "mrn"}),  # PID-5 and PID-7 empty
    "rs_ORU_R01_v2.5.1_ProPhase_HbA1c_hep_HIV_escapes.hl7": Reads({"lab_result": 4}, verified=3),
    "rs_ORU_R01_v2.5.1_SonicHealth_orthopoxvirus.hl7": Reads({"lab_result": 1}, verified=1),
    "rs_ORU_R01_v2.5.1_blood_culture_micro_susceptibility.hl7": Reads(
        {"lab_result": 16, "other": 9}, verified=8, pending=2),
}


@pytest.mark.shared_data
def test_every_real_file_has_an_expected_reading(shared_data):
    assert set(REAL_FILES) == set(HL7_FILES), "a real file was added or removed: say what it must yield"


@pytest.mark.shared_data
@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_file_reads_as_expected(shared_data, name):
    expected = REAL_FILES[name]
    try:
        _, result = real(shared_data, name)
    except ExtractionError as err:
        pytest.fail(f"{name} must read but failed with {err.code}: {err}")
    facts: dict[str, int] = {}
    for fact in result.facts:
        facts[fact.fact_type] = facts.get(fact.fact_type, 0) + 1
    lab_results = labs(result)
    verified = [f for f in lab_results if not f.wants_review and not f.document_fact_only]
    pending = [f for f in lab_results if f.structured_value.get("pending")]
    scopes = {i.scope for i in result.identifiers}
    kinds = {scope: " ".join(sorted(identity(result, scope))) for scope in scopes}
    assert (facts, len(verified), len(pending)) == (expected.facts, expected.verified, expected.pending)
    assert kinds == expected.identity
    assert {w.code for w in result.warnings} == expected.warnings
    assert all(i.citation is not None for i in result.identifiers)
    for fact in result.facts:
        assert 0.05 <= fact.confidence <= 0.99
        if fact.wants_review:
            assert fact.review_reason
    for fact in pending:
        assert fact.structured_value["value"] == "" and fact.wants_review
    for fact in lab_results:
        if fact.structured_value.get("result_status") in ("X", "I", "R", "D", "W"):
            assert fact.structured_value["value"] == "" and fact.wants_review


# ---------------------------------------------------------------------------- real files, by eye


@pytest.mark.shared_data
def test_ghh_glucose_structured_numeric(shared_data):
    _, result = real(shared_data, "pyhl7_ORU_R01_v2.4_GHH_glucose_SN_FN.hl7")
    sn = by_locator(result, "OBX[1]-5")
    assert sn.citation.quote_or_value == "^182"
    sv = sn.structured_value
    assert (sv["test_name"], sv["value"], sv["unit"], sv["reference_range"]) == ("GLUCOSE", "182", "mg/dl", "70_105")
    assert (sv["abnormal_flag"], sv["collection_date"], sv["result_status"]) == ("high", "2002-02-15", "F")
    assert not sn.wants_review
    fn = by_locator(result, "OBX[2]-5")  # same number sent with value type FN
    assert fn.wants_review and "FN" in fn.review_reason
    assert identity(result) == {"name": "EVERYWOMAN, EVE E", "mrn": "555-44-4444"}  # PID-7 196203520 is no date
    assert "hl7_invalid_dob" in {w.code for w in result.warnings}


@pytest.mark.shared_data
def test_nist_lead_free_text_range(shared_data):
    _, result = real(shared_data, "nist_ELR_ORU_R01_v2.5.1_case1_lead_NM.hl7")
    (lead,) = labs(result)
    sv = lead.structured_value
    assert (sv["value"], sv["unit"], sv["abnormal_flag"]) == ("50", "ug/dL", "high")
    assert sv["reference_range"] == "<9 mcg/dL:  Acceptable background lead exposure"
    assert sv["collection_date"] == "2008-08-15"
    assert not lead.wants_review and lead.confidence >= 0.9
    assert identity(result) == {"name": "Johnson, Philip", "dob": "2007-05-26", "mrn": "9817566735"}


@pytest.mark.shared_data
def test_nist_corrected_result(shared_data):
    _, result = real(shared_data, "nist_ELR_ORU_R01_v2.5.1_case3.hl7")
    (lead,) = labs(result)
    assert lead.structured_value["result_status"] == "C" and lead.fact_text.startswith("Corrected result")
    assert (lead.structured_value["value"], lead.structured_value["unit"]) == ("25", "ug/dl")
    assert not lead.wants_review and not lead.document_fact_only and lead.confidence >= 0.9


@pytest.mark.shared_data
def test_cbc_flags(shared_data):
    content, result = real(shared_data, "nist_LRI_ORU_R01_v2.5.1_CBC_28obx.hl7")
    assert len(labs(result)) == 28  # the UTF-8 BOM did not hide the MSH
    flags = {f.citation.page_or_section: f.structured_value["abnormal_flag"] for f in labs(result)}
    assert flags["OBX[1]-5"] == "normal"
    assert flags["OBX[2]-5"] == "low"  # hemoglobin 12.5, L
    assert flags["OBX[4]-5"] == "critical_high"  # leukocytes 105600, HH
    assert flags["OBX[20]-5"] == "abnormal"  # anisocytosis, A
    assert sum(1 for f in flags.values() if f == "critical_high") == 4
    aniso = by_locator(result, "OBX[20]-5").structured_value
    assert aniso["value"] == "Present ++ out of ++++"
    assert by_locator(result, "OBX[4]-5").structured_value["unit"] == "{cells}/uL"


@pytest.mark.shared_data
def test_amylase_order_without_results_is_pending(shared_data):
    _, result = real(shared_data, "athena_ORU_R01_v2.5.1_LRI_amylase.hl7")
    (pending,) = labs(result)
    assert pending.wants_review and pending.review_reason == "result pending"
    assert pending.structured_value["value"] == "" and pending.structured_value["test_name"] == "AMYLASE"
    assert pending.citation.page_or_section == "OBR[1]-4"
    assert identity(result)["mrn"] == "V001047"  # the MR-typed one of three repeats


@pytest.mark.shared_data
def test_hep_c_shifted_fields(shared_data):
    _, result = real(shared_data, "hl7_ELR_IG_ORU_R01_v2.5.1_hepC_SN.hl7")
    (hcv,) = labs(result)
    assert hcv.citation.page_or_section == "OBX[1]-7" and hcv.citation.quote_or_value == ">^11.0"
    sv = hcv.structured_value
    assert (sv["value"], sv["unit"], sv["abnormal_flag"], sv["result_status"]) == (">11.0", "s/co ratio", "high", "F")
    assert hcv.wants_review and "shifted" in hcv.review_reason
    others = {f.structured_value["observation"]: f.structured_value["value"]
              for f in result.facts if f.fact_type == "other"}
    assert others == {"Age at specimen collection": "29", "Current employment": "food handler"}


@pytest.mark.shared_data
def test_rejected_specimen_never_gets_a_value(shared_data):
    _, result = real(shared_data, "rs_ORU_R01_v2.5.1_CDC_STARLIMS_specimen_rejected.hl7")
    rejected = labs(result)
    assert len(rejected) == 16
    for fact in rejected:
        assert fact.structured_value["value"] == "" and fact.structured_value["result_status"] == "X"
        assert fact.wants_review and fact.review_reason == "specimen rejected"
    assert "Ciprofloxacin 2 ug/mL" in rejected[0].structured_value["test_name"]
    assert "hl7_replacement_chars" in {w.code for w in result.warnings}


@pytest.mark.shared_data
def test_batch_of_twenty(shared_data):
    content, result = real(shared_data, "rs_BATCH_FHS_BHS_20x_ORU_R01_v2.5.1_CR.hl7")
    assert len(content.meta["messages"]) == 20 and content.meta["batch"]
    assert "hl7_batch_count_mismatch" not in {w.code for w in result.warnings}
    assert len(labs(result)) == 20
    assert {f.scope for f in labs(result)} == {f"message {i}" for i in range(1, 21)}
    assert identity(result, "message 1")["name"] == "Schaefer, Stephenie Davis"
    assert by_locator(result, "message 20 OBX[1]-5").scope == "message 20"


@pytest.mark.shared_data
def test_prophase_escapes_and_wrong_unit(shared_data):
    content, result = real(shared_data, "rs_ORU_R01_v2.5.1_ProPhase_HbA1c_hep_HIV_escapes.hl7")
    note = next(s for s in content.sections if s.locator == "NTE[1]-3").text
    assert note == "Interpretation: \r\nNormal <5.7\r\nPrediabetes: 5.7-6.4\r\nDiabetic: &#8805;6.5"
    a1c = by_locator(result, "OBX[1]-5")
    assert a1c.structured_value["value"] == "5.8" and a1c.structured_value["unit"] == "mg/dL"
    assert a1c.structured_value["abnormal_flag"] == "high"
    assert a1c.wants_review and "unusual" in a1c.review_reason  # HbA1c is not measured in mg/dL
    reactive = [f.structured_value["value"] for f in labs(result)[1:]]
    assert reactive == ["Reactive", "Reactive", "Non-Reactive"]


@pytest.mark.shared_data
def test_mangled_space_separated_adt(shared_data):
    _, result = real(shared_data, "mangled_ADT_A01_v2.3_space_separated_segments.hl7")
    assert identity(result) == {"name": "DUCK, DONALD D", "dob": "1924-10-10", "mrn": "10006579"}
    problem = next(f for f in result.facts if f.fact_type == "problem")
    assert problem.structured_value["description"] == "OSTEOARTHROS NOS-L/LEG"
    assert all(f.document_fact_only for f in result.facts)


@pytest.mark.shared_data
def test_mangled_pdf_wrapped_mdm(shared_data):
    content, result = real(shared_data, "mangled_MDM_T04_v2.3_pdf_wrapped_radiology.hl7")
    codes = {w.code for w in result.warnings}
    assert {"hl7_stray_line", "hl7_wrapped_lines_joined", "hl7_segments_split_inline"} <= codes
    line = by_locator(result, "OBX[20]-5")
    assert line.structured_value["value"] == "One film was presented for interpretation and reveals a chest tube"
    assert line.wants_review and "re-assembled" in line.review_reason
    assert not any("Remote Operations" in s.text for s in content.sections if s.section_type == "field")
    assert identity(result)["mrn"] == "355281"


@pytest.mark.shared_data
def test_broken_vaccination_messages(shared_data):
    content, result = real(shared_data, "cdc_iis_VXU_V04_v2.5.1_broken_encoding_2msgs.hl7")
    assert len(content.meta["messages"]) == 2
    unknown = [w.message for w in result.warnings if w.code == "hl7_unknown_segment"]
    assert any("'WHOOPS'" in m for m in unknown) and any("'ID'" in m for m in unknown)
    assert identity(result, "message 1")["name"] == "Last, Jos\ufffd Middle"
    assert identity(result, "message 2") == {}  # its PID was truncated to "ID": no identity guessed
    assert all(f.document_fact_only for f in result.facts)


@pytest.mark.shared_data
def test_adt_with_allergies_duplicated_encoding_chars_and_literal_backslash_r(shared_data):
    for name in ("lfh_ADT_A01_v2.6_CRLF_literal_backslash_r.hl7", "lfh_ADT_A01_v2.6_LF_literal_backslash_r.hl7"):
        _, result = real(shared_data, name)
        codes = {w.code for w in result.warnings}
        assert {"hl7_encoding_chars_repaired", "hl7_literal_separator"} <= codes
        allergies = {f.structured_value["substance"]: f.structured_value["reaction"]
                     for f in result.facts if f.fact_type == "allergy"}
        assert allergies == {"OXYCODONE": "HYPOTENSION", "TRAMADOL": "SEIZURES, VOMITING"}
        problem = next(f for f in result.facts if f.fact_type == "problem")
        assert problem.structured_value["description"] == "aortic stenosis"
        assert all(f.document_fact_only for f in result.facts)


@pytest.mark.shared_data
def test_odd_coding_placeholders_and_animals_ask_for_review(shared_data):
    _, ellume = real(shared_data, "rs_ORU_R01_v2.5.1_Ellume_home_test_CWE.hl7")
    (covid,) = labs(ellume)
    assert covid.structured_value["test_name"].startswith("SARS-CoV-2 (COVID-19) Ag")
    assert covid.structured_value["value"] == "Not detected" and covid.wants_review
    assert "name" not in identity(ellume)  # FAKE_LAST_NAME is a placeholder
    _, rabies = real(shared_data, "hl7_ELR_IG_ORU_R01_v2.5.1_animal_rabies.hl7")
    assert labs(rabies)[0].wants_review and "not a person" in labs(rabies)[0].review_reason
    _, mayo = real(shared_data, "cdc_ti_ORU_R01_v2.3_Epic_MayoRefLab_factorV.hl7")
    assert mayo.identifiers == []  # PID holds LAST NAME / DOB / MRN placeholders
    see = by_locator(mayo, "OBX[2]-5")
    assert see.wants_review and "comments" in see.review_reason and see.structured_value["notes"]
    negative = by_locator(mayo, "OBX[1]-5").structured_value
    assert negative["abnormal_flag"] == "normal" and negative["flag_derived"]  # "Negative" vs "Negative"


@pytest.mark.shared_data
def test_blood_culture_corrected_and_susceptibilities(shared_data):
    _, result = real(shared_data, "rs_ORU_R01_v2.5.1_blood_culture_micro_susceptibility.hl7")
    vre = by_locator(result, "OBX[2]-5")
    assert vre.structured_value["value"] == "Vancomycin resistant Enterococcus raffinosus"
    assert vre.structured_value["result_status"] == "C" and not vre.wants_review
    blank = by_locator(result, "OBX[1]-3")  # OBX-5 is a single space
    assert blank.structured_value["value"] == "" and blank.wants_review
    vanc = next(f for f in labs(result) if f.structured_value["test_name"].startswith("Vancomycin"))
    assert vanc.structured_value["value"] == ">=32" and vanc.document_fact_only  # status P


def test_loinc_code_is_kept_when_obx3_names_its_system():
    _, result = run(message(
        "OBX|1|NM|2345-7^Glucose^LN||182|mg/dL|70-99|H|||F",
        "OBX|2|NM|GLU^Glucose^L^2345-7^Glucose^LN||182|mg/dL|70-99|H|||F",  # local first, LOINC as alternate
        "OBX|3|NM|2345-6^Glucose^LN||182|mg/dL|70-99|H|||F",  # wrong check digit: not a LOINC code
        "OBX|4|NM|2345-7^Glucose^L||182|mg/dL|70-99|H|||F",  # a local code that looks like one
    ))
    assert [f.structured_value.get("loinc") for f in labs(result)] == ["2345-7", "2345-7", None, None]


def test_hba1c_unit_is_checked_by_its_loinc_code_when_the_name_is_local():
    _, result = run(message("OBX|1|NM|GHB^GHB^L^4548-4^^LN||5.8|mg/dL|0.0-5.6|H|||F"))
    (a1c,) = labs(result)
    assert a1c.wants_review and "unusual" in a1c.review_reason


def test_each_message_of_a_batch_keeps_its_own_identifiers():
    """Repeats are dropped per message (a set keyed by scope, not a scan of every earlier
    identifier): the same patient in every message still gives each message all three."""
    one = "\r".join([MSH, PID, OBR, GLUCOSE])
    data = "\r".join(one.replace("MSG0001", f"MSG{n:04d}") for n in range(1, 5)).encode()
    _, result = run(data)
    for n in range(1, 5):
        scoped = [i for i in result.identifiers if i.scope == f"message {n}"]
        assert sorted(i.kind.value for i in scoped) == ["dob", "mrn", "name"]
        assert identity(result, f"message {n}") == {"name": "QUENTARA, MARISOL J", "dob": "1978-03-14", "mrn": "WB-204118"}


# ---------------------------------------------------------------- a result that names no test (issue 28)

@pytest.mark.parametrize("obx3", ["^&", "&&^&", "^" * 100_000, "", "^^^^^^LN"])
def test_a_result_without_a_test_name_goes_to_review_never_named_by_a_separator(obx3):
    from tests.support.file_builders import MSH, OBR, PID

    def message(obr: str) -> bytes:
        return ("\r".join([MSH.format(n=1), PID, obr, f"OBX|1|NM|{obx3}||6.8|mmol/L|3.5-5.1|HH|||F"]) + "\r").encode()

    (lab,) = labs(run(message(OBR))[1])
    assert lab.wants_review and "not named in OBX-3" in lab.review_reason
    assert lab.structured_value["test_name"] == "Metabolic panel"  # the order's name, said to be borrowed
    (lab,) = labs(run(message(OBR.replace("24323-8^Metabolic panel^LN", "")))[1])
    assert lab.wants_review and lab.structured_value["test_name"] == "unnamed observation"
    assert "no name or code" in lab.review_reason


@pytest.mark.parametrize("allergen, status", [("^No Known Drug Allergies", "no_known_drug_allergies"),
                                              ("NKA^No known allergies^L", "no_known_allergies")])
def test_an_al1_that_says_no_known_allergies_is_the_statement_never_a_chart_allergy(allergen, status):
    _, result = run(message(GLUCOSE, f"AL1|1|DA|{allergen}"))
    allergy = next(f for f in result.facts if f.fact_type == "allergy")
    assert allergy.document_fact_only and allergy.structured_value["status"] == status
    assert allergy.structured_value["substance"] == "" and allergy.structured_value["no_known_allergies"]


def test_results_of_a_urinalysis_order_are_the_urines_never_the_blood_tests():
    # A held-out ORU (written after the rule): "OBR|...|UA^URINALYSIS^L" over local codes
    # "GLU^Glucose^L" charted the dipstick's "Negative" as a blood glucose, in conflict
    # with the metabolic panel's glucose of the same morning. The specimen is read from
    # the order's name, its source (OBR-15) or its SPM segment.
    ua = "OBR|1||LAB-77|UA^URINALYSIS^L|||20240312081500"
    bmp = "OBR|2||LAB-78|BMP^BASIC METABOLIC PANEL^L|||20240312081500"
    csf = "OBR|3||LAB-79|CELLS^CELL COUNT^L|||20240312081500||||||||CSF^Cerebrospinal fluid"
    _, result = run(b"\r".join(s.encode() for s in (
        MSH, PID, ua, "OBX|1|ST|GLU^Glucose^L||Negative||Negative|N|||F", "OBX|2|ST|PRO^Protein^L||2+||Negative|A|||F",
        "OBX|3|ST|NIT^Nitrite^L||Positive||Negative|A|||F", "OBX|4|ST|CLR^Clarity^L||Hazy||Clear|A|||F",
        bmp, "OBX|1|NM|GLU^Glucose^L||9.4|mmol/L|3.9-7.8|H|||F",
        csf, "OBX|1|NM|WBC^White cell count^L||12|/uL|0-5|H|||F")))
    from domain.policy.facts.analytes import canonical_analyte

    assert [(f.structured_value["test_name"], canonical_analyte(f.structured_value["test_name"]))
            for f in labs(result)] == [
        ("Glucose (urine)", "urine_glucose"), ("Protein (urine)", "urine_protein"), ("Nitrite", "urine_nitrite"),
        ("Clarity", None), ("Glucose", "glucose"), ("White cell count (CSF)", None)]
