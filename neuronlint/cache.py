"""On-disk cache of per-file analysis results.

An entry is keyed on the file's bytes, its module path, the rule database fingerprint and the
analyser's own source, so any change to one of them misses. Entries are small JSON files; a scan
never holds more than one file's tree in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from neuronlint import __version__

CACHE_DIR_NAME = ".neuronlint_cache"


@lru_cache(maxsize=1)
def analyser_fingerprint() -> str:
    """Hash of the static analyser's code: a changed checker invalidates cached results."""
    digest = hashlib.sha256(__version__.encode())
    package = Path(__file__).resolve().parent
    for path in sorted((package / "static").rglob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def entry_key(data: bytes, module_path: str, ruledb_fingerprint: str) -> str:
    digest = hashlib.blake2b(data, digest_size=20)
    digest.update(
        b"\0" + module_path.encode() + b"\0" + ruledb_fingerprint.encode() + analyser_fingerprint().encode()
    )
    return digest.hexdigest()


class Cache:
    def __init__(self, directory: Path):
        self.directory = directory / "v1"

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._path(key).read_bytes())
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not (self.directory.parent / ".gitignore").exists():
                (self.directory.parent / ".gitignore").write_text("*\n")
            # Write then rename so that parallel workers never read a half-written entry.
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as handle:
                json.dump(value, handle, separators=(",", ":"))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full disk only costs speed
