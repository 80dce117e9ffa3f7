"""On-disk cache of per-file analysis results, which a scan never trusts.

An entry is keyed on the file's bytes, its module path, the rule database fingerprint and the source
of every module that produces a cached result, so any change to one of them misses. Entries are small
files; a scan never holds more than one file's tree in memory.

The cache directory usually sits inside the scanned repository, so a pull request can commit entries
into it. An entry is therefore only used when (1) it carries a MAC (keyed BLAKE2b) made with a per-user
secret that lives outside every repository (`secret_path()`, created on first use with mode 0600),
and (2) its value has exactly the shape `analyze` produces (`valid_result`). Anything else - a forged,
truncated, re-encoded or wrong-shaped entry - is discarded and the file is analysed again, and the
fresh result overwrites the bad entry.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from neuronlint import __version__
from neuronlint.digests import blake2b, compare_digest, keyed_mac

CACHE_DIR_NAME = ".neuronlint_cache"
CACHE_LAYOUT = "v2"  # v1 entries were unsigned; they are never read

# Every module whose code shapes a cached result (the per-file analysis). A test checks that this
# covers every neuronlint module the analysis imports.
_RESULT_SOURCES = (
    "static",
    "filetypes",
    "filekinds.py",
    "discover.py",
    "filters/suppressions.py",
    "neuron_packages.py",
    "cache.py",
)


@lru_cache(maxsize=1)
def analyser_fingerprint() -> str:
    """Hash of the code that produces cached results: a changed checker invalidates them."""
    digest = blake2b(__version__.encode(), digest_size=32)
    package = Path(__file__).resolve().parent
    for source in _RESULT_SOURCES:
        target = package / source
        paths = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for path in paths:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def entry_key(data: bytes, module_path: str, ruledb_fingerprint: str) -> str:
    digest = blake2b(data, digest_size=20)
    digest.update(
        b"\0" + module_path.encode("utf-8", "surrogateescape") + b"\0" + ruledb_fingerprint.encode()
    )
    digest.update(analyser_fingerprint().encode())
    return digest.hexdigest()


def secret_path() -> Path:
    """Where the per-user cache secret lives: the user's cache directory, never a repository."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "neuronlint" / "cache-secret"


_PROCESS_SECRET = os.urandom(32)  # used when the user's secret cannot be stored


@lru_cache(maxsize=4)
def _secret(path: Path) -> bytes:
    try:
        data = path.read_bytes()
        if len(data) >= 32 and (path.stat().st_mode & 0o077) == 0:
            return data[:64]
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # only when writing (a scan that only reads does not import it)

        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")
        with os.fdopen(fd, "wb") as handle:  # mkstemp creates the file with mode 0600
            handle.write(os.urandom(32))
        os.replace(tmp, path)
        return path.read_bytes()[:64]
    except OSError:
        # No writable home (a locked-down CI user): entries this process writes are only valid for
        # this process, which is still correct, only slower.
        return _PROCESS_SECRET


def _mac(key: str, payload: bytes) -> str:
    return keyed_mac(_secret(secret_path()), key.encode() + b"\0" + payload)


# ---- the shape of a cached result (FileResult.to_dict) ----------------------------------------
def _str_list(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _int(value: Any) -> bool:
    return type(value) is int


def _detection(value: Any) -> bool:
    return (
        type(value) is dict
        and type(value.get("rule")) is str
        and all(_int(value.get(k)) for k in ("line", "column", "end_line", "end_column"))
        and type(value.get("facts")) is dict
        and type(value.get("snippet", "")) is str
    )


def _import_site(value: Any) -> bool:
    return type(value) is list and len(value) == 4 and type(value[0]) is str and all(map(_int, value[1:]))


_RESULT_KEYS = frozenset(
    {
        "path",
        "detections",
        "imports",
        "defines_kernels",
        "extension_modules",
        "lines",
        "parsed",
        "suppressions",
        "import_sites",
        "python_names",
        "kernel_entries",
        "imports_without_fallback",
    }
)


def valid_result(value: Any) -> bool:
    """Whether `value` has exactly the shape of a per-file analysis result."""
    return (
        type(value) is dict
        and set(value) == _RESULT_KEYS
        and type(value["path"]) is str
        and type(value["detections"]) is list
        and all(map(_detection, value["detections"]))
        and all(
            _str_list(value[k])
            for k in (
                "imports",
                "defines_kernels",
                "extension_modules",
                "python_names",
                "imports_without_fallback",
            )
        )
        and _int(value["lines"])
        and type(value["parsed"]) is bool
        and type(value["suppressions"]) is list
        and all(type(s) is dict for s in value["suppressions"])
        and type(value["import_sites"]) is list
        and all(map(_import_site, value["import_sites"]))
        and type(value["kernel_entries"]) is dict
        and all(type(k) is str and type(v) is str for k, v in value["kernel_entries"].items())
    )


def _writer_gone(name: str) -> bool:
    """Whether the process that named a temporary entry `<pid>-....tmp` no longer exists."""
    pid = name.partition("-")[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False  # alive under another user, or not a pid at all
    return False


class Cache:
    def __init__(self, directory: Path):
        self.directory = directory / CACHE_LAYOUT
        self._swept: set[Path] = set()

    def _sweep(self, folder: Path) -> None:
        """Remove the temporary entries of writers that died before renaming them (a scan killed
        with SIGKILL, `timeout -s KILL`, an out-of-memory kill), once per folder this process writes
        to. A live writer's file is left alone; removing one by mistake (its pid reused elsewhere)
        would only make that writer's rename fail, which costs speed, never a result."""
        self._swept.add(folder)
        try:
            names = [entry.name for entry in os.scandir(folder) if entry.name.endswith(".tmp")]
        except OSError:
            return
        for name in names:
            if _writer_gone(name):
                try:
                    os.unlink(folder / name)
                except OSError:
                    pass

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry for `key` if it is signed with this user's secret and well-formed, else None."""
        try:
            raw = self._path(key).read_bytes()
        except OSError:
            return None
        mac, _, payload = raw.partition(b"\n")
        try:
            if not compare_digest(mac.decode("ascii"), _mac(key, payload)):
                return None
            value = json.loads(payload)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
        return value if valid_result(value) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        try:
            payload = json.dumps(value, separators=(",", ":")).encode("utf-8", "surrogateescape")
        except (TypeError, ValueError):
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not (self.directory.parent / ".gitignore").exists():
                (self.directory.parent / ".gitignore").write_text("*\n")
            if path.parent not in self._swept:
                self._sweep(path.parent)
            # Write then rename so that parallel workers never read a half-written entry. The
            # writer's pid names the temporary file, so that a later scan can tell an orphan.
            import tempfile  # only when writing

            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{os.getpid()}-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(_mac(key, payload).encode("ascii") + b"\n" + payload)
                os.replace(tmp, path)
            except BaseException:  # Ctrl-C or a write error between the two: no file left behind
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass  # a read-only or full disk only costs speed
