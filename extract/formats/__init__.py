"""File formats: bytes -> ``NormalizedContent`` (PDF, images and OCR, DOCX/XLSX, HL7 v2).
A format knows no document type; ``extract.registry`` pairs formats with extractors."""
