"""The analysis cache (keyed on content, database and analyser) and parallel workers give the same answers."""

from __future__ import annotations

import os
from pathlib import Path

from neuronlint import cache as cache_module
from tests.conftest import scan_paths

CODE = "import torch\nx = torch.ones(1).cuda()\n"


def _keys(result) -> list[tuple]:
    return [(f.path, f.line, f.column, f.rule, f.severity.value, f.message) for f in result.findings]


def test_warm_scan_reads_cache_and_matches_cold(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text(CODE)
    cache_dir = tmp_path / "cache"
    cold = scan_paths([src], cwd=tmp_path, cache_dir=cache_dir)
    entries = list((cache_dir / cache_module.CACHE_LAYOUT).rglob("*.json"))
    assert len(entries) == 1
    assert (cache_dir / ".gitignore").read_text() == "*\n"
    # Prove the warm run reads the entry: re-sign a doctored value and see the doctored line come back.
    key = entries[0].stem
    cache = cache_module.Cache(cache_dir)
    data = cache.get(key)
    data["detections"][0]["line"] = 99
    cache.put(key, data)
    warm = scan_paths([src], cwd=tmp_path, cache_dir=cache_dir)
    assert [f.line for f in warm.findings] == [99]
    assert _keys(cold)[0][2:] == _keys(warm)[0][2:]


def test_cache_misses_on_content_change(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CODE)
    cache_dir = tmp_path / "cache"
    scan_paths([tmp_path / "a.py"], cwd=tmp_path, cache_dir=cache_dir)
    (tmp_path / "a.py").write_text("import torch\n\n\nx = torch.ones(1).cuda()\n")
    again = scan_paths([tmp_path / "a.py"], cwd=tmp_path, cache_dir=cache_dir)
    assert [f.line for f in again.findings] == [4]
    assert len(list((cache_dir / cache_module.CACHE_LAYOUT).rglob("*.json"))) == 2


def test_cache_key_covers_database_and_analyser(tmp_path: Path) -> None:
    key = cache_module.entry_key(CODE.encode(), "a.py", "db1")
    assert key != cache_module.entry_key(CODE.encode(), "a.py", "db2")
    assert key != cache_module.entry_key(CODE.encode(), "b.py", "db1")
    assert key == cache_module.entry_key(CODE.encode(), "a.py", "db1")
    assert len(cache_module.analyser_fingerprint()) == 16


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CODE)
    scan_paths([tmp_path], cwd=tmp_path, cache_dir=None)
    assert not list(tmp_path.rglob("*.json"))


def test_parallel_workers_match_serial(tmp_path: Path) -> None:
    variants = [
        CODE,
        "import torch\nif x.item() > 0:\n    y = x[x > 0]\n",
        "import triton\n",
        "def f(:\n",
        "import torch\nz = torch.zeros(2, dtype=torch.float64)\n",
    ]
    for index in range(40):  # enough files that the process pool is really used
        (tmp_path / f"m{index:02d}.py").write_text(variants[index % len(variants)])
    serial = scan_paths([tmp_path], cwd=tmp_path, jobs=1, select=["ALL"])
    parallel = scan_paths([tmp_path], cwd=tmp_path, jobs=2, select=["ALL"])
    assert len(serial.findings) >= 40
    assert _keys(serial) == _keys(parallel)


def test_a_killed_writers_temporary_entry_is_swept_by_the_next_writer(tmp_path: Path) -> None:
    """A scan killed between writing an entry and renaming it (SIGKILL, an out-of-memory kill)
    leaves `<pid>-*.tmp`; the next process that writes to that folder removes it, and leaves a live
    writer's file and anything not named by a pid alone."""
    import subprocess
    import sys

    cache = cache_module.Cache(tmp_path)
    key = "ab" + "0" * 62
    folder = cache._path(key).parent
    folder.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    orphan = folder / f"{int(dead.stdout)}-x1.tmp"
    live = folder / f"{os.getpid()}-x2.tmp"
    other = folder / "notes.tmp"
    for path in (orphan, live, other):
        path.write_bytes(b"half an entry")
    cache.put(key, {"detections": []})
    assert not orphan.exists()
    assert live.exists() and other.exists()
    assert cache._path(key).exists()


def test_an_interrupted_write_leaves_no_temporary_entry(tmp_path: Path, monkeypatch) -> None:
    """Ctrl-C between writing an entry and renaming it: the temporary file goes, the interrupt
    goes on."""
    import pytest

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(cache_module.os, "replace", interrupted)
    cache = cache_module.Cache(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        cache.put("cd" + "0" * 62, {"detections": []})
    assert not list(tmp_path.rglob("*.tmp"))
