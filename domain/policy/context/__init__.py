"""The clinical context of a mention (ConText): triggers, their scope, and red-flag language."""
