"""Check `neuronlint.static.ast_to_cst.convert` against `libcst.parse_module`, and time both.

    python benchmarks/ast_to_cst_check.py DIR... [--mirrors [MIRROR_ROOT]] [--no-compare | --no-time]

For every .py file under the DIRs (and, with --mirrors, every .py blob at HEAD of the bare git
mirrors `MIRROR_ROOT/*/repo`, default /work/.mirror) that both `ast.parse` and LibCST parse:
convert the ast tree, then compare it with LibCST's tree (tests/cst_structure.same_structure).
Prints, per corpus: files, equal, unsupported (by reason), MISMATCHED (the first 20 descriptions),
and the time (garbage collector off) of ast.parse, convert, libcst.parse_module and
neuronlint.static.cstparse.parse_module over the files.
"""

from __future__ import annotations

import argparse
import ast
import collections
import gc
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import libcst as cst  # noqa: E402

from neuronlint.static import cstparse  # noqa: E402
from neuronlint.static.ast_to_cst import Unsupported, convert  # noqa: E402
from tests.cst_structure import same_structure  # noqa: E402


def dir_files(root: Path) -> list[tuple[str, bytes]]:
    return [(str(p), p.read_bytes()) for p in sorted(root.rglob("*.py")) if p.is_file()]


def mirror_files(git_dir: Path) -> list[tuple[str, bytes]]:
    def git(*args: str) -> bytes:
        return subprocess.run(
            ["git", "--git-dir", str(git_dir), *args], capture_output=True, check=True
        ).stdout

    try:
        listing = git("ls-tree", "-r", "HEAD").decode("utf-8", "surrogateescape")
    except subprocess.CalledProcessError:
        return []
    blobs = []
    for row in listing.splitlines():
        meta, _, path = row.partition("\t")
        mode, kind, sha = meta.split()
        if kind == "blob" and path.endswith(".py") and mode != "120000":
            blobs.append((path, sha))
    if not blobs:
        return []
    # One `git cat-file --batch` for all blobs: a process per file would dominate the run.
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(sha + "\n" for _, sha in blobs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    out = []
    pos = 0
    for path, _sha in blobs:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        out.append((f"{git_dir.parent.name}:{path}", batch[pos : pos + size]))
        pos += size + 1
    return out


def check(name: str, files: list[tuple[str, bytes]], compare: bool, timed: bool) -> dict:
    sources = []
    equal = 0
    unsupported: collections.Counter[str] = collections.Counter()
    mismatched: list[str] = []
    for path, data in files:
        try:
            text = data.decode("utf-8")
            tree = ast.parse(text)
            expected = cst.parse_module(text)
        except Exception:  # noqa: BLE001 - a file either parser rejects is not the converter's
            continue
        sources.append((path, text))
        try:
            module, _ = convert(tree, text)
        except Unsupported as exc:
            unsupported[str(exc)] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - a converter bug: counted, and the run goes on
            mismatched.append(f"{path}: CRASH {type(exc).__name__}: {exc}")
            continue
        if not compare:
            continue
        diff = same_structure(module, expected)
        if diff is None:
            equal += 1
        else:
            mismatched.append(f"{path}: {diff}")
    if not timed:
        report(name, len(sources), equal, unsupported, mismatched)
        return {
            "files": len(sources),
            "equal": equal,
            "unsupported": sum(unsupported.values()),
            "mismatched": len(mismatched),
            "times": (0.0, 0.0, 0.0, 0.0),
        }

    texts = [t for _, t in sources]
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        trees = [ast.parse(t) for t in texts]
        t_ast = time.perf_counter() - t0
        t0 = time.perf_counter()
        for tree, text in zip(trees, texts, strict=True):
            try:
                convert(tree, text)
            except Unsupported:
                pass
        t_convert = time.perf_counter() - t0
        del trees
        t0 = time.perf_counter()
        for t in texts:
            cst.parse_module(t)
        t_libcst = time.perf_counter() - t0
        t0 = time.perf_counter()
        for t in texts:
            cstparse.parse_module(t.encode())
        t_cstparse = time.perf_counter() - t0
    finally:
        gc.enable()
    report(name, len(sources), equal, unsupported, mismatched)
    print(
        f"  time: ast.parse {t_ast:.2f}s  convert {t_convert:.2f}s  ast+convert {t_ast + t_convert:.2f}s"
        f"  libcst.parse_module {t_libcst:.2f}s  cstparse.parse_module {t_cstparse:.2f}s"
        f"  convert/cstparse {t_convert / max(t_cstparse, 1e-9):.2f}"
    )
    n_unsupported = sum(unsupported.values())
    return {
        "files": len(sources),
        "equal": equal,
        "unsupported": n_unsupported,
        "mismatched": len(mismatched),
        "times": (t_ast, t_convert, t_libcst, t_cstparse),
    }


def report(name: str, files: int, equal: int, unsupported: collections.Counter, mismatched: list) -> None:
    n_unsupported = sum(unsupported.values())
    print(f"== {name}")
    print(
        f"files {files}  equal {equal}  unsupported {n_unsupported}"
        f" ({100 * n_unsupported / max(1, files):.2f}%)  MISMATCHED {len(mismatched)}"
    )
    if unsupported:
        print("  unsupported:", dict(unsupported.most_common()))
    for line in mismatched[:20]:
        print("  MISMATCH", line)
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--mirrors", nargs="?", const=Path("/work/.mirror"), type=Path)
    parser.add_argument("--no-compare", action="store_true", help="time only")
    parser.add_argument("--no-time", action="store_true", help="compare only")
    args = parser.parse_args()
    corpora = [(str(d), lambda d=d: dir_files(d)) for d in args.dirs]
    if args.mirrors:
        corpora += [(g.parent.name, lambda g=g: mirror_files(g)) for g in sorted(args.mirrors.glob("*/repo"))]
    totals = collections.Counter()
    times = [0.0, 0.0, 0.0, 0.0]
    for name, load in corpora:
        result = check(name, load(), not args.no_compare, not args.no_time)
        for key in ("files", "equal", "unsupported", "mismatched"):
            totals[key] += result[key]
        times = [a + b for a, b in zip(times, result["times"], strict=True)]
    if len(corpora) > 1:
        print("== TOTAL")
        print(
            f"files {totals['files']}  equal {totals['equal']}  unsupported {totals['unsupported']}"
            f" ({100 * totals['unsupported'] / max(1, totals['files']):.2f}%)  MISMATCHED {totals['mismatched']}"
        )
        print(
            f"  time: ast.parse {times[0]:.2f}s  convert {times[1]:.2f}s  libcst.parse_module {times[2]:.2f}s"
            f"  cstparse.parse_module {times[3]:.2f}s  convert/cstparse {times[1] / max(times[3], 1e-9):.2f}"
        )


if __name__ == "__main__":
    main()
