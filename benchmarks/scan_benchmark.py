"""Scan cost against LibCST parse-only cost on the same files, in CPU time, interleaved and repeated.

Usage:
    .venv/bin/python benchmarks/scan_benchmark.py CORPUS [CORPUS ...] [--rounds 3] [--extra]
        [--chunks K] [--src LABEL=DIR ...]
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

--src LABEL=DIR adds a cold scan with the neuronlint of another checkout (PYTHONPATH=DIR), run in
the same rounds, so that two versions of the code are compared under the same drift.

--chunks K (interleaved chunks): the files are split into K contiguous runs of about equal size in
bytes, and each round measures, chunk after chunk, one child of every mode on that chunk (the order
of the modes rotating from chunk to chunk and round to round). A chunk's children run seconds apart,
so a change of the machine's speed (other processes' load, frequency, cache pressure) hits the parse
baseline and the scan alike, where a whole-corpus child of one mode and the next can be a minute
apart. Per chunk and mode the minimum over the rounds is taken; the table sums those minima. Every
child does all its mode's work on its chunk (the scan: discovery, rule database, parse guard,
analysis, positions, judging, triage), so the summed scan pays its start-up K times and so does the
parse baseline. Each round also runs every mode on a corpus of one empty `.py` file (the start-up:
interpreter, imports, rule database; a scan of it parses nothing), and the table gives the ratio
with each mode's start-up counted once, as in one whole-corpus child: (sum - (K - 1) * start-up) of
the scan over the same of the parse. Both ratios are printed; the per-round column is the ratio of
the sums of one round.

Before the rounds, every measured checkout's `neuronlint` package is byte-compiled (`compileall`), so
that no child pays for compiling it from source (a fresh checkout, or PYTHONDONTWRITEBYTECODE).

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


def _child(mode: str, root: str, cache: str, jobs: int, listing: str = "") -> None:
    """Run one measurement; print a JSON line: files, lines, parsed files, in-process seconds.

    `listing`: a file naming the files to read, one a line (a chunk); else the whole of `root`."""
    root_path = Path(root)
    start = time.process_time()
    files = lines = parsed = 0
    paths = [Path(line) for line in Path(listing).read_text().splitlines()] if listing else [root_path]
    if mode == "parse":
        import libcst

        from neuronlint.discover import discover

        for path in discover(paths, [], root_path):
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
            paths=paths, jobs=jobs, cache_dir=Path(cache) if cache else None, base=root_path
        )
        result = run_scan(options)
        files, lines = len(result.files), result.lines
        parsed = sum(1 for r in result.results if r.get("parsed"))
    print(
        json.dumps(
            {"files": files, "lines": lines, "parsed": parsed, "process_s": time.process_time() - start}
        )
    )


def _measure(
    mode: str,
    root: Path,
    cache: Path | None,
    jobs: int = 1,
    listing: Path | None = None,
    src: str | None = None,
) -> dict:
    """Run a child; its CPU time (user+sys, itself and its reaped descendants) from os.wait4.

    `src`: a checkout whose neuronlint the child imports (PYTHONPATH), for a scan of another version."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--child",
                mode,
                str(root),
                str(cache or ""),
                str(jobs),
                str(listing or ""),
            ],
            stdout=out,
            stderr=subprocess.PIPE,
            env=env,
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


def _chunks(files: list[Path], count: int) -> list[list[Path]]:
    """`files` (in discovery order) cut into `count` contiguous runs of about equal size in bytes."""
    sizes = [f.stat().st_size for f in files]
    total, chunks, current, done = sum(sizes) or 1, [], [], 0
    for file, size in zip(files, sizes, strict=True):
        current.append(file)
        done += size
        if done * count >= total * (len(chunks) + 1) and len(chunks) < count - 1:
            chunks.append(current)
            current = []
    if current:
        chunks.append(current)
    return chunks


