"""What a fact is worth and where it may go: the analyte vocabulary, certainty buckets,
citation checks, fingerprints, what may reach the chart and what a reviewer may do."""
