"""Intake forms (doc_type ``intake_form``): labelled answers on a page -> cited facts."""
