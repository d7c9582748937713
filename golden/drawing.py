"""Drawing fixture PDFs: a thin PyMuPDF canvas and the ways a form prints dates and names."""

from __future__ import annotations

from datetime import date

import pymupdf

from golden.ground_truth import Patient


class Canvas:
    """A thin PyMuPDF wrapper: text at baseline points, right alignment, rules."""

    def __init__(self, width: float = 612, height: float = 792, font: str = "helv", size: float = 10):
        self.doc = pymupdf.open()
        self.width, self.height, self.font, self.size = width, height, font, size
        self.page = self.new_page()

    def new_page(self) -> pymupdf.Page:
        self.page = self.doc.new_page(width=self.width, height=self.height)
        return self.page

    def text(self, x: float, y: float, s: str, font: str | None = None, size: float | None = None) -> None:
        if s:
            self.page.insert_text((x, y), s, fontname=font or self.font, fontsize=size or self.size)

    def rtext(self, x_right: float, y: float, s: str, font: str | None = None, size: float | None = None) -> None:
        w = pymupdf.get_text_length(s, fontname=font or self.font, fontsize=size or self.size)
        self.text(x_right - w, y, s, font, size)

    def ctext(self, y: float, s: str, font: str | None = None, size: float | None = None) -> None:
        w = pymupdf.get_text_length(s, fontname=font or self.font, fontsize=size or self.size)
        self.text((self.width - w) / 2, y, s, font, size)

    def rule(self, y: float, x0: float = 40, x1: float | None = None) -> None:
        self.page.draw_line((x0, y), (x1 or self.width - 40, y), width=0.6)

    def box(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.page.draw_rect(pymupdf.Rect(x0, y0, x1, y1), width=0.8)

    def tobytes(self) -> bytes:
        data = self.doc.tobytes(garbage=1, deflate=True, no_new_id=True)
        self.doc.close()
        return data


def us_date(iso: str, two_digit_year: bool = False) -> str:
    d = date.fromisoformat(iso)
    return f"{d.month}/{d.day}/{d.year % 100:02d}" if two_digit_year else f"{d.month:02d}/{d.day:02d}/{d.year}"


def long_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def day_month_year(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.day} {d.strftime('%B')} {d.year}"


def day_mon_year(iso: str) -> str:
    return date.fromisoformat(iso).strftime("%d-%b-%Y")


def mon_day_year(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.strftime('%b')} {d.day} {d.year}"


def last_first(p: Patient) -> str:
    middle = f" {p.middle[0]}" if p.middle else ""
    return f"{p.last.upper()}, {p.first.upper()}{middle}"


def first_last(p: Patient) -> str:
    middle = f" {p.middle[0]}." if p.middle else ""
    return f"{p.first}{middle} {p.last}"


def placed_text_pdf(lines: list[tuple], width: float = 612, height: float = 842, size: float = 10) -> bytes:
    """One page of text placed word for word: (x, baseline, text[, font size[, font]])
    each, Helvetica at ``size`` unless said (a report's or letter's rows and columns)."""
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    for x, y, text, *style in lines:
        page.insert_text((x, y), text, fontsize=style[0] if style else size,
                         fontname=style[1] if len(style) > 1 else "helv")
    data = doc.tobytes()
    doc.close()
    return data
