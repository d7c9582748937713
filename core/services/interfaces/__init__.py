"""Outside systems: HL7 v2 over MLLP, messages held for a chart, the CLI's loopback endpoint."""
