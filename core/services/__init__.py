"""The application: use cases over storage, extract and retrieve, grouped by what a user does.
Pages and the CLI call only these."""
