"""Asking git about the work tree a scan runs in: its root, refs, merge bases, diffs.

Only the CI features use this (changed-line filtering, repo-relative report paths); a scan
outside a git work tree works without it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

_TIMEOUT = 120  # seconds; a diff of a huge repository can take a while, a hung git must not hang CI


class GitError(Exception):
    """A git command failed; the message is git's own first line of complaint."""


def run_git_bytes(args: list[str], cwd: Path, timeout: float = _TIMEOUT) -> bytes:
    """Run `git -C cwd args…` and return its raw stdout; raise GitError with git's message on failure."""
    try:
        completed = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"`git {' '.join(args)}` took longer than {timeout} s") from None
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[0] if message else f"`git {' '.join(args)}` exited {completed.returncode}")
    return completed.stdout


def run_git(args: list[str], cwd: Path) -> str:
    """Run `git -C cwd args…` and return its stdout as text; raise GitError on failure."""
    return run_git_bytes(args, cwd).decode("utf-8", "surrogateescape")


def toplevel(cwd: Path) -> Path | None:
    """The root of the work tree containing `cwd`, or None outside one (or without git)."""
    try:
        out = run_git(["rev-parse", "--show-toplevel"], cwd).strip()
    except GitError:
        return None
    return Path(out) if out else None


def prefix(cwd: Path) -> str:
    """Where `cwd` sits inside its work tree, as a POSIX prefix ('' at the root, 'src/pkg/' below)."""
    try:
        return run_git(["rev-parse", "--show-prefix"], cwd).strip()
    except GitError:
        return ""


def is_shallow(cwd: Path) -> bool:
    try:
        return run_git(["rev-parse", "--is-shallow-repository"], cwd).strip() == "true"
    except GitError:
        return False


def resolve_commit(ref: str, cwd: Path) -> str | None:
    """The commit a ref names, or None when this clone does not have it."""
    try:
        return (
            run_git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], cwd
            ).strip()
            or None
        )
    except GitError:
        return None


def remotes(cwd: Path) -> list[str]:
    try:
        return run_git(["remote"], cwd).split()
    except GitError:
        return []


def unquote_path(raw: str) -> str:
    """Undo git's C-style quoting of a path in diff headers ("a\\tb", octal bytes for odd characters)."""
    if not (len(raw) >= 2 and raw.startswith('"') and raw.endswith('"')):
        return raw
    body = raw[1:-1]
    out = bytearray()
    simple = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\" or index + 1 == len(body):
            out += char.encode("utf-8", "surrogateescape")
            index += 1
            continue
        following = body[index + 1]
        if following in simple:
            out.append(simple[following])
            index += 2
        elif len(octal := body[index + 1 : index + 4]) == 3 and all(c in "01234567" for c in octal):
            out.append(int(octal, 8) & 0xFF)
            index += 4
        else:
            out += following.encode("utf-8", "surrogateescape")
            index += 2
    return out.decode("utf-8", "surrogateescape")
