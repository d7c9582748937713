"""What an answer may include and claim: routing, relevance, lab series, the verifier."""
