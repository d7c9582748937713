"""Office Open XML: the DOCX and XLSX normalisers and the checks before a library opens a zip."""
