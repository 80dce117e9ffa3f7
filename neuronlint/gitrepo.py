"""Asking git about the work tree a scan runs in: its root, refs, merge bases, diffs.

Only the CI features use this (changed-line filtering, repo-relative report paths); a scan
outside a git work tree works without it.

A scanned directory may bring its own `.git/config` (a tarball, a shared directory), and git runs
commands named there: `core.fsmonitor` on every status-like command, filter drivers, external diff
and textconv programs. Every git invocation goes through `git_command`, which switches those off, so
scanning a directory never runs a program that the directory names.
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache
from pathlib import Path

_TIMEOUT = 120  # seconds; a diff of a huge repository can take a while, a hung git must not hang CI


class GitError(Exception):
    """A git command failed; the message is git's own first line of complaint."""


# Settings that make git run a program named by the repository's own configuration.
_NEUTRAL_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.pager=cat",
    "diff.external=",
    "protocol.ext.allow=never",
)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a scan never writes the index
    env["GIT_TERMINAL_PROMPT"] = "0"
    for name in ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS"):
        env.pop(name, None)
    return env


@lru_cache(maxsize=64)
def _filter_drivers(cwd: str) -> tuple[str, ...]:
    """Filter drivers the repository's config defines (reading config runs nothing)."""
    try:
        out = subprocess.run(
            ["git", "-C", cwd, "config", "--null", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"],
            capture_output=True,
            timeout=30,
            check=False,
            env=_environment(),
            stdin=subprocess.DEVNULL,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    names = set()
    for entry in out.split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        if key.startswith("filter.") and key.count(".") >= 2:
            names.add(key[len("filter.") : key.rindex(".")])
    return tuple(sorted(names))


def git_command(args: list[str], cwd: Path) -> list[str]:
    """The argv for `git -C cwd args…` with every repository-configured program switched off."""
    command = ["git", "-C", str(cwd)]
    for setting in _NEUTRAL_CONFIG:
        command += ["-c", setting]
    for driver in _filter_drivers(str(cwd)):
        for kind in ("clean", "smudge", "process"):
            command += ["-c", f"filter.{driver}.{kind}="]
    return [*command, *args]


def run_git_bytes(args: list[str], cwd: Path, timeout: float = _TIMEOUT) -> bytes:
    """Run `git -C cwd args…` and return its raw stdout; raise GitError with git's message on failure."""
    try:
        completed = subprocess.run(
            git_command(args, cwd),
            capture_output=True,
            timeout=timeout,
            check=False,
            env=_environment(),
            stdin=subprocess.DEVNULL,
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
