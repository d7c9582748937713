"""Referral letters (doc_type ``referral_docx``): DOCX sections -> cited facts."""
