"""The lock-in score on real scans: hand-checked values, monotonicity, exact breakdowns, bounds, the
per-file cap, test scopes, the size scale, effort units and kernel kinds.

Hand-checked numbers use the shipped rules/lockin.toml; the arithmetic is written out beside each
expected value, so a retune of the table shows up here and has to be re-checked by hand.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from neuronlint.findings import Finding, Severity
from neuronlint.lockin import load_params, score
from neuronlint.lockin.scoring import direction_score, package_of, weigh
from neuronlint.ruledb import RuleDBError, load_ruledb
from neuronlint.ruledb.loader import default_rules_dir, load_dirs
from tests.conftest import FIXTURES, ROOT, scan_paths

TRAIN = """import torch
import torch.distributed as dist

model = torch.nn.Linear(4, 4).cuda()
x = torch.randn(2, 4, device="cuda")
dist.init_process_group("nccl")
"""

KERNELS = """import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _score(root: Path, **kwargs):
    result = scan_paths([root], cwd=root, **kwargs)
    return score(result.findings, result.results, result.db, result.context), result


# ---- hand-checked values ---------------------------------------------------------------------------
def test_small_training_script_hand_checked(tmp_path: Path) -> None:
    lockin, _ = _score(_write(tmp_path, {"train.py": TRAIN}))
    cuda = lockin.repository.scores["cuda"]
    # cuda-api: two NL101 blockers x 1.5 = E 3.0; c = 50 * 3 / (3 + 50) = 2.830189
    # dist-backend: one NL201 blocker x 5 = E 5.0; c = 50 * 5 / (5 + 20) = 10.0
    # S = 100 * (1 - (1 - 0.02830189) * (1 - 0.10)) = 12.54717
    assert cuda.value == pytest.approx(12.54717, abs=1e-4)
    assert (cuda.score, cuda.grade) == (13, "A")
    areas = {a.name: a for a in cuda.breakdown}
    assert areas["cuda-api"].coupling == pytest.approx(2.830189, abs=1e-5)
    assert areas["dist-backend"].coupling == pytest.approx(10.0)
    # points: S * L / sum(L) with L = -ln(1 - c/100): 0.1053605 and 0.0287097 of 0.1340702
    assert areas["dist-backend"].points == pytest.approx(9.86031, abs=1e-4)
    assert areas["cuda-api"].points == pytest.approx(2.68686, abs=1e-4)
    assert [a.name for a in cuda.breakdown] == ["dist-backend", "cuda-api"]
    by_rule = {(w.rule, w.finding.line): w for w in lockin.findings}
    assert by_rule[("NL101", 4)].points == pytest.approx(1.34343, abs=1e-4)  # 2.68686 * 1.5 / 3
    assert by_rule[("NL201", 6)].points == pytest.approx(9.86031, abs=1e-4)
    # effort: NL101 is mechanical, one unit in train.py: 0.25 h + 0.05 h; NL201 mechanical: 0.25 h
    assert lockin.effort["cuda"].hours == pytest.approx(0.55)
    assert lockin.repository.scores["neuron"].value == 0.0
    assert lockin.repository.scores["neuron"].grade == "A"


def test_kernel_repository_hand_checked(tmp_path: Path) -> None:
    lockin, _ = _score(_write(tmp_path, {"train.py": TRAIN, "ops/kernels.py": KERNELS}))
    cuda = lockin.repository.scores["cuda"]
    # custom-kernel: @triton.jit + launch, 2 x 20 = E 40; c = 95 * 40 / 60 = 63.3333
    # cuda-only-lib: `import triton`, `import triton.language`: Triton is multi-backend without a
    # Neuron backend (rules/libraries.toml), so each import is a warning: 2 x 4 = E 8; c = 90 * 8 / 48 = 15.0
    # S = 100 * (1 - 0.366667 * 0.85 * 0.9 * 0.971698) = 72.74387
    assert cuda.value == pytest.approx(72.74387, abs=1e-4)
    assert (cuda.score, cuda.grade) == (73, "D")
    areas = {a.name: a for a in cuda.breakdown}
    assert areas["custom-kernel"].coupling == pytest.approx(63.33333, abs=1e-4)
    assert areas["cuda-only-lib"].coupling == pytest.approx(15.0)
    # L = 1.0033021 (kernel), 0.1625189 (lib), 0.1053605, 0.0287097: sum 1.2998912
    assert areas["custom-kernel"].points == pytest.approx(72.74387 * 1.0033021 / 1.2998912, abs=1e-3)
    files = {u.name: u for u in lockin.files}
    # kernels.py alone: 100 * (1 - 0.366667 * 0.85) = 68.8333
    assert files["ops/kernels.py"].scores["cuda"].value == pytest.approx(68.83333, abs=1e-4)
    assert files["train.py"].scores["cuda"].value == pytest.approx(12.54717, abs=1e-4)
    # effort: the kernel 40 h, its launch 1 h; triton (one library) 2 h + 0.5 h; train.py 0.55 h
    assert lockin.effort["cuda"].hours == pytest.approx(44.05)
    assert lockin.hot_spots["cuda"][0].path == "ops/kernels.py"
    assert [p.name for p in lockin.packages] == ["ops", "(top level)"]


