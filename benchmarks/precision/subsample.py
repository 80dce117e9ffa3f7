"""Carry judged rows over to a new report: the rows that are still findings, with their verdicts.

    python benchmarks/precision/subsample.py verdicts/peft.sample.tsv REPORT.json --label tuned \
        > verdicts/peft.tuned.tsv

A judged row (path, line, rule) that the new report still has at the same severity keeps its
verdict and note; one whose severity changed gets an empty verdict (to be judged again by reading
the code); one the new report no longer has (left out, folded into another finding) is dropped.
Scope, group and severity are taken from the new report; the row's weight stays that of the sample
it was drawn in. Rows with an empty verdict are printed to stderr.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("judged", help="a verdicts TSV (the rows of one label are used)")
    parser.add_argument("report", help="neuronlint JSON report of the same repository and commit")
    parser.add_argument("--label", required=True, help="label of the rows written")
    parser.add_argument("--from-label", default="before", help="label of the judged rows to carry over")
    args = parser.parse_args(argv)
    with open(args.report, encoding="utf-8") as handle:
        findings = [f for f in json.load(handle)["findings"] if not f.get("suppressed")]
    by_key = {(f["path"], int(f["line"]), f["rule"]): f for f in findings}
    with open(args.judged, encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        columns = reader.fieldnames or []
        rows = [r for r in reader if r["label"] == args.from_label]
    writer = csv.DictWriter(sys.stdout, columns, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        found = by_key.get((row["path"], int(row["line"]), row["rule"]))
        if found is None:
            continue
        out = dict(row, label=args.label, scope=found.get("scope", ""), group=found.get("group", ""))
        if found["severity"] != row["severity"]:
            out.update(severity=found["severity"], verdict="", note="")
            print(
                f"re-judge: {row['path']}:{row['line']} {row['rule']} {row['severity']} -> "
                f"{found['severity']} (was {row['verdict']}: {row['note']})",
                file=sys.stderr,
            )
        writer.writerow(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
