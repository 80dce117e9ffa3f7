"""Trend: both scores at a git ref (the base branch) and now, for a pull-request comment.

The tree at the ref is exported with `git archive` into a temporary directory (the work tree and
the repository are not touched) and scanned with the current settings and rule database, so the
difference shows what the code change did, not what a database update did.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from neuronlint.gitrepo import GitError, resolve_commit, run_git_bytes, toplevel
from neuronlint.lockin.params import DIRECTION_TITLES, DIRECTIONS
from neuronlint.lockin.results import LockinResult
from neuronlint.lockin.scoring import score
from neuronlint.pipeline import ScanOptions, run_scan

_TIMEOUT = 300  # seconds for `git archive` of a large tree


class TrendError(Exception):
    """--against cannot be computed (not a git work tree, unknown ref); the message says why."""


def _export(commit: str, top: Path, into: Path) -> None:
    try:
        tar = run_git_bytes(["archive", "--format=tar", commit], top, timeout=_TIMEOUT)
    except GitError as exc:
        raise TrendError(str(exc)) from None
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(into, filter="data")
        else:  # pragma: no cover - Python < 3.12 without the extraction filters
            archive.extractall(into)  # noqa: S202 - our own repository's tree


def _blocker_keys(lockin: LockinResult, direction: str) -> Counter:
    """Blockers as (path, rule, snippet): stable when unrelated lines move."""
    return Counter(
        (w.path, w.rule, w.finding.snippet or w.finding.message)
        for w in lockin.findings
        if w.direction == direction and w.finding.severity.value == "blocker"
    )


def _examples(lockin: LockinResult, keys: Counter, direction: str, limit: int = 10) -> list[dict[str, Any]]:
    wanted = Counter(keys)
    out = []
    for w in sorted(lockin.findings, key=lambda w: w.finding.sort_key()):
        key = (w.path, w.rule, w.finding.snippet or w.finding.message)
        if w.direction == direction and w.finding.severity.value == "blocker" and wanted[key] > 0:
            wanted[key] -= 1
            out.append({"path": w.path, "line": w.finding.line, "rule": w.rule, "message": w.finding.message})
            if len(out) >= limit:
                break
    return out


def against(ref: str, options: ScanOptions, now: LockinResult, package_depth: int = 1) -> dict[str, Any]:
    """Scan the tree at `ref` like the current scan and compare both scores and the blockers."""
    cwd = Path.cwd().resolve()
    top = toplevel(cwd)
    if top is None:
        raise TrendError(f"--against {ref}: {cwd} is not inside a git work tree")
    top = top.resolve()
    commit = resolve_commit(ref, top)
    if commit is None:
        raise TrendError(f"--against {ref}: no such commit, branch or tag in {top}")
    with tempfile.TemporaryDirectory(prefix="neuronlint-base-") as tmp:
        tree = Path(tmp)
        try:
            _export(commit, top, tree)
        except GitError as exc:  # pragma: no cover - raised by shared helpers only
            raise TrendError(str(exc)) from None

        def mirror(path: Path) -> Path | None:
            absolute = Path(os.path.abspath(path))
            try:
                return tree / absolute.relative_to(top)
            except ValueError:
                return None

        base_cwd = mirror(cwd) or tree
        base_cwd.mkdir(parents=True, exist_ok=True)
        paths = [p for p in (mirror(path) for path in options.paths) if p is not None and p.exists()]
        config_root = mirror(options.config_root) if options.config_root else None
        base: LockinResult | None = None  # None: the scanned paths did not exist at the ref
        if paths:
            result = run_scan(replace(options, paths=paths, base=base_cwd, config_root=config_root))
            base = score(
                result.active,
                result.results,
                result.db,
                result.context,
                root=now.root or None,
                package_depth=package_depth,
            )
    scores: dict[str, Any] = {}
    sentences = []
    for d in DIRECTIONS:
        now_score = now.repository.scores[d]
        base_value = base.repository.scores[d] if base is not None else None
        now_keys = _blocker_keys(now, d)
        base_keys = _blocker_keys(base, d) if base is not None else Counter()
        added = now_keys - base_keys
        removed = base_keys - now_keys
        scores[d] = {
            "title": DIRECTION_TITLES[d],
            "base": base_value.score if base_value else 0,
            "now": now_score.score,
            "delta": now_score.score - (base_value.score if base_value else 0),
            "base_grade": base_value.grade if base_value else "A",
            "now_grade": now_score.grade,
            "base_blockers": base_value.blockers if base_value else 0,
            "now_blockers": now_score.blockers,
            "blockers_added": sum(added.values()),
            "blockers_removed": sum(removed.values()),
            "added": _examples(now, added, d),
            "removed": _examples(base, removed, d) if base is not None else [],
        }
        sentences.append(_sentence(scores[d]))
    return {"ref": ref, "commit": commit, "scores": scores, "summary": "; ".join(sentences) + "."}


def _sentence(row: dict[str, Any]) -> str:
    name = row["title"].split()[0]  # "CUDA" or "Neuron"
    parts = []
    if row["blockers_added"]:
        parts.append(
            f"adds {row['blockers_added']} {name} blocker{'s' if row['blockers_added'] != 1 else ''}"
        )
    if row["blockers_removed"]:
        parts.append(
            f"removes {row['blockers_removed']} {name} blocker{'s' if row['blockers_removed'] != 1 else ''}"
        )
    change = " and ".join(parts) if parts else f"changes no {name} blockers"
    return f"this change {change}, {row['title']} {row['base']} \u2192 {row['now']}"
