"""Entrypoint and input-spec parsing, static location and discovery (no torch, no imports of user code)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neuronlint.graph.entrypoints import EntrypointError, discover, locate, parse_entrypoint
from neuronlint.graph.specs import InputSpec, SpecError, parse_spec
from tests.conftest import FIXTURES, ROOT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("long[2,128]", InputSpec("int64", (2, 128))),
        ("float32[1,3,224,224]", InputSpec("float32", (1, 3, 224, 224))),
        ("bf16[ 4 , 8 ]", InputSpec("bfloat16", (4, 8))),
        ("bool[]", InputSpec("bool", ())),
        ("float8_e4m3fn[16]", InputSpec("float8_e4m3fn", (16,))),
    ],
)
def test_input_specs(text, expected):
    assert parse_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("long(2,128)", "expected dtype[shape]"),
        ("quad[2]", "unknown dtype 'quad'"),
        ("long[2,,3]", "empty dimension"),
        ("long[-1]", "expected dtype[shape]"),
    ],
)
def test_bad_input_specs_name_the_problem(text, problem):
    with pytest.raises(SpecError, match=re.escape(problem)):
        parse_spec(text)


def test_entrypoint_forms():
    assert parse_entrypoint("pkg.model:build").module == "pkg.model"
    assert parse_entrypoint("pkg.model:Outer.Inner").attr == "Outer.Inner"
    file_form = parse_entrypoint("fixtures/models/gpt_block.py:build")
    assert (file_form.path, file_form.attr, file_form.module) == (
        "fixtures/models/gpt_block.py",
        "build",
        None,
    )
    for bad in ("pkg.model", "pkg.model:", ":build", "pkg model:build", "pkg.model:build()"):
        with pytest.raises(EntrypointError, match="expected pkg.module:factory"):
            parse_entrypoint(bad)


def test_locate_finds_the_definition_without_importing():
    path, line = locate(parse_entrypoint("fixtures/models/gpt_block.py:build"), ROOT)
    assert Path(path) == FIXTURES / "models" / "gpt_block.py"
    assert (FIXTURES / "models" / "gpt_block.py").read_text().splitlines()[line - 1].startswith("def build(")
    path, line = locate(parse_entrypoint("fixtures.models.masking:TokenPruner"), ROOT)
    assert (
        (FIXTURES / "models" / "masking.py")
        .read_text()
        .splitlines()[line - 1]
        .startswith("class TokenPruner(")
    )
    assert locate(parse_entrypoint("no.such.module:build"), ROOT) is None


def test_discover_lists_modules_constructible_without_arguments(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "nets.py").write_text(
        textwrap.dedent("""
        import torch.nn as nn
        from torch import nn as torch_nn

        class Base(nn.Module):
            def __init__(self, dim: int = 8):
                super().__init__()

        class Child(Base):          # inherits a constructor with defaults
            def forward(self, x, mask):
                return x

        class NeedsArgs(torch_nn.Module):
            def __init__(self, dim):
                super().__init__()

        class KeywordOnly(nn.Module):
            def __init__(self, *, dim):
                super().__init__()

        class NoInit(nn.Module):
            def forward(self):
                return None

        class Plain:
            pass
    """)
    )
    found = {c.entrypoint: c for c in discover([tmp_path], tmp_path)}
    assert sorted(found) == ["pkg.nets:Base", "pkg.nets:Child", "pkg.nets:NoInit"]
    assert found["pkg.nets:Child"].forward_params == ("x", "mask")
    assert found["pkg.nets:Child"].line == 9


def test_discover_on_the_fixture_models():
    found = {c.entrypoint for c in discover([FIXTURES / "models"], ROOT)}
    assert {
        "fixtures.models.gpt_block:TinyGPT",
        "fixtures.models.masking:TokenPruner",
        "fixtures.models.faulty:HangsInInit",
    } <= found
    assert "fixtures.models.gpt_block:CausalSelfAttention" not in found  # needs dim, heads, block_size
    assert "fixtures.models.faulty:NotAModule" not in found


def test_static_analysis_works_without_torch(tmp_path):
    """A scan, the rule database (with the op tables) and the CLI import nothing from torch."""
    source = tmp_path / "train.py"
    source.write_text("import torch\nx = torch.zeros(3).cuda()\n", encoding="utf-8")
    script = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None  # any import of torch now raises ImportError
        from pathlib import Path
        from neuronlint.cli import app  # registers every command, trace included
        from neuronlint.ruledb import load_ruledb
        from neuronlint.pipeline import ScanOptions, run_scan
        assert len(load_ruledb().tables["op"]) > 300
        result = run_scan(ScanOptions(paths=[Path({str(source)!r})], base=Path({str(tmp_path)!r}), jobs=1))
        print(sorted({{f.rule for f in result.findings}}))
        print("torch" in sys.modules and sys.modules["torch"] is not None)
    """)
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    rules, torch_loaded = completed.stdout.splitlines()
    assert "'NL101'" in rules
    assert torch_loaded == "False"


