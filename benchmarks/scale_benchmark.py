"""Memory at scale: a cold `scan -j 2` of many generated files, RSS of every process sampled.

Usage:
    .venv/bin/python benchmarks/scale_benchmark.py [--files 2000,10000,20000] [--jobs 2] [--corpus DIR ...]

Generates packages of 30-line `nn.Module` files with two findings each (500 files per directory,
outside any git work tree), or, with --corpus, copies of the `.py` files of real checkouts taken in
turn and laid out under distinct package paths (copy 0 of every file, then copy 1, ...), then for each size runs `neuronlint scan DIR -j N -f json -o FILE`
with an empty cache directory (so the cache is written, as in a cold CI run) and samples the RSS
of the parent and of every descendant every 0.1 s from /proc. Prints a Markdown table: peak RSS of
the whole process tree, of the parent and of the largest worker, and the parent's growth per file
between the smallest and the largest size. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MODULE = '''import torch
import torch.nn as nn


class Block{index}(nn.Module):
    """A small block: two findings (a .cuda() call and a CUDA device string)."""

    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        y = self.proj(x)
        y = self.norm(y)
        y = self.drop(y)
        return x + y


def build(width: int = 64):
    model = Block{index}(width).cuda()
    x = torch.randn(2, width, device="cuda")
    return model, x


def count(model) -> int:
    total = 0
    for parameter in model.parameters():
        total += parameter.numel()
    return total
'''


def generate(root: Path, files: int) -> None:
    for index in range(files):
        directory = root / f"pkg{index // 500:03d}"
        if index % 500 == 0:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "__init__.py").write_text("")
        (directory / f"m{index:05d}.py").write_text(MODULE.format(index=index))


def copy_corpus(root: Path, files: int, sources: list[Path]) -> None:
    """`files` real Python files: the corpora's `.py` files in turn, each copy under its own path."""
    originals = sorted(p for source in sources for p in source.rglob("*.py") if p.is_file())
    if not originals:
        raise SystemExit("no .py files in the corpus directories")
    for index in range(files):
        original = originals[index % len(originals)]
        source = next(s for s in sources if original.is_relative_to(s))
        target = root / f"copy{index // len(originals):02d}" / source.name / original.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(original.read_bytes())


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children() -> dict[int, list[int]]:
    table: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            parent = int(stat[stat.rindex(b")") + 2 :].split()[1])
            table.setdefault(parent, []).append(int(entry))
    return table


def measure(root: Path, jobs: int, work: Path) -> dict[str, float]:
    cache = work / f"cache-{time.time_ns()}"
    command = [
        sys.executable,
        "-m",
        "neuronlint",
        "scan",
        str(root),
        "-j",
        str(jobs),
        "--cache-dir",
        str(cache),
    ]
    command += ["-f", "json", "-o", str(work / "report.json"), "--quiet", "--exit-zero"]
    peaks = {"tree": 0, "parent": 0, "worker": 0}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            table = _children()
            descendants, stack = [], [process.pid]
            while stack:
                for child in table.get(stack.pop(), ()):
                    descendants.append(child)
                    stack.append(child)
            parent = _rss_kib(process.pid)
            workers = [_rss_kib(pid) for pid in descendants]
            peaks["parent"] = max(peaks["parent"], parent)
            peaks["worker"] = max([peaks["worker"], *workers])
            peaks["tree"] = max(peaks["tree"], parent + sum(workers))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"scan failed ({process.returncode}): {stderr.decode(errors='replace')[-500:]}")
    report = json.loads((work / "report.json").read_text())
    return {key: value / 1024 for key, value in peaks.items()} | {
        "seconds": time.perf_counter() - started,
        "findings": report["summary"]["total"],
        "files": report["files_scanned"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="2000,10000,20000")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--corpus", nargs="*", type=Path, default=[], help="copy these checkouts' .py files")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.files.split(","))
    rows = []
    with tempfile.TemporaryDirectory(prefix="neuronlint-scale-") as temp:
        work = Path(temp)
        for size in sizes:
            root = work / f"tree{size}"
            if args.corpus:
                copy_corpus(root, size, [c.resolve() for c in args.corpus])
            else:
                generate(root, size)
            result = measure(root, args.jobs, work)
            rows.append((size, result))
            print(f"{size} files: {result}", file=sys.stderr)
    print("| files | findings | wall s | peak RSS, all processes MiB | parent MiB | largest worker MiB |")
    print("|---|---|---|---|---|---|")
    for _, r in rows:
        print(
            f"| {r['files']:,} | {r['findings']:,} | {r['seconds']:.1f} | {r['tree']:.0f} | {r['parent']:.0f} "
            f"| {r['worker']:.0f} |"
        )
    if len(rows) > 1:
        (small, first), (large, last) = rows[0], rows[-1]
        per_file = (last["parent"] - first["parent"]) * 1024 / (large - small)
        per_finding = (last["parent"] - first["parent"]) * 1024 / max(1, last["findings"] - first["findings"])
        print(
            f"\nParent growth between {small:,} and {large:,} files: {per_file:.1f} KiB per file, "
            f"{per_finding:.1f} KiB per finding."
        )


if __name__ == "__main__":
    main()
