"""Start-up of a one-file scan (issue 15): the fast command-line path, the rule-database snapshot,
the lazy imports and the rich-free quiet text. Speed itself is measured by
benchmarks/startup_benchmark.py, never here; these tests hold what makes it fast to the behaviour
of the slow path."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from neuronlint.cli import fastpath, options, scanning
from neuronlint.ruledb import loader, snapshot
from tests.conftest import FIXTURES, ROOT

# ---- the fast path parses exactly what typer parses ---------------------------------------------
_RUN_SCAN_COMMAND = scanning.run_scan_command  # before any test replaces it


def _typer_kwargs(argv: list[str], monkeypatch) -> dict:
    """The arguments typer hands to run_scan_command for `scan argv`."""
    from typer.testing import CliRunner

    from neuronlint.cli import app
    from neuronlint.cli import scan as scan_module

    seen: dict = {}

    def capture(flags, **kwargs):
        seen.update(kwargs, flags=flags)
        return 0

    monkeypatch.setattr(scan_module, "run_scan_command", capture)
    result = CliRunner().invoke(app, ["scan", *argv], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen


def _fast_kwargs(argv: list[str], monkeypatch) -> dict:
    seen: dict = {}

    def capture(flags, **kwargs):
        seen.update(kwargs, flags=flags)
        return 0

    monkeypatch.setattr(scanning, "run_scan_command", capture)
    assert fastpath.run(["scan", *argv]) == 0
    return seen


def _normal(kwargs: dict) -> dict:
    """Both paths' arguments in one form: defaults filled in, None for an empty list."""
    import inspect

    defaults = {
        name: p.default
        for name, p in inspect.signature(_RUN_SCAN_COMMAND).parameters.items()
        if name != "flags"
    }
    out = {**defaults, **{k: v for k, v in kwargs.items() if k != "flags"}}
    out["flags"] = {k: (v or None) if isinstance(v, list) else v for k, v in vars(kwargs["flags"]).items()}
    return {k: (v or None) if isinstance(v, list) else v for k, v in out.items()}


COMMAND_LINES = [
    [],
    ["train.py"],
    ["--pre-commit", "a.py", "b/c.py"],
    ["-q", "--format", "json", "-o", "out.json", "src"],
    ["--format=sarif", "--output=x.sarif", "--select", "NL1", "--select=NL2,NL3", "--ignore", "NL101"],
    ["--sdk", "2.29", "-t", "trn1", "--backend", "xla", "-j", "2", "--no-cache", "--cache-dir", "c"],
    ["--config", "pyproject.toml", "--rules-dir", "pack", "--rules-dir", "pack2", "--exclude", "tests"],
    ["--severity", "warning", "--fail-on", "blocker", "--exit-zero", "--statistics", "--full"],
    ["--show-suppressed", "--no-source", "--baseline", "b.json", "--diff-base", "origin/main"],
    ["--report-unused-suppressions", "--scope", "source", "--scope", "test", "--show-ok", "--trace"],
    ["--fix", "--unsafe-fixes", "--to", "neuron", "x.py"],
    ["--diff", "--extend-select", "NL507", "--compiler-flags=--native-int64=enabled", "--", "-odd.py"],
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda a: " ".join(a) or "no arguments")
def test_fast_path_passes_what_typer_passes(argv: list[str], monkeypatch) -> None:
    assert fastpath.parse_scan(argv) is not None, "this command line should take the fast path"
    assert _normal(_fast_kwargs(argv, monkeypatch)) == _normal(_typer_kwargs(argv, monkeypatch))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["--selct", "NL1"],  # a typo: typer's error and suggestion
        ["-qf", "json"],  # bundled short flags
        ["--jobs", "two"],
        ["--jobs", "-1"],
        ["--format"],  # missing value
        ["--format", "json", "--format", "text"],
        ["--quiet=yes"],
        ["--compiler-flags", "--native-int64"],  # a value that looks like an option
    ],
)
def test_anything_unusual_goes_to_typer(argv: list[str]) -> None:
    assert fastpath.parse_scan(argv) is None
    assert fastpath.run(["scan", *argv]) is None


def test_other_commands_go_to_typer() -> None:
    for argv in (["--version"], ["fix", "x.py"], ["explain", "NL101"], ["rules", "list"], []):
        assert fastpath.run(argv) is None


