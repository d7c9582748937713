"""HL7 v2 (ER7) as received: decoding, segments, message splitting, field values, and the
normaliser that turns a file into cited field sections."""
