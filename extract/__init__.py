"""bytes -> normalized content -> extraction result. Never touches the database.

Importing ``extract.extractors`` registers every available doc_type extractor.
"""
