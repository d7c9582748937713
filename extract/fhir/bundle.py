"""One FHIR file as the fact readers (``extract.fhir.identity``, ``observations``,
``clinical``) walk it: its resources re-read with the place of every value, what they
collect into, and how they cite: the JSON path of the element read as the locator and
the value exactly as the file writes it as the quote."""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.content import NormalizedContent, Section
from domain.models import Citation, DocType
from extract.formats.fhir.spans import Node, parse
from extract.section_facts import SectionFacts

SOURCE_TYPE = DocType.FHIR_BUNDLE.value
Step = str | int


@dataclass(slots=True)
class Resource:
    """One resource: its section (locator = its path) and its JSON with places."""

    section: Section
    node: Node

    @property
    def path(self) -> str:
        return self.section.locator

    @property
    def type(self) -> str:
        return self.section.meta.get("resource_type", "")

    @property
    def data(self) -> dict:
        return self.node.value

    def get(self, *steps: Step) -> Node | None:
        return self.node.get(*steps)

    def raw(self, node: Node) -> str:
        """A value as the file writes it: a string without its quotes, anything else as is."""
        text = node.raw(self.section.text)
        return text[1:-1] if isinstance(node.value, str) else text

    def references(self) -> set[str]:
        """The ways another resource may point at this one (``Patient/123``, its fullUrl)."""
        out = {self.section.meta.get("full_url") or ""}
        if self.section.meta.get("id"):
            out.add(f"{self.type}/{self.section.meta['id']}")
        return out - {""}


def step_path(steps: tuple[Step, ...]) -> str:
    """``("component", 0, "valueQuantity")`` -> ``.component[0].valueQuantity``."""
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps)


@dataclass(slots=True)
class FhirFacts(SectionFacts):
    """The shared collector, citing by JSON path."""

    sections: dict[str, Section] = field(default_factory=dict)

    @classmethod
    def for_fhir(cls, content: NormalizedContent, source_id: str) -> "FhirFacts":
        ctx = cls.for_content(content, "fhir", SOURCE_TYPE, source_id)
        ctx.sections = {s.locator: s for s in content.sections}
        return ctx

    def cite_at(self, res: Resource, steps: tuple[Step, ...], value: Node, path: str) -> Citation:
        """A citation to the element at ``steps`` (or the nearest enclosing one with a
        section of its own) quoting ``value`` as the file writes it."""
        for cut in range(len(steps), -1, -1):
            section = self.sections.get(res.path + step_path(steps[:cut]))
            if section is not None:
                break
        else:
            section = res.section
        return self.cite(section, res.raw(value), path)


def resources(content: NormalizedContent) -> list[Resource]:
    """The file's resources in order, each re-read with the places of its values."""
    out = []
    for s in content.sections:
        if s.section_type == "resource":
            out.append(Resource(s, parse(s.text, depth_limit=10_000)))  # the file's depth was checked whole
    return out


def text(node: Node | None) -> str:
    """A string value, stripped ("" when absent or not a string)."""
    return node.value.strip() if node is not None and isinstance(node.value, str) else ""


def codings(concept: Node | None) -> list[Node]:
    """The coding objects of a CodeableConcept node."""
    found = concept.get("coding") if concept is not None else None
    return [c for c in (found.items if found is not None else []) if isinstance(c.value, dict)]


def code_in(concept: Node | None, system: str) -> str | None:
    """The first code of a CodeableConcept in ``system`` (e.g. LOINC), or None."""
    for c in codings(concept):
        if text(c.get("system")) == system and text(c.get("code")):
            return text(c.get("code"))
    return None


def concept_name(concept: Node | None) -> tuple[str, Node | None]:
    """What a CodeableConcept names, as written: its text, else a coding's display, else
    a code; with the node holding those words (for the quote)."""
    if concept is None:
        return "", None
    if text(concept.get("text")):
        return text(concept.get("text")), concept.get("text")
    for key in ("display", "code"):
        for c in codings(concept):
            if text(c.get(key)):
                return text(c.get(key)), c.get(key)
    return "", None


def concept_codes(concept: Node | None) -> list[str]:
    return [text(c.get("code")) for c in codings(concept) if text(c.get("code"))]


def first_date(value: str) -> str | None:
    """A FHIR date or dateTime's day (YYYY-MM-DD), or None when it names no whole day."""
    v = value.strip()
    if len(v) >= 10 and v[4] == "-" and v[7] == "-" and v[:4].isdigit() and v[5:7].isdigit() and v[8:10].isdigit():
        return v[:10]
    return None


def date_time(value: str) -> str | None:
    """A FHIR dateTime as ``YYYY-MM-DD HH:MM`` (``YYYY-MM-DD`` without a time)."""
    day = first_date(value)
    if day and len(value) >= 16 and value[10] == "T":
        return f"{day} {value[11:16]}"
    return day
