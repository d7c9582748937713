"""Normalized document content: what every format backend produces.

Plain slotted dataclasses on purpose: a page holds hundreds of words and ingestion
speed matters. Coordinates are in the page's own units (PDF points, or pixels for a
raster), origin top-left; ``PageContent.normalize`` turns a box into 0..1 space.
Non-paged formats (DOCX, XLSX, HL7) use ``Section`` with a stable locator instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.models import ExtractionWarning


@dataclass(slots=True)
class Word:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    block: int = 0
    line: int = 0
    index: int = 0  # position in PageContent.words
    conf: float | None = None  # OCR confidence 0..1; None for a text layer


@dataclass(slots=True)
class Line:
    """Words that share a baseline, left to right."""

    words: list[Word]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def x0(self) -> float:
        return min(w.x0 for w in self.words)

    @property
    def y0(self) -> float:
        return min(w.y0 for w in self.words)

    @property
    def x1(self) -> float:
        return max(w.x1 for w in self.words)

    @property
    def y1(self) -> float:
        return max(w.y1 for w in self.words)


@dataclass(slots=True)
class PageContent:
    number: int  # 1-based
    width: float
    height: float
    words: list[Word] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    image_path: str | None = None
    page_class: str | None = None  # fax packets: lab | intake | letter | cover | other

    def normalize(self, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
        """Clamp a box to the page and return (x, y, width, height) in 0..1."""
        x0 = max(0.0, min(x0, self.width))
        x1 = max(0.0, min(x1, self.width))
        y0 = max(0.0, min(y0, self.height))
        y1 = max(0.0, min(y1, self.height))
        return (x0 / self.width, y0 / self.height, (x1 - x0) / self.width, (y1 - y0) / self.height)


@dataclass(slots=True)
class Section:
    """A located piece of a non-paged source: a paragraph, a cell range, a segment field."""

    locator: str  # "paragraph 12", "Sheet1!B4:F4", "OBX[3]-5"
    text: str
    section_type: str = ""  # paragraph | table_cell | table_row | cell | row | segment | field ...
    meta: dict = field(default_factory=dict)


@dataclass(slots=True)
class NormalizedContent:
    source_kind: str  # pdf_text | ocr | docx | xlsx | hl7
    pages: list[PageContent] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    warnings: list[ExtractionWarning] = field(default_factory=list)
    engine: str = ""  # e.g. "pymupdf", "tesseract 5.3", "rapidocr"
    meta: dict = field(default_factory=dict)
    ocr_ms: float = 0.0  # wall time spent inside OCR engines while normalizing (0 without OCR)

    def page(self, number: int) -> PageContent:
        return self.pages[number - 1]