def _whole(root: Path, files: list[Path], modes: list[tuple[str, str | None]], rounds: int) -> dict:
    """Each round: one whole-corpus child of every mode, the order rotating from round to round."""
    runs: dict[str, list[dict]] = {label: [] for label, _ in modes}
    for index in range(rounds):
        for label, src in modes[index % len(modes) :] + modes[: index % len(modes)]:
            runs[label].append(_measure("parse" if label == "parse" else "cold", root, None, src=src))
        print(
            f"{root.name} round {index + 1}: "
            + ", ".join(f"{label} {runs[label][-1]['cpu_s']:.2f} s" for label, _ in modes),
            file=sys.stderr,
            flush=True,
        )
    for label, values in runs.items():
        for run in values:
            if run["files"] != len(files):
                raise SystemExit(f"{root}: {label} read {run['files']} files, discovery found {len(files)}")
    return {
        label: {"best": min(r["cpu_s"] for r in v), "rounds": [r["cpu_s"] for r in v], "runs": v}
        for label, v in runs.items()
    }


def _chunked(
    root: Path, files: list[Path], modes: list[tuple[str, str | None]], rounds: int, count: int
) -> dict:
    """Interleaved chunks (see the module's docstring): per mode, the sum over chunks of the minimum
    over rounds, the same with the start-up counted once, and the sum of every round."""
    chunks = _chunks(files, count)
    cpu: dict[str, list[list[float]]] = {label: [[] for _ in chunks] for label, _ in modes}
    startup: dict[str, list[float]] = {label: [] for label, _ in modes}
    runs: dict[str, list[dict]] = {label: [] for label, _ in modes}
    with tempfile.TemporaryDirectory() as tmp:
        listings = []
        for number, chunk in enumerate(chunks):
            listing = Path(tmp) / f"chunk{number}.txt"
            listing.write_text("".join(f"{f}\n" for f in chunk))
            listings.append(listing)
        empty = Path(tmp) / "empty"
        empty.mkdir()
        (empty / "empty.py").write_bytes(b"")
        step = 0
        for index in range(rounds):
            for number, (chunk, listing) in enumerate(zip(chunks, listings, strict=True)):
                turn = (index + number) % len(modes)
                for label, src in modes[turn:] + modes[:turn]:
                    run = _measure(
                        "parse" if label == "parse" else "cold", root, None, listing=listing, src=src
                    )
                    if run["files"] != len(chunk):
                        raise SystemExit(
                            f"{root}: {label} read {run['files']} of chunk {number}'s {len(chunk)}"
                        )
                    cpu[label][number].append(run["cpu_s"])
                    runs[label].append(run)
            turn = step % len(modes)
            step += 1
            for label, src in modes[turn:] + modes[:turn]:
                startup[label].append(
                    _measure("parse" if label == "parse" else "cold", empty, None, src=src)["cpu_s"]
                )
            print(
                f"{root.name} round {index + 1}: "
                + ", ".join(f"{label} {sum(c[-1] for c in cpu[label]):.2f} s" for label, _ in modes)
                + " (start-up "
                + ", ".join(f"{label} {startup[label][-1]:.2f} s" for label, _ in modes)
                + ")",
                file=sys.stderr,
                flush=True,
            )
    result = {}
    for label, _ in modes:
        best = sum(min(c) for c in cpu[label])
        once = best - (len(chunks) - 1) * min(startup[label])
        result[label] = {
            "best": best,
            "once": once,
            "startup": min(startup[label]),
            "rounds": [sum(c[r] for c in cpu[label]) for r in range(rounds)],
            "runs": runs[label],
            "chunks": len(chunks),
        }
    return result


