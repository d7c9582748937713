"""The patient brief: a cited one-page summary of the chart, cut to a token budget."""
