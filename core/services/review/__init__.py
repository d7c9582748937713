"""Curating the chart: review decisions, promotion, corrections, retraction, and what a
reviewer sees of a document and its citations."""
