"""Accounts and sign-in, the access audit, patients, and the workbench's health."""
