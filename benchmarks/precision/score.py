"""Score judged samples: usefulness TP/(TP+FP+LOW) and precision (TP+LOW)/(TP+FP+LOW).

    python benchmarks/precision/score.py benchmarks/precision/verdicts/*.tsv

Prints per label (before/after) and repository: the raw counts, the raw figures and the figures
weighted by each row's `weight` (stratum size / rows drawn), which estimate the whole default
output rather than the sample.
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict

from neuronlint.scope import convention_scope


def scope_of(row: dict[str, str]) -> str:
    """The row's scope; 'before' rows (no scopes yet) get the path conventions'."""
    return row.get("scope") or convention_scope(row["path"])


def figures(rows: list[dict[str, str]], weighted: bool) -> tuple[float, float]:
    totals = defaultdict(float)
    for row in rows:
        totals[row["verdict"]] += float(row["weight"]) if weighted else 1.0
    judged = totals["TP"] + totals["FP"] + totals["LOW"]
    if not judged:
        return 0.0, 0.0
    return totals["TP"] / judged, (totals["TP"] + totals["LOW"]) / judged


def main(paths: list[str]) -> int:
    groups: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                if row["verdict"]:
                    groups[(row["label"], row["repo"])].append(row)
                    groups[(row["label"], "ALL")].append(row)
                    if scope_of(row) != "test":
                        groups[(row["label"] + "-outside-tests", row["repo"])].append(row)
                        groups[(row["label"] + "-outside-tests", "ALL")].append(row)
    print("label\trepo\tn\tTP\tLOW\tFP\tusefulness\tprecision\tusefulness_w\tprecision_w\ttest_blockers")
    for (label, repo), rows in sorted(
        groups.items(), key=lambda kv: (kv[0][0] != "before", kv[0][0], kv[0][1] == "ALL", kv[0][1])
    ):
        count = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("TP", "LOW", "FP")}
        useful, precise = figures(rows, False)
        useful_w, precise_w = figures(rows, True)
        test_blockers = sum(1 for r in rows if r["severity"] == "blocker" and scope_of(r) == "test")
        print(
            f"{label}\t{repo}\t{len(rows)}\t{count['TP']}\t{count['LOW']}\t{count['FP']}\t"
            f"{useful:.2f}\t{precise:.2f}\t{useful_w:.2f}\t{precise_w:.2f}\t{test_blockers}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
