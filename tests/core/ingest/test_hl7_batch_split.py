"""A large, clean HL7 v2 batch is read as parts (issue 13): the upload is kept as the
parent, each run of consecutive messages becomes a document and job of its own, and
reading the parts finds what reading the whole file finds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from core.services.ingest.ingestion import attach_and_extract, reread_document
from core.services.ingest.worker import Worker
from extract.formats.hl7.split import split_batch
from storage import documents_repo, facts_repo
from storage.rows import FactRow
from tests.support.hl7_messages import RESULTS, batch

ROOT = Path(__file__).resolve().parents[3]
def attach(wb, patient, data: bytes, per_job: int, monkeypatch, filename: str = "batch.hl7"):
    monkeypatch.setattr(wb.settings, "hl7_messages_per_job", per_job)
    return attach_and_extract(wb, patient_id=patient["id"], source=filename, data=data, filename=filename,
                              doc_type="hl7v2_message", by="dr.reviewer")


def run_all(wb, attached) -> list[dict]:
    worker = Worker(wb, worker_id="intake-extractor:test")
    return [worker.run_specific(job["id"]) for job in attached.jobs]


def live_facts(wb, document_id: int) -> list[FactRow]:
    with wb.db.cursor() as cur:
        return [f for f in facts_repo.facts_for_document(cur, document_id) if f.retracted_at is None]


def comparable(fact: FactRow, offset: int) -> tuple:
    """A fact as reading the whole file would cite it: a part's "message k" is message
    offset + k of the file (scopes are local to the part: see docs/decisions.md)."""
    def renumber(text: str) -> str:
        return re.sub(r"\bmessage (\d+)", lambda m: f"message {int(m.group(1)) + offset}", text)

    citation = fact.citation or {}
    return (fact.fact_type, fact.certainty, json.dumps(fact.structured_value, sort_keys=True),
            renumber(str(citation.get("page_or_section"))), citation.get("quote"))


# ---------------------------------------------------------------------------- the decision


def test_a_clean_batch_over_the_threshold_is_cut_into_verbatim_runs_of_messages():
    data = batch(450, envelope=True)
    parts = split_batch(data, 200)
    assert [(p.first, p.last, p.messages) for p in parts] == [(1, 200, 200), (201, 400, 200), (401, 450, 50)]
    lines = data.decode().split("\r")
    body = lines[2:-3]  # without FHS, BHS and the trailers
    assert b"".join(p.data for p in parts) == ("\r".join(body) + "\r").encode()  # nothing lost or added
    for p in parts:
        text = p.data.decode()
        assert text.startswith("MSH|") and text.count("MSH|") == p.messages
        assert not re.search(r"(?m)^(FHS|BHS|BTS|FTS)\|", text.replace("\r", "\n"))
        assert text.rstrip("\r") in "\r".join(body)  # a verbatim slice of what was received


def test_line_feeds_and_trailing_spaces_are_kept_as_received():
    lines = batch(5).decode().rstrip("\r").split("\r")
    data = ("\n".join(line + "  " if line.startswith("OBX") else line for line in lines) + "\n").encode()
    parts = split_batch(data, 2)
    assert [p.messages for p in parts] == [2, 2, 1]
    assert parts[0].data.decode().split("\r")[3] == lines[3] + "  "


@pytest.mark.parametrize("why, data", [
    ("at the threshold", batch(200)),
    ("under it", batch(3)),
    ("cut off in transfer", batch(450)[:-40]),
    ("a wrapped line was joined", batch(450).replace(b"|mg/dL|70-99", b"|mg/dL\r|70-99", 1)),
    ("text before the header", b"Fax cover page\r" + batch(450)),
    ("the batch trailer counts otherwise", batch(450, envelope=True).replace(b"BTS|450", b"BTS|449")),
    ("a second batch header in the middle", batch(450).replace(b"\rMSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|20240302",
                                                                 b"\rBHS|^~\\&|LAB\rMSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|20240302", 1)),
    ("not UTF-8", batch(450).replace(b"Glucose", "Glucosé".encode("latin-1"), 1)),
])
def test_anything_but_a_clean_large_batch_is_read_whole(why, data):
    assert split_batch(data, 200) is None, why


def test_a_batch_over_the_file_limits_is_read_whole_and_refused_not_split(wb, demo_patient, monkeypatch):
    from dataclasses import replace

    from domain.limits import DEFAULT_LIMITS

    data = batch(450)
    assert split_batch(data, 200, replace(DEFAULT_LIMITS, max_hl7_messages=449)) is None
    assert split_batch(data, 200, replace(DEFAULT_LIMITS, max_hl7_bytes=len(data) - 1)) is None
    assert split_batch(data, 200, replace(DEFAULT_LIMITS, max_hl7_messages=450)) is not None
    monkeypatch.setattr(wb.settings, "max_hl7_messages", 449)
    attached = attach(wb, demo_patient, data, 200, monkeypatch)
    assert attached.parts == []  # one job, which the limit then refuses
    (job,) = run_all(wb, attached)
    assert (job["status"], job["error_code"]) == ("failed", "hl7_too_large")


def test_a_damaged_batch_is_attached_as_one_document_and_one_job(wb, demo_patient, monkeypatch):
    attached = attach(wb, demo_patient, batch(450)[:-40], 200, monkeypatch)
    assert attached.job is not None and attached.parts == [] and attached.jobs == [attached.job]
    small = attach(wb, demo_patient, batch(200), 200, monkeypatch, "small.hl7")
    assert small.job is not None and small.parts == []


# ---------------------------------------------------------------------------- through the service


def test_a_split_batch_finds_what_reading_it_whole_finds(wb, demo_patient, monkeypatch):
    data = batch(450)
    whole = attach(wb, demo_patient, data, 10**6, monkeypatch, "whole.hl7")
    assert whole.parts == []
    assert [j["status"] for j in run_all(wb, whole)] == ["succeeded"]
    whole_facts = Counter(comparable(f, 0) for f in live_facts(wb, whole.document["id"]))
    from core.services.review.retraction import delete_document

    delete_document(wb, whole.document["id"], by="dr.reviewer")  # the chart starts over for the parts

    split = attach(wb, demo_patient, data, 200, monkeypatch)
    assert split.job is None and len(split.parts) == 3
    assert [(p.first, p.last) for p in split.parts] == [(1, 200), (201, 400), (401, 450)]
    with wb.db.cursor() as cur:
        parent = documents_repo.by_id(cur, split.document["id"])
        assert parent["parent_document_id"] is None and parent["size"] == len(data)
        assert wb.blobs.get(parent["sha256"]) == data  # the upload is kept as received
        children = documents_repo.parts_of(cur, parent["id"])
    assert [c["id"] for c in children] == [p.document["id"] for p in split.parts]
    assert [c["filename"] for c in children] == ["batch.hl7 · messages 1–200", "batch.hl7 · messages 201–400",
                                                  "batch.hl7 · messages 401–450"]
    assert {(c["patient_id"], c["category_id"]) for c in children} == {(parent["patient_id"], parent["category_id"])}
    cuts = split_batch(data, 200)
    assert [Path(c["stored_path"]).read_bytes() for c in children] == [c.data for c in cuts]

    assert [j["status"] for j in run_all(wb, split)] == ["succeeded"] * 3
    assert live_facts(wb, parent["id"]) == []
    split_facts = Counter(comparable(f, p.first - 1) for p in split.parts for f in live_facts(wb, p.document["id"]))
    assert sum(whole_facts.values()) == 450 * len(RESULTS)
    assert split_facts == whole_facts


def test_one_message_of_another_patient_holds_back_that_message_only(wb, demo_patient, monkeypatch):
    from core.services.review.facts import document_report

    split = attach(wb, demo_patient, batch(9, other_at=5), 4, monkeypatch)
    assert [(p.first, p.last) for p in split.parts] == [(1, 4), (5, 8), (9, 9)]
    assert split.parts[2].document["filename"] == "batch.hl7 · message 9"
    run_all(wb, split)
    reports = [document_report(wb, p.document["id"]) for p in split.parts]
    scoped = {s["scope"]: s["status"] for s in reports[1]["identity"].get("scopes", [])}
    # the part's first message is the file's message 5
    assert scoped["message 1"].endswith("mismatch_quarantined"), scoped
    assert not any(v.endswith("mismatch_quarantined") for k, v in scoped.items() if k != "message 1"), scoped
    assert not any(s["status"].endswith("mismatch_quarantined") for r in (reports[0], reports[2])
                   for s in r["identity"].get("scopes", [r["identity"]]))
    promoted = [f for f in reports[1]["facts"] if f["promotion_status"] == "promoted"]
    assert len(promoted) == 3 * len(RESULTS)  # the part's other three messages reach the chart
    assert len(reports[1]["facts"]) - len(promoted) == len(RESULTS)  # the other patient's are held


def test_deleting_the_parent_retracts_every_part_and_a_part_alone_leaves_the_parent(wb, demo_patient, monkeypatch):
    from core.services.review.facts import chart_view
    from core.services.review.retraction import deletion_impact, delete_document
    from storage import audit_repo

    split = attach(wb, demo_patient, batch(6), 2, monkeypatch)
    run_all(wb, split)
    first, *rest = [p.document["id"] for p in split.parts]
    assert len(chart_view(wb, demo_patient["id"])["labs"]) > 0

    one = delete_document(wb, first, by="dr.reviewer")
    assert one["retracted"]["facts"] == 2 * len(RESULTS) and "parts" not in one
    with wb.db.cursor() as cur:
        assert not documents_repo.by_id(cur, split.document["id"])["deleted"]

    impact = deletion_impact(wb, split.document["id"])
    assert impact["facts"] == 4 * len(RESULTS)
    result = delete_document(wb, split.document["id"], by="dr.reviewer")
    assert result["parts"] == rest and result["retracted"]["facts"] == 4 * len(RESULTS)
    with wb.db.cursor() as cur:
        assert all(documents_repo.by_id(cur, d)["deleted"] for d in [split.document["id"], *rest])
        assert all(live_facts(wb, d) == [] for d in rest)
        audited = {d: [r["action"] for r in audit_repo.retractions_for_document(cur, d)]
                   for d in [split.document["id"], *rest]}
    assert chart_view(wb, demo_patient["id"])["labs"] == []
    assert audited[split.document["id"]] == ["document_deleted"]
    for d in rest:  # each part has its own rows, as deleting it alone would leave
        assert audited[d].count("document_deleted") == 1 and audited[d].count("fact_retracted") == 2 * len(RESULTS)


# ---------------------------------------------------------------------------- the CLI


def test_cli_ingest_of_a_split_batch_runs_every_part_and_lists_them(tmp_path, cli_init):
    from tests.support.browser_support import make_run_env

    # Production defaults (each part read in the forkserver child) but for the setting under
    # test: a split threshold of 2 messages, so five make three parts.
    env = {**make_run_env(tmp_path / "data"), "WORKBENCH_HL7_MESSAGES_PER_JOB": "2"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)

    cli_init(tmp_path / "data")
    f = tmp_path / "batch.hl7"
    f.write_bytes(batch(5))
    proc = cli("ingest", str(f), "--patient", "DEMO-1001", "--doc-type", "hl7v2_message", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # The ingest contract (DESIGN §9) holds for the upload as a whole: its job, identity,
    # facts and promotions are the parts' merged; each part is listed too.
    assert out["job"]["status"] == "succeeded" and out["job"]["counts"]["stored"] == 10
    assert out["identity"]["status"] == "identity_verified" and len(out["identity"]["parts"]) == 3
    assert len(out["facts"]) == 10 and out["promotions"]
    assert {x["fact_id"] for x in out["promotions"]} <= {f["fact_id"] for f in out["facts"]}
    assert [p["filename"] for p in out["parts"]] == ["batch.hl7 · messages 1–2", "batch.hl7 · messages 3–4",
                                                     "batch.hl7 · message 5"]
    assert [p["job"]["status"] for p in out["parts"]] == ["succeeded"] * 3
    assert [p["job"]["counts"]["stored"] for p in out["parts"]] == [4, 4, 2]
    assert len({p["document_id"] for p in out["parts"]} | {out["document_id"]}) == 4
    assert {f["document_id"] for f in out["facts"]} == {p["document_id"] for p in out["parts"]}


# ---------------------------------------------------------------------------- the Documents page


def test_the_documents_page_says_the_batch_was_read_in_parts_and_lists_each_part(app_env, demo_patient, monkeypatch):
    from tests.support.app_support import document_metrics, document_picker, documents_page

    split = attach(app_env, demo_patient, batch(5), 2, monkeypatch)
    run_all(app_env, split)
    at = documents_page(demo_patient["id"], document=str(split.document["id"]))
    options = document_picker(at).options  # the picker's labels: filename · kind · state
    assert document_metrics(at)["Status"] == "read in 3 parts, listed as documents of their own"
    assert "batch.hl7 · HL7 v2 Message · read in 3 parts, listed as documents of their own" in options
    for name in ("batch.hl7 · messages 1–2", "batch.hl7 · messages 3–4", "batch.hl7 · message 5"):
        assert any(o.startswith(f"{name} · HL7 result message · read") for o in options), options
    # The upload has no findings of its own: it says where they are, a button per part, in order.
    opens = [b for b in at.button if (b.key or "").startswith("open-part-")]
    parts = ["batch.hl7 · messages 1–2 · read", "batch.hl7 · messages 3–4 · read", "batch.hl7 · message 5 · read"]
    assert len(opens) == 3 and all(b.label.startswith(p) for b, p in zip(opens, parts)), [b.label for b in opens]
    assert not [i for i in at.info if "No facts were found" in i.value]
    opens[2].click().run()
    assert document_picker(at).value == split.parts[2].document["id"] and document_metrics(at)["Status"] == "read"
    document_picker(at).set_value(split.parts[1].document["id"]).run()
    assert document_metrics(at)["Status"] == "read"


def test_the_upload_of_a_split_batch_is_not_read_again_whole(wb, demo_patient, monkeypatch):
    from domain.errors import BadInput

    split = attach(wb, demo_patient, batch(3), 2, monkeypatch)
    with pytest.raises(BadInput) as refused:
        reread_document(wb, patient_id=demo_patient["id"], document_id=split.document["id"],
                        doc_type="hl7v2_message", by="dr.reviewer")
    assert refused.value.code == "read_in_parts"
    again = reread_document(wb, patient_id=demo_patient["id"], document_id=split.parts[0].document["id"],
                            doc_type="hl7v2_message", by="dr.reviewer")
    assert again.job is not None and again.parts == []


def test_the_upload_report_counts_only_live_parts_and_is_verified_only_when_every_part_is(wb, demo_patient, monkeypatch):
    from core.services.review.facts import document_report
    from core.services.review.retraction import delete_document

    split = attach(wb, demo_patient, batch(6), 2, monkeypatch)
    first, second, third = [p.job["id"] for p in split.parts]
    worker = Worker(wb, worker_id="test")
    worker.run_now(first)
    worker.run_now(second)
    pending = document_report(wb, split.document["id"])  # two parts read, one not yet
    assert pending["job"]["status"] == "pending" and pending["identity"]["status"] == "identity_unchecked"

    worker.run_now(third)
    done = document_report(wb, split.document["id"])
    assert done["job"]["status"] == "succeeded" and done["identity"]["status"] == "identity_verified"

    delete_document(wb, split.parts[0].document["id"], by="dr.reviewer")  # one part deleted on its own
    rest = document_report(wb, split.document["id"])
    assert rest["job"]["status"] == "succeeded" and rest["identity"]["status"] == "identity_verified"
    assert len(rest["parts"]) == 3 and rest["parts"][0]["deleted"]


def test_reading_now_indexes_every_new_fact_not_only_the_first_batch_of_vectors(wb, demo_patient):
    from core.services.ingest.ingestion import ingest_now

    data = batch(150)  # one job of 300 facts: more than one embedding pass takes (256)
    done = ingest_now(wb, patient_id=demo_patient["id"], source="big.hl7", data=data, filename="big.hl7",
                      doc_type="hl7v2_message", by="dr.reviewer")
    assert len(done.report["facts"]) > 256
    with wb.db.cursor() as cur:
        assert facts_repo.facts_to_embed(cur, 1000) == []
