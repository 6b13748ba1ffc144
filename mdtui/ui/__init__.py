"""Textual app: a thin shell over the core."""
