"""Cost of one large HL7 v2 batch job: it must grow linearly with the message count.

Generates batches of ORU^R01 messages (one patient, three results each), ingests each
batch as one document and runs its job through the worker's full pipeline (normalize,
extract, verify citations, identity, persist, promote) on a real DuckDB. Prints seconds
per batch and the ratio of seconds per message to the smallest batch's (1.0 = linear).
Target: 5,000 messages under 60 s on 2 cores.
Usage: python bench/hl7_batch.py [--sizes 400,1000,5000] [--profile FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULTS = (("2345-7", "Glucose", "mg/dL", "70-99", 80), ("2160-0", "Creatinine", "mg/dL", "0.6-1.3", 1),
           ("718-7", "Hemoglobin", "g/dL", "12.0-16.0", 13))


def batch(patient: dict, messages: int) -> bytes:
    """One file of ``messages`` ORU^R01 messages for ``patient`` (plain MSH-led batch)."""
    pid = (f"PID|1||{patient['mrn']}^^^CLINIC^MR||{patient['last'].upper()}^{patient['first'].upper()}"
           f"||{patient['dob']:%Y%m%d}|{patient['sex']}")
    out = []
    for i in range(messages):
        day = 1 + i % 28
        segments = [f"MSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|202403{day:02d}0930{i % 60:02d}||ORU^R01^ORU_R01|"
                    f"B{i:06d}|P|2.5.1", pid, f"OBR|1|ORD{i}|FIL{i}|80048^Panel^CPT|||202403{day:02d}0815"]
        for n, (code, name, unit, ref, base) in enumerate(RESULTS, 1):
            segments.append(f"OBX|{n}|NM|{code}^{name}^LN||{base + i % 17}|{unit}|{ref}||||F")
        if i % 5 == 4:  # a second layout in the batch: a comment on the panel
            segments.append(f"NTE|1||Specimen {i} received ambient; see report.")
        out.append("\r".join(segments))
    return ("\r".join(out) + "\r").encode()


def run_batch(messages: int) -> tuple[float, dict]:
    from core.services.admin.access_audit import shell_user
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import DEMO_PATIENTS, add_patient
    from core.services.workbench import open_workbench
    from core.services.ingest.worker import Worker
    from domain.settings import reload_settings

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WORKBENCH_DATA_DIR"] = tmp
        # This measures reading one batch as one job: no splitting into parts.
        os.environ["WORKBENCH_HL7_MESSAGES_PER_JOB"] = str(10**9)
        wb = open_workbench(reload_settings())
        p = DEMO_PATIENTS[0]
        patient = add_patient(wb, mrn=p["mrn"], first=p["first"], last=p["last"], dob=p["dob"], sex=p["sex"],
                              by=shell_user())
        data = batch(p, messages)
        start = time.perf_counter()
        attached = attach_and_extract(wb, patient_id=patient["id"], source="batch.hl7", data=data,
                                      filename="batch.hl7", doc_type="hl7v2_message", by=shell_user())
        job = Worker(wb, worker_id="bench").run_specific(attached.job["id"])
        elapsed = time.perf_counter() - start
        wb.close()
    assert job["status"] == "succeeded", (job["error_code"], job["error_message"])
    return elapsed, job


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="400,1000,5000")
    parser.add_argument("--profile", help="write cProfile stats of the largest batch to this file")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    run_batch(20)  # warm imports and caches once
    base = None
    for size in sizes:
        if args.profile and size == max(sizes):
            import cProfile

            profiler = cProfile.Profile()
            elapsed, job = profiler.runcall(run_batch, size)
            profiler.dump_stats(args.profile)
        else:
            elapsed, job = run_batch(size)
        per_message = elapsed / size
        base = base or per_message
        stages = ", ".join(f"{k} {v / 1000:.1f}s" for k, v in job["timings"].items() if v >= 100)
        print(f"{size:>6} messages: {elapsed:6.1f} s  ({per_message * 1000:.1f} ms/message, "
              f"x{per_message / base:.2f} of the first size)  facts stored {job['counts'].get('stored')}  "
              f"[{stages}]", flush=True)


if __name__ == "__main__":
    main()
