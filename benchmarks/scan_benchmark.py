"""Scan speed and memory against LibCST parse-only time, measured in the same run.

Usage:
    .venv/bin/python benchmarks/scan_benchmark.py /path/to/repo [/path/to/other/repo ...]

For each corpus, every measurement runs in a fresh child process (so peak RSS is per mode):
  parse    - libcst.parse_module on every .py file the scan would read (serial): the baseline
  cold     - a full scan, serial (--jobs 1), empty cache
  warm     - the same scan again with the cache filled by `cold`
  cold-jN  - a full scan with N worker processes, empty cache (N = CPU count)
Prints a Markdown table with ratios against the baseline.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _python_files(root: Path) -> list[Path]:
    from neuronlint.discover import discover

    return [p for p in discover([root], [], root) if p.suffix == ".py"]


def _child(mode: str, root: str, cache: str, jobs: int) -> None:
    """Run one measurement and print a JSON line: seconds, files, lines, peak RSS (MiB)."""
    root_path = Path(root)
    start = time.perf_counter()
    files = lines = 0
    if mode == "parse":
        import libcst

        for path in _python_files(root_path):
            data = path.read_bytes()
            files += 1
            lines += data.count(b"\n")
            try:
                libcst.parse_module(data)
            except Exception:  # noqa: BLE001 - unparsable files cost their attempt, as in a scan
                pass
    else:
        from neuronlint.pipeline import ScanOptions, run_scan

        options = ScanOptions(paths=[root_path], jobs=jobs, cache_dir=Path(cache), base=root_path)
        result = run_scan(options)
        files, lines = len(result.files), result.lines
    seconds = time.perf_counter() - start
    rss_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        json.dumps(
            {
                "seconds": seconds,
                "files": files,
                "lines": lines,
                "rss_mib": max(rss_self, rss_children) / 1024,
            }
        )
    )


def _measure(mode: str, root: Path, cache: Path, jobs: int = 1) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(root), str(cache), str(jobs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        _child(argv[1], argv[2], argv[3], int(argv[4]))
        return 0
    if not argv:
        print(__doc__)
        return 2
    cpus = os.cpu_count() or 1
    header = (
        "| corpus | .py files | scanned files | lines | parse-only s | cold s | cold/parse | warm s | warm/cold "
        f"| cold -j{cpus} s | speed-up | peak RSS cold MiB | peak RSS parse MiB |"
    )
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for arg in argv:
        root = Path(arg).resolve()
        with tempfile.TemporaryDirectory() as tmp:
            cache, cache_par = Path(tmp) / "c1", Path(tmp) / "c2"
            parse = _measure("parse", root, cache)
            cold = _measure("cold", root, cache, 1)
            warm = _measure("warm", root, cache, 1)
            par = _measure("cold", root, cache_par, cpus)
        print(
            f"| {root.name} | {parse['files']} | {cold['files']} | {cold['lines']} | {parse['seconds']:.2f} "
            f"| {cold['seconds']:.2f} | {cold['seconds'] / parse['seconds']:.2f}x | {warm['seconds']:.2f} "
            f"| {warm['seconds'] / cold['seconds']:.3f}x | {par['seconds']:.2f} | {cold['seconds'] / par['seconds']:.2f}x "
            f"| {cold['rss_mib']:.0f} | {parse['rss_mib']:.0f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
