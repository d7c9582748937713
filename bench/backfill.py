"""Backfill speed: documents/s for the local engine and for Ray on this machine, on the
same set, and the one writer's own ceiling.

Prints, from one run on this machine (each engine on a fresh data dir, the production
job process: every reading in a forkserver child under the job's ceilings):
- local engine, one reader (the worker's pace: the baseline) - documents/s;
- Ray engine, a local Ray with one reader per CPU - documents/s, and its ratio to local;
- the writer's ceiling: the same documents' readings computed beforehand, then only
  persisted (claim, identity gate, facts, promotion, chart checks, finish), without and
  with the vector embedding the writer also does - documents/s;
- from those, how many readers one writer can feed before it saturates: the writer's
  rate over one reader's rate (the local engine's single reader; also Ray's per CPU).
The rates count the reading-and-persisting loop; Ray's start and the final embedding
are printed apart.
Usage: python bench/backfill.py [--documents N] [--skip-ray]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OPERATOR = "os:bench"


def write_documents(folder: Path, n: int) -> tuple[Path, list]:
    """``n`` typed lab reports of the golden cases, each case in each layout in turn, and
    past those 36, collected a day later each round (every file distinct); their manifest."""
    from dataclasses import replace
    from datetime import date, timedelta

    from golden.fixtures import LAB_CASES, LAB_LAYOUTS, render_lab, with_layout

    layouts = sorted(LAB_LAYOUTS)
    rows, patients = [], {}
    for i in range(n):
        k, c = divmod(i, len(LAB_CASES))
        case = with_layout(LAB_CASES[c], layouts[(k + c) % len(layouts)])
        if k >= len(layouts):
            day = date.fromisoformat(case.collection_date) + timedelta(days=k // len(layouts))
            case = replace(case, collection_date=day.isoformat())
        path = folder / f"lab-{i}.pdf"
        path.write_bytes(render_lab(case))
        rows.append((path.name, case.patient.mrn, "lab_pdf"))
        patients[case.patient.mrn] = case.patient
    manifest = folder / "manifest.csv"
    with manifest.open("w", newline="") as fh:
        csv.writer(fh).writerows([("path", "mrn", "doc_type"), *rows])
    return manifest, list(patients.values())


def fresh_workbench(root: Path, name: str, patients: list):
    from core.services.admin.patients import add_patient
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings

    os.environ["WORKBENCH_DATA_DIR"] = str(root / name)
    os.environ.pop("WORKBENCH_JOB_PROCESS", None)  # the production job process: a forkserver child
    wb = open_workbench(reload_settings())
    for p in patients:
        add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=p.dob, sex=p.sex, by=OPERATOR)
    return wb


def engine_rate(root: Path, name: str, manifest: Path, patients: list, engine) -> dict:
    from core.services.backfill.manifest import read_manifest
    from core.services.backfill.run import run_backfill

    wb = fresh_workbench(root, name, patients)
    try:
        report = run_backfill(wb, read_manifest(manifest), engine, by=OPERATOR)
    finally:
        wb.close()
    assert report["failed"] == 0, report["failures"]
    return report


def writer_rate(root: Path, manifest: Path, patients: list) -> tuple[float, float, int]:
    """(persist-only documents/s, documents/s with the embedding, documents) with every
    reading computed beforehand, in this process, outside the timing."""
    from core.services.backfill.manifest import read_manifest
    from core.services.backfill.originals import store_originals
    from core.services.backfill.writer import Writer
    from core.services.ingest.processing import read_verified, reading_args
    from domain.models import DocType
    from storage import documents_repo, jobs_repo

    wb = fresh_workbench(root, "writer", patients)
    try:
        items = store_originals(wb, read_manifest(manifest), by=OPERATOR)
        readings = []
        for job_id in [j for item in items for j in item.jobs]:
            with wb.db.cursor() as cur:
                job = jobs_repo.by_id(cur, job_id)
                document = documents_repo.by_id(cur, job.document_id)
            args = reading_args(wb.settings, wb.blobs.get(document["sha256"]), DocType(job.doc_type), document)
            readings.append((job_id, read_verified(*args)))
        writer = Writer(wb, index_every=float("inf"))  # embeddings timed apart, below
        start = time.perf_counter()
        for job_id, reading in readings:
            assert writer.persist(job_id, reading)["status"] == "succeeded"
        persisted = time.perf_counter() - start
        writer.close()  # every pending vector embedded, batch by batch
        with_vectors = time.perf_counter() - start
    finally:
        wb.close()
    return len(readings) / persisted, len(readings) / with_vectors, len(readings)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=40)
    parser.add_argument("--skip-ray", action="store_true")
    args = parser.parse_args()

    from core.services.backfill.local_engine import LocalEngine
    from core.services.backfill.reading import Ceilings
    from domain.settings import reload_settings

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "set").mkdir()
        manifest, patients = write_documents(root / "set", args.documents)
        os.environ.pop("WORKBENCH_JOB_PROCESS", None)
        ceilings = Ceilings.from_settings(reload_settings())
        print(f"set: {args.documents} typed lab reports ({len(patients)} patients); "
              f"job process {ceilings.method}, ceilings {ceilings.timeout:g} s / {ceilings.memory_mb} MB; "
              f"{os.cpu_count()} CPUs")

        local = engine_rate(root, "local", manifest, patients, LocalEngine(ceilings, jobs=1))
        print(f"local engine, 1 reader (the worker's pace, the baseline): {local['documents_per_second']:.2f} "
              f"documents/s ({local['seconds']:.1f} s in all, the final embedding included)")
        per_reader = local["documents_per_second"]
        if not args.skip_ray:
            from core.services.backfill.ray_engine import RayEngine

            start = time.perf_counter()
            ray_engine = RayEngine(ceilings)
            ray_start = time.perf_counter() - start
            try:
                ray = engine_rate(root, "ray", manifest, patients, ray_engine)
            finally:
                ray_engine.close()
            per_reader = ray["documents_per_second"] / ray["readers"]
            print(f"ray engine, {ray['readers']} readers: {ray['documents_per_second']:.2f} documents/s "
                  f"= {ray['documents_per_second'] / local['documents_per_second']:.2f}x local "
                  f"({per_reader:.2f}/s per reader; Ray's start {ray_start:.1f} s apart)")

        persist_only, with_vectors, n = writer_rate(root, manifest, patients)
        print(f"writer ceiling (readings precomputed, {n} documents): {persist_only:.2f} documents/s persist-only, "
              f"{with_vectors:.2f} documents/s with the vector embedding")
        one = local["documents_per_second"]
        print(f"one writer feeds about {persist_only / one:.1f} readers persisting ({with_vectors / one:.1f} with "
              f"the embedding) at one reader's pace ({one:.2f} documents/s, the local engine) before it saturates")
        if per_reader != one:
            print(f"  at Ray's pace per reader on this machine ({per_reader:.2f} documents/s): about "
                  f"{persist_only / per_reader:.1f} ({with_vectors / per_reader:.1f} with the embedding)")


if __name__ == "__main__":
    main()
