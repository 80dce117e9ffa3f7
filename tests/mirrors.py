"""Real files of public repositories, read from local git mirrors in a test's setup.

The tests that scan third-party code never commit it: each names a repository, a commit or blob,
and a path, and reads the bytes here from a bare mirror at `$NEURONLINT_MIRRORS/<owner>+<name>/repo`
(default `/work/.mirror`). When a mirror or an object is missing the test is skipped, with the
reason, rather than failed: the mirrors are setup data, not part of the project.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

MIRRORS = Path(os.environ.get("NEURONLINT_MIRRORS", "/work/.mirror"))


def git_dir(repo: str) -> Path:
    """The mirror's git directory; `repo` is `owner/name` or `owner+name`. Skips when absent."""
    path = MIRRORS / repo.replace("/", "+") / "repo"
    if not path.is_dir():
        pytest.skip(f"no local mirror of {repo} at {path}")
    return path


def git(repo: str, *args: str) -> bytes:
    """The output of `git ARGS` in the mirror. Skips when git fails (an object not fetched)."""
    completed = subprocess.run(
        ["git", "--git-dir", str(git_dir(repo)), *args], capture_output=True, check=False
    )
    if completed.returncode != 0:
        pytest.skip(
            f"{repo}: git {' '.join(args[:2])} failed: {completed.stderr.decode(errors='replace')[:200]}"
        )
    return completed.stdout


def blob(repo: str, sha: str) -> bytes:
    """The bytes of one blob, by its sha."""
    return git(repo, "cat-file", "blob", sha)


def show(repo: str, commit: str, path: str) -> bytes:
    """The bytes of `path` at `commit` (a sha, or a ref such as HEAD)."""
    return git(repo, "show", f"{commit}:{path}")


def names(repo: str, commit: str = "HEAD") -> list[str]:
    """Every file path of the repository at `commit`."""
    return git(repo, "ls-tree", "-r", "--name-only", commit).decode("utf-8", "surrogateescape").splitlines()


def try_show(repo: str, commit: str, path: str) -> bytes | None:
    """`show`, or None (no skip) when the mirror or the file is missing: for tests that read
    several files and need only some of them."""
    path_dir = MIRRORS / repo.replace("/", "+") / "repo"
    if not path_dir.is_dir():
        return None
    completed = subprocess.run(
        ["git", "--git-dir", str(path_dir), "show", f"{commit}:{path}"], capture_output=True
    )
    return completed.stdout if completed.returncode == 0 else None


def export(repo: str, commit: str, paths: list[str], into: Path) -> Path:
    """The given paths of the repository at `commit`, written under `into`."""
    data = git(repo, "archive", "--format=tar", commit, "--", *paths)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(into, filter="data")
    return into
