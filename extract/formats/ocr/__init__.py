"""OCR: engines (Tesseract by default, RapidOCR as fallback), page clean-up and one page's words."""
