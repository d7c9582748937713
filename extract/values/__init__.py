"""How printed values are read, whatever the format or document: numbers, units, dates, ranges,
flags, list phrases, form labels and written answers (pure)."""
