"""Lay out the evaluation files from local git snapshots of their repositories.

    python benchmarks/accuracy/layout.py [--mirrors DIR] [--out DIR]

Each manifest row names a repository, a commit, a path and the blob sha of the labelled file. The
file is read by blob sha from a bare clone of the repository (DIR/<owner>+<name>/repo, or any git
directory below DIR/<owner>+<name>) and written to OUT/<owner>__<name>/<path>, so relative paths,
test directories and package names look as they do in the repository. Nothing third-party is
committed: corpus/ is git-ignored. Rows whose repository is missing are listed and skipped.

Beside the labelled files, the script lays out their context, as a scan of the whole checkout would
see it: the repository's Python modules that a labelled file imports, three steps deep (imports of
imports of imports), resolved against the source roots and the importing file's own folder (a
script's `from functions.x import y`), with the `__init__.py` of every package on the way; and the
repository's root `pyproject.toml`, `setup.py` and `setup.cfg`, from which a scan learns the
project's own package names and the extensions its build defines. Cross-file findings (an import
of an in-repo kernel module, a call of a compiled extension a `setup.py` builds) need them; so the
`setup.py` of every folder a laid-out file lies in is laid out too (an extension package's own
build file, `ops_dcnv3/setup.py` beside `ops_dcnv3/functions/dcnv3_func.py`). Context files are
scanned but never scored: score.py counts findings in manifest files only. `--no-context`
lays out the labelled files alone.
"""

from __future__ import annotations

import argparse
import ast
import csv
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent


def git_dir(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "objects").is_dir():
            return candidate
    found = sorted(p.parent for p in base.glob("**/objects") if (p.parent / "HEAD").exists())
    return found[0] if found else None


PROJECT_FILES = frozenset({"pyproject.toml", "setup.py", "setup.cfg"})


def git(gd: Path, *command: str) -> bytes | None:
    done = subprocess.run(["git", "--git-dir", str(gd), *command], capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def imported_modules(text: bytes, path: str) -> set[str]:
    """Dotted names a module imports (relative ones resolved against its own package), with each
    `from a import b` also as `a.b`, since b may be a submodule."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    package = list(PurePosixPath(path).parent.parts)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level - 1 <= len(package) else None
                if base is None:
                    continue
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module:
                names.add(module)
            names.update(f"{module}.{alias.name}".strip(".") for alias in node.names if alias.name != "*")
    return names


def module_files(name: str, tree: set[str], roots: list[str]) -> list[str]:
    """The repository files that may define a dotted module name, under any source root."""
    stem = name.replace(".", "/")
    found = []
    for root in roots:
        for candidate in (f"{root}{stem}.py", f"{root}{stem}/__init__.py"):
            if candidate in tree:
                found.append(candidate)
    return found


def context_files(gd: Path, commit: str, labelled: list[str], steps: int = 3) -> set[str]:
    """The Python files of the repository at `commit` that the labelled files import, and those
    import, `steps` deep, with the `__init__.py` of the packages they lie in."""
    listing = git(gd, "ls-tree", "-r", "--name-only", commit)
    if listing is None:
        return set()
    files = set(listing.decode("utf-8", "replace").splitlines())
    tree = {p for p in files if p.endswith(".py")}
    # source roots: the top level, and every directory that holds a top-level package (`src/`)
    roots = [""] + sorted(
        {p.split("/", 1)[0] + "/" for p in tree if p.count("/") >= 2 and p.split("/")[1] != ""}
    )
    seen: set[str] = set(labelled)
    frontier = list(labelled)
    for _ in range(steps):
        following: list[str] = []
        for path in frontier:
            text = git(gd, "show", f"{commit}:{path}")
            if text is None:
                continue
            # a script's own folder is a source root too (`from functions.ms_deform_attn_func import`
            # in models/ops/test.py, run from models/ops/)
            own = str(PurePosixPath(path).parent)
            local_roots = roots if own == "." else [*roots, own + "/"]
            for name in imported_modules(text, path):
                for found in module_files(name, tree, local_roots):
                    if found not in seen:
                        seen.add(found)
                        following.append(found)
        frontier = following
    for path in list(seen):
        parts = PurePosixPath(path).parts[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder + "/__init__.py" in tree:
                seen.add(folder + "/__init__.py")
            # the build file of an extension package the file lies in (`ops_dcnv3/setup.py` beside
            # `ops_dcnv3/functions/dcnv3_func.py`), which defines the modules its code imports
            if folder + "/setup.py" in tree:
                seen.add(folder + "/setup.py")
    # the project's metadata at the root, which a scan of the checkout reads to know the project's
    # own package (an import of it is the code being ported, not a dependency)
    seen |= PROJECT_FILES & files
    return seen - set(labelled)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=HERE / "corpus")
    parser.add_argument("--no-context", action="store_true", help="lay out the labelled files only")
    args = parser.parse_args()
    missing: list[str] = []
    written = context = 0
    planned: dict[str, set[str]] = {}  # repository folder -> the paths laid out in it
    by_commit: dict[tuple[str, str], list[str]] = {}
    with open(HERE / "manifest.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for row in rows:
        gd = git_dir(args.mirrors, row["repo"])
        blob = git(gd, "cat-file", "blob", row["blob"]) if gd is not None else None
        if blob is None:
            missing.append(row["file_id"])
            continue
        target = args.out / row["file_id"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
        written += 1
        folder = row["file_id"].split("/", 1)[0]
        planned.setdefault(folder, set()).add(row["path"])
        by_commit.setdefault((row["repo"], row["commit"]), []).append(row["path"])
    for (repo, commit), labelled in [] if args.no_context else sorted(by_commit.items()):
        gd = git_dir(args.mirrors, repo)
        folder = repo.replace("/", "__")
        for path in sorted(context_files(gd, commit, labelled) - planned[folder]):
            text = git(gd, "show", f"{commit}:{path}")
            if text is None:
                continue
            target = args.out / folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text)
            planned[folder].add(path)
            context += 1
    # Files a previous layout wrote that this one does not plan (context after --no-context)
    for folder, paths in planned.items():
        base = args.out / folder
        for file in sorted(base.rglob("*")):
            relative = file.relative_to(base).as_posix()
            if file.is_file() and not relative.startswith(".git/") and relative not in paths:
                file.unlink()
        for directory in sorted((d for d in base.rglob("*") if d.is_dir()), reverse=True):
            if not directory.relative_to(base).as_posix().startswith(".git") and not any(directory.iterdir()):
                shutil.rmtree(directory)
    # Each repository folder is its own git work tree, as a user's checkout is: otherwise a scan
    # run inside it sees the enclosing checkout, where corpus/ is git-ignored, and reads nothing.
    for repo_dir in sorted(p for p in args.out.iterdir() if p.is_dir()) if args.out.is_dir() else []:
        if not (repo_dir / ".git").exists():
            subprocess.run(["git", "init", "-q", str(repo_dir)], check=True)
    print(f"laid out {written} labelled files and {context} context files under {args.out}")
    if missing:
        print(f"missing {len(missing)} (repository or blob not in {args.mirrors}):", *missing, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
