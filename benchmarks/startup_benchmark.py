"""Start-up of a one-file scan against `python -c "import libcst"`, as a ratio measured in one run.

Usage:
    .venv/bin/python benchmarks/startup_benchmark.py [--rounds N] [--file F] [--src LABEL=DIR ...]

A one-file scan is what a pre-commit user waits for on every commit, and most of it is start-up:
Python, imports, the rule database, then one parse. The baseline is the cheapest thing a
LibCST-based linter can do, importing LibCST in the same interpreter. Each round runs every
command once, in a fresh process, one after the other (interleaved, so a change in the machine's
load hits all of them alike); the table reports the minimum over the rounds of the child's CPU
time (user + sys, from wait4, not affected by waiting for a core) and of the wall time, and the
ratios of those minimums.

The scan is the pre-commit hook's command line, `neuronlint scan --pre-commit FILE`, run in an
empty temporary directory (no project config) with the analysis cache off (a committed file is a
changed file: its cache entry misses). The compiled rule-database snapshot lives in a temporary
user cache directory that one unmeasured run fills first; the cold row is a run with that
directory empty again (what the first scan after an install or a database change costs).

`--src LABEL=DIR` adds a scan row that imports neuronlint from another checkout (PYTHONPATH=DIR),
e.g. the commit before a change, so before/after ratios come from the same run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_FILE = REPO / "fixtures" / "gpt_trainer" / "train.py"


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU seconds of the child, wall seconds, exit code) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    if child.stderr:
        child.stderr.close()
    if child.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}:\n{stderr}")
    return usage.ru_utime + usage.ru_stime, wall, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds of interleaved runs (default 15)")
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the file to scan")
    parser.add_argument("--python", default=sys.executable, help="interpreter (default: this one)")
    parser.add_argument("--src", action="append", default=[], help="LABEL=DIR: also scan with that checkout")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="neuronlint-startup-"))
    try:
        target = work / "project" / args.file.name
        target.parent.mkdir()
        shutil.copyfile(args.file, target)
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("NEURONLINT_", "PYTHON"))}
        base_env["NEURONLINT_NO_CACHE"] = "1"
        scan = ["-m", "neuronlint", "scan", "--pre-commit", target.name]
        rows: list[tuple[str, list[str], dict[str, str]]] = [
            ("`python -c 'import libcst'` (baseline)", [args.python, "-c", "import libcst"], base_env),
        ]
        candidates = [("this checkout", None)] + [tuple(s.split("=", 1)) for s in args.src]
        for label, src in candidates:
            env = dict(base_env, XDG_CACHE_HOME=str(work / f"cache-{len(rows)}"))
            if src:
                env["PYTHONPATH"] = str(Path(src).resolve())
            rows.append((f"scan, {label}", [args.python, *scan], env))
            _run([args.python, *scan], target.parent, env)  # fills the database snapshot
        cold_env = dict(rows[1][2], XDG_CACHE_HOME=str(work / "cache-cold"))
        rows.append(("scan, this checkout, empty user cache (cold)", [args.python, *scan], cold_env))

        cpu: dict[str, list[float]] = {label: [] for label, _, _ in rows}
        wall: dict[str, list[float]] = {label: [] for label, _, _ in rows}
        load_before = os.getloadavg()[0]
        for _ in range(args.rounds):
            for label, argv, env in rows:
                if label.endswith("(cold)"):
                    shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
                seconds, elapsed, _ = _run(argv, target.parent, env)
                cpu[label].append(seconds)
                wall[label].append(elapsed)
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    base = rows[0][0]
    lines = sum(1 for _ in args.file.open(encoding="utf-8", errors="replace"))
    print(f"One-file scan of {args.file.name} ({lines} lines), {args.rounds} interleaved rounds, ")
    print(
        f"Python {sys.version.split()[0]}, load average {load_before:.1f} before, {load_after:.1f} after.\n"
    )
    print("| command | min CPU s | median CPU s | min wall s | CPU ratio | wall ratio |")
    print("|---|---|---|---|---|---|")
    for label, _, _ in rows:
        c, w = sorted(cpu[label]), sorted(wall[label])
        print(
            f"| {label} | {c[0]:.3f} | {c[len(c) // 2]:.3f} | {w[0]:.3f} | "
            f"{c[0] / min(cpu[base]):.2f}x | {w[0] / min(wall[base]):.2f}x |"
        )


if __name__ == "__main__":
    main()
