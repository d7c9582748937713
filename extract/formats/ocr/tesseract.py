"""Tesseract 5 through pytesseract: the default OCR engine (see extract/formats/ocr/engines.py)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytesseract
from PIL import Image

from domain.content import Word
from domain.errors import ExtractionError
from extract.formats.ocr import cells
from extract.formats.ocr.rapid import rapid_reader
from extract.formats.ocr.upright import long_words, reads_upright
from extract.formats.ocr.vote import EarlyReadings, Reader, vote

# Page segmentation mode 3 (automatic layout). Measured against 6 (one uniform block)
# on generated lab reports and the real samples: on noisy scans 6 had 12-18% character
# errors where 3 had 2.4-3.3% (both before re-reading), and 6 lost over half the words
# of the typed employment application; 3 keeps form columns apart.
TESSERACT_PSM = 3
# A hung tesseract must not hang the worker: per-call limit in seconds.
TIMEOUT_S = 180
# OSD below this confidence is treated as "don't know". Sideways pages of prose score
# 7-20, sideways pages of short table rows 1.7-5.5, and an upright page of capitals
# once scored 2.1 for "upside down". The page pipeline only acts on a turn when the
# turned page also reads better (extract/formats/ocr/page.py), so a low bar is safe.
OSD_MIN_CONFIDENCE = 1.5
_OSD_MAX_SIDE = 2000  # OSD only needs the text direction: a smaller copy is faster
# Second reading for doubtful words (see _reread): which words, and how many at most.
REREAD_BELOW_CONF = 0.8
REREAD_ACCEPT_CONF = 0.8
REREAD_MAX_WORDS = 80
# A page pass whose words of three characters or more read below this mean confidence
# is taken to be a turned page: no re-reads or vote on it, and the page code asks for
# the page's orientation. Measured on lab layouts as scans and faxes (standard and
# fine): pages turned 90 or 180 degrees read at 0.15-0.31, the worst upright standard
# fax at 0.62 and a scan of dotted leaders at 0.67; a bar of 0.7 had the orientation
# asked on such upright pages (~0.8 s) only to hear they were upright.
TURNED_MAX_CONF = 0.45


class TesseractEngine:
    """``name`` e.g. "tesseract 5.3.0"; ``recognize`` and ``detect_rotation`` as in
    ``extract.formats.ocr.engines.OcrEngine``."""

    def __init__(self, *, lang: str = "eng", psm: int = TESSERACT_PSM, reread: bool = True,
                 vote: bool = True, voter: Reader | None = None):
        # Tesseract's OpenMP threads spin: on 2 cores a 300 dpi page took 2.8 s with
        # them and 0.65 s without. pytesseract passes os.environ to the child process,
        # so the limit goes there (setdefault: an operator's own value wins).
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        self.version = str(pytesseract.get_tesseract_version())
        self.name = f"tesseract {self.version}"
        # Below this its reading is taken for a turned page (extract/formats/ocr/page.py asks
        # for the page's orientation): the bar its own page pass uses, see TURNED_MAX_CONF.
        self.upright_min_conf = TURNED_MAX_CONF
        self.lang = lang
        self.psm = psm
        self.reread = reread
        # The second engine's vote on doubtful words (extract/formats/ocr/vote.py);
        # ``voter`` reads crops, by default RapidOCR's recogniser, loaded on first use.
        self.vote = vote
        self._voter = voter
        self._has_osd = "osd" in pytesseract.get_languages(config="")

    def recognize(self, image: Image.Image) -> list[Word]:
        """The page pass; then (unless ``reread`` is off) ink it left unread read on its
        own, doubtful words re-read, and (``vote``) the second engine's vote on them.

        Tesseract runs as a subprocess, so this process waits idle through each of its
        passes: one worker thread uses that time (and the second core), first for the
        image work of the unread-ink pass that needs no words, during the page pass,
        then for the second engine's readings of the crops the vote will ask for,
        during the unread-ink pass and the re-reads. Each step computes what it computed
        when they ran one after another (see ``EarlyReadings``): only the timing changes. The
        thread lives for this call only: none is left behind in a process that forks."""
        dpi = _dpi_of(image)
        config = f"--psm {self.psm}" + (f" --dpi {dpi}" if dpi else "")
        if not self.reread:
            return self.read_words(image, config)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocr-side") as side:
            try:
                ink = side.submit(cells.page_ink_of, image)
                words = self.read_words(image, config)
                if _looks_turned(words):
                    return words
                # Column rules read as "|", "1" or "]" between cells are no words; the
                # unread-ink pass leaves the rules' ink out likewise.
                rules_left_out = ink.result()
                words = cells.without_rule_glyphs(words, rules_left_out)
                early = None
                if self.vote:
                    voter = self._voter or _default_voter()
                    if voter is not None:
                        early = EarlyReadings(image, voter, side.submit)
                        early.ahead(words)
                found = cells.without_rule_glyphs(_read_unread_ink(image, words, self, rules_left_out),
                                                  rules_left_out)
                if early is not None:
                    early.ahead(found)
                words += found
                alternatives: dict[int, list[str]] = {}
                words = _reread(image, words, self, alternatives)
                if early is not None:
                    words = vote(image, words, early.reader, alternatives, early)
                return words
            finally:
                side.shutdown(wait=True, cancel_futures=True)  # an error: no reading left running
                cells.forget_page_ink(image)

    def detect_rotation(self, image: Image.Image) -> int:
        if not self._has_osd:
            return 0
        small = image.copy()
        small.thumbnail((_OSD_MAX_SIDE, _OSD_MAX_SIDE))
        try:
            osd = pytesseract.image_to_osd(
                _as_tiff(small), output_type=pytesseract.Output.DICT, timeout=TIMEOUT_S
            )
        except pytesseract.TesseractError:
            # OSD refuses sparse pages ("Too few characters"): nothing to decide on.
            return 0
        except RuntimeError as err:
            if not _is_timeout(err):
                raise
            return 0
        if osd.get("orientation_conf", 0.0) < OSD_MIN_CONFIDENCE:
            return 0
        # "Orientation in degrees" is how far the text is turned clockwise from
        # upright; turning the image that far counter-clockwise undoes it.
        return int(osd.get("orientation", 0)) % 360

    def read_words(self, image: Image.Image, config: str) -> list[Word]:
        """The words Tesseract reads on ``image`` with ``config`` (its command-line
        options, e.g. ``--psm 6``); ExtractionError when it fails or times out."""
        try:
            data = pytesseract.image_to_data(
                _as_tiff(image),
                lang=self.lang,
                config=config,
                output_type=pytesseract.Output.DICT,
                timeout=TIMEOUT_S,
            )
        except pytesseract.TesseractError as err:
            raise ExtractionError(
                f"Tesseract could not read the page: {err.message}", code="ocr_failed"
            ) from err
        except RuntimeError as err:
            if not _is_timeout(err):
                raise
            raise ExtractionError("Tesseract took too long on the page.", code="ocr_timeout") from err
        return words_from_tsv(data)


def _looks_turned(words: list[Word]) -> bool:
    """A page pass that reads like a turned page: the page code will turn it and read it
    again, so the re-reads and the vote would be spent on the wrong way up. Nothing read
    (a boxed table Tesseract took for pictures) is not turned: it is recovered."""
    return bool(long_words(words)) and not reads_upright(words, TURNED_MAX_CONF)


def words_from_tsv(data: dict) -> list[Word]:
    """Word rows of pytesseract's ``image_to_data`` dict; ``line`` numbers the
    (block, paragraph, line) triples in Tesseract's reading order."""
    words: list[Word] = []
    line_ids: dict[tuple[int, int, int], int] = {}
    for i, raw in enumerate(data["text"]):
        text = str(raw).strip()
        conf = float(data["conf"][i])
        if not text or conf < 0:  # conf -1 marks page/block/line rows, not words
            continue
        key = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
        line = line_ids.setdefault(key, len(line_ids))
        x, y = float(data["left"][i]), float(data["top"][i])
        w, h = float(data["width"][i]), float(data["height"][i])
        words.append(Word(text, x, y, x + w, y + h, block=key[0], line=line, conf=conf / 100.0))
    return words


