"""A compiled snapshot of the loaded rule database, cached by content hash in the user cache dir.

Parsing and validating `rules/*.toml` costs more than the rest of a one-file scan's start-up, and
the files only change with a release or a policy pack. `load_ruledb` therefore keys the built
`RuleDB` on a content hash (BLAKE2b) of everything that shapes it (neuronlint's version, the Python version, and
each file's rank, displayed path and bytes) and stores it once in
`$XDG_CACHE_HOME/neuronlint/ruledb/` (default `~/.cache/neuronlint/ruledb/`), never in a
repository.

A snapshot is never trusted blindly: it is only read when (1) its MAC (keyed BLAKE2b), made with
the per-user secret of the analysis cache (`cache.secret_path()`), matches; (2) it unpickles with an
allow-list of exactly the database's own classes (nothing else can be constructed, so a forged
file cannot run code); and (3) the result is a `RuleDB` with the expected key and fingerprint.
Anything else is ignored and the database is built from the TOML files again, which rewrites the
snapshot. A database that fails validation is never stored.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
from pathlib import Path
from typing import Any

from neuronlint import __version__

MAGIC = b"neuronlint-ruledb-snapshot 1\n"
KEEP = 8  # snapshots kept (a policy pack or another checkout is another key); older ones are removed

# module -> names the unpickler may construct: the database's own types and nothing else.
_ALLOWED = {
    "neuronlint.ruledb.model": frozenset(
        {
            "RuleDB",
            "Rule",
            "VerdictRule",
            "Advice",
            "Condition",
            "SdkRange",
            "Release",
            "Chip",
            "PlatformFact",
        }
    ),
    "neuronlint.ruledb.cases": frozenset({"RuleCase"}),
    "neuronlint.findings": frozenset({"Severity"}),
    "builtins": frozenset({"frozenset", "set", "tuple", "list", "dict"}),
}


def snapshot_dir() -> Path:
    from neuronlint.cache import secret_path

    return secret_path().parent / "ruledb"


def snapshot_key(files: list[tuple[int, str, bytes]]) -> str:
    """The content hash of a database: every (rank, displayed path, bytes) plus both versions."""
    from neuronlint.digests import content_hash

    chunks = [f"{__version__}\0{sys.version_info[:3]}\0".encode()]
    for rank, shown, raw in files:
        chunks += [f"{rank}\0{shown}\0{len(raw)}\0".encode("utf-8", "surrogateescape"), raw]
    return content_hash(*chunks)


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if name not in _ALLOWED.get(module, ()):
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a rule database")
        return super().find_class(module, name)


def _mac(key: str, payload: bytes) -> bytes:
    from neuronlint.cache import _secret, secret_path
    from neuronlint.digests import keyed_mac

    return keyed_mac(_secret(secret_path()), key.encode() + b"\0" + payload).encode()


def load(key: str, fingerprint: str) -> Any:
    """The RuleDB stored under `key`, or None when there is none or it is not to be trusted."""
    from neuronlint.ruledb.model import RuleDB

    try:
        raw = (snapshot_dir() / f"{key}.pickle").read_bytes()
    except OSError:
        return None
    if not raw.startswith(MAGIC):
        return None
    mac, _, payload = raw[len(MAGIC) :].partition(b"\n")
    from neuronlint.digests import compare_digest

    if not compare_digest(mac, _mac(key, payload)):
        return None
    try:
        stored_key, db = _Unpickler(io.BytesIO(payload)).load()
    except Exception:  # noqa: BLE001 - any malformed snapshot is only a miss
        return None
    if stored_key != key or type(db) is not RuleDB or db.fingerprint != fingerprint:
        return None
    if not (type(db.rules) is dict and type(db.releases) is dict and type(db.chips) is dict):
        return None
    return db


def store(key: str, db: Any) -> None:
    """Write the snapshot (atomically); a read-only or full disk only costs speed."""
    import dataclasses

    directory = snapshot_dir()
    try:
        payload = pickle.dumps((key, dataclasses.replace(db, _verdicts={})), protocol=pickle.HIGHEST_PROTOCOL)
        directory.mkdir(parents=True, exist_ok=True)
        import tempfile  # only when writing a snapshot, not when reading one

        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".snapshot-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(MAGIC + _mac(key, payload) + b"\n" + payload)
        os.replace(tmp, directory / f"{key}.pickle")
        _prune(directory)
    except (OSError, pickle.PicklingError):
        pass


def _prune(directory: Path) -> None:
    entries = []
    for path in directory.glob("*.pickle"):
        try:
            entries.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(entries, reverse=True)[KEEP:]:
        try:
            path.unlink()
        except OSError:
            pass
