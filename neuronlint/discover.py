"""Which files a scan reads: explicit files, directories (git-aware), excludes."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from neuronlint.filekinds import kind_of

# Directories never worth scanning: environments, caches, build output.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".env",
        "env",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        ".eggs",
        ".neuronlint_cache",
        ".ipynb_checkpoints",
    }
)


def is_scannable(rel_path: str) -> bool:
    """Whether a file inside a scanned directory is read: its kind is known (docs/file-types.md)."""
    return kind_of(rel_path) is not None


def excluded(rel_posix: str, patterns: Iterable[str]) -> bool:
    """ruff-style: a pattern matches the path, a parent directory, or (without '/') any path component."""
    return matching_pattern(rel_posix, patterns) is not None


def matching_pattern(rel_posix: str, patterns: Iterable[str]) -> str | None:
    """The first pattern (as given) that excludes the path, or None. `./src` and `src/` mean `src`."""
    parts = rel_posix.split("/")
    for given in patterns:
        pattern = given.rstrip("/")
        while pattern.startswith("./"):
            pattern = pattern[2:].lstrip("/")
        if not pattern:
            continue
        if not any(c in pattern for c in "*?["):
            # A literal name (most patterns): what fnmatch would answer, without compiling a regex.
            literal, path = os.path.normcase(pattern), os.path.normcase(rel_posix)
            if path == literal or path.startswith(literal + "/"):
                return given
            if "/" not in pattern and any(os.path.normcase(part) == literal for part in parts):
                return given
            continue
        if not any(c in pattern for c in "?["):
            # Only `*` (test_*.py, *_test.py): what fnmatch answers, without compiling a regex.
            glob, path = os.path.normcase(pattern), os.path.normcase(rel_posix)
            if _stars_match(path, glob) or _stars_match(path, glob + "/*"):
                return given
            if "/" not in pattern and any(_stars_match(os.path.normcase(part), glob) for part in parts):
                return given
            continue
        if fnmatch.fnmatch(rel_posix, pattern) or fnmatch.fnmatch(rel_posix, pattern + "/*"):
            return given
        if "/" not in pattern and any(fnmatch.fnmatch(part, pattern) for part in parts):
            return given
    return None


def _stars_match(name: str, pattern: str) -> bool:
    """fnmatch.fnmatchcase for a pattern whose only wildcard is `*` (any text, `/` included)."""
    first, *middle, last = pattern.split("*")
    end = len(name) - len(last)
    if end < len(first) or not name.startswith(first) or not name.endswith(last):
        return False
    position = len(first)
    for part in middle:  # leftmost placement of each fixed part leaves the most room for the rest
        found = name.find(part, position, end)
        if found < 0:
            return False
        position = found + len(part)
    return True


def _git_files(directory: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under `directory`, or None outside a git work tree."""
    from neuronlint.gitrepo import GitError, run_git_bytes

    try:
        out = run_git_bytes(
            ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."], directory
        )
    except GitError:
        return None
    files = []
    for raw in out.split(b"\0"):
        if not raw:
            continue
        rel = raw.decode("utf-8", "surrogateescape")
        parts = rel.split("/")
        if any(p in SKIP_DIRS for p in parts[:-1]) or not is_scannable(rel):
            continue
        path = directory / rel
        if path.is_file():  # deleted-but-tracked files are listed too
            files.append(path)
    return files


def _walk(directory: Path) -> list[Path]:
    files = []
    # followlinks=False: symlinked directories are not entered, so symlink loops cannot recurse.
    for root, dirs, names in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(names):
            if is_scannable(os.path.join(root, name).replace(os.sep, "/")):
                path = Path(root) / name
                if path.is_file():
                    files.append(path)
    return files


def discover(
    paths: Iterable[Path],
    exclude: list[str],
    base: Path,
    exclude_base: Path | None = None,
    on_excluded: Callable[[Path, str], None] | None = None,
) -> list[Path]:
    """Expand the scan arguments to a sorted, de-duplicated list of files.

    Excludes apply to explicit files too: pre-commit passes filenames and users expect
    their config's `exclude` to hold (ruff needs --force-exclude for this; we always do it).
    `on_excluded(file, pattern)` is told of each file named explicitly that an exclude skips.
    """
    seen: set[Path] = set()
    result: list[Path] = []
    for path in paths:
        if path.is_dir():
            candidates = _git_files(path)
            if candidates is None:
                candidates = _walk(path)
        else:
            candidates = [path]
        for file in candidates:
            resolved = file.resolve()
            if resolved in seen:
                continue
            if exclude:
                pattern = matching_pattern(relative_posix(file, exclude_base or base), exclude)
                if pattern is not None:
                    if on_excluded is not None and not path.is_dir():
                        on_excluded(file, pattern)
                    continue
            seen.add(resolved)
            result.append(file)
    result.sort(key=lambda p: relative_posix(p, base))
    return result


def relative_posix(path: Path, base: Path) -> str:
    """Path relative to `base` when under it (as reports show it), else absolute; always with '/'."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return absolute.as_posix()
