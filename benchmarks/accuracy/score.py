"""Score neuronlint against the blind labels: exact match on (file, line, category).

    python benchmarks/accuracy/score.py [--part tune|holdout|all] [--set first|fresh5|...|fresh10|all]
                                        [--view detection|default] [--details] [--json OUT]
                                        [--exclude FILE_ID ...]

Scans each repository directory under corpus/ (laid out by layout.py) and compares the findings of
the nine source categories with labels.tsv. Two views:
- `detection` (the default here): what the scan finds, the question the labels answer. It scans
  with `--show-ok`, which also reports the CUDA-only test and benchmark code that the default
  output leaves out (and counts), and drops the notes `--show-ok` adds (`extra.note`: supported
  code, never labelled).
- `default`: the default output, exactly as a user runs it (the triage's view).
Prints per-category precision, recall and F1, the micro average, and the findings on files
labelled clean. `--details` lists the misses and false findings, and only for the tuning part:
the held-out part is scored, never read while fixing. `--set` picks the labellers' rounds: `first`
(labellers A, B and C, the set the trust round started from), `fresh5` (labeller D, added later
from ten more repositories), `fresh6` (labeller E, eleven more repositories, added in session 10),
`fresh7` (labeller F, eight more repositories, added in session 11), `fresh8`, `fresh9` and
`fresh10` (labellers G, H and I, seven more repositories each, added in session 12), or `all` (the
default). `--exclude FILE_ID` leaves a file out: a held-out file whose labels or source were seen
while fixing is reported both ways, with and without it.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATEGORIES = (
    "cuda-api",
    "dist-backend",
    "custom-kernel",
    "cuda-only-lib",
    "dtype",
    "dynamic-shape",
    "host-sync",
    "compile-backend",
    "neuron-lockin",
)

Key = tuple[str, int, str]
SETS = {
    "first": {"A", "B", "C"},
    "fresh5": {"D"},
    "fresh6": {"E"},
    "fresh7": {"F"},
    "fresh8": {"G"},
    "fresh9": {"H"},
    "fresh10": {"I"},
    "fresh11": {"J"},
    "fresh12": {"K"},
    "fresh13": {"L"},
    "fresh14": {"M"},
    "fresh15": {"N"},
    "fresh16": {"O"},
    "fresh17": {"P"},
    "fresh18": {"Q"},
    "fresh19": {"R"},
    "fresh20": {"S"},
    "fresh21": {"T"},
    "fresh22": {"U"},
    "fresh23": {"V"},
    "fresh24": {"W"},
    "fresh25": {"X"},
    "fresh26": {"Y"},
    "fresh27": {"Z"},
    "fresh28": {"AA"},
    "fresh29": {"AB"},
    "fresh30": {"AC"},
    "fresh31": {"AD"},
    "fresh32": {"AE"},
    "fresh33": {"AF"},
    "fresh34": {"AG"},
    "fresh35": {"AH"},
    "fresh36": {"AI"},
    "fresh37": {"AJ"},
    "fresh38": {"AK"},
    "fresh39": {"AL"},
    "fresh40": {"AM"},
    "fresh41": {"AN"},
    "fresh42": {"AO"},
    "fresh43": {"AP"},
    "fresh44": {"AQ"},
    "fresh45": {"AR"},
    "fresh46": {"AS"},
    "fresh47": {"AT"},
    "fresh48": {"AU"},
    "fresh49": {"AV"},
    "fresh50": {"AW"},
    "fresh51": {"AX"},
}


def read_tsv(name: str) -> list[dict[str, str]]:
    with open(HERE / name, encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def scan(corpus: Path, repo_dir: str, command: list[str], extra: list[str]) -> list[dict]:
    root = corpus / repo_dir
    proc = subprocess.run(
        [*command, "scan", ".", "--format", "json", "--exit-zero", "--no-cache", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"scan of {root} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)["findings"]


def f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("tune", "holdout", "all"), default="tune")
    parser.add_argument("--set", choices=(*SETS, "all"), default="all", help="which labellers' files")
    parser.add_argument("--details", action="store_true", help="list misses and false findings (tune only)")
    parser.add_argument(
        "--severity-details",
        action="store_true",
        help="count severity disagreements on matched findings by rule (tune only)",
    )
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON")
    parser.add_argument("--neuronlint", default=f"{sys.executable} -m neuronlint", help="command to run")
    parser.add_argument(
        "--view",
        choices=("detection", "default"),
        default="detection",
        help="detection: everything the scan finds (--show-ok without notes); default: the default output",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="FILE_ID",
        help="leave a file out of the score (a held-out file whose labels or source were seen while fixing)",
    )
    parser.add_argument("scan_args", nargs="*", help="extra arguments for `neuronlint scan` (after --)")
    args = parser.parse_args()
    if (args.details or args.severity_details) and args.part != "tune":
        parser.error("--details is for the tuning part only: the held-out part is never read while fixing")

    manifest = [
        r
        for r in read_tsv("manifest.tsv")
        if (args.part == "all" or r["part"] == args.part)
        and (args.set == "all" or r["labeller"] in SETS[args.set])
        and r["file_id"] not in args.exclude
    ]
    files = {r["file_id"] for r in manifest}
    expected: dict[Key, dict[str, str]] = {}
    for row in read_tsv("labels.tsv"):
        if row["file_id"] in files:
            expected[(row["file_id"], int(row["line"]), row["category"])] = row
    clean = files - {k[0] for k in expected}

    reported: dict[Key, dict] = {}
    for repo_dir in sorted({f.split("/", 1)[0] for f in files}):
        view_args = ["--show-ok"] if args.view == "detection" else []
        for finding in scan(args.corpus, repo_dir, args.neuronlint.split(), [*view_args, *args.scan_args]):
            if finding.get("extra", {}).get("note"):
                continue  # a note about supported code, not a finding
            file_id = f"{repo_dir}/{finding['path']}"
            if file_id in files and finding["category"] in CATEGORIES and "suppressed" not in finding:
                reported.setdefault((file_id, finding["line"], finding["category"]), finding)

    tp = set(expected) & set(reported)
    fp = set(reported) - set(expected)
    fn = set(expected) - set(reported)
    scores: dict[str, dict[str, float]] = {}
    lines = [
        f"part: {args.part}, set: {args.set}, view: {args.view} ({len(files)} files, {len(expected)} labels, {len(clean)} clean files)",
        "",
        "| category | labels | found | TP | FP | FN | precision | recall | F1 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for cat in (*CATEGORIES, "micro"):
        pick = (lambda k: True) if cat == "micro" else (lambda k, c=cat: k[2] == c)
        t, p, n = (sum(1 for k in s if pick(k)) for s in (tp, fp, fn))
        if t + p + n == 0:
            continue
        prec, rec, score = f1(t, p, n)
        scores[cat] = {
            "labels": t + n,
            "tp": t,
            "fp": p,
            "fn": n,
            "precision": prec,
            "recall": rec,
            "f1": score,
        }
        lines.append(
            f"| {cat} | {t + n} | {t + p} | {t} | {p} | {n} | {prec:.2f} | {rec:.2f} | {score:.2f} |"
        )
    on_clean = sorted(k for k in reported if k[0] in clean)
    agree = sum(1 for k in tp if expected[k]["severity"] == reported[k]["severity"])
    lines += [
        "",
        f"findings on clean files: {len(on_clean)}",
        f"severity agreement on matched findings: {agree}/{len(tp)}",
    ]
    print("\n".join(lines))
    if args.details:
        print("\n## missed (label, not reported)")
        for k in sorted(fn):
            print(f"  {k[0]}:{k[1]} {k[2]} [{expected[k]['severity']}] {expected[k]['construct']}")
        print("\n## false (reported, not labelled)")
        for k in sorted(fp):
            r = reported[k]
            print(f"  {k[0]}:{k[1]} {k[2]} {r['rule']} [{r['severity']}] {r['message'][:110]}")
    if args.severity_details:
        print("\n## severity on matched findings, by rule (labelled -> reported: count)")
        pairs = Counter((reported[k]["rule"], expected[k]["severity"], reported[k]["severity"]) for k in tp)
        wrong = Counter()
        for (rule, want, got), count in pairs.items():
            wrong[rule] += count if want != got else 0
        for rule, _ in wrong.most_common():
            cells = sorted((w, g, n) for (r, w, g), n in pairs.items() if r == rule)
            print(f"  {rule}: " + ", ".join(f"{w}->{g} {n}" + ("" if w == g else " *") for w, g, n in cells))
    if args.json:
        payload = {"part": args.part, "set": args.set, "scores": scores, "clean_file_findings": len(on_clean)}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
