"""Load the rule database: the bundled `rules/` plus optional policy packs that add or override.

Reading the files is cheap; building the database from them (TOML parsing, validation against
`schema/`, `build.py`) is not, so `load_ruledb` keeps a compiled snapshot keyed by the files'
content hash (`snapshot.py`) and builds from the TOML only when the files changed. Either way the
result is the same `RuleDB`; `load_dirs` always builds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from neuronlint.ruledb.model import RuleDB, RuleDBError


def default_rules_dir() -> Path:
    """The database shipped with neuronlint (a symlink to the repository's `rules/`)."""
    return (Path(__file__).resolve().parent.parent / "rules").resolve()


_CACHE: dict[tuple[str, ...], RuleDB] = {}


def load_ruledb(extra_dirs: Sequence[Path | str] = ()) -> RuleDB:
    """Load and validate the bundled database, then each extra directory on top of it (once per
    process; across processes through the snapshot of the same files)."""
    from neuronlint.ruledb import snapshot

    dirs = [default_rules_dir(), *(Path(d) for d in extra_dirs)]
    key = tuple(str(d.resolve()) for d in dirs)
    if key not in _CACHE:
        files, fingerprint = read_files(dirs)
        content = snapshot.snapshot_key([(rank, str(path), raw) for rank, path, raw in files])
        db = snapshot.load(content, fingerprint)
        if db is None:
            db = _compile(files, fingerprint)
            snapshot.store(content, db)
        _CACHE[key] = db
    return _CACHE[key]


def load_dirs(dirs: Sequence[Path]) -> RuleDB:
    """Load the given directories in order (the first is the base database); no caching."""
    return _compile(*read_files(dirs))


def _compile(files: list[tuple[int, Path, bytes]], fingerprint: str) -> RuleDB:
    from neuronlint.ruledb.build import compile_files

    return compile_files(files, fingerprint)


def read_files(dirs: Sequence[Path]) -> tuple[list[tuple[int, Path, bytes]], str]:
    """Every `*.toml` of each directory as (rank, displayed path, bytes), and the fingerprint of
    them all (part of the scan cache key)."""
    from neuronlint.digests import blake2b

    digest = blake2b(digest_size=32)
    files: list[tuple[int, Path, bytes]] = []
    for rank, directory in enumerate(dirs):
        if not directory.is_dir():
            raise RuleDBError(f"{directory}: rules directory does not exist")
        paths = sorted(p for p in directory.rglob("*.toml") if not p.is_dir())
        if rank > 0 and not paths:
            raise RuleDBError(f"{directory}: no .toml files in this rules directory")
        for path in paths:
            try:
                raw = path.read_bytes()
            except OSError as exc:
                raise RuleDBError(
                    f"{_display(path)}: cannot read the rules file: {exc.strerror or exc}"
                ) from None
            digest.update(str(rank).encode() + str(path.relative_to(directory)).encode() + b"\0" + raw)
            files.append((rank, _display(path), raw))
    return files, digest.hexdigest()[:16]


def _display(path: Path) -> Path:
    """The path as error messages show it: relative to the working directory when below it."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path
