"""Checkers, one module per category, plus `api_names` (the table-driven API lookup shared by all)."""
