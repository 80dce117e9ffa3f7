"""[tool.neuronlint] discovery and validation, suppression comments, per-file ignores, excludes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuronlint.cli.options import ScanFlags
from neuronlint.config import ConfigError, find_pyproject, load_config
from tests.conftest import rules_at, scan_paths, scan_source


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_found_upward_and_applied(tmp_path: Path) -> None:
    _write(
        tmp_path / "pyproject.toml",
        '[project]\nname="x"\n\n[tool.neuronlint]\ntarget = "trn1"\nsdk = "2.29"\nignore = ["NL110"]\n',
    )
    src = _write(
        tmp_path / "pkg" / "sub" / "train.py",
        "import torch\nx = torch.ones(2).cuda()\nDataLoader(d, pin_memory=True)\n",
    )
    assert find_pyproject(src) == tmp_path / "pyproject.toml"
    settings = ScanFlags(paths=[src]).resolve()
    assert (settings.options.target, settings.options.sdk) == ("trn1", "2.29")
    result = scan_paths([src], cwd=tmp_path, **_scan_kwargs(settings))
    assert rules_at(result.active) == ["NL101"]
    assert result.context.backend == "xla"


def _scan_kwargs(settings) -> dict:
    o = settings.options
    return {
        "sdk": o.sdk,
        "target": o.target,
        "ignore": o.ignore,
        "select": o.select,
        "exclude": o.exclude,
        "per_file_ignores": o.per_file_ignores,
        "config_root": o.config_root,
    }


def test_pyproject_without_our_table_is_skipped(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", '[tool.neuronlint]\ntarget = "trn3"\n')
    _write(tmp_path / "inner" / "pyproject.toml", '[project]\nname = "inner"\n')
    assert find_pyproject(tmp_path / "inner") == tmp_path / "pyproject.toml"


@pytest.mark.parametrize(
    "body, key, problem",
    [
        ('fail-on = "error"', "fail-on", "expected one of blocker, warning, info, never"),
        ("target = 3", "target", "expected a string"),
        ('select = "NL101"', "select", "expected an array of strings"),
        ('colour = "red"', "colour", "unknown key"),
        ("fail-on = 3", "fail-on", "expected a string"),
        ('[tool.neuronlint.per-file-ignores]\n"tests/*" = "NL101"', "per-file-ignores", "table of glob"),
        ('[[tool.neuronlint.trace]]\ninputs = ["long[2,8]"]', "entrypoint", "required string"),
    ],
)
def test_malformed_config_names_file_key_problem(tmp_path: Path, body: str, key: str, problem: str) -> None:
    path = _write(tmp_path / "pyproject.toml", "[tool.neuronlint]\n" + body + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert str(path) in message and f"'{key}'" in message and problem in message


def test_unknown_target_in_config_is_refused_with_the_chips_of_the_database(tmp_path: Path) -> None:
    """The chip list is rules/chips.toml: the database refuses an unknown chip, wherever it is written."""
    _write(tmp_path / "pyproject.toml", '[tool.neuronlint]\ntarget = "h100"\n')
    _write(tmp_path / "train.py", "x = 1\n")
    result = subprocess.run(
        [sys.executable, "-m", "neuronlint", "scan", ".", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    assert "unknown target 'h100'; expected one of: inf2, trn1, trn2, trn3" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "pyproject.toml", "[tool.neuronlint\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        find_pyproject(tmp_path)
    _ = path


def test_per_file_ignores_and_exclude_relative_to_config(tmp_path: Path) -> None:
    _write(
        tmp_path / "pyproject.toml",
        '[tool.neuronlint]\nexclude = ["legacy/*"]\n[tool.neuronlint.per-file-ignores]\n"tests/*" = ["NL1"]\n',
    )
    code = "import torch\nx = torch.ones(2).cuda()\n"
    for rel in ("src/a.py", "tests/test_a.py", "legacy/old.py"):
        _write(tmp_path / rel, code)
    sub = tmp_path / "src"
    settings = ScanFlags(paths=[tmp_path]).resolve()
    old = os.getcwd()
    os.chdir(sub)  # paths in reports are relative to the cwd; globs stay relative to the config
    try:
        result = scan_paths([tmp_path], cwd=sub, **_scan_kwargs(settings))
    finally:
        os.chdir(old)
    assert sorted({f.path for f in result.active}) == ["a.py"]
    # Explicit filenames (as pre-commit passes them) still honour exclude.
    explicit = scan_paths([tmp_path / "legacy/old.py"], cwd=tmp_path, **_scan_kwargs(settings))
    assert explicit.files == []


def test_suppression_comments(tmp_path: Path) -> None:
    source = (
        "import torch\n"
        "a = torch.ones(1).cuda()  # neuronlint: ignore[NL101] -- CPU CI box\n"
        "b = torch.ones(1).cuda()  # neuronlint: ignore[NL7]\n"
        "# neuronlint: ignore\n"
        "c = torch.ones(1).cuda()\n"
        "d = torch.ones(1).cuda()\n"
        's = "# neuronlint: ignore"; e = torch.ones(1).cuda()\n'
    )
    findings = scan_source(tmp_path, source)
    assert [(f.line, f.rule) for f in findings] == [(3, "NL101"), (6, "NL101"), (7, "NL101")]
    result = scan_paths([tmp_path / "snippet.py"], cwd=tmp_path, select=["ALL"])
    suppressed = {f.line: f.suppressed for f in result.findings if f.suppressed}
    assert suppressed == {2: "CPU CI box", 5: "suppressed in source"}
    assert [(path, entry["line"]) for path, entry in result.unused_suppressions] == [("snippet.py", 3)]


def test_file_level_suppression(tmp_path: Path) -> None:
    source = "# neuronlint: ignore-file[NL1] -- generated GPU-only benchmark\nimport torch\nx = torch.ones(1).cuda()\ny = x.item()\n"
    assert rules_at(scan_source(tmp_path, source)) == ["NL701"]


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuronlint", "scan", *args, "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_exclude_written_as_dot_slash_or_with_a_trailing_slash(tmp_path: Path) -> None:
    code = "import torch\nx = torch.ones(2).cuda()\n"
    for rel in ("src/a.py", "lib/b.py", "srcs/c.py"):
        _write(tmp_path / rel, code)
    for pattern in ("./src", "src/", "./src/", "src"):
        result = _cli([".", "--exclude", pattern, "--format", "concise"], tmp_path)
        assert sorted({line.split(":")[0] for line in result.stdout.splitlines()}) == [
            "lib/b.py",
            "srcs/c.py",
        ]


def test_literal_excludes_match_as_fnmatch_does() -> None:
    import fnmatch

    from neuronlint.discover import excluded

    def reference(path: str, patterns: list[str]) -> bool:
        parts = path.split("/")
        for pattern in (p.rstrip("/") for p in patterns):
            if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern + "/*"):
                return True
            if "/" not in pattern and any(fnmatch.fnmatch(part, pattern) for part in parts):
                return True
        return False

    paths = ["tests", "tests/a.py", "src/tests/b.py", "testsx/a.py", "a/test_utils.py", "docs.py", "a/b/c.py"]
    patterns = ["tests", "src/tests", "test_utils.py", "a/b", "docs", "c.py", "a", "b/c.py", "s"]
    for path in paths:
        for pattern in patterns:
            assert excluded(path, [pattern]) == reference(path, [pattern]), (path, pattern)


def test_a_named_file_that_an_exclude_skips_says_why(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", '[tool.neuronlint]\nexclude = ["vendor"]\n')
    _write(tmp_path / "vendor/lib.py", "import torch\nx = torch.ones(2).cuda()\n")
    _write(tmp_path / "gen/out.py", "import torch\nx = torch.ones(2).cuda()\n")
    result = _cli(["vendor/lib.py", "gen/out.py", "--exclude", "gen/*"], tmp_path)
    assert result.returncode == 0
    assert (
        f"neuronlint: vendor/lib.py: not scanned: it matches the exclude pattern 'vendor' "
        f"({tmp_path / 'pyproject.toml'}: [tool.neuronlint] key 'exclude')" in result.stderr
    )
    assert (
        "neuronlint: gen/out.py: not scanned: it matches the exclude pattern 'gen/*' (--exclude)"
        in result.stderr
    )
    # pre-commit passes staged names and expects silence for excluded files
    quiet = _cli(["--pre-commit", "vendor/lib.py"], tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == ""