def _reread(image: Image.Image, words: list[Word], engine: TesseractEngine,
            alternatives: dict[int, list[str]] | None = None) -> list[Word]:
    """Read doubtful words again on their own; take the new reading if two agree.

    Tesseract reads a whole text line at once, and on table rows with wide gaps its
    line model stumbles over short isolated tokens: on a clean 300 dpi lab report it
    read "0.9 mg/dL 0.6-1.1" as "0S mgd 06-14", and "7.9      %" as one word "19%",
    all with low confidence. Cut out on white paper, the same tokens read correctly.
    So the words under REREAD_BELOW_CONF are re-read twice (at 1x and 1.5x; all of
    them stacked one per row in one image per pass, so two Tesseract runs per page
    rather than two per word). Where both re-readings return the same tokens, each
    with confidence, they replace the word: its text, or several words with their own
    boxes where one "word" was really two. ``conf`` stays the first reading's: it
    disagreed, so the text stays exactly as doubtful for the review rules downstream.
    On real forms most replacements were right ("pischarged:3" -> "Discharged:") but
    not all (an underlined "1" became "4"), which is why the doubt is kept.
    The texts each re-reading gave a word it left alone go to ``alternatives`` (by
    ``id(word)``), for the second engine's vote to side with.
    """
    doubtful = sorted(
        (w for w in words if (w.conf or 0.0) < REREAD_BELOW_CONF and w.y1 - w.y0 >= 6),
        key=lambda w: w.conf or 0.0,
    )[:REREAD_MAX_WORDS]
    if not doubtful:
        return words
    sheet, rows = _word_sheet(image, doubtful)
    # Two Tesseract runs that do not depend on each other: side by side, one per core.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocr-reread") as side:
        larger = side.submit(_read_sheet, sheet, rows, 1.5, engine)
        first = _read_sheet(sheet, rows, 1.0, engine)
        second = larger.result()
    replacement: dict[int, list[Word]] = {}
    for w, a, b in zip(doubtful, first, second):
        texts = [t.text for t in a]
        if alternatives is not None:
            alternatives[id(w)] = [" ".join(t.text for t in r) for r in (a, b) if r]
        if not a or texts != [t.text for t in b] or texts == [w.text]:
            continue
        if min(t.conf or 0.0 for t in a + b) < REREAD_ACCEPT_CONF:
            continue
        if len(a) == 1:
            w.text = a[0].text
            continue
        replacement[id(w)] = [
            # Each part keeps its own box: a "word" Tesseract read across two rows of
            # a narrow column ("H" over "H") splits into one word per row.
            Word(t.text, max(t.x0, w.x0), max(t.y0, w.y0), min(t.x1, w.x1), min(t.y1, w.y1),
                 block=w.block, line=w.line, conf=w.conf)
            for t in a
        ]
    return [n for w in words for n in replacement.get(id(w), [w])]