def test_trace_without_torch_is_a_one_line_usage_error():
    script = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None
        sys.argv = ["neuronlint", "trace", "fixtures/models/gpt_block.py:build", "--input", "long[2,64]"]
        from neuronlint.cli import main
        main()
    """)
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert completed.returncode == 2
    assert completed.stderr == (
        f"neuronlint: error: graph tracing needs torch >= 2.13 in this Python: "
        f"{shlex.quote(sys.executable)} -m pip install 'torch>=2.13' (the static scan does not)\n"
    )


def test_trace_with_a_torch_below_the_floor_says_so(tmp_path):
    """A project on an older torch (the XLA releases ship 2.9) gets the floor and the command."""
    fake = tmp_path / "site"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("raise ImportError('the fake torch must not be imported')\n")
    (fake / "torch-2.9.1.dist-info").mkdir()
    (fake / "torch-2.9.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1\n"
    )
    script = textwrap.dedent("""
        import sys
        sys.argv = ["neuronlint", "trace", "fixtures/models/gpt_block.py:build", "--input", "long[2,64]"]
        from neuronlint.cli import main
        main()
    """)
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(fake)},
    )
    assert completed.returncode == 2
    assert completed.stderr == (
        "neuronlint: error: graph tracing needs torch >= 2.13; this Python has torch 2.9.1: "
        f"{shlex.quote(sys.executable)} -m pip install 'torch>=2.13', or trace in a separate environment "
        "(the static scan works with any torch)\n"
    )


def test_the_trace_extra_is_a_floor_and_the_pin_is_only_for_development():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from neuronlint.graph.merge import TORCH_FLOOR

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["trace"] == [f"torch>={'.'.join(map(str, TORCH_FLOOR))}"]
    assert any(d.startswith("torch==") for d in extras["dev"])


def test_ci_traces_on_the_pinned_torch_and_a_second_one_above_the_floor():
    """.ci/run's second-torch step: a newer torch than the [dev] pin, the trace test files, and the
    README and docs/trace.md name both versions CI tests."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    from neuronlint.graph.merge import TORCH_FLOOR

    ci = (ROOT / ".ci" / "run").read_text()
    [second] = re.findall(r"^SECOND_TORCH=(\S+)$", ci, flags=re.M)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [pin] = [d.split("==", 1)[1] for d in extras["dev"] if d.startswith("torch==")]
    as_tuple = [tuple(int(p) for p in v.split(".")) for v in (pin, second)]
    assert as_tuple[0][:2] >= TORCH_FLOOR and as_tuple[1] > as_tuple[0]
    assert "tests/test_graph_*.py" in ci and len(list((ROOT / "tests").glob("test_graph_*.py"))) >= 5
    assert "install -q -e '.[test]'" in ci and "test" in extras
    for doc in ("README.md", "docs/trace.md"):
        text = (ROOT / doc).read_text()
        assert pin in text and second in text, doc
