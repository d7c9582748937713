"""MLLP framing cost for large frames (issue 21, item 8): one frame of 10 MB and of 50 MB
read in 64 KiB reads, as a socket delivers it, then a frame past the upload limit sent to
a real listener on 127.0.0.1 until its AE comes back.

The end-block search used to go over the whole frame again on every read, so the work
grew with the square of the size (a 50 MB frame took ~40 s); it now searches only the
new bytes. Prints seconds and bytes searched per size, and the 50/10 ratios: ~5 when
linear, ~25 when quadratic.
Usage: python bench/mllp_frames.py [--sizes 10,50] [--no-listener]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.services.interfaces.mllp import END_BLOCK, START_BLOCK, FrameReader, frame, read_reply  # noqa: E402

MB = 1024 * 1024
READ = 65536


def read_one_frame(size: int) -> tuple[float, int | None]:
    reader, piece, sent = FrameReader(max_bytes=size), b"x" * READ, 0
    start = time.perf_counter()
    frames = reader.feed(START_BLOCK)
    while sent < size:
        n = min(READ, size - sent)
        frames += reader.feed(piece if n == READ else piece[:n])
        sent += n
    frames += reader.feed(END_BLOCK)
    seconds = time.perf_counter() - start
    assert len(frames) == 1 and len(frames[0]) == size
    return seconds, getattr(reader, "bytes_scanned", None)


def oversized_over_tcp(size: int) -> float:
    """Seconds from the first byte of a ``size``-byte frame to the listener's AE."""
    with tempfile.TemporaryDirectory(prefix="bench-mllp-frames-") as tmp:
        os.environ["WORKBENCH_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["WORKBENCH_UPLOAD_MAX_BYTES"] = str(size - MB)
        from core.services.interfaces.mllp import MllpListener
        from core.services.workbench import open_workbench
        from domain.settings import reload_settings

        wb = open_workbench(reload_settings())
        listener = MllpListener(wb, port=0).start_thread()
        try:
            with socket.create_connection(listener.address, timeout=600) as sock:
                start = time.perf_counter()
                sock.sendall(frame(b"x" * size))
                reply = read_reply(sock)
                seconds = time.perf_counter() - start
            assert b"MSA|AE|" in reply, reply
            return seconds
        finally:
            listener.stop()
            wb.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,50", help="frame sizes in MB")
    parser.add_argument("--no-listener", action="store_true", help="only the reader, no TCP run")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"MLLP framing, one frame in {READ // 1024} KiB reads")
    results = {}
    for mb in sizes:
        seconds, scanned = read_one_frame(mb * MB)
        results[mb] = (seconds, scanned)
        work = f"{scanned / MB:.0f} MB searched" if scanned is not None else "bytes searched not counted"
        print(f"  {mb:>3} MB frame: {seconds:.3f} s, {work}")
    if len(sizes) >= 2:
        a, b = sizes[0], sizes[-1]
        (ta, sa), (tb, sb) = results[a], results[b]
        ratio = f", searched x{sb / sa:.1f}" if sa and sb else ""
        print(f"  {b} MB vs {a} MB: size x{b / a:.1f}, time x{tb / max(ta, 1e-9):.1f}{ratio}")
    if not args.no_listener:
        mb = sizes[-1]
        print(f"  a {mb} MB frame past the upload limit to a listener on 127.0.0.1: "
              f"AE after {oversized_over_tcp(mb * MB):.2f} s")


if __name__ == "__main__":
    main()