def test_the_fast_table_covers_every_scan_option_typer_declares() -> None:
    from typer.main import get_command

    from neuronlint.cli import app

    scan = get_command(app).commands["scan"]
    table = fastpath._table()
    kinds = {"bool": (True, False), "strs": (False, True), "paths": (False, True)}
    for param in scan.params:
        if param.name == "paths":
            continue
        for opt in (*param.opts, *param.secondary_opts):
            assert opt in table, f"{opt} is not in the fast path's table"
            name, kind = table[opt]
            assert name == param.name
            is_flag, multiple = kinds.get(kind, (False, False))
            assert (bool(getattr(param, "is_flag", False)), param.multiple) == (is_flag, multiple), opt
    declared = {opt for p in scan.params for opt in (*p.opts, *p.secondary_opts) if p.name != "paths"}
    assert set(table) == declared


# ---- what a one-file scan imports ----------------------------------------------------------------

NOT_ON_THE_FAST_PATH = (
    "typer",
    "click",
    "pydantic",
    "jinja2",
    "torch",
    "multiprocessing",
    "neuronlint.ruledb.schema",
    "neuronlint.ruledb.build",
    "neuronlint.graph",
    "neuronlint.report",
    "neuronlint.cli.trace",
    "neuronlint.cli.rules",
    "neuronlint.formats.sarif",
    "neuronlint.filetypes.shell",
    "neuronlint.filetypes.notebook",
    "neuronlint.static.build_inputs",  # CUDA sources, requirements and pyproject only
    "tempfile",  # only when a cache entry, the cache secret or a snapshot is written
    "tomllib",  # no configuration file in the scanned directory: no TOML parser
    "concurrent.futures",  # the parse thread is a plain thread (concurrent.futures imports logging)
    "logging",
    "secrets",  # the cache secret is os.urandom
    "difflib",  # only to suggest a selector or a configuration key
    "neuronlint.filters.baseline",  # only with --baseline
    "neuronlint.filters.changed_lines",  # only with --diff-base (or GitHub annotations in a PR)
    "_hashlib",  # no OpenSSL: the digests come from CPython's built-in modules (neuronlint.digests)
    "hashlib",
    "hmac",
)


def _modules_after_scan(tmp_path: Path, args: list[str], env: dict[str, str] | None = None) -> set[str]:
    probe = (
        "import sys\n"
        f"sys.argv = ['neuronlint', 'scan', *{args!r}]\n"
        "from neuronlint.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
    )
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), **(env or {})}
    environ.pop("FORCE_COLOR", None)
    for _ in range(2):  # the first run builds the snapshot, the second is what every later run does
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
    return set(done.stderr.split("\n"))


