"""hl7apy's structure check is remembered by a message's shape (extract/formats/hl7/normalize.py ``_shape``),
which makes a large batch ~100 times cheaper to read. That is only right if a shape that
passed passes again whatever text its fields hold: checked here differentially, by
parsing value-mutated copies of real and generated messages afresh with hl7apy."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import extract.formats.hl7.normalize as hl7
from tests.support.file_builders import hl7 as hl7_message

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "data" / "hl7"
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-:;/()+*#@!?=<>'\"_%$éüñ°µ"
_ESCAPES = ["F", "S", "T", "R", "E", "X0D", "H", "N", ".br"]


def checked_messages(data: bytes) -> list[tuple[list[str], object]]:
    """Each message of ``data`` as the check sees it: (segment texts, encoding)."""
    seen = []
    original = hl7._check_structure

    def record(msg, enc, version):
        texts = [s.text for s in msg.segments if not s.unknown]
        msh = texts[0].split(enc.field)
        if len(msh) > 1:
            msh[1] = enc.msh2 if bool(enc.truncation) and version >= "2.7" else enc.msh2[:4]
        seen.append(([enc.field.join(msh), *texts[1:]], enc))
        return original(msg, enc, version)

    hl7._check_structure = record
    try:
        hl7.normalize_hl7(data)
    finally:
        hl7._check_structure = original
    return seen


def mutated(texts: list[str], enc, rng: random.Random) -> list[str]:
    """``texts`` with the text of every field that does not steer the parse replaced,
    keeping its layout: repetitions, components, subcomponents, empties and escapes."""
    def piece(old: str) -> str:
        if not old:
            return ""
        new = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 30)))
        if enc.escape in old:
            new += enc.escape + rng.choice(_ESCAPES) + enc.escape
        return new

    out = []
    for text in texts:
        fields = text.split(enc.field)
        keep = hl7._VALUE_FIELDS.get(fields[0], ())
        out.append(enc.field.join(
            f if i == 0 or i in keep else enc.repetition.join(
                enc.component.join(enc.subcomponent.join(piece(sub) for sub in comp.split(enc.subcomponent))
                                   for comp in rep.split(enc.component))
                for rep in f.split(enc.repetition))
            for i, f in enumerate(fields)))
    return out


def assert_shape_decides(data: bytes, mutants: int, seed: int) -> int:
    rng = random.Random(seed)
    compared = 0
    for texts, enc in checked_messages(data):
        passed = hl7._parse_structure("\r".join(texts))
        if not passed["ok"]:
            continue
        for _ in range(mutants):
            other = mutated(texts, enc, rng)
            assert hl7._shape(other, enc) == hl7._shape(texts, enc)
            assert hl7._parse_structure("\r".join(other)) == passed, "\r".join(other)
            compared += 1
    return compared


def test_a_passed_shape_passes_with_any_field_text_generated():
    data = hl7_message(messages=3, obx=4)
    assert assert_shape_decides(data, mutants=40, seed=13) == 120


@pytest.mark.shared_data
def test_a_passed_shape_passes_with_any_field_text_real_samples():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/data/hl7 is absent in this clone")
    compared = sum(assert_shape_decides(path.read_bytes(), mutants=4, seed=i)
                   for i, path in enumerate(sorted(SAMPLES.glob("*.hl7"))))
    assert compared >= 150  # 35 files hold ~57 messages hl7apy passes


def test_what_steers_the_parse_is_part_of_the_shape():
    base = hl7_message(messages=1, obx=1).decode().split("\r")[:-1]
    enc = checked_messages(hl7_message(messages=1, obx=1))[0][1]
    shape = hl7._shape(base, enc)
    for old, new in (("|NM|", "|ST|"), ("ORU^R01^ORU_R01", "ADT^A01^ADT_A01"), ("|2.5.1", "|2.3"),
                     ("|182|", "|182^x|"), ("|182|", "||")):
        assert hl7._shape([t.replace(old, new, 1) for t in base], enc) != shape, (old, new)


def test_the_remembered_check_reads_as_a_fresh_one(monkeypatch):
    data = hl7_message(messages=5, obx=2)
    monkeypatch.setattr(hl7, "_PASSED", {})
    cold = hl7.normalize_hl7(data)
    assert len(hl7._PASSED) == 1  # five messages, one shape
    warm = hl7.normalize_hl7(data)
    assert warm.meta == cold.meta and warm.sections == cold.sections and warm.warnings == cold.warnings


def test_a_failed_check_is_not_remembered(monkeypatch):
    monkeypatch.setattr(hl7, "_PASSED", {})
    monkeypatch.setattr(hl7, "_parse_structure", lambda text: {"ok": False, "error": "ParserError: x"})
    content = hl7.normalize_hl7(hl7_message(messages=2, obx=1))
    assert not hl7._PASSED
    assert [w.code for w in content.warnings].count("hl7apy_parse_failed") == 2
