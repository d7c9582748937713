"""MLLP intake speed: HL7 v2 messages acknowledged per second by `python -m core mllp`.

A listener runs as its own process on a throwaway data dir (the demo patients on its
charts); each client thread holds one connection and sends small ORU^R01 results one
after another, waiting for each ACK as an MLLP sender does. Every AA means the message
is durably stored: in the listener's fsynced journal, from which its original, row,
document and job are written right after (core/services/interfaces/mllp_journal.py).
Prints, per number of client threads: messages, seconds, messages/s and the p50/p95 ACK
latency in ms; and when every row was committed: one message of the run is sent again at
its end, and a resend is answered only once all journalled messages are written out, so
its ACK marks the end of the writing (the "written" rate).

The peer, measured in the same run with the same clients: a minimal asyncio MLLP server
(its own process) that parses each message with the ``hl7`` package, appends it to one
file with fsync and answers the package's ACK. It does what an interface engine's
durable inbound step does and nothing else (no patient match, no rows, no duplicate
check), so it is the floor the listener is compared with: the ratio is printed.
``hl7`` is a bench-only dependency (requirements-bench.txt, installed by ``make bench``).
Usage: python bench/mllp.py [--messages N] [--threads 1,4]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.services.interfaces.mllp import frame, read_reply  # noqa: E402
from core.services.admin.patients import DEMO_PATIENTS  # noqa: E402


def message(run: str, i: int) -> bytes:
    p = DEMO_PATIENTS[i % len(DEMO_PATIENTS)]
    return "\r".join([
        f"MSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|20240312093000||ORU^R01^ORU_R01|{run}{i:06d}|P|2.5.1",
        f"PID|1||{p['mrn']}^^^CLINIC^MR||{p['last'].upper()}^{p['first'].upper()}||{p['dob']:%Y%m%d}|{p['sex']}",
        "OBR|1|ORD1|FIL1|2345-7^Glucose^LN|||20240312081500",
        f"OBX|1|NM|2345-7^Glucose^LN||{80 + i % 40}|mg/dL|70-99||||F",
    ]).encode() + b"\r"


def start_listener(data_dir: Path) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "core", "mllp", "--port", "0"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if found := re.search(r"mllp listening on [\d.]+:(\d+)", line):
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, int(found.group(1))
    raise SystemExit("the listener did not start")


PEER = r"""
import asyncio, os, sys
import hl7

async def main(path):
    log = open(path, "ab")

    async def handle(reader, writer):
        buffer = b""
        while chunk := await reader.read(65536):
            buffer += chunk
            while (end := buffer.find(b"\x1c\r")) >= 0:
                raw, buffer = buffer[buffer.index(b"\x0b") + 1:end], buffer[end + 2:]
                message = hl7.parse(raw.decode())
                log.write(raw + b"\n")
                log.flush()
                os.fsync(log.fileno())
                writer.write(b"\x0b" + str(message.create_ack("AA")).encode() + b"\x1c\r")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main(sys.argv[1]))
"""


def start_peer(directory: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", PEER, str(directory / "peer.log")], stdout=subprocess.PIPE,
                            text=True)
    return proc, int(proc.stdout.readline())


def send(port: int, run: str, indices: range, latencies: list[float]) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        for i in indices:
            start = time.perf_counter()
            sock.sendall(frame(message(run, i)))
            if b"MSA|AA|" not in read_reply(sock):
                raise SystemExit(f"message {i} was not accepted")
            latencies.append((time.perf_counter() - start) * 1000)


def measure(port: int, run: str, messages: int, threads: int) -> dict:
    latencies: list[float] = []
    per = messages // threads
    workers = [threading.Thread(target=send, args=(port, run, range(k * per, (k + 1) * per), latencies))
               for k in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - start
    send(port, run, range(1), [])  # a resend: answered once every row before it is committed
    written = time.perf_counter() - start
    cuts = statistics.quantiles(latencies, n=20)
    return {"threads": threads, "messages": len(latencies), "seconds": seconds, "written_per_second":
            len(latencies) / written,
            "per_second": len(latencies) / seconds, "p50_ms": statistics.median(latencies), "p95_ms": cuts[18]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--threads", default="1,4")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mllp-") as tmp:
        data_dir = Path(tmp) / "data"
        os.environ["WORKBENCH_DATA_DIR"] = str(data_dir)
        from core.services.admin.patients import seed_demo_patients
        from core.services.workbench import open_workbench

        wb = open_workbench()
        seed_demo_patients(wb)
        wb.close()
        proc, port = start_listener(data_dir)
        peer, peer_port = start_peer(Path(tmp))
        try:
            print(f"MLLP on {os.cpu_count()} cores, {args.messages} ORU^R01 messages per run, "
                  "each ACKed once in the fsynced journal; the peer (asyncio + hl7, parse, append + fsync, ACK) "
                  "with the same clients in the same run")
            for n, threads in enumerate(int(t) for t in args.threads.split(",")):
                r = measure(port, f"R{n}X", args.messages, threads)
                f = measure(peer_port, f"F{n}X", args.messages, threads)
                print(f"  {r['threads']} client thread(s): {r['messages']} messages in {r['seconds']:.1f} s = "
                      f"{r['per_second']:.0f} messages/s acknowledged (ACK p50 {r['p50_ms']:.1f} ms, "
                      f"p95 {r['p95_ms']:.1f} ms), all rows committed at {r['written_per_second']:.0f} "
                      f"messages/s; peer {f['per_second']:.0f} messages/s "
                      f"(p50 {f['p50_ms']:.1f} ms); ratio {r['per_second'] / f['per_second']:.2f}x the peer")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
            peer.kill()
            peer.wait(timeout=30)


if __name__ == "__main__":
    main()