def test_cap_counts_at_most_cap_findings_of_a_rule_per_file(tmp_path: Path) -> None:
    lines = "import torch\n" + "".join(f"t{i} = torch.zeros(2).cuda()\n" for i in range(12))
    lockin, _ = _score(_write(tmp_path, {"many.py": lines}))
    counted = [w for w in lockin.findings if w.rule == "NL101" and w.counted]
    assert len([w for w in lockin.findings if w.rule == "NL101"]) == 12
    assert len(counted) == load_params(load_ruledb()).area_for("NL101", "cuda-api").cap == 5
    # E = 5 x 1.5 = 7.5; c = 50 * 7.5 / 57.5 = 6.52174
    assert lockin.repository.scores["cuda"].value == pytest.approx(6.52174, abs=1e-4)


def test_tests_weigh_half(tmp_path: Path) -> None:
    lockin, _ = _score(_write(tmp_path, {"tests/test_train.py": TRAIN}))
    weights = {w.rule: w.weight for w in lockin.findings}
    assert weights == {"NL101": 0.75, "NL201": 2.5}
    assert all("(tests)" in w.weight_source for w in lockin.findings)
    # effort does not shrink with the scope: the test still has to change
    assert lockin.effort["cuda"].hours == pytest.approx(0.55)


def test_test_code_is_weighed_and_costed_apart(tmp_path: Path) -> None:
    # The same script in the library and in its tests, scanned as `neuronlint report` scans it.
    root = _write(tmp_path, {"src/train.py": TRAIN, "tests/test_train.py": TRAIN})
    lockin, result = _score(root, triage=True)
    test = [f for f in result.active if f.path == "tests/test_train.py"]
    assert {f.severity.value for f in test} == {"warning"} and any(f.capped_from for f in test)
    # Score: a test's finding weighs half of the same finding in the library, by its own severity
    # (the scan's cap at warning does not lower it) ...
    src = {w.rule: w.weight for w in lockin.findings if w.path == "src/train.py"}
    assert {w.rule: w.weight for w in lockin.findings if w.path == "tests/test_train.py"} == {
        rule: weight * 0.5 for rule, weight in src.items()
    }
    # ... and it is not a blocker to clear: only the library's three are.
    assert lockin.repository.scores["cuda"].blockers == 3
    # Effort: the test has to change as much as the library (not halved), and is given apart.
    effort = lockin.effort["cuda"]
    assert effort.hours == pytest.approx(2 * 0.55) and effort.test_hours == pytest.approx(0.55)
    assert effort.to_dict()["test_hours"] == pytest.approx(0.55)


def test_the_report_says_how_much_of_the_effort_is_test_code(tmp_path: Path) -> None:
    import json

    from tests.test_cli import run

    _write(tmp_path, {"src/train.py": TRAIN, "tests/test_train.py": TRAIN})
    run(["report", ".", "--no-cache", "--format", "json", "-o", "r.json"], tmp_path)
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert (summary["cuda"]["hours"], summary["cuda"]["test_hours"]) == (1.1, 0.6)
    assert "estimated effort 1.1 h (0.0 weeks, of which 0.6 h porting tests)" in summary["headline"]
    run(["report", ".", "--no-cache", "--format", "markdown", "-o", "r.md"], tmp_path)
    assert (
        "**CUDA coupling: 1.1 h (0.0 weeks; 0.6 h of it porting tests)**" in (tmp_path / "r.md").read_text()
    )
    run(["report", ".", "--no-cache", "--format", "html", "-o", "r.html"], tmp_path)
    assert "1.1 h (0.0 weeks; 0.6 h of it porting tests)</h3>" in (tmp_path / "r.html").read_text()


def test_size_scale_turns_the_score_into_evidence_per_line(tmp_path: Path) -> None:
    params = load_params(load_ruledb())
    small, _ = _score(_write(tmp_path / "small", {"train.py": TRAIN}))
    filler = "x = 1\n" * (2 * params.reference_lines)
    large, _ = _score(_write(tmp_path / "large", {"train.py": TRAIN, "big.py": filler}))
    repo = large.repository.scores["cuda"]
    assert repo.scale == pytest.approx((2 * params.reference_lines + 6) / params.reference_lines)
    assert repo.value < small.repository.scores["cuda"].value
    # files below reference_lines are judged on their evidence alone
    assert {u.name: u for u in large.files}["train.py"].scores["cuda"].value == pytest.approx(
        12.54717, abs=1e-4
    )


