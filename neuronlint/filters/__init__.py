"""Every filter of a run, in this order (filters/chain.py applies them):

In the scan (`chain.scope`, per file, called by `pipeline.run_scan`):
1. rule selection: --select, --extend-select, --ignore and per-file-ignores (`selection.py`),
2. in-source suppression comments mark what they silence (`suppressions.py`),
then the triage (`triage.prepare`, called by `pipeline.run_scan`; off with ScanOptions.triage):
   imports of the project's own package are dropped (`first_party.py`), notes about supported
   code unless --show-ok (`notes.py`), one finding per line and category, multi-line notes folded (`dedup.py`), every
   finding gets its scope and test code is capped at warning (`scope.py`).

After the scan, graph findings merged in (`chain.apply_filters`, called by `pipeline.filter_scan`):
3. unused suppressions become NL003 findings (`unused.py`, --report-unused-suppressions),
4. every finding gets its fingerprint (before anything is dropped, so occurrences are stable),
5. the baseline hides known findings (`baseline.py`, --baseline FILE),
6. only findings on changed lines stay (`changed_lines.py`, --diff-base REF),
7. only findings at or above --severity stay, and only those in the --scope scopes.

Traced models' findings (graph/analysis.py) take steps 1 and 2 through the same
`Selection.allows` and `suppressions.apply_in_source` before they are merged into a scan.

Filters take findings, the database frame and a `Selection`; none imports the pipeline.
"""
