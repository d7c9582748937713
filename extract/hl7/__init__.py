"""HL7 v2 messages (doc_type ``hl7v2_message``): normalised segments -> identity and cited facts."""