# ---- properties on the fixtures -------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixture_scan():
    return scan_paths([FIXTURES], cwd=ROOT)


def _values(findings: list[Finding], results, db) -> dict[str, float]:
    result = score(findings, results, db)
    values = {f"repo:{d}": s.value for d, s in result.repository.scores.items()}
    for unit in result.files + result.packages:
        for d, s in unit.scores.items():
            values[f"{unit.kind}:{unit.name}:{d}"] = s.value
    return values


def test_adding_a_blocker_never_lowers_and_removing_never_raises(fixture_scan) -> None:
    db, results = fixture_scan.db, fixture_scan.results
    active = [f for f in fixture_scan.findings if f.suppressed is None]
    blockers = [f for f in active if f.severity is Severity.BLOCKER]
    rng = random.Random(20261130)
    for _ in range(25):
        subset = [f for f in active if rng.random() < 0.6]
        before = _values(subset, results, db)
        extra = rng.choice(blockers)
        clone = Finding.from_dict({**extra.to_dict(), "line": extra.line + 10_000})
        after = _values([*subset, clone], results, db)
        for key, value in before.items():
            assert after.get(key, 0.0) >= value - 1e-9, (key, extra.rule)
        removable = [f for f in subset if f.severity is Severity.BLOCKER]
        if removable:
            gone = rng.choice(removable)
            fewer = _values([f for f in subset if f is not gone], results, db)
            for key, value in fewer.items():
                assert value <= before[key] + 1e-9, (key, gone.rule)


def test_adding_a_line_with_a_blocker_to_a_real_file_never_lowers(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(FIXTURES / "gpt_trainer", tmp_path / "gpt_trainer")
    before, _ = _score(tmp_path)
    target = tmp_path / "gpt_trainer" / "train.py"
    target.write_text(
        target.read_text(encoding="utf-8") + "\nbuffer = torch.zeros(8).cuda()\n", encoding="utf-8"
    )
    after, _ = _score(tmp_path)
    assert after.repository.scores["cuda"].blockers == before.repository.scores["cuda"].blockers + 1
    assert after.repository.scores["cuda"].value >= before.repository.scores["cuda"].value


def test_breakdown_sums_to_the_score_at_every_level(fixture_scan) -> None:
    result = score(fixture_scan.findings, fixture_scan.results, fixture_scan.db)
    units = [result.repository, *result.packages, *result.files]
    assert len(result.files) > 10
    for unit in units:
        for direction, s in unit.scores.items():
            assert sum(a.points for a in s.breakdown) == pytest.approx(s.value, abs=1e-9), (
                unit.name,
                direction,
            )
            assert 0.0 <= s.value <= 100.0
            for a in s.breakdown:
                assert 0.0 <= a.coupling < a.max
    for direction, s in result.repository.scores.items():
        for area in s.breakdown:
            own = [w for w in result.findings if w.direction == direction and w.area == area.name]
            assert sum(w.points for w in own) == pytest.approx(area.points, abs=1e-9)
        assert sum(h.points for h in result.hot_spots[direction]) == pytest.approx(s.value, abs=1e-9)
    cumulative = [h.cumulative for h in result.hot_spots["cuda"]]
    assert cumulative == sorted(cumulative) and cumulative[-1] == pytest.approx(100.0)


def test_a_kernel_outweighs_many_files_of_device_strings(tmp_path: Path) -> None:
    many = {f"models/m{i}.py": "import torch\nx = torch.zeros(2).cuda()\n" for i in range(200)}
    spread, _ = _score(_write(tmp_path / "spread", many))
    kernel, _ = _score(_write(tmp_path / "kernel", {"ops/kernels.py": KERNELS}))
    cuda_api = load_params(load_ruledb()).area_for("NL101", "cuda-api")
    assert spread.repository.scores["cuda"].value < cuda_api.max
    assert kernel.repository.scores["cuda"].value > spread.repository.scores["cuda"].value + 20


def test_suppressed_findings_do_not_count(tmp_path: Path) -> None:
    text = TRAIN.replace(
        'dist.init_process_group("nccl")',
        'dist.init_process_group("nccl")  # neuronlint: ignore[NL201] reason',
    )
    lockin, _ = _score(_write(tmp_path, {"train.py": text}))
    assert {w.rule for w in lockin.findings} == {"NL101"}


def test_direction_score_of_nothing_is_zero() -> None:
    params = load_params(load_ruledb())
    s, factors = direction_score([], "cuda", params, 1000)
    assert (s.value, s.score, s.grade, s.breakdown, factors) == (0.0, 0, "A", [], {})


def test_package_of() -> None:
    assert package_of("src/pkg/mod.py", "", 1) == "src"
    assert package_of("src/pkg/mod.py", "", 2) == "src/pkg"
    assert package_of("setup.py", "", 1) == "(top level)"
    assert package_of("/repo/megatron/core/x.py", "/repo", 2) == "megatron/core"


# ---- effort and kernel kinds ----------------------------------------------------------------------
def test_triton_kernel_units_named_from_decorators(tmp_path: Path) -> None:
    lockin, _ = _score(
        _write(
            tmp_path,
            {
                "kernels.py": KERNELS.replace(
                    "@triton.jit", "@triton.autotune(configs=[], key=['n'])\n@triton.jit"
                )
            },
        )
    )
    hours = sorted(w.hours for w in lockin.findings if w.rule == "NL301")
    assert hours == [1.0, 40.0]  # the launch repeats the one @triton.jit kernel; autotune is part of it


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("rmsnorm_fwd_kernel", "rmsnorm"),
        ("_flash_attn_forward", "attention"),
        ("_mla_rope_fwd_inplace_kernel", "rope"),
        ("lightconv_cuda_kernel", "conv1d"),
        ("scaled_masked_softmax_cuda", "softmax"),
        ("fused_adam_cuda", "optimizer"),
        ("_indices_to_multihot_kernel", "moe"),
        ("selective_scan_fwd", "selective-scan"),
        ("fused_layer_norm_cuda", "layernorm"),
        ("edit_distance", None),
    ],
)
def test_kernel_kinds(name: str, kind: str | None) -> None:
    found = load_params(load_ruledb()).kernel_kind(name)
    assert (found.kind if found else None) == kind


