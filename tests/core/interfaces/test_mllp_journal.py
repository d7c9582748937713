"""Acknowledging from the listener's journal (core/services/interfaces/mllp_journal.py):
the rows written afterwards are those the usual path writes, a resend is still stored
once, nothing acknowledged is lost when the writer fails or the listener stops midway,
and the writer's backlog is bounded."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from core.services.interfaces import mllp, mllp_journal
from core.services.interfaces.mllp import MllpListener, acknowledge, frame, read_reply
from tests.support.hl7_messages import msa, oru

ROWS = "SELECT control_id, status, hold_reason, note, patient_mrn, patient_id, message_type, resent, " \
       "document_id IS NOT NULL, job_id IS NOT NULL FROM inbound_messages ORDER BY control_id"


def rows(wb, sql: str = ROWS) -> list[tuple]:
    with wb.db.cursor() as cur:
        return cur.execute(sql).fetchall()


def send(listener: MllpListener, *messages: bytes) -> list[list[str]]:
    with socket.create_connection(listener.address, timeout=30) as sock:
        answers = []
        for m in messages:
            sock.sendall(frame(m))
            answers.append(msa(read_reply(sock)))
        return answers


def journal_files(wb) -> list:
    return sorted((wb.settings.data_dir / mllp_journal.JOURNAL_DIR).glob("*.log"))


class PausedWriter:
    """The journal's writer held until ``release`` (acknowledged messages wait in it)."""

    def __init__(self, monkeypatch):
        self.go = threading.Event()
        real = mllp._write_journalled

        def paused(wb, entries):
            self.go.wait(30)
            return real(wb, entries)

        monkeypatch.setattr(mllp, "_write_journalled", paused)

    def release(self):
        self.go.set()


def test_journalled_messages_get_the_rows_the_usual_path_writes(wb, demo_patient):
    listener = MllpListener(wb, port=0).start_thread()
    try:
        first = send(listener, oru("J0"))  # the patient's first message routes it (usual path)
        answers = send(listener, *(oru(f"J{i}") for i in range(1, 6)))
        journal = wb.extras["mllp_journal"]
        assert journal.accepted == 5  # these five were answered from the journal
    finally:
        listener.stop()
    assert [a[1] for a in first + answers] == ["AA"] * 6
    assert not journal_files(wb)  # written out and deleted at stop
    for i in range(1, 6):  # the same messages, no listener: the usual path, one by one
        acknowledge(wb, oru(f"U{i}"))
    journalled, usual = rows(wb)[1:6], rows(wb)[6:]
    assert [r[1:] for r in journalled] == [r[1:] for r in usual]
    with wb.db.cursor() as cur:
        docs = cur.execute("SELECT filename, mime, uploaded_by, category_id, patient_id FROM documents "
                           "WHERE filename LIKE 'mllp-J%' OR filename LIKE 'mllp-U%' ORDER BY filename").fetchall()
        jobs = cur.execute("SELECT j.doc_type, j.status, j.patient_id FROM processing_jobs j JOIN documents d "
                           "ON d.id = j.document_id WHERE d.filename LIKE 'mllp-J%' OR d.filename LIKE 'mllp-U%' "
                           "ORDER BY d.filename").fetchall()
    assert [d[1:] for d in docs[1:6]] == [d[1:] for d in docs[6:]] and len(docs) == 11
    assert len(set(jobs)) == 1 and len(jobs) == 11
    for sha, path in rows(wb, "SELECT sha256, stored_path FROM inbound_messages"):
        assert wb.blobs.get(sha) and str(wb.blobs.path_for(sha)) == path


def test_a_resend_of_a_message_not_yet_written_is_stored_once(wb, demo_patient, monkeypatch):
    paused = PausedWriter(monkeypatch)
    listener = MllpListener(wb, port=0).start_thread()
    try:
        paused.release()
        send(listener, oru("R0"))  # routes the patient
        paused.go.clear()
        assert send(listener, oru("R1"))[0][1] == "AA"  # acknowledged from the journal, not yet written
        threading.Timer(0.3, paused.release).start()
        # The resend waits until the journal is written, then is recognised as stored.
        _, receipt = acknowledge(wb, oru("R1"))
        assert receipt.code == "duplicate" and receipt.document_id is not None
    finally:
        listener.stop()
    assert rows(wb, "SELECT control_id, resent FROM inbound_messages ORDER BY 1") == [("R0", 0), ("R1", 1)]


