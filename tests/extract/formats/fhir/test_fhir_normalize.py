"""FHIR JSON as received: sniffed by its top-level resourceType, read with the place of
every value, each resource validated with the R4B models, and bad or oversized input
refused with a code and a plain sentence."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from domain.errors import ExtractionError
from domain.limits import DEFAULT_LIMITS, FHIR_TOO_LARGE
from domain.models import DocType
from extract.formats.fhir.normalize import normalize_fhir, validation_problem
from extract.formats.fhir.spans import parse
from extract.normalize import normalize
from extract.sniff import ACCEPTED_FORMATS, sniff_format
from tests.support import fhir_bundles as F


def test_sniffing_needs_resource_type_among_the_top_level_members():
    assert sniff_format(F.as_bytes(F.patient_bundle())) == "fhir"
    # Member order is free in JSON: a resourceType after a nested object still counts.
    assert sniff_format(b'{"id": "x", "meta": {"resourceType": "no"}, "resourceType": "Observation"}') == "fhir"
    assert sniff_format(b'{"meta": {"resourceType": "Patient"}}') == "json"  # only nested: not FHIR
    assert sniff_format(b'[{"resourceType": "Patient"}]') == "json"
    assert sniff_format(b'\xef\xbb\xbf  {"resourceType" : "Bundle"}') == "fhir"
    assert sniff_format(b'{"note": "resourceType"}') == "json"
    assert ACCEPTED_FORMATS[DocType.FHIR_BUNDLE] == frozenset({"fhir", "json"})


def test_spans_give_each_value_as_written():
    text = '{"a": [1.50, "x\\"y", {"b": null}], "c": -2e3, "d": true}'
    root = parse(text, depth_limit=10)
    assert root.get("a", 0).raw(text) == "1.50" and root.get("a", 1).value == 'x"y'
    assert root.get("a", 2, "b").raw(text) == "null" and root.get("c").raw(text) == "-2e3"
    assert root.get("a").raw(text) == '[1.50, "x\\"y", {"b": null}]'
    assert root.get("a", 9) is None and root.get("zz") is None


def test_sections_are_json_paths_whose_text_is_the_file_slice():
    data = F.as_bytes(F.patient_bundle())
    content = normalize(data, doc_type=DocType.FHIR_BUNDLE)
    assert content.source_kind == "fhir"
    by = {s.locator: s for s in content.sections}
    resource = by["Bundle.entry[1].resource"]
    assert resource.section_type == "resource" and resource.meta["resource_type"] == "Observation"
    assert resource.meta["valid"] and resource.text in data.decode()
    assert json.loads(by["Bundle.entry[1].resource.valueQuantity"].text)["value"] == 6.1
    assert by["Bundle.entry[1].resource.referenceRange[0].low"].section_type == "element"
    assert "Bundle.entry[1].resource.text" not in by  # narrative is never cited
    assert content.meta["resources"] == 9 and content.meta["invalid"] == 0


def test_each_resource_is_validated_alone_and_a_failure_is_a_warning():
    bad = F.lab("2823-3", "Potassium", 5.0, "mmol/L")
    del bad["status"]
    doc = F.bundle(F.patient("A", "B", "1990-01-01", "M1"), bad, {"resourceType": "NotAResource", "x": 1})
    content = normalize_fhir(F.as_bytes(doc))
    messages = [w.message for w in content.warnings if w.code == "fhir_invalid_resource"]
    assert len(messages) == 2
    assert "Bundle.entry[1].resource (Observation)" in messages[0] and "status" in messages[0]
    assert "'NotAResource' is not an R4 resource type" in messages[1]
    assert [s.meta["valid"] for s in content.sections if s.section_type == "resource"] == [True, False, False]


def test_a_bundle_shell_problem_is_a_warning_not_a_failure():
    doc = F.bundle(F.patient("A", "B", "1990-01-01", "M1"))
    doc["type"] = 7
    content = normalize_fhir(F.as_bytes(doc))
    assert "fhir_invalid_bundle" in {w.code for w in content.warnings}


def test_validation_uses_the_r4_line():
    # R4 (R4B) Observations have no ``triggeredBy``; R5 added it.
    obs = F.lab("2823-3", "Potassium", 5.0, "mmol/L") | {"triggeredBy": [{"type": "reflex"}]}
    assert "triggeredBy" in validation_problem(obs)


@pytest.mark.parametrize("data, code", [
    (b'{"resourceType": "Bundle", "type": "collection", "entry": [', "corrupt_file"),
    (b'{"resourceType": "Patient", "name": [{"family": "O\xffBrien"}]}', "corrupt_file"),
    (b'{"hello": "world"}', "not_fhir"),
    (b'{"resourceType": 5}', "not_fhir"),
])
def test_bad_input_fails_with_a_code_and_a_plain_sentence(data, code):
    with pytest.raises(ExtractionError) as err:
        normalize(data, doc_type=DocType.FHIR_BUNDLE)
    assert err.value.code == code
    assert "Traceback" not in err.value.message and len(err.value.message) < 300


def test_broken_json_names_line_and_column_not_the_content():
    with pytest.raises(ExtractionError) as err:
        normalize_fhir(b'{\n  "resourceType": "Patient",\n  "name": [{"family": "Secretname"}\n}')
    assert "line 4" in err.value.message and "Secretname" not in err.value.message


def test_json_that_is_not_fhir_is_refused_unless_read_as_a_fhir_bundle():
    with pytest.raises(ExtractionError) as err:
        normalize(b'{"hello": 1}', doc_type=DocType.HL7V2_MESSAGE)
    assert err.value.code == "unsupported_format"


@pytest.mark.parametrize("limit, data_of", [
    ("max_fhir_bytes", lambda: F.as_bytes(F.patient_bundle())),
    ("max_fhir_resources", lambda: F.as_bytes(F.bundle(*[F.lab("2951-2", "Sodium", 139, "mmol/L")] * 6))),
    ("max_fhir_depth", lambda: b'{"resourceType": "Basic", "extension": ' + b"[" * 80 + b"]" * 80 + b"}"),
])
def test_limits_refuse_with_the_family_code_and_the_setting(limit, data_of):
    data = data_of()
    small = {"max_fhir_bytes": len(data) - 1, "max_fhir_resources": 5, "max_fhir_depth": 64}[limit]
    with pytest.raises(ExtractionError) as err:
        normalize_fhir(data, replace(DEFAULT_LIMITS, **{limit: small}))
    assert err.value.code == FHIR_TOO_LARGE and f"WORKBENCH_{limit.upper()}" in err.value.message
