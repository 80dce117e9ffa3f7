"""Hostile input never crashes the scan, injects into CI, or hides a finding.

Each test is a case of the reliability probe (shared review "reliability"), named by its row
number there, rebuilt from the reproduction. Large inputs are generated on the fly and every case is
bounded (a few seconds).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neuronlint import cache as cache_module
from neuronlint.config import ConfigError, find_pyproject, load_config
from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.model import RuleDBError
from neuronlint.static import parse_guard
from tests.conftest import scan_paths

CUDA = b"import torch\nx = torch.zeros(1).cuda()\n"


def _cli(args: list[str], cwd: Path, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neuronlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def _by_file(result) -> dict[str, list[tuple[int, str, str]]]:
    files: dict[str, list[tuple[int, str, str]]] = {path: [] for path in result.files}
    for f in result.findings:
        files[f.path].append((f.line, f.rule, f.message))
    return files


# ---- 1. deep nesting and size (causes 1 and 8) -------------------------------------------------
DEEP_SHAPES = {
    "parens_100k": "y = " + "(" * 100_000 + "1" + ")" * 100_000,
    "boolop_10k": "y = " + " and ".join(["1"] * 10_001),
    "call_10k": "y = " + "f(" * 10_000 + "1" + ")" * 10_000,
    "list_10k": "y = " + "[" * 10_000 + "1" + "]" * 10_000,
    "dict_10k": "y = " + "{1:" * 10_000 + "1" + "}" * 10_000,
    "dict_200": "y = " + "{1:" * 200 + "1" + "}" * 200,
    "elif_10k": "if x:\n    pass\n" + "elif x:\n    pass\n" * 10_000,
    "unary_10k": "y = " + "-" * 10_000 + "1",
    "not_10k": "y = " + "not " * 10_000 + "1",
    "lambda_5k": "y = " + "lambda: " * 5_000 + "1",
    "attr_10k": "y = a" + ".b" * 10_000,
    "subscript_10k": "y = a" + "[0]" * 10_000,
    "callchain_10k": "y = torch" + ".cuda()" * 10_000,
    "binop_10k": "y = " + "+".join(["1"] * 10_000),
    "binop_100k": "y = " + "+".join(["1"] * 100_000),
    "ifexp_1k": "y = " + "1 if x else " * 1_000 + "1",
}


@pytest.mark.parametrize("shape", sorted(DEEP_SHAPES))
def test_1_20_deep_expression_is_one_finding(tmp_path: Path, shape: str) -> None:
    (tmp_path / "deep.py").write_bytes(CUDA + DEEP_SHAPES[shape].encode() + b"\n")
    started = time.monotonic()
    result = scan_paths([tmp_path], cwd=tmp_path)
    assert time.monotonic() - started < 10
    [finding] = [f for f in result.findings if f.path == "deep.py"]
    assert finding.rule == "NL001"
    assert parse_guard.TOO_DEEP in finding.message or parse_guard.TOO_LARGE in finding.message


def test_1_19_deep_file_in_the_cli_is_reported_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_bytes(CUDA + b"y = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n")
    (tmp_path / "b.py").write_bytes(CUDA + b"y = " + b" and ".join([b"1"] * 10_001) + b"\n")
    cli = _cli(["scan", ".", "--no-cache", "-f", "json"], tmp_path)
    assert cli.returncode == 1, cli.stderr
    report = json.loads(cli.stdout)
    by_path = {f["path"]: f["message"] for f in report["findings"] if f["rule"] == "NL001"}
    assert set(by_path) == {"deep.py", "b.py"}
    assert "too deeply nested to analyse" in by_path["b.py"]


def test_1_16_large_literal_is_too_large_quickly(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_bytes(b"import torch\nT = torch.tensor([" + b"1," * 1_000_000 + b"])\n")
    started = time.monotonic()
    [finding] = scan_paths([tmp_path], cwd=tmp_path).findings
    assert time.monotonic() - started < 10
    assert finding.rule == "NL001" and "too large to analyse" in finding.message


def test_deep_but_allowed_shapes_are_analysed(tmp_path: Path) -> None:
    # Just inside the limits, the analysis runs on the large stack and finds the .cuda() call.
    source = CUDA + b"y = " + b" and ".join([b"1"] * 400) + b"\nz = " + b"[" * 60 + b"1" + b"]" * 60 + b"\n"
    (tmp_path / "a.py").write_bytes(source)
    assert [f.rule for f in scan_paths([tmp_path], cwd=tmp_path).findings] == ["NL101"]


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_isolated_analysis_survives_crash_hang_and_memory(monkeypatch) -> None:
    import ctypes

    with pytest.raises(parse_guard.Isolated, match="SIGSEGV"):
        parse_guard.isolated(ctypes.string_at, 0)
    # The limit is the child's CPU time; a child that stops without using CPU meets the wall-clock
    # backstop (WALL_FACTOR times the limit) instead. On a loaded machine a spinning child gets a
    # fraction of a core, so its 1 s of CPU can take longer than the default backstop: this
    # assertion is about the CPU limit, so the backstop is moved out of its way.
    with monkeypatch.context() as patch:
        patch.setattr(parse_guard, "WALL_FACTOR", 120)
        with pytest.raises(parse_guard.Isolated, match="did not finish within 1 s of CPU time"):
            parse_guard.isolated(_spin, 30.0, timeout=1)
    assert parse_guard.isolated(time.sleep, 1.5, timeout=1) is None  # over 1 s of wall time: not the limit
    wall = parse_guard.WALL_FACTOR
    with pytest.raises(parse_guard.Isolated, match=f"did not finish within {wall} s$"):
        parse_guard.isolated(time.sleep, 30, timeout=1)
    with pytest.raises(parse_guard.Isolated, match="more than"):
        parse_guard.isolated(bytearray, 8 * 1024**3)
    assert parse_guard.isolated(sum, [1, 2, 3]) == 6


def test_fuzz_scanned_files_warnings_are_not_printed(tmp_path: Path) -> None:
    """Found by the long fuzz run: a scanned file's invalid escape reached the warnings machinery
    (the position pass parsed it again, and literal evaluation evaluated it)."""
    import warnings

    (tmp_path / "w.py").write_bytes(CUDA + b's = "\\:"\nif x is 1:\n    pass\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [f.rule for f in scan_paths([tmp_path], cwd=tmp_path).findings] == ["NL101"]
    assert [str(w.message) for w in caught] == []


def test_1_23_cr_only_line_endings_give_real_lines(tmp_path: Path) -> None:
    (tmp_path / "cr.py").write_bytes(b"import torch\r\rx = torch.zeros(1).cuda()\r")
    result = scan_paths([tmp_path], cwd=tmp_path)
    assert [(f.line, f.column, f.rule) for f in result.findings] == [(3, 20, "NL101")]
    assert result.lines == 3


# ---- 5. the cache (cause 5) ----------------------------------------------------------------------
def _poison(tmp_path: Path, cache_dir: Path, value) -> Path:
    """Write an entry as a repository could: right key, no valid signature."""
    data = (tmp_path / "evil.py").read_bytes()
    key = cache_module.entry_key(data, "evil.py", load_ruledb([]).fingerprint)
    path = cache_dir / cache_module.CACHE_LAYOUT / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


EMPTY_RESULT = {
    "path": "evil.py",
    "detections": [],
    "imports": [],
    "defines_kernels": [],
    "extension_modules": [],
    "lines": 2,
    "parsed": True,
    "suppressions": [],
    "import_sites": [],
    "python_names": [],
}


def test_4_16_a_committed_cache_entry_cannot_hide_findings(tmp_path: Path) -> None:
    (tmp_path / "evil.py").write_bytes(CUDA)
    cache_dir = tmp_path / ".neuronlint_cache"
    path = _poison(tmp_path, cache_dir, EMPTY_RESULT)
    # The entry a repository can compute, even with a signature line of its own.
    assert [
        f.rule for f in scan_paths([tmp_path / "evil.py"], cwd=tmp_path, cache_dir=cache_dir).findings
    ] == ["NL101"]
    path.write_text("0" * 64 + "\n" + json.dumps(EMPTY_RESULT))
    assert [
        f.rule for f in scan_paths([tmp_path / "evil.py"], cwd=tmp_path, cache_dir=cache_dir).findings
    ] == ["NL101"]


@pytest.mark.parametrize(
    "value",
    [{}, [], "x", 1, None, {**EMPTY_RESULT, "detections": "x"}, {**EMPTY_RESULT, "lines": "2"}],
    ids=["empty", "list", "str", "int", "null", "detections-str", "lines-str"],
)
def test_4_07_a_wrong_shaped_entry_is_discarded_and_replaced(tmp_path: Path, value) -> None:
    (tmp_path / "evil.py").write_bytes(CUDA)
    cache_dir = tmp_path / "cache"
    scan_paths([tmp_path / "evil.py"], cwd=tmp_path, cache_dir=cache_dir)
    [entry] = list((cache_dir / cache_module.CACHE_LAYOUT).rglob("*.json"))
    key = entry.stem
    # Even a correctly signed entry of the wrong shape is not trusted.
    payload = json.dumps(value).encode()
    entry.write_bytes(cache_module._mac(key, payload).encode() + b"\n" + payload)
    for _ in range(2):
        assert [
            f.rule for f in scan_paths([tmp_path / "evil.py"], cwd=tmp_path, cache_dir=cache_dir).findings
        ] == ["NL101"]
    assert cache_module.Cache(cache_dir).get(key)["detections"][0]["rule"] == "NL101"  # rewritten


def test_cache_secret_lives_outside_the_repository(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    secret = cache_module.secret_path()
    cache_module._secret(secret)
    assert secret.is_file() and secret.stat().st_mode & 0o777 == 0o600
    assert str(secret).startswith(str(tmp_path / "home-cache"))


def test_4_18_the_fingerprint_covers_every_module_the_analysis_runs() -> None:
    # Import exactly what a scan worker imports, in a fresh interpreter, and list neuronlint modules.
    code = (
        "import sys, json\n"
        "from neuronlint.static.engine import analyze_python, default_engine\n"
        "from neuronlint.static import build_inputs\n"
        "import neuronlint.static.checkers\n"
        "import neuronlint.filters.suppressions\n"
        "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items()"
        " if n.startswith('neuronlint') and getattr(m, '__file__', None))))\n"
    )
    files = json.loads(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )
    package = Path(cache_module.__file__).resolve().parent
    covered = []
    for source in cache_module._RESULT_SOURCES:
        target = package / source
        covered += list(target.rglob("*.py")) if target.is_dir() else [target]
    covered_set = {p.resolve() for p in covered}
    # Modules that do not shape a cached result: the package version (hashed), the rule database
    # (its data fingerprint is in the key) and shared data types.
    allowed = {"__init__.py", "findings.py"}
    missing = [
        f
        for f in files
        if Path(f).resolve() not in covered_set
        and Path(f).name not in allowed
        and "ruledb" not in Path(f).parts
        and "filters" != Path(f).parent.name  # filters/__init__.py only
    ]
    assert not missing, f"add to cache._RESULT_SOURCES: {missing}"
    assert package / "filters" / "suppressions.py" in covered


# ---- 11. git runs nothing the scanned repository names --------------------------------------
def test_2_06_git_does_not_run_the_scanned_repositorys_fsmonitor(tmp_path: Path) -> None:
    repo = tmp_path / "g"
    repo.mkdir()
    (repo / "good.py").write_bytes(CUDA)
    (repo / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=repo, check=True)
    marker = tmp_path / "PWNED"
    for key in ("core.fsmonitor", "filter.evil.clean", "filter.evil.process", "diff.evil.textconv"):
        subprocess.run(["git", "config", key, f"touch {marker}-{key}; cat"], cwd=repo, check=True)
    (repo / "good.py").write_bytes(CUDA + b"y = 1\n")  # a modified file makes diff run filters
    assert _cli(["scan", "g", "--no-cache"], tmp_path).returncode == 1
    assert _cli(["scan", ".", "--no-cache", "--diff-base", "HEAD"], repo).returncode in (0, 1)
    assert not list(tmp_path.glob("PWNED*"))


# ---- 13. malformed configuration and packs: one line naming the file and key, exit 2 ----------------
@pytest.mark.parametrize(
    "content, expected",
    [
        ("tool = 5\n", "key 'tool': expected a table"),
        ('tool = "my-neuronlint-thing"\n', "key 'tool': expected a table"),
        ("x = " + "[" * 100_000 + "]" * 100_000 + "\n[tool.neuronlint]\n", "nest too deeply"),
        ("x = " + "{a = " * 20_000 + "1" + "}" * 20_000 + "\n[tool.neuronlint]\n", "not valid TOML"),
    ],
    ids=["3.C11", "3.C12", "3.R25-config", "3.R26-config"],
)
def test_3_c11_malformed_pyproject_shapes(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=expected) as err:
        load_config(path)
    assert str(path) in str(err.value)


def test_3_c11_tool_not_a_table_is_not_our_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("tool = 5\n")
    (tmp_path / "a.py").write_bytes(CUDA)
    assert find_pyproject(tmp_path / "a.py") is None
    cli = _cli(["scan", "a.py", "--no-cache"], tmp_path)
    assert cli.returncode == 1 and "internal error" not in cli.stderr


def test_1_39_a_broken_pyproject_that_is_not_ours_is_scanned_not_refused(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b"\xff\xfe\x00binary")
    (tmp_path / "a.py").write_bytes(CUDA)
    cli = _cli(["scan", ".", "--no-cache", "-f", "json"], tmp_path)
    assert cli.returncode == 1, cli.stderr
    rules = sorted((f["path"], f["rule"]) for f in json.loads(cli.stdout)["findings"])
    assert rules == [("a.py", "NL101"), ("pyproject.toml", "NL001")]


def _pack(tmp_path: Path, files: dict[str, str]) -> Path:
    pack = tmp_path / "pack"
    pack.mkdir()
    for name, text in files.items():
        (pack / name).write_text(text)
    return pack


OVERRIDE = '[[rule]]\nid = "NL101"\nseverity = "warning"\n'


@pytest.mark.parametrize(
    "message",
    ["{0} {nosuchfact}", "{symbol.__class__.__mro__}", "{symbol[0]}", "{"],
    ids=["3.R18-positional", "2.07-attribute", "index", "unbalanced"],
)
def test_3_r18_pack_message_templates_are_checked_at_load(tmp_path: Path, message: str) -> None:
    pack = _pack(tmp_path, {"a.toml": f'[[rule]]\nid = "NL101"\nmessage = {json.dumps(message)}\n'})
    with pytest.raises(RuleDBError, match=r"a\.toml.*key 'message'"):
        load_ruledb([pack])


def test_3_r21_pack_entries_that_are_not_files(tmp_path: Path) -> None:
    pack = _pack(tmp_path, {"a.toml": OVERRIDE})
    (pack / "x.toml").mkdir()  # a directory named like a rules file: walked, not read
    assert load_ruledb([pack]).rules["NL101"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.toml").write_text(OVERRIDE)
    (other / "y.toml").symlink_to(other / "missing.toml")
    with pytest.raises(RuleDBError, match=r"y\.toml: cannot read the rules file"):
        load_ruledb([other])


def test_3_r25_deeply_nested_pack(tmp_path: Path) -> None:
    pack = _pack(tmp_path, {"a.toml": "x = " + "[" * 100_000 + "]" * 100_000 + "\n"})
    with pytest.raises(RuleDBError, match=r"a\.toml: not valid TOML"):
        load_ruledb([pack])
    cli = _cli(["scan", ".", "--no-cache", "--rules-dir", str(pack)], tmp_path)
    assert cli.returncode == 2 and "internal error" not in cli.stderr and "a.toml" in cli.stderr


def test_3_r24_unreadable_pack(unprivileged) -> None:
    pack = unprivileged.root / "pack"
    pack.mkdir()
    (pack / "a.toml").write_text(OVERRIDE)
    (pack / "a.toml").chmod(0)
    (unprivileged.root / "good.py").write_bytes(CUDA)
    unprivileged.cannot_read(pack / "a.toml")
    done = unprivileged.run(["scan", "good.py", "--no-cache", "--rules-dir", str(pack)])
    assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
    assert "cannot read the rules file" in done.stderr and "a.toml" in done.stderr, done.stderr


# ---- 9 and 12. tracing leaves nothing behind, its timeout and output are bounded ---------------
CONTAINED_MODEL = """
import os, subprocess, sys, time
import torch


