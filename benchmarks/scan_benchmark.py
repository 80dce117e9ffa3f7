"""Scan cost against LibCST parse-only cost on the same files, in CPU time, interleaved and repeated.

Usage:
    .venv/bin/python benchmarks/scan_benchmark.py CORPUS [CORPUS ...] [--rounds 3] [--extra]
    .venv/bin/python benchmarks/scan_benchmark.py --python-only REPO_OR_GIT_DIR DEST  # make a corpus

Wall time means nothing on a shared machine, so every figure is CPU time: user + sys of one child
process (and of the processes it started and reaped: workers, the parse guard's disposable
parsers), read with os.wait4 when it exits. Python start-up and imports are in both modes.

Each round runs, in a fresh child process each, in alternating order (parse, cold, cold, parse, ...):
  parse  - libcst.parse_module on every file the scan reads (serial): the baseline
  cold   - `run_scan` serially (jobs 1), no cache: discovery, rule database, analysis, judging, triage
and with --extra also
  warm   - the same scan with the cache that a cold scan just filled
  cold-jN - a cold scan with N = CPU count worker processes (CPU time of all of them)
The table gives the minimum CPU seconds of each mode over the rounds, their ratio, and the
ratio of every round (so its spread is visible).

Both modes read exactly the same files: the baseline parses the files the scan discovers, and
the benchmark stops if any of them is not a `.py` file (the parse baseline cannot read other
kinds). For a repository with notebooks, configs and the like, make a Python-only copy first
(`--python-only`). The scan does not parse files that contain none of its checkers' trigger words
(the prefilter); the table says how many files the scan parsed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _scan_files(root: Path) -> list[Path]:
    from neuronlint.discover import discover

    return list(discover([root], [], root))


def _child(mode: str, root: str, cache: str, jobs: int) -> None:
    """Run one measurement; print a JSON line: files, lines, parsed files, in-process seconds."""
    root_path = Path(root)
    start = time.process_time()
    files = lines = parsed = 0
    if mode == "parse":
        import libcst

        for path in _scan_files(root_path):
            data = path.read_bytes()
            files += 1
            lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            try:
                libcst.parse_module(data)
                parsed += 1
            except Exception:  # noqa: BLE001 - unparsable files cost their attempt, as in a scan
                pass
    else:
        from neuronlint.pipeline import ScanOptions, run_scan

        options = ScanOptions(
            paths=[root_path], jobs=jobs, cache_dir=Path(cache) if cache else None, base=root_path
        )
        result = run_scan(options)
        files, lines = len(result.files), result.lines
        parsed = sum(1 for r in result.results if r.get("parsed"))
    print(
        json.dumps(
            {"files": files, "lines": lines, "parsed": parsed, "process_s": time.process_time() - start}
        )
    )


def _measure(mode: str, root: Path, cache: Path | None, jobs: int = 1) -> dict:
    """Run a child; its CPU time (user+sys, itself and its reaped descendants) from os.wait4."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            [sys.executable, __file__, "--child", mode, str(root), str(cache or ""), str(jobs)],
            stdout=out,
            stderr=subprocess.PIPE,
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
        if process.stderr:
            process.stderr.close()
        if process.returncode != 0:
            raise SystemExit(f"{mode} on {root} failed ({process.returncode}): {stderr[-2000:]}")
        out.seek(0)
        value = json.loads(out.read().decode().strip().splitlines()[-1])
    value["cpu_s"] = usage.ru_utime + usage.ru_stime
    value["rss_mib"] = usage.ru_maxrss / 1024
    return value


def python_only(source: Path, dest: Path) -> None:
    """Copy the `.py` files of a checkout (or of a git directory's HEAD) to `dest`, nothing else."""
    dest.mkdir(parents=True, exist_ok=True)
    if (source / "HEAD").is_file() and (source / "objects").is_dir():  # a bare git directory
        names = subprocess.run(
            ["git", "--git-dir", str(source), "ls-tree", "-r", "-z", "--name-only", "HEAD"],
            capture_output=True,
            check=True,
        ).stdout.split(b"\0")
        wanted = [n.decode() for n in names if n.endswith(b".py")]
        archive = subprocess.run(
            ["git", "--git-dir", str(source), "archive", "HEAD", "--", *wanted],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return
    for path in source.rglob("*.py"):
        if path.is_file() and ".git" not in path.parts:
            target = dest / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def _check_same_files(root: Path) -> list[Path]:
    files = _scan_files(root)
    other = [f for f in files if f.suffix != ".py"]
    if other:
        raise SystemExit(
            f"{root}: the scan would read {len(other)} files that are not Python (e.g. {other[0]}); "
            "the parse baseline cannot read them. Make a Python-only copy with --python-only."
        )
    return files


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        _child(argv[1], argv[2], argv[3], int(argv[4]))
        return 0
    if argv and argv[0] == "--python-only":
        python_only(Path(argv[1]), Path(argv[2]))
        return 0
    rounds, extra, corpora = 3, False, []
    args = iter(argv)
    for arg in args:
        if arg == "--rounds":
            rounds = int(next(args))
        elif arg == "--extra":
            extra = True
        else:
            corpora.append(arg)
    if not corpora:
        print(__doc__)
        return 2
    cpus = os.cpu_count() or 1
    header = (
        "| corpus | files | lines | parsed by scan | parse-only CPU s | cold CPU s | cold/parse "
        "| per round | peak RSS parse / cold MiB |"
    )
    if extra:
        header += f" warm CPU s | cold -j{cpus} CPU s |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for arg in corpora:
        root = Path(arg).resolve()
        files = _check_same_files(root)
        runs: dict[str, list[dict]] = {"parse": [], "cold": [], "warm": [], "par": []}
        with tempfile.TemporaryDirectory() as tmp:
            for index in range(rounds):
                order = ("parse", "cold") if index % 2 == 0 else ("cold", "parse")
                for mode in order:
                    runs[mode].append(_measure(mode, root, None))
                if extra:
                    cache = Path(tmp) / f"c{index}"
                    _measure("cold", root, cache)
                    runs["warm"].append(_measure("cold", root, cache))
                    runs["par"].append(_measure("cold", root, Path(tmp) / f"p{index}", cpus))
                print(
                    f"{root.name} round {index + 1}: parse {runs['parse'][-1]['cpu_s']:.2f} s, "
                    f"cold {runs['cold'][-1]['cpu_s']:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
        parse, cold = runs["parse"], runs["cold"]
        for run in parse + cold:
            if run["files"] != len(files):
                raise SystemExit(f"{root}: a mode read {run['files']} files, discovery found {len(files)}")
        best_parse = min(r["cpu_s"] for r in parse)
        best_cold = min(r["cpu_s"] for r in cold)
        per_round = [c["cpu_s"] / p["cpu_s"] for p, c in zip(parse, cold, strict=True)]
        row = (
            f"| {root.name} | {len(files)} | {cold[0]['lines']:,} | {cold[0]['parsed']} | {best_parse:.2f} "
            f"| {best_cold:.2f} | {best_cold / best_parse:.2f}x | "
            + ", ".join(f"{r:.2f}" for r in per_round)
            + f" | {max(r['rss_mib'] for r in parse):.0f} / {max(r['rss_mib'] for r in cold):.0f} |"
        )
        if extra:
            row += (
                f" {min(r['cpu_s'] for r in runs['warm']):.2f} | {min(r['cpu_s'] for r in runs['par']):.2f} |"
            )
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
