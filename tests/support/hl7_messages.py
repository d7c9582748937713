"""HL7 v2 messages the interface, batch and browser tests send or upload: a single ORU
result as a lab's interface engine sends it (``oru``) with the reader of its
acknowledgement (``msa``), and clean batches of numbered results (``batch``)."""

from __future__ import annotations


def oru(control_id: str, mrn: str = "DEMO-1001", name: str = "QUINTERO-VALE^MARISOL", dob: str = "19610314",
        value: str = "182", processing: str = "P", pid: bool = True) -> bytes:
    """One glucose result for ``mrn`` (no PID segment at all with ``pid=False``)."""
    segments = [
        f"MSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|20240312093000||ORU^R01^ORU_R01|{control_id}|{processing}|2.5.1",
        f"PID|1||{mrn}^^^CLINIC^MR||{name}||{dob}|F" if pid else "",
        "OBR|1|ORD1|FIL1|2345-7^Glucose^LN|||20240312081500",
        f"OBX|1|NM|2345-7^Glucose^LN||{value}|mg/dL|70-99|H|||F",
    ]
    return "\r".join(s for s in segments if s).encode() + b"\r"


def msa(ack: bytes) -> list[str]:
    """The fields of an acknowledgement's MSA segment (``[1]`` is AA, AE or AR)."""
    seg = next(s for s in ack.decode().split("\r") if s.startswith("MSA|"))
    return seg.split("|")


# Each batch message: two results, their values varying with the message's number.
RESULTS = (("2345-7", "Glucose", "mg/dL", "70-99", 80), ("2160-0", "Creatinine", "mg/dL", "0.6-1.3", 1))
DEMO_PID = "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F"
OTHER_PID = "PID|1||ZZ-9999^^^CLINIC^MR||BRANNIGAN^THEODORE||19481102|M"


def message(i: int, pid: str = DEMO_PID) -> str:
    """The ``i``-th message of a batch (its own control id and date)."""
    day = 1 + i % 28
    segments = [f"MSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|202403{day:02d}0930{i % 60:02d}||ORU^R01^ORU_R01|"
                f"B{i:06d}|P|2.5.1", pid, f"OBR|1|ORD{i}|FIL{i}|80048^Panel^CPT|||202403{day:02d}0815"]
    for n, (code, name, unit, ref, base) in enumerate(RESULTS, 1):
        segments.append(f"OBX|{n}|NM|{code}^{name}^LN||{base + i % 17}|{unit}|{ref}||||F")
    return "\r".join(segments)


def batch(count: int, *, other_at: int | None = None, envelope: bool = False) -> bytes:
    """``count`` messages for the demo patient (message ``other_at``, 1-based, for another
    patient), optionally inside FHS/BHS ... BTS/FTS."""
    msgs = [message(i, OTHER_PID if i + 1 == other_at else DEMO_PID) for i in range(count)]
    if envelope:
        msgs = ["FHS|^~\\&|LAB", "BHS|^~\\&|LAB", *msgs, f"BTS|{count}", "FTS|1"]
    return ("\r".join(msgs) + "\r").encode()
