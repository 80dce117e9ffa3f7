"""Scopes from path conventions and [tool.neuronlint] overrides, on the layouts of real repositories."""

from __future__ import annotations

import pytest

from neuronlint.filters import scope as scope_filter
from neuronlint.findings import Finding, Severity
from neuronlint.scope import ScopeRules, convention_scope

# Paths as they sit in real repositories (huggingface/peft, huggingface/accelerate,
# pytorch/ao, NVIDIA/Megatron-LM, allenai/OLMo, facebookresearch/dinov2, mosaicml/llm-foundry).
LAYOUTS = [
    ("src/peft/tuners/lora/layer.py", "source"),
    ("src/peft/utils/integrations.py", "source"),
    ("tests/test_custom_models.py", "test"),
    ("tests/testing_utils.py", "test"),
    ("tests/conftest.py", "test"),
    ("src/accelerate/test_utils/testing.py", "test"),
    ("src/accelerate/test_utils/scripts/test_sync.py", "test"),
    ("torchao/testing/utils.py", "test"),
    ("torchao/prototype/mx_formats/kernels.py", "source"),
    ("test/quantization/test_quant_api.py", "test"),
    ("megatron/core/transformer/attention.py", "source"),
    ("tests/unit_tests/transformer/test_attention.py", "test"),
    ("megatron/core/ssm/mamba_block_test.py", "test"),
    ("examples/multimodal/train.py", "example"),
    ("scripts/train.py", "example"),
    ("examples/sft/test_sft.py", "test"),
    ("benchmarks/float8/bench_matmul.py", "benchmark"),
    ("dinov2/eval/knn.py", "source"),
    ("docs/source/conf.py", "docs"),
    ("docs/examples/quickstart.py", "docs"),
    ("notebooks/demo.py", "example"),
    ("llmfoundry/models/layers/attention.py", "source"),
]


@pytest.mark.parametrize("path, expected", LAYOUTS)
def test_path_conventions(path, expected):
    assert convention_scope(path) == expected
    assert ScopeRules().classify(path) == expected


def test_conventions_look_inside_the_scanned_directory_only():
    # A checkout under /home/me/test/ is not all tests: only the path inside the scan root counts.
    rules = ScopeRules()
    assert rules.classify("../test/peft/src/peft/mapping.py", "src/peft/mapping.py") == "source"
    assert rules.classify("../test/peft/tests/test_x.py", "tests/test_x.py") == "test"


def test_overrides_win_over_conventions():
    rules = ScopeRules.from_config(
        {
            "test": ["qa"],
            "example": ["recipes/*.py"],
            "source": ["scripts/train.py"],
            "benchmark": [],
        },
        None,  # globs relative to the working directory, as reported paths are
    )
    assert rules.classify("qa/check_loss.py") == "test"
    assert rules.classify("recipes/llama.py") == "example"
    assert rules.classify("scripts/train.py") == "source"  # OLMo's entry point is the training code
    assert rules.classify("scripts/prepare.py") == "example"
    assert rules.classify("tests/test_a.py") == "test"


def _finding(path: str, severity: Severity) -> Finding:
    return Finding("NL101", "cuda-api", severity, path, 1, 1, 1, 5, "m")


def test_test_findings_are_capped_at_warning_and_remember_their_severity():
    findings = [
        _finding("tests/test_model.py", Severity.BLOCKER),
        _finding("src/pkg/model.py", Severity.BLOCKER),
        _finding("tests/test_model.py", Severity.INFO),
    ]
    scope_filter.assign(findings, ScopeRules())
    assert [(f.scope, f.severity, f.capped_from) for f in findings] == [
        ("test", Severity.WARNING, Severity.BLOCKER),
        ("source", Severity.BLOCKER, None),
        ("test", Severity.INFO, None),
    ]
    data = findings[0].to_dict()
    assert data["scope"] == "test" and data["capped_from"] == "blocker" and data["severity"] == "warning"
    assert Finding.from_dict(data).capped_from is Severity.BLOCKER


def test_no_cap_when_configured_off():
    findings = [_finding("tests/test_model.py", Severity.BLOCKER)]
    scope_filter.assign(findings, ScopeRules(), test_cap=None)
    assert findings[0].severity is Severity.BLOCKER and findings[0].scope == "test"


def test_scope_selection():
    assert scope_filter.parse_scopes([]) == frozenset({"source", "test", "example", "benchmark", "docs"})
    assert scope_filter.parse_scopes(["source,example"]) == {"source", "example"}
    assert scope_filter.parse_scopes(["all"]) == scope_filter.parse_scopes([])
    with pytest.raises(ValueError, match="unknown scope 'tests'"):
        scope_filter.parse_scopes(["tests"])
    findings = [_finding("tests/test_a.py", Severity.BLOCKER), _finding("pkg/a.py", Severity.BLOCKER)]
    scope_filter.assign(findings, ScopeRules())
    assert [f.path for f in scope_filter.select(findings, frozenset({"source"}))] == ["pkg/a.py"]


def test_config_keys_and_a_scan_that_uses_them(tmp_path):
    from neuronlint.config import ConfigError, load_config
    from tests.conftest import scan_paths

    (tmp_path / "pyproject.toml").write_text(
        '[tool.neuronlint]\ntest-paths = ["qa"]\nsource-paths = ["scripts/train.py"]\n'
        'test-max-severity = "info"\n',
        encoding="utf-8",
    )
    config = load_config(tmp_path / "pyproject.toml")
    assert config.scope_paths == {"test": ["qa"], "source": ["scripts/train.py"]}
    assert config.test_max_severity == "info"
    bad = tmp_path / "bad.toml"
    bad.write_text('[tool.neuronlint]\ntest-paths = "qa"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="key 'test-paths': expected an array of globs"):
        load_config(bad)
    for name in ("qa/check.py", "scripts/train.py", "scripts/plot.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import torch\nx = torch.ones(1).cuda()\n", encoding="utf-8")
    result = scan_paths(
        [tmp_path],
        cwd=tmp_path,
        triage=True,
        scope_paths=config.scope_paths,
        test_cap=Severity.INFO,
        config_root=tmp_path,
    )
    found = {f.path: (f.scope, f.severity.value) for f in result.active if f.rule == "NL101"}
    assert found == {
        "qa/check.py": ("test", "info"),
        "scripts/train.py": ("source", "blocker"),
        "scripts/plot.py": ("example", "blocker"),
    }