def _compile_sources(checkouts: list[Path]) -> None:
    """Byte-compile each checkout's neuronlint (and libcst's own modules are compiled at install):
    with PYTHONDONTWRITEBYTECODE set, or in a fresh checkout, every child would otherwise compile
    neuronlint's modules from source, about 0.1-0.2 s of each child's start-up (0.08x of the ratio
    with 8 chunks, measured 2026-12-02), which makes one checkout look slower than another."""
    for checkout in checkouts:
        package = checkout / "neuronlint"
        if package.is_dir():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=False)


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        _child(argv[1], argv[2], argv[3], int(argv[4]), argv[5] if len(argv) > 5 else "")
        return 0
    if argv and argv[0] == "--python-only":
        python_only(Path(argv[1]), Path(argv[2]))
        return 0
    rounds, extra, chunks, corpora = 3, False, 0, []
    sources: list[tuple[str, str]] = []
    args = iter(argv)
    for arg in args:
        if arg == "--rounds":
            rounds = int(next(args))
        elif arg == "--extra":
            extra = True
        elif arg == "--chunks":
            chunks = int(next(args))
        elif arg == "--src":
            label, _, where = next(args).partition("=")
            sources.append((label, str(Path(where).resolve())))
        else:
            corpora.append(arg)
    if not corpora:
        print(__doc__)
        return 2
    _compile_sources([Path(__file__).resolve().parent.parent] + [Path(where) for _, where in sources])
    modes: list[tuple[str, str | None]] = [("parse", None), ("cold", None)] + [
        (f"cold {label}", where) for label, where in sources
    ]
    cpus = os.cpu_count() or 1
    if chunks:
        header = (
            "| corpus | code | files | chunks | parsed by scan | parse-only CPU s | cold CPU s | cold/parse "
            "| start-up once: parse / cold CPU s | cold/parse, start-up once | per round |"
        )
    else:
        header = (
            "| corpus | code | files | lines | parsed by scan | parse-only CPU s | cold CPU s | cold/parse "
            "| per round | peak RSS parse / cold MiB |"
        )
        if extra:
            header += f" warm CPU s | cold -j{cpus} CPU s |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for arg in corpora:
        root = Path(arg).resolve()
        files = _check_same_files(root)
        if chunks:
            result = _chunked(root, files, modes, rounds, chunks)
        else:
            result = _whole(root, files, modes, rounds)
        parse = result["parse"]
        for label, _ in modes[1:]:
            cold = result[label]
            code = "this checkout" if label == "cold" else label[len("cold ") :]
            per_round = ", ".join(
                f"{c / p:.2f}" for p, c in zip(parse["rounds"], cold["rounds"], strict=True)
            )
            parsed = sum(r["parsed"] for r in cold["runs"][: cold.get("chunks", 1)])
            if chunks:
                row = (
                    f"| {root.name} | {code} | {len(files)} | {cold['chunks']} | {parsed} | {parse['best']:.2f} "
                    f"| {cold['best']:.2f} | {cold['best'] / parse['best']:.2f}x "
                    f"| {parse['once']:.2f} / {cold['once']:.2f} | {cold['once'] / parse['once']:.2f}x "
                    f"| {per_round} |"
                )
            else:
                row = (
                    f"| {root.name} | {code} | {len(files)} | {cold['runs'][0]['lines']:,} | {parsed} "
                    f"| {parse['best']:.2f} | {cold['best']:.2f} | {cold['best'] / parse['best']:.2f}x "
                    f"| {per_round} | {max(r['rss_mib'] for r in parse['runs']):.0f} / "
                    f"{max(r['rss_mib'] for r in cold['runs']):.0f} |"
                )
                if extra and label == "cold":
                    warm, par = [], []
                    with tempfile.TemporaryDirectory() as tmp:
                        for index in range(rounds):
                            cache = Path(tmp) / f"c{index}"
                            _measure("cold", root, cache)
                            warm.append(_measure("cold", root, cache)["cpu_s"])
                            par.append(_measure("cold", root, Path(tmp) / f"p{index}", cpus)["cpu_s"])
                    row += f" {min(warm):.2f} | {min(par):.2f} |"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
