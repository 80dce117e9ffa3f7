"""Memory at scale: a cold `scan -j 2` of many files, RSS of every process sampled.

Usage:
    .venv/bin/python benchmarks/scale_benchmark.py [--files 2000,20000] [--jobs 2] [--corpus DIR ...]

With `--corpus` (checkouts or git directories, whose HEAD is read),
the tree is made of real files: every `.py` file of the corpora (in a fixed shuffled order, so a smaller tree is a fair sample of all
of them), copied again and again
(`copy00/<corpus>/<path>`, `copy01/...`, each later copy with one comment line appended so no two
files are equal) until the tree has the number of files asked for, so the findings, imports and
package layout are those of real code. Without it, the tree is generated: 30-line `nn.Module`
files with two findings each, 500 per directory. Either way the tree is outside any git work tree.

For each size it runs `neuronlint scan DIR -j N -f json -o FILE` with an empty cache directory (so
the cache is written, as in a cold CI run) and samples, every `--interval` seconds, the VmRSS of the
parent and of every descendant from /proc (their sum is the tree's RSS at that moment) and each
process's VmHWM (its own peak, which sampling cannot miss while the process lives), and the sum of
their proportional set sizes (PSS, /proc/PID/smaps_rollup: a forked child's RSS counts again the
pages it shares with its worker, its PSS does not; the target is on the RSS sum); CPU time is the
user + system time of the scan and its workers from `wait4`. Prints a Markdown table, the parent's growth per file and per finding between
the smallest and the largest size, and for the largest the parent's RSS over the run. Linux only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
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


def _git_python_files(git_dir: Path) -> list[tuple[str, bytes]]:
    """(path, bytes) of the .py blobs of HEAD in a git directory (blobs absent from it are skipped)."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True
    ).stdout
    wanted = []
    for entry in listing.split(b"\0"):
        if b"\t" in entry:
            meta, path = entry.split(b"\t", 1)
            mode, kind, oid = meta.split()
            if kind == b"blob" and mode in (b"100644", b"100755") and path.endswith(b".py"):
                wanted.append((os.fsdecode(path), oid))
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input=b"".join(oid + b"\n" for _, oid in wanted),
        capture_output=True,
        check=True,
    ).stdout
    files, at = [], 0
    for path, _ in wanted:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        at = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        files.append((path, batch[at : at + size]))
        at += size + 1
    return files


def real_sources(corpora: list[Path]) -> list[tuple[str, bytes]]:
    """(relative path, bytes) of every .py file of the corpora (a checkout, or HEAD of a git
    directory), in a fixed shuffled order."""
    sources: list[tuple[str, bytes]] = []
    for corpus in corpora:
        name = corpus.name if corpus.name != "repo" else corpus.parent.name
        if (corpus / "HEAD").is_file() and (corpus / "objects").is_dir():
            found = _git_python_files(corpus)
        else:
            found = [
                (p.relative_to(corpus).as_posix(), p.read_bytes())
                for p in sorted(corpus.rglob("*.py"))
                if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(corpus).parts
            ]
        sources.extend((f"{name}/{path}", data) for path, data in found)
    if not sources:
        raise SystemExit("the corpora have no .py files")
    random.Random(0).shuffle(sources)  # any prefix of the list (a smaller tree) is a fair sample of all
    return sources


def copy_real(root: Path, files: int, sources: list[tuple[str, bytes]]) -> None:
    for index in range(files):
        copy, (relative, data) = index // len(sources), sources[index % len(sources)]
        path = root / f"copy{copy:02d}" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if copy == 0 else data + f"\n# scale copy {copy}\n".encode())