def test_every_rule_effort_class_and_category_is_covered() -> None:
    db = load_ruledb()
    params = load_params(db)
    for rule in db.rules.values():
        assert rule.effort in params.efforts
        assert params.area_for(rule.id, rule.category).direction in ("cuda", "neuron", "none")


# ---- the table is validated with file, table and key ----------------------------------------------
def _pack(tmp_path: Path, text: str) -> Path:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "lockin.toml").write_text(text, encoding="utf-8")
    return pack


def test_bad_area_value_names_file_table_and_key(tmp_path: Path) -> None:
    pack = _pack(tmp_path, '[[lockin_area]]\nname = "cuda-api"\nmax = 150\n')
    with pytest.raises(RuleDBError) as info:
        load_dirs([default_rules_dir(), pack])
    message = str(info.value)
    assert (
        "lockin.toml" in message
        and "[[lockin_area]]" in message
        and "key 'max'" in message
        and "150" in message
    )


def test_missing_severity_weight_is_refused(tmp_path: Path) -> None:
    pack = _pack(tmp_path, '[[lockin_area]]\nname = "cuda-api"\nweights = { blocker = 1, warning = 0.5 }\n')
    with pytest.raises(
        RuleDBError, match=r"key 'weights': a weight for every severity is required \(missing: info\)"
    ):
        load_dirs([default_rules_dir(), pack])


def test_grades_must_cover_100(tmp_path: Path) -> None:
    pack = _pack(tmp_path, '[[lockin_grade]]\ngrade = "F"\nbelow = 95\n')
    db = load_dirs([default_rules_dir(), pack])
    with pytest.raises(
        RuleDBError, match=r"\[\[lockin_grade\]\]: key 'below': no grade covers a score of 100"
    ):
        load_params(db)


def test_a_policy_pack_retunes_the_score(tmp_path: Path) -> None:
    _write(tmp_path / "code", {"train.py": TRAIN})
    pack = _pack(tmp_path, '[[lockin_area]]\nname = "dist-backend"\nmax = 80\nhalf = 5\n')
    result = scan_paths([tmp_path / "code"], cwd=tmp_path / "code", rules_dirs=[pack])
    lockin = score(result.findings, result.results, result.db)
    dist = {a.name: a for a in lockin.repository.scores["cuda"].breakdown}["dist-backend"]
    assert dist.coupling == pytest.approx(40.0)  # 80 * 5 / (5 + 5)


def test_weigh_ignores_suppressed_and_uses_graph_facts_from_extra() -> None:
    params = load_params(load_ruledb())
    graph = Finding(
        rule="NL010",
        category="op-support",
        severity=Severity.WARNING,
        path="m.py",
        line=3,
        column=1,
        end_line=3,
        end_column=2,
        message="m",
        origin="graph",
        extra={"op": "aten::histc", "count": 2},
    )
    silenced = Finding(
        rule="NL101",
        category="cuda-api",
        severity=Severity.BLOCKER,
        path="m.py",
        line=4,
        column=1,
        end_line=4,
        end_column=2,
        message="m",
        suppressed="reason",
    )
    weighted = weigh([graph, silenced], params)
    assert (
        len(weighted) == 1 and weighted[0].facts["op"] == "aten::histc" and weighted[0].area == "op-support"
    )
    assert math.isclose(weighted[0].weight, 1.0)
