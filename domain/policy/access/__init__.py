"""Who may do what: roles and account rules, MLLP peers, and which keys may reach a log."""