def _status(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB; zeros once the process is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return rss, hwm


def _pss(pid: int) -> int:
    """Proportional set size in KiB (/proc/PID/smaps_rollup): a page shared by n processes counts
    1/n in each, so the sum over processes does not count a forked child's inherited pages twice,
    as the RSS sum does; 0 once the process is gone or where the kernel lacks smaps_rollup."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
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


def measure(root: Path, jobs: int, work: Path, interval: float) -> dict:
    cache = work / f"cache-{time.time_ns()}"
    report = work / "report.json"
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
    command += ["-f", "json", "-o", str(report), "--quiet", "--exit-zero"]
    peaks = {"tree": 0, "pss": 0, "parent_hwm": 0, "worker_hwm": 0, "processes": 0}
    timeline: list[tuple[float, int, int]] = []
    started = time.perf_counter()
    with open(work / "stderr.txt", "wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            table = _children()
            descendants, stack = [], [process.pid]
            while stack:
                for child in table.get(stack.pop(), ()):
                    descendants.append(child)
                    stack.append(child)
            parent, parent_hwm = _status(process.pid)
            workers = [_status(pid) for pid in descendants]
            tree = parent + sum(rss for rss, _ in workers)
            pss = sum(_pss(pid) for pid in (process.pid, *descendants))
            peaks["pss"] = max(peaks["pss"], pss)
            peaks["parent_hwm"] = max(peaks["parent_hwm"], parent_hwm)
            peaks["worker_hwm"] = max([peaks["worker_hwm"], *(hwm for _, hwm in workers)])
            if tree > peaks["tree"]:  # the moment of the peak: which processes make it
                peaks["at"] = (
                    time.perf_counter() - started,
                    parent,
                    sorted((r for r, _ in workers), reverse=True),
                    pss,
                )
            peaks["tree"] = max(peaks["tree"], tree)
            peaks["processes"] = max(peaks["processes"], 1 + len(workers))
            timeline.append((time.perf_counter() - started, parent, tree))
            time.sleep(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    if process.returncode != 0:
        tail = (work / "stderr.txt").read_text(errors="replace")[-500:]
        raise SystemExit(f"scan failed ({process.returncode}): {tail}")
    data = json.loads(report.read_bytes())
    result = {
        "files": data["files_scanned"],
        "findings": len(data["findings"]),
        "json_mib": report.stat().st_size / 2**20,
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "tree": peaks["tree"] / 1024,
        "pss": peaks["pss"] / 1024,
        # The parent's own VmHWM (wait4's ru_maxrss would be the largest of it and its workers).
        "parent": peaks["parent_hwm"] / 1024,
        "worker": peaks["worker_hwm"] / 1024,
        "processes": peaks["processes"],
        "timeline": timeline,
        "peak_at": peaks.get("at"),
    }
    shutil.rmtree(cache, ignore_errors=True)
    report.unlink()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="2000,20000")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between RSS samples")
    parser.add_argument(
        "--corpus", nargs="*", type=Path, default=[], help="copy these checkouts' or git dirs' .py files"
    )
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.files.split(","))
    rows = []
    with tempfile.TemporaryDirectory(prefix="neuronlint-scale-") as temp:
        work = Path(temp)
        sources = real_sources(args.corpus) if args.corpus else None
        if sources:
            print(f"{len(sources):,} distinct .py files from {len(args.corpus)} corpora", file=sys.stderr)
        for size in sizes:
            root = work / f"tree{size}"
            if sources:
                copy_real(root, size, sources)
            else:
                generate(root, size)
            result = measure(root, args.jobs, work, args.interval)
            shutil.rmtree(root)
            rows.append((size, result))
            brief = {
                k: round(v, 1) if isinstance(v, float) else v
                for k, v in result.items()
                if k not in ("timeline", "peak_at")
            }
            print(f"{size} files: {brief}", file=sys.stderr)
    print(
        "| files | findings | JSON MiB | wall s | CPU s | peak RSS, all processes MiB "
        "| peak PSS, all processes MiB | parent MiB | largest worker MiB | processes |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size, r in rows:
        print(
            f"| {size:,} | {r['findings']:,} | {r['json_mib']:.1f} | {r['seconds']:.1f} | {r['cpu']:.1f} "
            f"| {r['tree']:.0f} | {r['pss']:.0f} | {r['parent']:.0f} | {r['worker']:.0f} | {r['processes']} |"
        )
    if len(rows) > 1:
        (small, first), (large, last) = rows[0], rows[-1]
        growth = (last["parent"] - first["parent"]) * 1024  # KiB
        per_finding = growth / max(1, last["findings"] - first["findings"])
        print(
            f"\nParent growth between {small:,} and {large:,} files: {growth / (large - small):.2f} KiB per file, "
            f"{per_finding:.2f} KiB per finding "
            f"(the JSON report holds {last['json_mib'] * 1024 / max(1, last['findings']):.2f} KiB per finding)."
        )
    size, last = rows[-1]
    timeline = last["timeline"]
    if timeline:
        marks = [timeline[min(len(timeline) - 1, int(len(timeline) * k / 10))] for k in range(11)]
        print(f"\nParent / tree RSS over the {size:,}-file run (MiB, at each tenth of its wall time):")
        print(" ".join(f"{t:.0f}s:{p / 1024:.0f}/{tr / 1024:.0f}" for t, p, tr in marks))
    for size, r in rows:
        if r["peak_at"]:
            t, parent, others, pss = r["peak_at"]
            print(
                f"\n{size:,} files: the tree's peak at {t:.0f}s of {r['seconds']:.0f}s: parent {parent / 1024:.0f} MiB, "
                f"its descendants {', '.join(f'{o / 1024:.0f}' for o in others) or 'none'} MiB "
                f"(RSS; the PSS sum at that moment {pss / 1024:.0f} MiB)"
            )


if __name__ == "__main__":
    main()
