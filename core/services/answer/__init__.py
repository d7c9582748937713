"""Answering a question: evidence from the chart and the guideline corpus, drafting, verification."""
