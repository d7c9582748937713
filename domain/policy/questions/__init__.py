"""Understanding a clinician's question: its intent, topics, look-up terms, and which
requests for a decision are refused or narrowed."""
