"""Lay out the evaluation files from local git snapshots of their repositories.

    python benchmarks/accuracy/layout.py [--mirrors DIR] [--out DIR]

Each manifest row names a repository, a commit, a path and the blob sha of the labelled file. The
file is read by blob sha from a bare clone of the repository (DIR/<owner>+<name>/repo, or any git
directory below DIR/<owner>+<name>) and written to OUT/<owner>__<name>/<path>, so relative paths,
test directories and package names look as they do in the repository. Nothing third-party is
committed: corpus/ is git-ignored. Rows whose repository is missing are listed and skipped.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def git_dir(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "objects").is_dir():
            return candidate
    found = sorted(p.parent for p in base.glob("**/objects") if (p.parent / "HEAD").exists())
    return found[0] if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=HERE / "corpus")
    args = parser.parse_args()
    missing: list[str] = []
    written = 0
    with open(HERE / "manifest.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            gd = git_dir(args.mirrors, row["repo"])
            if gd is None:
                missing.append(row["file_id"])
                continue
            blob = subprocess.run(
                ["git", "--git-dir", str(gd), "cat-file", "blob", row["blob"]],
                capture_output=True,
                check=False,
            )
            if blob.returncode != 0:
                missing.append(row["file_id"])
                continue
            target = args.out / row["file_id"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob.stdout)
            written += 1
    # Each repository folder is its own git work tree, as a user's checkout is: otherwise a scan
    # run inside it sees the enclosing checkout, where corpus/ is git-ignored, and reads nothing.
    for repo_dir in sorted(p for p in args.out.iterdir() if p.is_dir()) if args.out.is_dir() else []:
        if not (repo_dir / ".git").exists():
            subprocess.run(["git", "init", "-q", str(repo_dir)], check=True)
    print(f"laid out {written} files under {args.out}")
    if missing:
        print(f"missing {len(missing)} (repository or blob not in {args.mirrors}):", *missing, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
