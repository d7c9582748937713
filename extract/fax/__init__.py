"""Fax packets (doc_type ``fax_packet``): pages classified, each part read by the lab or intake reader."""
