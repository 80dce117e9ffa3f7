"""Filters applied to findings after analysis: in-source suppressions, baselines, changed lines."""
