"""The progress: a bar rewritten in place on a terminal, plain lines at most once a
second otherwise (and always the last), with documents/s and the time left."""

import io

from core.services.backfill.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_when_not_a_terminal_at_most_one_a_second_and_the_last():
    out = io.StringIO()
    bar = Progress(4, out, every=3600)
    for _ in range(4):
        bar.tick()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("backfill: 1/4 documents read")
    assert lines[1].startswith("backfill: 4/4 documents read") and "documents/s" in lines[1]


def test_a_bar_rewritten_in_place_on_a_terminal_with_the_failures_and_time_left():
    out = _Terminal()
    bar = Progress(4, out, every=0)
    bar.tick()
    bar.tick(failed=True)
    bar.finish()
    text = out.getvalue()
    assert text.count("\r") == 2 and "\n" not in text.rstrip("\n")
    assert "2/4, 1 failed" in text and "#" * 12 in text and "left" in text
