"""bytes -> normalized content -> extraction result. Never touches the database.

``extract.registry`` is the one table of formats (sniffed kind -> normaliser) and
doc_types (-> extractor); ``extract.normalize`` reads bytes by it.
"""
