"""bytes -> normalized content -> extraction result. Never touches the database.

``extract.extractors.load_all()`` fills the doc_type -> extractor table.
"""