def _read_unread_ink(image: Image.Image, words: list[Word], engine: TesseractEngine,
                     ink: cells.PageInk | None = None) -> list[Word]:
    """Words read, region by region, in the ink the page pass left unread
    (extract/formats/ocr/cells.py): each region on its own row of a sheet, read as
    text lines, with the confidence Tesseract gives it there. A region read as nothing
    stays unread; the coverage check downstream sees its print uncited. ``ink``: the
    page's ``cells.page_ink_of``, when worked out beforehand."""
    ink = ink or cells.page_ink_of(image)
    regions = cells.unread_regions(image, words, ink.glyph, ink)
    if not regions:
        return []
    boxes = [Word("", float(x0), float(y0), float(x1), float(y1)) for x0, y0, x1, y1 in regions]
    sheet, rows = _word_sheet(image, boxes)
    found = _read_sheet(sheet, rows, 1.0, engine)
    line = max((w.line for w in words), default=-1) + 1
    out: list[Word] = []
    for box, tokens in zip(boxes, found):
        for t in tokens:
            out.append(Word(t.text, max(t.x0, box.x0), box.y0, min(t.x1, box.x1), box.y1,
                            block=0, line=line, conf=t.conf))
        line += 1
    # A region can be the uncovered edge of a word already read (its box hugged the
    # ink too tightly): what is read there again is that word, not a new one.
    return [w for w in out if w.x1 > w.x0 and not any(_overlap(w, o) > 0.3 for o in words)]


