"""Fix throughput against scan throughput, and how much of each repository the fixes remove.

    .venv/bin/python benchmarks/fix_benchmark.py CORPUS [...]

A CORPUS is a directory (a checkout) or a git directory, whose HEAD is exported first. Each corpus
is copied to a temporary directory (the original is never written), then, serially (one process,
no cache), timed: a cold scan; attaching fixes to the scan's findings (what `scan` does to show
them); and `fix` (apply the safe fixes, rescan every changed file, repeat while conflicts held fixes
back), and with `--unsafe` also `--unsafe-fixes` on a fresh copy. Prints one Markdown table.

Times are CPU seconds (user + system of this process and of any child it waited for), which a
loaded machine disturbs far less than wall time; the throughputs are files per CPU second. "safe
fixes remove" is counted by the fix's own rescans (findings no longer shown, by line and
category) and checked against a full rescan of the fixed copy.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neuronlint.fix import flavour_for  # noqa: E402
from neuronlint.fix.run import attach, fix_files, safe_share  # noqa: E402
from neuronlint.pipeline import ScanOptions, run_scan  # noqa: E402


def export(corpus: Path, into: Path) -> None:
    """Copy a checkout, or the HEAD tree of a git directory, to `into`."""
    if (corpus / "HEAD").is_file() and (corpus / "objects").is_dir():  # a git directory, no work tree
        into.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "--git-dir", str(corpus), "archive", "HEAD"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    else:
        shutil.copytree(corpus, into, ignore=shutil.ignore_patterns(".git"))


def cpu() -> float:
    """CPU seconds used so far by this process and its waited-for children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _key(finding) -> tuple[str, int, str]:
    return (finding.path, finding.line, finding.rule)


def check(name: str, label: str, report, rescanned, counts_agree: bool, show: int = 20) -> None:
    """The fix's own accounting (its per-file rescans) against a full rescan of the fixed copy:
    the findings it says are left must be the rescan's, one for one by (path, line, rule), and
    fixed + gone with them - new must be the drop in findings (folded guards counted once each).
    On a difference, print the first `show` findings of each side, then fail."""
    said = Counter(map(_key, report.remaining))
    seen = Counter(map(_key, rescanned.active))
    if counts_agree and said == seen:
        return
    print(f"{name} ({label}): the fix's accounting does not match a full rescan", file=sys.stderr)
    for title, extra in (
        ("left by the fix's rescans, not in the full rescan", said - seen),
        ("in the full rescan, not left by the fix's rescans", seen - said),
    ):
        rows = sorted(extra.elements())
        print(f"  {title}: {len(rows)}", file=sys.stderr)
        for path, line, rule in rows[:show]:
            print(f"    {path}:{line} {rule}", file=sys.stderr)
    raise SystemExit(f"{name} ({label}): fix counts differ from a full rescan (above)")


def measure(corpus: Path, name: str, with_unsafe: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        safe_dir, unsafe_dir = Path(tmp) / "safe", Path(tmp) / "unsafe"
        export(corpus, safe_dir)
        if with_unsafe:
            shutil.copytree(safe_dir, unsafe_dir)
        row: dict = {"corpus": name}
        runs = [("safe", safe_dir, False)] + ([("unsafe", unsafe_dir, True)] if with_unsafe else [])
        for label, base, unsafe in runs:
            options = ScanOptions(paths=[base], base=base, jobs=1)
            start, wall = cpu(), time.perf_counter()
            result = run_scan(options)
            scan_s, scan_wall = cpu() - start, time.perf_counter() - wall
            flavour = flavour_for("portable", result.context, result.db)
            start = cpu()
            fixable = attach(result, flavour, base)
            attach_s = cpu() - start
            active = len(result.active)
            guards = len(result.folded_guards)  # counted once each by the fix (docs/fix.md)
            start, wall = cpu(), time.perf_counter()
            report = fix_files(result, options, flavour, unsafe, True, base)
            fix_s, fix_wall = cpu() - start, time.perf_counter() - wall
            rescanned = run_scan(options)
            left = len(rescanned.active)
            fixed = sum(report.fixed.values())
            gone = active + guards - left - len(rescanned.folded_guards)
            check(name, label, report, rescanned, gone == fixed + report.also_gone - report.appeared)
            if label == "safe":
                safe, _ = safe_share(result)
                row.update(
                    files=len(result.files),
                    findings=active,
                    fixable=fixable,
                    safe_fixable=safe,
                    scan_s=scan_s,
                    scan_wall=scan_wall,
                    attach_s=attach_s,
                    notebooks=sum(1 for f in result.files if f.endswith(".ipynb")),
                    python=sum(1 for f in result.files if f.endswith(".py")),
                )
            row[f"{label}_wall"] = fix_wall
            row[f"{label}_fix_s"] = fix_s
            row[f"{label}_fixed"] = sum(report.fixed.values())
            row[f"{label}_files_changed"] = len(report.changed())
            row[f"{label}_errors"] = sum(1 for f in report.files if f.error)
            row[f"{label}_after"] = len(report.remaining)
            row[f"{label}_also_gone"] = report.also_gone
            row[f"{label}_appeared"] = report.appeared
        return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--unsafe", action="store_true", help="also measure --unsafe-fixes on a fresh copy")
    args = parser.parse_args()
    rows = []
    for corpus in args.corpora:
        name = corpus.resolve().parent.name if corpus.name == "repo" else corpus.name
        rows.append(measure(corpus.resolve(), name, args.unsafe))
        print(f"measured {name}", file=sys.stderr, flush=True)
    print(
        "| corpus | files (.py, .ipynb) | findings | scan CPU s | scan files/s | attach CPU s | "
        "fixable (safe) | safe fix CPU s | fix files/s | fix/scan | files changed | safe fixes remove | "
        "with unsafe | unsafe fix CPU s | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        share = 100 * r["safe_fixed"] / r["findings"] if r["findings"] else 0.0
        unsafe_fixed = r.get("unsafe_fixed")
        unsafe_share = (
            100 * unsafe_fixed / r["findings"] if unsafe_fixed is not None and r["findings"] else 0.0
        )
        with_unsafe = f"{unsafe_fixed} ({unsafe_share:.1f}%)" if unsafe_fixed is not None else "-"
        unsafe_s = f"{r['unsafe_fix_s']:.1f}" if unsafe_fixed is not None else "-"
        print(
            f"| {r['corpus']} | {r['files']} ({r['python']}, {r['notebooks']}) | {r['findings']} | "
            f"{r['scan_s']:.1f} | {r['files'] / r['scan_s']:.1f} | {r['attach_s']:.1f} | "
            f"{r['fixable']} ({r['safe_fixable']}) | {r['safe_fix_s']:.1f} | {r['files'] / r['safe_fix_s']:.1f} | "
            f"{r['safe_fix_s'] / r['scan_s']:.2f}x | {r['safe_files_changed']} | {r['safe_fixed']} ({share:.1f}%) | "
            f"{with_unsafe} | {unsafe_s} | {r['safe_errors'] + r.get('unsafe_errors', 0)} |"
        )
    for r in rows:
        print(
            f"{r['corpus']}: wall s scan {r['scan_wall']:.1f}, safe fix {r['safe_wall']:.1f}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