def test_a_one_file_scan_imports_only_what_it_uses(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_bytes((FIXTURES / "gpt_trainer" / "train.py").read_bytes())
    modules = _modules_after_scan(tmp_path, ["--pre-commit", "--no-cache", "train.py"])
    assert "neuronlint.cli.fastpath" in modules and "libcst" in modules
    loaded = sorted(
        m for m in modules for name in NOT_ON_THE_FAST_PATH if m == name or m.startswith(name + ".")
    )
    assert not loaded, f"imported on the fast path: {loaded}"
    assert "rich" not in modules  # piped and quiet: plain text


# ---- the fix planner works on the scan's tree ------------------------------------------------------


def test_a_one_file_scan_parses_its_file_once(tmp_path: Path, monkeypatch) -> None:
    """`scan` shows each fixable finding's fix: the planner takes the tree the scan parsed instead
    of parsing the file again, and the fixes are the ones a fresh parse gives. (The checkers walk a
    tree built from the stdlib parser's; with a planner, as `scan` runs, a file with a fixable
    detection is parsed by LibCST once for it. LibCST's parses of single statements, for
    positions, are not parses of the file.)"""
    from functools import partial

    import libcst

    from neuronlint.findings import Finding
    from neuronlint.fix.flavours import Flavour
    from neuronlint.fix.run import attach, worker_planner
    from neuronlint.pipeline import ScanOptions, run_scan
    from neuronlint.static import engine

    source = (FIXTURES / "gpt_trainer" / "train.py").read_bytes()
    (tmp_path / "train.py").write_bytes(source)
    parses: list[object] = []
    real_parse = libcst.parse_module
    monkeypatch.setattr(
        libcst, "parse_module", lambda code, *a, **k: parses.append(code) or real_parse(code, *a, **k)
    )
    engine._TREES.clear()
    options = ScanOptions(
        paths=[tmp_path / "train.py"],
        jobs=1,
        base=tmp_path,
        cache_dir=None,
        fix_planner=partial(worker_planner, "portable"),  # as `scan` sets it
    )
    result = run_scan(options)
    assert attach(result, Flavour("portable"), tmp_path) > 0
    whole = (source, source.decode())  # the planner parses the text, the scan the bytes
    assert [code for code in parses if code in whole] == [source]  # the scan's parse only

    def fixes(findings: list[Finding]) -> list[tuple]:
        return [(f.rule, f.line, f.column, f.fix and f.fix.to_dict()) for f in findings]

    reused = fixes(result.findings)
    engine._TREES.clear()  # as when the scan's result came from the cache: the planner parses
    again = run_scan(options)
    engine._TREES.clear()
    attach(again, Flavour("portable"), tmp_path)
    assert len([code for code in parses if code in whole]) == 3 and fixes(again.findings) == reused


def _mirror_python_files(repo: str, limit: int) -> dict[Path, bytes]:
    """Up to `limit` Python files of a local mirror of a public repository (none when it is absent)."""
    root = Path(os.environ.get("NEURONLINT_MIRRORS", "/work/.mirror")) / repo / "repo"
    if not root.is_dir():
        return {}
    listed = subprocess.run(["git", "-C", str(root), "ls-tree", "-r", "HEAD"], capture_output=True, text=True)
    blobs = [line.split(None, 3)[2:] for line in listed.stdout.splitlines() if line.endswith(".py")][:limit]
    out: dict[Path, bytes] = {}
    for blob, name in blobs:
        done = subprocess.run(["git", "-C", str(root), "cat-file", "blob", blob], capture_output=True)
        if done.returncode == 0:
            out[Path(repo, name)] = done.stdout
    return out


def test_the_scans_tree_is_the_tree_of_the_files_text() -> None:
    """A kept tree stands for `parse_module(text)`: the same nodes as parsing the decoded text, on
    every Python file of the fixtures and of a real repository when one is fetched."""
    import libcst

    from neuronlint.static import engine

    texts = {f: f.read_bytes() for f in sorted(FIXTURES.rglob("*.py"))}
    texts.update(_mirror_python_files("huggingface+peft", 150))
    texts[Path("cookie.py")] = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")
    texts[Path("bom.py")] = b"\xef\xbb\xbfx = 1\n"
    kept = 0
    for path, data in texts.items():
        engine._TREES.clear()
        engine._remember(data, libcst.parse_module(data))
        tree = engine.parsed_tree(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            assert tree is None, path
            continue
        if tree is None:
            assert path.name in ("cookie.py", "bom.py") or not data.isascii(), path
            continue
        kept += 1
        fresh = libcst.parse_module(text)
        assert tree.deep_equals(fresh) and tree.code == fresh.code == text, path
        assert (tree.default_newline, tree.default_indent) == (fresh.default_newline, fresh.default_indent)
    assert kept >= len(texts) - 3
    engine._TREES.clear()


def test_the_full_text_report_still_uses_rich_and_help_still_typer(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_bytes((FIXTURES / "gpt_trainer" / "train.py").read_bytes())
    assert "rich" in _modules_after_scan(tmp_path, ["--no-cache", "train.py"])  # the summary table
    assert "typer" in _modules_after_scan(tmp_path, ["--help"])


# ---- the rule-database snapshot ------------------------------------------------------------------


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "_CACHE", {})
    from neuronlint import cache

    cache._secret.cache_clear()
    yield tmp_path / "cache" / "neuronlint" / "ruledb"
    cache._secret.cache_clear()


def _same(a, b) -> bool:
    fields = ("rules", "releases", "chips", "platform", "tables", "fingerprint")
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def test_snapshot_is_written_once_and_gives_the_same_database(user_cache: Path, monkeypatch) -> None:
    built = loader.load_dirs([loader.default_rules_dir()])
    first = loader.load_ruledb()
    stored = list(user_cache.glob("*.pickle"))
    assert len(stored) == 1
    monkeypatch.setattr(loader, "_CACHE", {})
    compiled: list[int] = []
    monkeypatch.setattr(loader, "_compile", lambda *a: compiled.append(1))  # must not be needed
    second = loader.load_ruledb()
    assert not compiled and second is not first
    assert _same(first, built) and _same(second, built)
    ctx = second.context(None, "trn2")
    assert second.judge("NL101", {}, ctx).message == built.judge("NL101", {}, ctx).message


def _store_key(user_cache: Path) -> Path:
    loader.load_ruledb()
    (path,) = user_cache.glob("*.pickle")
    return path


def test_a_forged_or_broken_snapshot_is_rebuilt(user_cache: Path, monkeypatch) -> None:
    path = _store_key(user_cache)
    good = path.read_bytes()
    for bad in (
        b"",
        b"garbage",
        good[: len(good) // 2],
        good.replace(snapshot.MAGIC, b"neuronlint-ruledb-snapshot 0\n"),
        good[: len(snapshot.MAGIC)] + b"0" * 64 + good[len(snapshot.MAGIC) + 64 :],  # wrong MAC
    ):
        path.write_bytes(bad)
        monkeypatch.setattr(loader, "_CACHE", {})
        db = loader.load_ruledb()
        assert "NL101" in db.rules
        assert path.read_bytes() == good  # rebuilt and rewritten


def test_a_signed_snapshot_cannot_construct_anything_but_the_database(
    user_cache: Path, tmp_path: Path
) -> None:
    """Even with a valid MAC (someone who has the user's secret), the unpickler refuses any class
    outside the database's own: no code runs."""
    path = _store_key(user_cache)
    key = path.stem
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    payload = pickle.dumps((key, Evil()))
    path.write_bytes(snapshot.MAGIC + snapshot._mac(key, payload) + b"\n" + payload)
    files, fingerprint = loader.read_files([loader.default_rules_dir()])
    assert snapshot.load(key, fingerprint) is None
    assert not marker.exists()


def test_changed_rules_are_a_different_snapshot(user_cache: Path, tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "policy.toml").write_text('[[rule]]\nid = "NL101"\nseverity = "warning"\n')
    loader.load_ruledb()
    assert loader.load_ruledb([pack]).rules["NL101"].policy_severity.value == "warning"
    assert len(list(user_cache.glob("*.pickle"))) == 2
    (pack / "policy.toml").write_text('[[rule]]\nid = "NL101"\nseverity = "info"\n')
    loader._CACHE.clear()
    assert loader.load_ruledb([pack]).rules["NL101"].policy_severity.value == "info"


def test_an_invalid_database_is_an_error_every_time_and_never_stored(
    user_cache: Path, tmp_path: Path
) -> None:
    from neuronlint.ruledb import RuleDBError

    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "policy.toml").write_text('[[rule]]\nid = "NL101"\nseverity = "fatal"\n')
    for _ in range(2):
        loader._CACHE.clear()
        with pytest.raises(RuleDBError, match="severity"):
            loader.load_ruledb([pack])
    assert len(list(user_cache.glob("*.pickle"))) <= 1  # only the bundled database


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path, monkeypatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setattr(loader, "_CACHE", {})
    from neuronlint import cache

    cache._secret.cache_clear()
    try:
        assert "NL101" in loader.load_ruledb().rules
    finally:
        cache._secret.cache_clear()


# ---- the quiet text without rich is the text rich prints -------------------------------------------


def _scan_text(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "neuronlint", "scan", *args, "--exit-zero", "--no-cache"],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_plain_quiet_text_equals_richs(monkeypatch) -> None:
    from neuronlint.formats import text as text_format
    from neuronlint.pipeline import ScanOptions, filter_scan, make_report, run_scan

    options = ScanOptions(paths=[FIXTURES], jobs=1, base=ROOT)
    result = run_scan(options)
    from neuronlint.filters.chain import FilterRequest

    filtered = filter_scan(result, options, FilterRequest(None, None, False, ("text",)), ROOT)
    for show_source in (True, False):
        report = make_report(
            result, filtered, formats=("text",), quiet=True, show_source=show_source, color=False, width=None
        )
        monkeypatch.chdir(ROOT)
        plain = text_format._plain_quiet(report)
        assert plain is not None and plain.count("\n") > 100
        monkeypatch.setattr(text_format, "_plain_quiet", lambda report: None)
        assert text_format.render(report) == plain
        monkeypatch.undo()


def test_quiet_text_falls_back_to_rich_for_what_rich_changes(tmp_path: Path) -> None:
    (tmp_path / "tab.py").write_text("import torch\nx = torch.zeros(3).cuda()\t# tab\n")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = _scan_text(["-q", "tab.py"], tmp_path, env)
    assert "tab.py" in out and "\t" not in out  # rich expands the tab in the source line


def test_json_of_the_fixtures_is_the_same_through_both_paths(tmp_path: Path, monkeypatch) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    fast = json.loads(_scan_text(["--format", "json", "fixtures"], ROOT, env))
    slow = json.loads(_scan_text(["-fjson", "fixtures"], ROOT, env))  # -fjson: typer parses it
    assert fast == slow and fast["findings"]


# ---- scan options as the tests above use them ------------------------------------------------------


def test_shared_specs_match_scan_flags() -> None:
    from dataclasses import fields

    assert set(options.SHARED_SPECS) == {f.name for f in fields(options.ScanFlags)}


# ---- what the one-file scan skips gives what the full path gives -------------------------------------


def test_text_output_is_the_same_without_fingerprints(monkeypatch) -> None:
    """Text output shows no fingerprint and no repository path, so `scan` computes neither for it
    (no git call); the text is the one the fingerprinted findings give."""
    from neuronlint.filters.chain import FilterRequest
    from neuronlint.formats import PLAIN_FORMATS, render
    from neuronlint.pipeline import ScanOptions, filter_scan, make_report, run_scan

    monkeypatch.chdir(ROOT)
    options = ScanOptions(paths=[FIXTURES], jobs=1, base=ROOT)
    result = run_scan(options)
    texts = {}
    for identities in (False, True):  # the same scan: fingerprints are added by the second pass
        for fmt in sorted(PLAIN_FORMATS):
            request = FilterRequest(None, None, False, (fmt,), identities=identities)
            outcome = filter_scan(result, options, request, ROOT)
            assert any("fingerprint" in f.extra for f in outcome.findings) == identities
            report = make_report(result, outcome, formats=(fmt,), quiet=True, color=False, width=None)
            texts[(fmt, identities)] = render(fmt, report)
    for fmt in PLAIN_FORMATS:
        assert texts[(fmt, True)] == texts[(fmt, False)] and texts[(fmt, True)]


def test_star_globs_match_as_fnmatch_does() -> None:
    import fnmatch
    import random

    from neuronlint.discover import _stars_match

    rng = random.Random(15)
    checked = 0
    for _ in range(20000):
        name = "".join(rng.choice("ab/_.t") for _ in range(rng.randint(0, 8)))
        pattern = "".join(rng.choice("ab/_.t**") for _ in range(rng.randint(1, 6)))
        if "*" in pattern:
            assert _stars_match(name, pattern) == fnmatch.fnmatchcase(name, pattern), (name, pattern)
            checked += 1
    assert checked > 5000
    for name in ("test_x.py", "a/test_x.py", "x_test.py", "tests/a.py", "test_.py", "test.py"):
        for pattern in ("test_*.py", "*_test.py", "*_tests.py", "bench_*.py"):
            assert _stars_match(name, pattern) == fnmatch.fnmatchcase(name, pattern)


def test_the_built_in_digests_are_hashlibs() -> None:
    import hashlib
    import hmac

    from neuronlint import digests

    data = (FIXTURES / "gpt_trainer" / "train.py").read_bytes()
    assert digests.sha1_hex(data) == hashlib.sha1(data).hexdigest()
    assert digests.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert digests.content_hash(data[:10], data[10:]) == hashlib.blake2b(data, digest_size=32).hexdigest()
    key = b"k" * 32
    assert digests.keyed_mac(key, data) == hashlib.blake2b(data, key=key, digest_size=32).hexdigest()
    assert digests.compare_digest("ab", "ab") and not digests.compare_digest("ab", "ac")
    assert hmac.compare_digest is not None


def test_the_cycle_collector_is_back_on_after_a_few_files(tmp_path: Path, monkeypatch) -> None:
    import gc

    (tmp_path / "train.py").write_bytes((FIXTURES / "gpt_trainer" / "train.py").read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    seen: list[bool] = []
    real = scanning.run_scan_command

    def spy(flags, **kwargs):
        seen.append(gc.isenabled())
        return real(flags, **kwargs)

    monkeypatch.setattr(scanning, "run_scan_command", spy)
    assert gc.isenabled()
    fastpath.run(["scan", "--pre-commit", "--no-cache", "-q", "train.py"])
    fastpath.run(["scan", "--no-cache", "-q", "."])  # a directory: collector on
    assert seen == [False, True] and gc.isenabled()
