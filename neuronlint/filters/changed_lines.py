"""`scan --diff-base REF`: keep only findings whose span touches a line added or changed since
the merge base of REF and HEAD.

The comparison is `git diff <merge-base>` against the work tree, so committed, staged and
unstaged edits all count; untracked (not ignored) files count as changed everywhere. A finding
counts when any line of [line, end_line] changed, so a statement that starts on an old line but
spans an edited one is still reported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from neuronlint.findings import Finding
from neuronlint.gitrepo import GitError, is_shallow, remotes, resolve_commit, run_git, toplevel, unquote_path

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class ChangedLinesError(Exception):
    """--diff-base cannot be honoured; the message says why and how to fix it."""


@dataclass(frozen=True)
class DiffSummary:
    """What --diff-base did to a run's findings, for the outputs."""

    ref: str
    merge_base: str
    outside_changed_lines: int

    def to_dict(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "merge_base": self.merge_base,
            "outside_changed_lines": self.outside_changed_lines,
        }


@dataclass
class ChangedLines:
    base_ref: str
    merge_base: str
    root: Path  # work-tree root; the keys below are relative to it
    lines: dict[str, set[int]] = field(default_factory=dict)  # path -> added/changed line numbers (new side)
    whole_files: set[str] = field(default_factory=set)  # untracked files: every line is new

    def repo_path(self, path: str, cwd: Path) -> str | None:
        """A report path (relative to `cwd` or absolute) as a path relative to the work-tree root."""
        absolute = os.path.realpath(os.path.join(cwd, path))
        try:
            return Path(absolute).relative_to(os.path.realpath(self.root)).as_posix()
        except ValueError:
            return None

    def touches(self, finding: Finding, cwd: Path) -> bool:
        """Whether any line of the finding's span was added or changed since the merge base."""
        rel = self.repo_path(finding.path, cwd)
        if rel is None:
            return False
        if rel in self.whole_files:
            return True
        changed = self.lines.get(rel)
        if not changed:
            return False
        last = max(finding.line, finding.end_line)
        return any(line in changed for line in range(finding.line, last + 1))

    def filter(self, findings: Iterable[Finding], cwd: Path) -> list[Finding]:
        return [f for f in findings if self.touches(f, cwd)]


def parse_unified_diff(text: str) -> dict[str, set[int]]:
    """Added/changed line numbers per new-side path from `git diff --unified=0` output."""
    changed: dict[str, set[int]] = {}
    current: str | None = None
    remaining = 0  # content lines left in the current hunk (so '+++' inside content is not a header)
    for line in text.splitlines():
        if remaining > 0:
            if line.startswith("\\"):  # "\ No newline at end of file" is not counted in the hunk sizes
                continue
            remaining -= 1
            continue
        if line.startswith("+++ "):
            target = line[4:].rstrip("\t")
            if target == "/dev/null":
                current = None
            else:
                target = unquote_path(target)
                current = target[2:] if target.startswith("b/") else target
            continue
        match = _HUNK.match(line)
        if match:
            old_count = int(match.group(1)) if match.group(1) is not None else 1
            start = int(match.group(2))
            new_count = int(match.group(3)) if match.group(3) is not None else 1
            remaining = old_count + new_count
            if current is not None and new_count:
                changed.setdefault(current, set()).update(range(start, start + new_count))
    return changed


def _missing_ref_message(ref: str, cwd: Path) -> str:
    names = remotes(cwd)
    remote, _, branch = ref.partition("/")
    if remote in names and branch:
        fetch = (
            f"git fetch --no-tags origin {branch}"
            if remote == "origin"
            else f"git fetch --no-tags {remote} {branch}"
        )
        return (
            f"--diff-base {ref}: this clone does not have {ref} (shallow or single-branch checkout). "
            f"Fetch it first: {fetch}"
        )
    if "origin" in names:
        return (
            f"--diff-base {ref}: no branch or commit {ref!r} in this clone. If it is a branch of the remote, "
            f"fetch it and name the remote branch: git fetch --no-tags origin {ref} && "
            f"neuronlint scan --diff-base origin/{ref}"
        )
    return f"--diff-base {ref}: no branch or commit {ref!r} in this repository"


def compute(base_ref: str, cwd: Path) -> ChangedLines:
    """Changed lines since the merge base of `base_ref` and HEAD, using the git work tree at `cwd`."""
    root = toplevel(cwd)
    if root is None:
        raise ChangedLinesError(f"--diff-base needs a git work tree; {cwd} is not inside one")
    if resolve_commit(base_ref, cwd) is None:
        raise ChangedLinesError(_missing_ref_message(base_ref, cwd))
    if resolve_commit("HEAD", cwd) is None:
        raise ChangedLinesError(
            "--diff-base: HEAD has no commit yet; commit once before comparing with a base"
        )
    try:
        merge_base = run_git(["merge-base", base_ref, "HEAD"], cwd).strip()
    except GitError:
        merge_base = ""
    if not merge_base:
        if is_shallow(cwd):
            raise ChangedLinesError(
                f"--diff-base {base_ref}: no common ancestor of HEAD and {base_ref} in this shallow clone. "
                "Fetch the history: git fetch --unshallow --no-tags origin (in GitHub Actions: "
                "actions/checkout with fetch-depth: 0)"
            )
        raise ChangedLinesError(
            f"--diff-base {base_ref}: HEAD and {base_ref} share no history (no merge base)"
        )
    try:
        diff = run_git(
            [
                "-c",
                "core.quotepath=off",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--unified=0",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                "-M",
                merge_base,
                "--",
            ],
            root,
        )
        untracked = run_git(["ls-files", "-z", "--others", "--exclude-standard"], root)
    except GitError as exc:
        raise ChangedLinesError(f"--diff-base {base_ref}: git diff failed: {exc}") from None
    return ChangedLines(
        base_ref=base_ref,
        merge_base=merge_base,
        root=root,
        lines=parse_unified_diff(diff),
        whole_files={p for p in untracked.split("\0") if p},
    )