def test_acknowledged_messages_survive_a_failing_writer_and_a_stop(wb, demo_patient, monkeypatch):
    real = mllp._write_journalled
    failing = threading.Event()
    failing.set()

    def flaky(wb_, entries):
        if failing.is_set():
            raise OSError("database volume gone")
        return real(wb_, entries)

    monkeypatch.setattr(mllp, "_write_journalled", flaky)
    monkeypatch.setattr(mllp_journal, "SETTLE_TIMEOUT", 0.5)
    listener = MllpListener(wb, port=0)
    listener.start_thread()
    try:
        send(listener, oru("W0"))  # the usual path: routes the patient
        assert send(listener, oru("W1"))[0][1] == "AA"  # in the journal; its writing fails
        journal = wb.extras["mllp_journal"]
        deadline = time.monotonic() + 10
        while journal.trouble is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert journal.trouble == "OSError"
        # While acknowledged messages cannot be written, a new one is not acknowledged:
        # AR, the sender keeps it and sends it again.
        assert send(listener, oru("W2"))[0][1] == "AR"
    finally:
        listener.stop()  # cannot write W1 out: its journal is kept
    assert rows(wb, "SELECT control_id FROM inbound_messages") == [("W0",)]
    assert len(journal_files(wb)) == 1
    failing.clear()
    again = MllpListener(wb, port=0)  # the next start writes the kept journal out first
    try:
        assert again._journal.recovered == 1
        assert rows(wb, "SELECT control_id, status FROM inbound_messages ORDER BY 1") == [
            ("W0", "queued"), ("W1", "queued")]
    finally:
        again.stop()
    assert not journal_files(wb)


def test_a_journal_left_by_a_killed_listener_is_written_once(wb, demo_patient, monkeypatch):
    paused = PausedWriter(monkeypatch)
    first = MllpListener(wb, port=0).start_thread()
    paused.release()
    send(first, oru("K0"))
    paused.go.clear()
    assert [a[1] for a in send(first, *(oru(f"K{i}") for i in range(1, 4)))] == ["AA"] * 3
    # Killed: its file stays, its lock goes, its writer never runs again.
    old = wb.extras.pop("mllp_journal")
    old.log.close(remove=False)
    first._server.shutdown()
    first._server.server_close()
    second = MllpListener(wb, port=0).start_thread()
    try:
        assert second._journal.recovered == 3
        assert send(second, oru("K2"))[0][1] == "AA"  # a resend after the restart: stored once
    finally:
        second.stop()
    assert rows(wb, "SELECT control_id, resent FROM inbound_messages ORDER BY 1") == [
        ("K0", 0), ("K1", 0), ("K2", 1), ("K3", 0)]
    paused.release()  # the killed writer, were it to run after all, writes nothing twice
    deadline = time.monotonic() + 10
    while old.written < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert old.written == 3
    assert rows(wb, "SELECT count(*), count(DISTINCT control_id) FROM inbound_messages") == [(4, 4)]


def test_acknowledgements_wait_when_the_writer_is_too_far_behind(wb, demo_patient, monkeypatch):
    paused = PausedWriter(monkeypatch)
    monkeypatch.setattr(mllp_journal, "MAX_BACKLOG", 2)
    listener = MllpListener(wb, port=0).start_thread()
    try:
        paused.release()
        send(listener, oru("B0"))
        paused.go.clear()
        answered: list[str] = []
        threads = [threading.Thread(target=lambda i=i: answered.append(send(listener, oru(f"B{i}"))[0][2]))
                   for i in range(1, 4)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while len(answered) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        assert len(answered) == 2  # the third waits for the writer
        paused.release()
        for t in threads:
            t.join(timeout=30)
        assert sorted(answered) == ["B1", "B2", "B3"]
    finally:
        listener.stop()
    assert rows(wb, "SELECT count(*) FROM inbound_messages") == [(4,)]


@pytest.mark.parametrize("reused", [False, True])
def test_a_message_whose_answer_needs_the_database_takes_the_usual_path(wb, demo_patient, reused):
    listener = MllpListener(wb, port=0).start_thread()
    try:
        send(listener, oru("N0"))
        journal = wb.extras["mllp_journal"]
        before = journal.accepted
        if reused:  # the same control id with other content: held, as always
            answer = send(listener, oru("N0", value="999"))[0]
        else:  # a patient on no chart: held, as always
            answer = send(listener, oru("N1", mrn="NOBODY-1"))[0]
        assert answer[1] == "AA" and "held" in answer[3]
        assert journal.accepted == before
    finally:
        listener.stop()
    held = rows(wb, "SELECT hold_reason FROM inbound_messages WHERE status = 'held'")
    assert held == [("control_id_reused" if reused else "unknown_patient",)]


def test_the_app_writes_out_a_journal_left_when_it_does_not_listen_itself(wb, demo_patient):
    from storage.append_log import AppendLog

    left = AppendLog(wb.settings.data_dir / mllp_journal.JOURNAL_DIR)  # as a killed `core mllp` leaves it
    for i in range(3):
        left.append(oru(f"A{i}"))
    left.close(remove=False)
    assert mllp.write_out_left_journals(wb) == 3
    assert rows(wb, "SELECT control_id, status FROM inbound_messages ORDER BY 1") == [
        ("A0", "queued"), ("A1", "queued"), ("A2", "queued")]
    assert not journal_files(wb) and mllp.write_out_left_journals(wb) == 0