def _overlap(a: Word, b: Word) -> float:
    """Share of ``a``'s box that lies inside ``b``'s."""
    dx = min(a.x1, b.x1) - max(a.x0, b.x0)
    dy = min(a.y1, b.y1) - max(a.y0, b.y0)
    if dx <= 0 or dy <= 0:
        return 0.0
    return dx * dy / max((a.x1 - a.x0) * (a.y1 - a.y0), 1e-9)


def _default_voter() -> Reader | None:
    """RapidOCR's recogniser (its models ship in the wheel), or None where it cannot load."""
    try:
        return rapid_reader()
    except Exception:  # noqa: BLE001 - no second opinion is a slower, not a wrong, page
        return None


def _word_sheet(image: Image.Image, words: list[Word]) -> tuple[Image.Image, list[tuple]]:
    """Paste each word's crop on its own row of a white sheet.

    Returns the sheet and per row (top, bottom, dx, dy): its band on the sheet and the
    offset that maps sheet x/y back to page x/y.
    """
    crops, origins = [], []
    for w in words:
        pad = max(2, round(0.2 * (w.y1 - w.y0)))
        box = (round(w.x0) - pad, round(w.y0) - pad, round(w.x1) + pad + 1, round(w.y1) + pad + 1)
        crops.append(image.crop(box))
        origins.append(box[:2])
    gap = max(8, round(0.8 * max(c.height for c in crops)))
    width = max(c.width for c in crops) + 2 * gap
    sheet = Image.new("L", (width, sum(c.height + gap for c in crops) + gap), 255)
    rows, y = [], gap
    for crop, (ox, oy) in zip(crops, origins):
        sheet.paste(crop.convert("L"), (gap, y))
        rows.append((y - gap / 2, y + crop.height + gap / 2, ox - gap, oy - y))
        y += crop.height + gap
    return sheet, rows


def _read_sheet(
    sheet: Image.Image, rows: list[tuple], scale: float, engine: TesseractEngine
) -> list[list[Word]]:
    """Tokens read on each row of the sheet, left to right, in page coordinates."""
    if scale != 1.0:
        size = (round(sheet.width * scale), round(sheet.height * scale))
        sheet = sheet.resize(size, Image.Resampling.BICUBIC)
    try:
        found = engine.read_words(sheet, "--psm 6")  # one uniform block: a text line per row
    except ExtractionError:
        return [[] for _ in rows]
    parts: list[list[Word]] = [[] for _ in rows]
    for t in found:
        x0, y0, x1, y1 = (v / scale for v in (t.x0, t.y0, t.x1, t.y1))
        for i, (top, bottom, dx, dy) in enumerate(rows):
            if top <= (y0 + y1) / 2 < bottom:
                parts[i].append(Word(t.text, x0 + dx, y0 + dy, x1 + dx, y1 + dy, conf=t.conf))
                break
    return [sorted(p, key=lambda t: t.x0) for p in parts]


def _as_tiff(image: Image.Image) -> Image.Image:
    """A copy that pytesseract hands to the binary as uncompressed TIFF.

    pytesseract writes the image to a temp file in ``image.format``: lossy JPEG for a
    JPEG source, otherwise PNG, whose compression takes ~0.6 s for a 300 dpi page.
    Uncompressed TIFF is written in milliseconds and, unlike BMP (whose header always
    claims 96 dpi, which misled OSD), carries no resolution unless we pass one.
    """
    img = image.copy()
    img.format = "TIFF"
    img.info = {}  # a G4 source's "compression" would otherwise be reused on 8-bit data
    return img


def _is_timeout(err: RuntimeError) -> bool:
    # pytesseract signals its own timeout with a bare RuntimeError of this text.
    return str(err) == "Tesseract process timeout"


def _dpi_of(image: Image.Image) -> int | None:
    dpi = image.info.get("dpi")
    try:
        value = int(round(float(dpi[0])))
    except (TypeError, ValueError, IndexError):
        return None
    return value if 70 <= value <= 1200 else None
