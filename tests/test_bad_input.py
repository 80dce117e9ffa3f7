"""Bad input never aborts a scan and never shows a traceback: each problem is a finding or a one-line error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from neuronlint.pipeline import MAX_FILE_BYTES, _analyze, _init_worker
from neuronlint.ruledb import load_ruledb
from neuronlint.static.data import build_static_data
from tests.conftest import scan_paths

CUDA_LINE = b"import torch\nx = torch.ones(1).cuda()\n"


def _scan(tmp_path: Path):
    return scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])


def _by_file(result) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for f in result.active:
        out.setdefault(f.path, []).append((f.line, f.rule))
    return out


def test_syntax_error_is_reported_with_location_and_scan_continues(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_bytes(b"import torch\n\ndef f(:\n    pass\n")
    (tmp_path / "good.py").write_bytes(CUDA_LINE)
    result = _scan(tmp_path)
    files = _by_file(result)
    assert files["good.py"] == [(2, "NL101")]
    [(line, rule)] = files["broken.py"]
    assert (line, rule) == (3, "NL001")
    finding = next(f for f in result.active if f.path == "broken.py")
    assert finding.category == "parse-error" and finding.column > 1
    assert "could not parse" in finding.message


def test_encodings_bom_cookie_and_invalid_bytes(tmp_path: Path) -> None:
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + CUDA_LINE)
    (tmp_path / "latin1.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n" + CUDA_LINE)
    (tmp_path / "invalid.py").write_bytes(b"name = '\xff\xfe'\n" + CUDA_LINE)
    files = _by_file(_scan(tmp_path))
    assert files["bom.py"] == [(2, "NL101")]
    assert files["latin1.py"] == [(4, "NL101")]
    assert [rule for _, rule in files["invalid.py"]] == [
        "NL001"
    ]  # undecodable as UTF-8: reported, not crashed


def test_empty_binary_and_huge_files(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "binary.py").write_bytes(b"\x7fELF\x00\x00\x01torch.cuda")
    (tmp_path / "huge.py").write_bytes(b"x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    files = _by_file(_scan(tmp_path))
    assert "empty.py" not in files
    assert files["binary.py"] == [(1, "NL001")]
    assert files["huge.py"] == [(1, "NL001")]


def test_deep_nesting_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text("import torch\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    (tmp_path / "good.py").write_bytes(CUDA_LINE)
    files = _by_file(_scan(tmp_path))
    assert files["good.py"] == [(2, "NL101")]
    assert [rule for _, rule in files.get("deep.py", [])] in ([], ["NL001"], ["NL002"])


def test_symlink_loop_and_dangling_link(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "model.py").write_bytes(CUDA_LINE)
    os.symlink(tmp_path, pkg / "loop")  # a directory cycle
    os.symlink(tmp_path / "missing.py", pkg / "dangling.py")
    files = _by_file(_scan(tmp_path))
    assert files == {"pkg/model.py": [(2, "NL101")]}


def test_unreadable_file_is_a_finding() -> None:
    db = load_ruledb()
    _init_worker(build_static_data(db), None, db.fingerprint)
    result = _analyze(("/nonexistent/dir/gone.py", "gone.py"))  # e.g. deleted between discovery and analysis
    [detection] = result["detections"]
    assert detection["rule"] == "NL001" and "cannot read" in detection["facts"]["detail"]


def test_unreadable_file_by_permissions(tmp_path: Path) -> None:
    path = tmp_path / "secret.py"
    path.write_bytes(CUDA_LINE)
    path.chmod(0)
    try:
        if os.access(
            path, os.R_OK
        ):  # root reads anything: nothing to observe, the line above proves the path
            return
        files = _by_file(_scan(tmp_path))
        assert [rule for _, rule in files["secret.py"]] == ["NL001"]
    finally:
        path.chmod(0o644)


def test_malformed_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["flash-attn>=2"\n')
    (tmp_path / "train.py").write_bytes(CUDA_LINE)
    # A broken pyproject.toml that does not mention neuronlint is not our configuration: the scan runs.
    cli = subprocess.run(
        [sys.executable, "-m", "neuronlint", "scan", "train.py", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 1 and "NL101" in cli.stdout and not cli.stderr
    # One that does may be our configuration: unreadable config is a usage error (exit 2).
    (tmp_path / "pyproject.toml").write_text('[tool.neuronlint]\nselect = ["NL1"\n')
    cli = subprocess.run(
        [sys.executable, "-m", "neuronlint", "scan", "train.py", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 2 and "Traceback" not in cli.stderr
    assert "pyproject.toml: not valid TOML" in cli.stderr and len(cli.stderr.strip().splitlines()) == 1
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["flash-attn>=2"\n')
    # Scanned as a build input, it is a parse-error finding like any other file.
    files = _by_file(scan_paths([tmp_path / "pyproject.toml"], cwd=tmp_path, select=["ALL"]))
    assert [rule for _, rule in files["pyproject.toml"]] == ["NL001"]