class Tiny(torch.nn.Module):
    def forward(self, x):
        return x + 1


def popen_grandchild():
    subprocess.Popen(["sleep", "{mark}1"])
    return Tiny()


def session_grandchild():
    subprocess.Popen(["sleep", "{mark}2"], start_new_session=True)
    return Tiny()


def forks():
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "{mark}3"])
    return Tiny()


def grandchild_then_exit():
    subprocess.Popen(["sleep", "{mark}4"])
    os._exit(7)


def floods():
    chunk = "x" * 65536
    while True:
        sys.stdout.write(chunk)


def forges_progress():
    # Rewrites its own progress file with alternating target numbers, which used to reset the timer.
    path = os.path.join(sys.argv[2], "progress.jsonl")
    n = 0
    while True:
        with open(path, "a") as handle:
            handle.write('{{"target": %d, "stage": "build", "time": %f}}\\n' % (n % 2, time.time()))
        n += 1
        time.sleep(0.2)


def _grandchildren():
    subprocess.Popen(["sleep", "{mark}5"])
    subprocess.Popen(["sleep", "{mark}6"], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        os.execvp("sleep", ["sleep", "{mark}7"])


def big_stdout():
    sys.stdout.write("x" * (32 * 1024 * 1024))  # 6.10 wrote 100 MB; the cap is now 64 MiB (6.11)
    return Tiny()


class Hostile(Exception):
    pass


def raises_escapes():  # 6.12: scanned text in an exception message
    raise Hostile("bad \\x1b[31mred\\x1b[0m ::error::forged %0A <script>x</script>\\nsecond line")


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("str fails")


def raises_base():
    class Odd(BaseException):
        pass

    raise Odd("a BaseException subclass")


def raises_keyboard_interrupt():
    raise KeyboardInterrupt


def exits_zero():
    sys.exit(0)


def raises_unprintable():
    raise Unprintable()


def raises_huge():
    raise ValueError("m" * (20 * 1024 * 1024))


def returns_42():
    return 42


def returns_none():
    return None


def returns_a_class():
    return Tiny


class Weird:
    def __getattr__(self, name):
        raise RuntimeError("no attributes")


def returns_weird():
    return Weird()


def segfaults():
    import ctypes

    ctypes.string_at(0)


def exits_hard():
    os._exit(3)


def hangs():
    _grandchildren()
    time.sleep(10000)


def hangs_holding_the_gil():
    import ctypes

    _grandchildren()
    ctypes.PyDLL(None).sleep(10000)  # a native call that keeps the GIL: no Python thread runs
"""


def _alive(mark: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if mark.encode() in cmdline:
                try:
                    state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                except OSError:
                    continue
                if state != "Z":
                    found.append(cmdline.decode(errors="replace"))
    return found


@pytest.fixture
def contained_model(tmp_path: Path):
    pytest.importorskip("torch")
    mark = f"6{os.getpid() % 1000:03d}.{time.time_ns() % 10**6:06d}"
    (tmp_path / "cases.py").write_text(CONTAINED_MODEL.format(mark=mark))
    yield tmp_path, mark
    for line in _alive(mark):  # never leave strays, even when a test fails
        subprocess.run(["pkill", "-KILL", "-f", line.split("\0")[1]], check=False)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="containment uses /proc and prctl")
def test_6_05_trace_leaves_no_process_behind(contained_model) -> None:
    from neuronlint.graph.runner import run_children

    root, mark = contained_model
    targets = [
        {"entrypoint": f"cases.py:{name}", "inputs": ["float32[2,4]"], "kwargs": {}}
        for name in ("popen_grandchild", "session_grandchild", "forks", "grandchild_then_exit")
    ]
    outcomes = run_children(targets, root, timeout=60)
    assert [o.status for o in outcomes][:3] == ["ok", "ok", "ok"], [o.reason for o in outcomes]
    assert outcomes[3].status == "crashed"
    time.sleep(0.2)
    assert _alive(mark) == []


@pytest.mark.slow
def test_6_10_to_6_14_what_a_model_throws_is_a_finding(contained_model) -> None:
    """Output, exceptions of every kind and wrong return values: one outcome each, the parent
    unaffected, every message one line (the first line of the exception, capped)."""
    from neuronlint.graph.runner import run_children

    root, _ = contained_model
    names = [
        "big_stdout",
        "raises_escapes",
        "raises_base",
        "raises_keyboard_interrupt",
        "exits_zero",
        "raises_unprintable",
        "raises_huge",
        "returns_42",
        "returns_none",
        "returns_a_class",
        "returns_weird",
    ]
    targets = [{"entrypoint": f"cases.py:{n}", "inputs": ["float32[2,4]"], "kwargs": {}} for n in names]
    outcomes = dict(zip(names, run_children(targets, root, timeout=300), strict=True))
    assert outcomes["big_stdout"].status == "ok" and outcomes["big_stdout"].result["ok"]
    for name in names[1:]:
        outcome = outcomes[name]
        assert outcome.status == "ok", (name, outcome.reason)  # recorded by the child, not a crash
        assert not outcome.result["ok"], name
        text = json.dumps(outcome.result["failures"])
        assert len(text) < 200_000, name  # the 20 MB message is capped
    reason = outcomes["raises_escapes"].result["failures"][0]["reason"]
    assert reason.startswith("Hostile: bad") and "second line" not in reason  # the first line only
    assert "str fails" in json.dumps(outcomes["raises_unprintable"].result["failures"])
    for name, kind in (("returns_42", "int"), ("returns_none", "NoneType"), ("returns_a_class", "type")):
        assert kind in json.dumps(outcomes[name].result["failures"]), name


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="containment uses /proc and prctl")
def test_6_15_and_8_15_scan_trace_survives_bad_models_and_prints_safely(contained_model) -> None:
    """`scan --trace` with a crashing, a raising and an exiting model between good ones: every
    model gets its outcome, later ones are traced in fresh children, and the exception text (an
    ESC sequence, `::error::`) reaches the text report shown, never executed."""
    import re

    root, _ = contained_model
    entries = ["segfaults", "raises_escapes", "exits_hard", "returns_42"]
    (root / "pyproject.toml").write_text(
        "[tool.neuronlint]\n"
        + "".join(
            f'[[tool.neuronlint.trace]]\nentrypoint = "cases.py:{name}"\ninputs = ["float32[2,4]"]\n'
            for name in entries
        )
    )
    (root / "good.py").write_bytes(CUDA)
    for env in ({}, {"FORCE_COLOR": "1"}):
        base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
        cli = _cli(["scan", ".", "--no-cache", "--trace", "--full"], root, timeout=600, env={**base, **env})
        assert cli.returncode == 1, cli.stderr[-2000:]
        assert "internal error" not in cli.stderr
        assert "NL014" in cli.stdout and "NL015" in cli.stdout and "NL101" in cli.stdout
        assert "\\x1b[31mred" in cli.stdout  # shown as text
        styles_removed = re.sub(r"\x1b\[[0-9;]*m", "", cli.stdout)  # only our own, when forced
        _no_command_lines(styles_removed)
        if not env:
            assert styles_removed == cli.stdout


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="containment uses /proc and prctl")
def test_6_11_and_6_16_output_cap_and_timeout_on_our_clock(contained_model) -> None:
    from neuronlint.graph import runner

    root, _ = contained_model
    # The timeout from how long a child takes to start and trace a tiny model right now (start-up
    # has the same budget): a loaded machine makes the test slower, never wrong.
    started = time.monotonic()
    [baseline] = runner.run_children(
        [{"entrypoint": "cases.py:popen_grandchild", "inputs": ["float32[2,4]"], "kwargs": {}}],
        root,
        timeout=600,
    )
    assert baseline.status == "ok", baseline.reason
    timeout = float(max(12, math.ceil(4 * (time.monotonic() - started))))
    targets = [
        {"entrypoint": f"cases.py:{name}", "inputs": ["float32[2,4]"], "kwargs": {}}
        for name in ("floods", "forges_progress")
    ]
    started = time.monotonic()
    flood, forged = runner.run_children(targets, root, timeout=timeout)
    assert "more than 64 MiB of output" in flood.reason, flood.reason
    assert forged.status == "timeout", forged.reason
    # Two start-ups and the forged target's own timeout: it no longer runs for ever.
    assert time.monotonic() - started < 3 * timeout + 30


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="containment uses /proc and prctl")
@pytest.mark.parametrize(
    "entry, signum",
    [("hangs", 15), ("hangs", 9), ("hangs_holding_the_gil", 9)],
    ids=["SIGTERM", "SIGKILL", "SIGKILL-GIL-held"],
)
def test_6_17_killing_trace_kills_the_tracing_child(contained_model, entry: str, signum: int) -> None:
    """SIGTERM: the parent tears the group down. SIGKILL: the parent runs nothing, and the child's
    keeper (a process, so it works while the model holds the GIL) or its watchdog thread does it."""
    root, mark = contained_model
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neuronlint",
            "trace",
            f"cases.py:{entry}",
            "--input",
            "float32[2,4]",
            "--timeout",
            "300",
        ],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120  # start-up imports torch: generous under load
        while len(_alive(mark + "5") + _alive(mark + "6") + _alive(mark + "7")) < 3:
            assert time.monotonic() < deadline, "the traced model never started"
            time.sleep(0.2)
        from neuronlint.graph.runner import _descendants as descendants

        tracing = [pid for pid in descendants(process.pid) if b"neuronlint.graph.child" in _cmdline(pid)]
        assert len(tracing) >= 2, "no tracing child and keeper found"
        os.kill(process.pid, signum)
        process.wait(timeout=30)
        # Far below the 300 s timeout: only the teardown can have ended them.
        deadline = time.monotonic() + 20
        while (_running(tracing) or _alive(mark)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _running(tracing) == []
        assert _alive(mark) == []  # the grandchildren in the group, in a new session, forked
    finally:
        process.kill()


# ---- 1.21 and 10. the worker pool survives its workers and dies with its parent -------------------
def _crash_on(task: int) -> int:
    import ctypes

    if task in (7, 23):
        ctypes.string_at(0)  # SIGSEGV, as LibCST's native parser did on deep files
    if task == 30:
        time.sleep(60)
    return task * 2


def test_1_21_a_dead_or_hung_worker_costs_one_file() -> None:
    from neuronlint import workers

    started = time.monotonic()
    results = workers.run(_crash_on, list(range(40)), 2, lambda task, why: why, batch=3, task_timeout=3)
    assert time.monotonic() - started < 30
    assert "SIGSEGV" in results[7] and "SIGSEGV" in results[23]
    assert "did not finish within 3 s" in results[30]
    assert [r for i, r in enumerate(results) if i not in (7, 23, 30)] == [
        i * 2 for i in range(40) if i not in (7, 23, 30)
    ]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _running(pids: list[int]) -> list[int]:
    """The pids that are still running (a zombie has exited; only its parent's wait is missing)."""
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def _descendants(pid: int) -> list[int]:
    from neuronlint.graph.runner import _descendants as descendants

    return descendants(pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize("signum", [15, 9], ids=["SIGTERM", "SIGKILL"])
def test_4_12_workers_exit_when_the_parent_is_killed(tmp_path: Path, signum: int) -> None:
    for index in range(400):
        (tmp_path / f"m{index}.py").write_bytes(CUDA * 50)
    process = subprocess.Popen(
        [sys.executable, "-m", "neuronlint", "scan", ".", "--no-cache", "-j", "2"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while len(_descendants(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _descendants(process.pid)
        assert len(workers) >= 2
        os.kill(process.pid, signum)
        process.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _running(workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(workers)
    finally:
        process.kill()


_ORPHAN_PARENT = """
import sys, time
from neuronlint import workers

if sys.argv[1] == "no-pdeathsig":
    workers._die_with_parent = lambda: None  # only the portable checks: end of pipe, parent pid


def slow(task):
    time.sleep(0.2)
    return task


workers.run(slow, list(range(10_000)), 2, lambda task, why: why, batch=2)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize("mode", ["pdeathsig", "no-pdeathsig"])
def test_4_12_pool_workers_exit_when_the_parent_is_sigkilled(tmp_path: Path, mode: str) -> None:
    """A SIGKILLed parent runs no clean-up: its workers must notice by themselves, with the
    kernel's parent-death signal (Linux) and, without it, by the portable checks."""
    (tmp_path / "parent.py").write_text(_ORPHAN_PARENT)
    process = subprocess.Popen(
        [sys.executable, "parent.py", mode],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(_descendants(process.pid)) < 2:
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.05)
        workers = _descendants(process.pid)
        time.sleep(0.5)  # the workers are busy on their batches
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        deadline = time.monotonic() + 15  # the checks run every second; load can delay them
        while _running(workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(workers)
    finally:
        process.kill()
        for pid in _running(workers):  # never leave strays, even when the test fails
            os.kill(pid, signal.SIGKILL)


def test_1_21_deep_file_among_many_with_jobs(tmp_path: Path) -> None:
    for index in range(40):
        (tmp_path / f"f{index}.py").write_bytes(CUDA)
    (tmp_path / "deep.py").write_bytes(CUDA + b"y = " + b"(" * 100_000 + b"1" + b")" * 100_000 + b"\n")
    result = scan_paths([tmp_path], cwd=tmp_path, jobs=2)
    files = _by_file(result)
    assert [rule for _, rule, _ in files["deep.py"]] == ["NL001"]
    assert all([rule for _, rule, _ in files[f"f{i}.py"]] == ["NL101"] for i in range(40))


# ---- 13. special files named on the command line ------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_1_36_fifo_named_explicitly_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "a.py").write_bytes(CUDA)
    cli = _cli(["scan", "fifo.py", "a.py", "--no-cache", "-f", "json"], tmp_path, timeout=30)
    findings = {(f["path"], f["rule"]) for f in json.loads(cli.stdout)["findings"]}
    assert findings == {("fifo.py", "NL001"), ("a.py", "NL101")}


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_1_37_dev_zero_named_explicitly_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "z.py").symlink_to("/dev/zero")
    started = time.monotonic()
    [finding] = scan_paths([tmp_path / "z.py"], cwd=tmp_path).findings
    assert finding.rule == "NL001" and "not a regular file" in finding.message
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    "content, problem",
    [
        ("build-system = 1\n", "key 'build-system'"),
        ("project = 'x'\n", "key 'project'"),
        ("[project]\noptional-dependencies = ['a']\n", "key 'project.optional-dependencies'"),
        ("[build-system]\nrequires = 5\n", "key 'build-system.requires'"),
        ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "nest too deeply"),
    ],
    ids=["3.C28", "3.C29", "3.C30", "3.C31", "deep"],
)
def test_3_c28_malformed_scanned_pyproject_is_nl001(tmp_path: Path, content: str, problem: str) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text(content)
    [finding] = scan_paths([sub / "pyproject.toml"], cwd=tmp_path).findings
    assert finding.rule == "NL001" and problem in finding.message


def test_3_c28_malformed_but_usable_pyproject_keeps_its_other_findings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = 5\n[project]\ndependencies = ["cupy-cuda12x"]\n'
    )
    rules = sorted(f.rule for f in scan_paths([tmp_path / "pyproject.toml"], cwd=tmp_path).findings)
    assert rules[0] == "NL001" and len(rules) == 2


def test_1_40_trace_discover_skips_a_deep_file(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    )
    (tmp_path / "deep.py").write_bytes(b"import torch\ny = " + b"+".join([b"1"] * 10_000) + b"\n")
    (tmp_path / "deep2.py").write_bytes(b"import torch\ny = " + b"-" * 10_000 + b"1\n")
    cli = _cli(["trace", "--discover", "."], tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert "internal error" not in cli.stderr and "model.py" in cli.stdout


@pytest.mark.parametrize(
    "content", ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000], ids=["5.B16", "5.B23"]
)
def test_5_b16_deeply_nested_baseline(tmp_path: Path, content: str) -> None:
    (tmp_path / "a.py").write_bytes(CUDA)
    (tmp_path / "b.json").write_text(content)
    cli = _cli(["scan", "a.py", "--no-cache", "--baseline", "b.json"], tmp_path)
    assert cli.returncode == 2 and "internal error" not in cli.stderr
    assert "b.json" in cli.stderr and len(cli.stderr.strip().splitlines()) == 1


# ---- 8. output-side injection ------------------------------------------------------------------
HOSTILE_NAMES = [
    "javascript:document.title='XSS-RAN'<!--.py",
    "<img src=x onerror=alert(1)>.py",
    "md`<b>bold<b>` [click](https:evil.example) x.py",
    "::warning title=FORGED::via file name.py",
    "\x1b[31mansi_name\x1b[0m.py",
    "new\n::error::NEWLINE-NAME-INJECT.py",
    "x##[error]FAKE-FROM-FILENAME.py",
]


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    root = tmp_path / "x"
    root.mkdir()
    for name in HOSTILE_NAMES:
        (root / name).write_bytes(CUDA)
    return root


def test_8_12_html_report_links_are_relative_and_never_a_scheme(hostile_tree: Path) -> None:
    import re

    cli = _cli(["report", ".", "--format", "html", "-o", "report.html", "--no-cache"], hostile_tree)
    assert cli.returncode in (0, 1), cli.stderr
    html = (hostile_tree / "report.html").read_text()
    hrefs = re.findall(r'href="([^"]*)"', html)
    file_links = [h for h in hrefs if not h.startswith(("#", "https://"))]
    assert file_links and all(h.startswith(("./", "../")) for h in file_links), file_links
    assert not any(h.lower().startswith("javascript") for h in hrefs)


def test_8_10_markdown_report_has_no_raw_html_or_scheme_links(hostile_tree: Path) -> None:
    cli = _cli(["report", ".", "--format", "markdown", "--no-cache"], hostile_tree)
    assert cli.returncode in (0, 1), cli.stderr
    assert "<img" not in cli.stdout and "<b>" not in cli.stdout
    assert "(javascript:" not in cli.stdout and "(<javascript:" not in cli.stdout


@pytest.fixture
def injecting_repo(tmp_path: Path) -> Path:
    """The probe's output-injection repository: hostile names, source lines and dependency strings."""
    root = tmp_path / "r"
    root.mkdir()
    (root / "!many.py").write_text(
        "import torch\n" + "".join(f"x{i} = torch.zeros(1).cuda()\n" for i in range(12))
    )
    for name in HOSTILE_NAMES:
        (root / name).write_bytes(CUDA)
    (root / "a.py").write_bytes(
        b'import torch\nx = torch.zeros(1).cuda(); s = "\x1b[2J\x1b[31mRED\x1b]8;;https://evil\x07link"\n'
        b's = """\n::add-mask::hunter2""".cuda()\n'
        b't = """\n  ::error file=fake.py,line=1::forged ##[warning]x""".cuda()\n'
    )
    deps = ", ".join(
        json.dumps(f"cupy-cuda12x\n::error title=DEP::FORGED-{i}\x1b[31m ##[error]D") for i in range(12)
    )
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\ndependencies = [{deps}]\n')
    return root


def _no_command_lines(output: str, own: tuple[str, ...] = ()) -> None:
    assert "\x1b" not in output and "\x07" not in output
    assert "##[" not in output
    for line in output.splitlines():
        if line.startswith(own):
            continue
        assert not line.lstrip().startswith("::"), line


def test_8_02_github_format_every_line_is_ours(injecting_repo: Path) -> None:
    cli = _cli(
        ["scan", ".", "--no-cache", "-f", "github"],
        injecting_repo,
        env={**os.environ, "GITHUB_STEP_SUMMARY": ""},
    )
    assert cli.returncode == 1, cli.stderr
    lines = cli.stdout.splitlines()
    assert len(lines) > 20  # annotations and the overflow beyond GitHub's 10 per level
    assert all(line.startswith(("::error ", "::warning ", "::notice ", "neuronlint: ")) for line in lines)
    _no_command_lines(cli.stdout, own=("::error ", "::warning ", "::notice "))
    for line in lines:  # a message is one line: a newline in scanned text cannot start a command
        assert "\n" not in line and "%0A::error title=DEP" in cli.stdout


def test_8_06_text_format_neutralises_escapes_and_commands(injecting_repo: Path) -> None:
    cli = _cli(["scan", ".", "--no-cache", "--full"], injecting_repo)
    assert cli.returncode == 1, cli.stderr
    _no_command_lines(cli.stdout)
    assert "\\x1b[2J" in cli.stdout  # shown, not executed
    assert "add-mask" in cli.stdout  # the source line is shown, neutralised


@pytest.mark.parametrize("view", [["--full"], []], ids=["full", "triage"])
def test_8_07_forced_colour_adds_only_our_own_styles(injecting_repo: Path, view: list[str]) -> None:
    """FORCE_COLOR with output to a pipe (CI logs): rich writes its SGR styles, and nothing else.
    Stripping those styles must give exactly the plain report, which has no control character."""
    import re

    for name in ("[link=https:evil]markup.py", "[bold]b.py"):  # rich markup, were it parsed
        (injecting_repo / name).write_bytes(CUDA)
    base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    plain = _cli(["scan", ".", "--no-cache", *view], injecting_repo, env=base)
    forced = _cli(["scan", ".", "--no-cache", *view], injecting_repo, env={**base, "FORCE_COLOR": "1"})
    assert plain.returncode == forced.returncode == 1, forced.stderr
    assert "\x1b[" in forced.stdout  # the colour is on
    _no_command_lines(plain.stdout)
    styles_removed = re.sub(r"\x1b\[[0-9;]*m", "", forced.stdout)
    assert styles_removed == plain.stdout
    assert "\\x1b[2J" in forced.stdout and "\\x1b[31mansi_name" in forced.stdout  # shown, not run
    for line in styles_removed.splitlines():
        assert not line.lstrip().startswith("::"), line


def test_8_09_markdown_paths_are_code_spans_that_cannot_break_out(tmp_path: Path) -> None:
    name = "md`<b>bold<b>` [click](https:evil.example) x.py"
    (tmp_path / name).write_bytes(CUDA)
    cli = _cli(["scan", ".", "--no-cache", "-f", "markdown"], tmp_path)
    assert cli.returncode == 1, cli.stderr
    assert f"``{name}:2``" in cli.stdout  # inside a code span, <b> is text (CommonMark)
    assert "<b>" not in cli.stdout.replace(f"``{name}:2``", "").replace(f"``{name}``", "")
    _no_command_lines(cli.stdout)


# ---- 6 (selectors), 3.C14, 3.U12: usage errors that used to pass silently or fail late --------------
@pytest.mark.parametrize("args", [["--select", "NOPE"], ["--ignore", "NOPE999"]])
def test_3_u07_unknown_selectors_are_errors(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "good.py").write_bytes(CUDA)
    cli = _cli(["scan", "good.py", "--no-cache", *args], tmp_path)
    assert cli.returncode == 2 and "unknown rule selector" in cli.stderr


def test_3_c24_unknown_selector_in_config_names_the_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_bytes(CUDA)
    (tmp_path / "pyproject.toml").write_text('[tool.neuronlint]\nselect = ["NOPE999"]\n')
    cli = _cli(["scan", "good.py", "--no-cache"], tmp_path)
    assert cli.returncode == 2
    assert "unknown rule selector 'nope999'" in cli.stderr.lower() and "key 'select'" in cli.stderr


def test_3_c14_unknown_sdk_in_config_names_the_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_bytes(CUDA)
    (tmp_path / "pyproject.toml").write_text("[tool.neuronlint]\nsdk = '9.9'\n")
    cli = _cli(["scan", "good.py", "--no-cache"], tmp_path)
    assert (
        cli.returncode == 2
        and "pyproject.toml: [tool.neuronlint]: key 'sdk': unknown Neuron SDK" in cli.stderr
    )


@pytest.mark.parametrize("output", ["/proc/nope/x.json", "."])
def test_3_u12_unwritable_output_fails_before_the_scan(tmp_path: Path, output: str) -> None:
    for index in range(30):
        (tmp_path / f"m{index}.py").write_bytes(CUDA)
    started = time.monotonic()
    cli = _cli(["scan", ".", "--no-cache", "-f", "json", "-o", output], tmp_path)
    assert cli.returncode == 2 and "--output" in cli.stderr and "internal error" not in cli.stderr
    assert cli.stdout == "" and time.monotonic() - started < 20


def test_1_32_unreadable_file_named_on_the_command_line_is_a_finding(unprivileged) -> None:
    root = unprivileged.root
    (root / "secret.py").write_bytes(CUDA)
    (root / "secret.py").chmod(0)
    (root / "a.py").write_bytes(CUDA)
    unprivileged.cannot_read(root / "secret.py")
    done = unprivileged.run(["scan", "secret.py", "a.py", "--no-cache", "-f", "json"])
    assert done.returncode == 1 and "internal error" not in done.stderr, done.stderr
    findings = {(f["path"], f["rule"]) for f in json.loads(done.stdout)["findings"]}
    assert findings == {("secret.py", "NL001"), ("a.py", "NL101")}


# ---- 7. non-UTF-8 file names -----------------------------------------------------------------------
@pytest.mark.skipif(sys.platform == "darwin", reason="the file system requires UTF-8 names")
def test_1_34_non_utf8_file_names_in_every_output(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.py")
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / name).write_bytes(CUDA)
    sarif = _cli(["scan", "n", "--no-cache", "-f", "sarif"], tmp_path)
    assert sarif.returncode == 1 and "caf%E9.py" in sarif.stdout
    raw = subprocess.run(
        [sys.executable, "-m", "neuronlint", "scan", "n", "--no-cache", "-f", "json"],
        cwd=tmp_path,
        capture_output=True,
    ).stdout
    report = json.loads(raw.decode("utf-8"))  # valid UTF-8, and the name round-trips exactly
    assert os.fsencode(report["findings"][0]["path"]) == b"n/caf\xe9.py"
    assert _cli(["scan", "n", "--no-cache", "-f", "json", "-o", "r.json"], tmp_path).returncode == 1
    json.loads((tmp_path / "r.json").read_bytes().decode("utf-8"))
    assert _cli(["report", "n", "-f", "html", "-o", "r.html", "--no-cache"], tmp_path).returncode == 0
    (tmp_path / "r.html").read_bytes().decode("utf-8")
    assert _cli(["baseline", "create", "n", "-o", "b.json"], tmp_path).returncode == 0
    again = _cli(["scan", "n", "--no-cache", "--baseline", "b.json"], tmp_path)
    assert again.returncode == 0 and "1 baselined" in again.stderr
