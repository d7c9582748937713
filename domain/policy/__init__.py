"""The clinical and access rules, each stated once and pure: they take values and return
decisions, never reading a file, a database or the environment."""
