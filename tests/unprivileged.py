"""Run neuronlint as a user who cannot read a mode-000 file, also when the tests run as root.

The reliability probe's unreadable-file rows (1.31, 1.32, 3.C20, 3.R24, 4.11, 5.B24) need a
process for which `chmod 0` really means unreadable. Root reads every file (CAP_DAC_OVERRIDE), and
CI runs the suite as root, so the command runs in a child process that has dropped that power:

- not root: the child runs as the current user;
- root: the child runs as `nobody` (uid and gid 65534, no supplementary groups) with
  `setpriv --reuid --regid --clear-groups`, else `runuser -u nobody`, else stays root without the
  capabilities that bypass file permissions (`setpriv --bounding-set -dac_override,-dac_read_search`:
  root then obeys the mode bits of the files it owns, as the probe ran it).

Each way is tried once per session on a real mode-000 file: it counts only if the child imports
neuronlint and then gets PermissionError reading the file. Files live in a directory every user
can traverse (pytest's own tmp_path is private to root); the child's HOME and XDG_CACHE_HOME (the
rule-database snapshot and the cache secret) are a directory it can write. `Unprivileged.run` skips
the test, with the reason, only when no way works.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

NOBODY = 65534


def _ways() -> list[tuple[str, list[str]]]:
    if os.geteuid() != 0:
        return [(f"uid {os.geteuid()}", [])]
    ways: list[tuple[str, list[str]]] = []
    setpriv, runuser = shutil.which("setpriv"), shutil.which("runuser")
    if setpriv:
        ways.append(
            ("nobody (setpriv)", [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"])
        )
    if runuser:
        ways.append(("nobody (runuser)", [runuser, "-u", "nobody", "--"]))
    if setpriv:
        ways.append(
            ("root without CAP_DAC_*", [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"])
        )
    return ways


def _shared_dir(prefix: str) -> Path:
    """A fresh directory every user can traverse and write (sticky, like /tmp)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o1777)
    return path


@functools.cache
def _way() -> tuple[str, list[str]] | str:
    """(label, command prefix) of the first way that works, or why none did."""
    tried: list[str] = []
    probe_dir = _shared_dir("neuronlint-unreadable-probe-")
    try:
        secret = probe_dir / "secret"
        secret.write_text("x")
        secret.chmod(0)
        code = "import sys, neuronlint; print('imported', flush=True); open(sys.argv[1]).read()"
        for label, prefix in _ways():
            try:
                done = subprocess.run(
                    [*prefix, sys.executable, "-c", code, str(secret)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    cwd=probe_dir,
                    env=_env(probe_dir),
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                tried.append(f"{label}: {exc}")
                continue
            if done.stdout.startswith("imported") and "PermissionError" in done.stderr:
                return label, prefix
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            tried.append(f"{label}: exit {done.returncode}, {last}")
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)
    return (
        "no way to run without reading every file ("
        + ("; ".join(tried) or "root, and no setpriv or runuser")
        + ")"
    )


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), NO_COLOR="1")
    env.pop("NEURONLINT_CACHE_DIR", None)
    return env


class Unprivileged:
    """A directory for the test's files and a runner that cannot read what is mode 000 in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / ".home"
        self.home.mkdir()
        self.home.chmod(0o1777)

    def run(
        self, args: list[str], cwd: Path | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess:
        way = _way()
        if isinstance(way, str):
            pytest.skip(way)
        _, prefix = way
        return subprocess.run(
            [*prefix, sys.executable, "-m", "neuronlint", *args],
            cwd=cwd or self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_env(self.home),
        )

    def cannot_read(self, path: Path) -> None:
        """Fail unless `path` is really unreadable for the runner (the row tests nothing otherwise)."""
        way = _way()
        if isinstance(way, str):
            pytest.skip(way)
        done = subprocess.run(
            [*way[1], sys.executable, "-c", "import sys; open(sys.argv[1], 'rb').read()", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(self.home),
        )
        assert done.returncode != 0 and "PermissionError" in done.stderr, (way[0], done.stderr)


def make(prefix: str = "neuronlint-unreadable-") -> Unprivileged:
    return Unprivileged(_shared_dir(prefix))


def remove(env: Unprivileged) -> None:
    """Give back every mode-000 file and directory, then remove the directory."""
    for path in [env.root, *env.root.rglob("*")]:
        if not path.is_symlink():
            try:
                path.chmod(0o700)
            except OSError:
                pass
    shutil.rmtree(env.root, ignore_errors=True)
