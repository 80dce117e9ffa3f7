"""Draw the stratified random sample of a precision audit from a neuronlint JSON report.

    python benchmarks/precision/sample.py REPORT.json --repo owner/name --commit SHA \
        --label before --seed 11 -n 60 > sample.tsv

Strata are the severities of the default output (blocker, warning, info). Each stratum gets a
share of the sample proportional to its size, at least 5 findings (or all it has); the sample is
drawn with `random.Random(seed)`, so the same report and seed give the same rows. The weight of a
row is (stratum size / rows drawn from it): the scores in score.py are weighted by it, so a
stratum drawn above its share does not count more.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

STRATA = ("blocker", "warning", "info")
MIN_PER_STRATUM = 5
COLUMNS = (
    "label",
    "repo",
    "commit",
    "path",
    "line",
    "rule",
    "category",
    "severity",
    "scope",
    "group",
    "stratum_size",
    "weight",
    "verdict",
    "note",
)


def allocate(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Rows per stratum: proportional, at least MIN_PER_STRATUM, never more than the stratum holds."""
    population = sum(sizes.values())
    if population <= total:
        return dict(sizes)
    share = {s: min(n, max(MIN_PER_STRATUM, round(total * n / population))) for s, n in sizes.items()}
    while sum(share.values()) > total:  # rounding and minimums can overshoot: trim the largest
        largest = max((s for s in share if share[s] > MIN_PER_STRATUM), key=lambda s: share[s])
        share[largest] -= 1
    while sum(share.values()) < total:
        room = [s for s in share if share[s] < sizes[s]]
        if not room:
            break
        share[max(room, key=lambda s: sizes[s] - share[s])] += 1
    return share


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("-n", type=int, default=60)
    args = parser.parse_args(argv)
    with open(args.report, encoding="utf-8") as handle:
        findings = [f for f in json.load(handle)["findings"] if not f.get("suppressed")]
    by_stratum = {
        s: sorted(
            (f for f in findings if f["severity"] == s), key=lambda f: (f["path"], f["line"], f["rule"])
        )
        for s in STRATA
    }
    sizes = {s: len(v) for s, v in by_stratum.items() if v}
    rng = random.Random(f"{args.seed}:{args.repo}:{args.label}")
    out = sys.stdout
    out.write("\t".join(COLUMNS) + "\n")
    for stratum, count in allocate(sizes, args.n).items():
        for f in sorted(rng.sample(by_stratum[stratum], count), key=lambda f: (f["path"], f["line"])):
            row = [
                args.label,
                args.repo,
                args.commit,
                f["path"],
                str(f["line"]),
                f["rule"],
                f["category"],
                f["severity"],
                f.get("scope", ""),
                f.get("group", ""),
                str(sizes[stratum]),
                f"{sizes[stratum] / count:.3f}",
                "",
                "",
            ]
            out.write("\t".join(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
