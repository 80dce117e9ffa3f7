"""Root causes on a real repository layout: one library, one kernel module, one dependency, one
compile setting, one construct; ids stable between runs; every active finding in exactly one group."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from neuronlint.groups import build_groups, group_id, module_name, place
from tests.conftest import scan_paths

# The shape of a fine-tuning library such as huggingface/peft or mosaicml/llm-foundry: a src/
# package with a flash-attn path and Triton kernels, tests, examples and a pyproject.
LAYOUT = {
    "pyproject.toml": """
        [project]
        name = "tinyft"
        dependencies = ["torch>=2.4", "flash-attn>=2.5"]
        [project.optional-dependencies]
        kernels = [
            "flash-attn>=2.5",
            "triton",
        ]
    """,
    "src/tinyft/__init__.py": "",
    "src/tinyft/ops/__init__.py": "",
    "src/tinyft/ops/rmsnorm_kernels.py": """
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({}, num_warps=4)], key=["n"])
        @triton.jit
        def _rmsnorm_fwd(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)

        def rmsnorm(x, y):
            _rmsnorm_fwd[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
            return y
    """,
    "src/tinyft/attention.py": """
        import torch
        from flash_attn import flash_attn_func, flash_attn_varlen_func

        from tinyft.ops.rmsnorm_kernels import rmsnorm

        def attend(q, k, v):
            return flash_attn_func(q, k, v, causal=True)

        def attend_varlen(q, k, v, cu, m):
            return flash_attn_varlen_func(q, k, v, cu, cu, m, m)

        @torch.compile(mode="max-autotune", dynamic=True)
        def fused(x):
            return x * 2
    """,
    "src/tinyft/train.py": """
        import torch

        def step(model, batch, lengths):
            batch = batch.to("cuda")
            loss = model(batch)
            if lengths.max().item() > 512:
                loss = loss * 2
            return loss

        def setup(model):
            return torch.compile(model, mode="max-autotune")
    """,
    "tests/test_attention.py": """
        import torch
        from flash_attn import flash_attn_func

        def test_attend():
            q = torch.randn(1, 8, 2, 64, device="cuda")
            assert flash_attn_func(q, q, q).shape == q.shape
    """,
}


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _groups(tmp_path: Path):
    write(tmp_path, LAYOUT)
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True)
    return result, build_groups(result.findings, result.db, result.context)


def _by_kind(causes, kind):
    return {c.subject: c for c in causes if c.kind == kind}


def test_one_library_with_its_imports_and_call_sites(tmp_path):
    result, causes = _groups(tmp_path)
    flash = _by_kind(causes, "library")["flash_attn"]
    rules = sorted(f.rule for f in flash.findings)
    assert rules.count("NL401") == 1  # src/tinyft/attention.py
    assert rules.count("NL402") == 2  # two calls in the package
    # tests/test_attention.py tests flash_attn itself (it imports it unguarded): a Neuron host
    # skips it, so its findings are left out and counted (filters/cuda_paths.py).
    assert flash.files == ["src/tinyft/attention.py"]
    assert result.left_out["test"] == 3  # its import, its call and its "cuda" tensor
    assert flash.severity.value == "blocker"
    assert flash.scope_counts() == {"source": 3}
    assert flash.headline.startswith(
        "flash_attn (no Neuron backend): 1 import and 2 uses in src/tinyft/attention.py"
    )
    assert flash.change.startswith("Replace flash_attn: ")


def test_one_kernel_module_with_definition_launch_and_importers(tmp_path):
    _, causes = _groups(tmp_path)
    kernels = _by_kind(causes, "kernel-module")
    assert list(kernels) == ["src.tinyft.ops.rmsnorm_kernels"]
    cause = kernels["src.tinyft.ops.rmsnorm_kernels"]
    assert sorted(f.rule for f in cause.findings) == ["NL301", "NL301", "NL306"]  # jit, launch, import
    assert "imported by 1 file" in cause.headline
    assert "NKI" in cause.change


def test_one_dependency_per_package_each_entry_on_its_line(tmp_path):
    _, causes = _groups(tmp_path)
    deps = _by_kind(causes, "dependency")
    assert sorted(deps) == ["flash_attn", "triton"]
    lines = sorted(f.line for f in deps["flash_attn"].findings)
    assert lines == [3, 6]  # the required entry and the extra's, not the same line twice
    assert deps["triton"].findings[0].severity.value == "info"  # already optional
    assert "extra" in deps["triton"].change and "Remove" not in deps["triton"].change


def test_compile_settings_and_constructs(tmp_path):
    _, causes = _groups(tmp_path)
    settings = _by_kind(causes, "compile-setting")
    # `@torch.compile(mode="max-autotune", dynamic=True)`: one construct, one compile-backend
    # finding (the most severe, dynamic=True), not three of near-identical text.
    decorator = [f for f in result_findings(causes) if f.path == "src/tinyft/attention.py" and f.line == 12]
    assert [(f.rule, sorted(f.extra["also"])) for f in decorator] == [("NL804", ["NL801", "NL802"])]
    assert settings["dynamic=True"].count == 1
    assert settings["max-autotune"].files == ["src/tinyft/train.py"]
    constructs = _by_kind(causes, "construct")
    assert "src/tinyft/train.py:6" in constructs  # `if lengths.max().item() > 512`: host sync + control flow
    assert {f.category for f in constructs["src/tinyft/train.py:6"].findings} == {
        "host-sync",
        "dynamic-shape",
    }


def test_a_construct_in_a_notebook_is_named_by_its_cell(tmp_path):
    import json

    cell = textwrap.dedent(LAYOUT["src/tinyft/train.py"]).lstrip().splitlines(keepends=True)
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Train\n"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": cell},
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True)
    [construct] = [
        c for c in build_groups(result.findings, result.db, result.context) if c.kind == "construct"
    ]
    # `if lengths.max().item() > 512:` is line 6 of cell 2; its id keeps the notebook's JSON line.
    json_line = construct.findings[0].line
    assert construct.subject == f"train.ipynb:{json_line}" and json_line != 6
    assert construct.headline.startswith("train.ipynb:cell 2:6: NL")
    assert place(construct.findings[0]) == "train.ipynb:cell 2:6"


def result_findings(causes):
    return [f for c in causes for f in c.findings]


def test_every_finding_in_one_group_ranked_and_stable(tmp_path):
    result, causes = _groups(tmp_path)
    active = [f for f in result.findings if f.suppressed is None]
    assert all(f.group for f in active)
    assert sum(c.count for c in causes) == len(active)
    assert len({c.id for c in causes}) == len(causes)
    ranks = [c.rank_key() for c in causes]
    assert ranks == sorted(ranks)
    assert causes[0].severity.value == "blocker"
    # Same code, same ids (a second scan of the same tree).
    again = scan_paths([tmp_path], cwd=tmp_path, triage=True)
    assert [c.id for c in build_groups(again.findings, again.db, again.context)] == [c.id for c in causes]
    assert group_id("library", "flash_attn") == next(c.id for c in causes if c.subject == "flash_attn")
    data = causes[0].to_dict()
    assert set(data) >= {"id", "kind", "headline", "change", "severity", "count", "files", "scopes"}


def test_module_name():
    assert module_name("src/pkg/ops/kernels.py") == "src.pkg.ops.kernels"
    assert module_name("pkg/ops/__init__.py") == "pkg.ops"


def test_a_framework_strategy_is_grouped_under_the_library_it_runs(tmp_path):
    """Lightning's DeepSpeed strategies (NL072) carry no library record of their own: they group
    under deepspeed, with a deepspeed import of the same project, never under another library's name."""
    write(
        tmp_path,
        {
            "train.py": """
                import deepspeed
                import lightning as L
                from deepspeed.ops.adam import FusedAdam
                from lightning.pytorch.strategies import DeepSpeedStrategy

                def fit(model):
                    engine = deepspeed.initialize(model=model, optimizer=FusedAdam(model.parameters()))
                    trainer = L.Trainer(strategy=DeepSpeedStrategy(stage=3))
                    fabric = L.Fabric(strategy="deepspeed_stage_2")
                    return engine, trainer, fabric
            """,
            "finetune.py": """
                import lightning as L

                trainer = L.Trainer(strategy="deepspeed_stage_3")
            """,
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True)
    libraries = _by_kind(build_groups(result.findings, result.db, result.context), "library")
    assert set(libraries) == {"deepspeed"}
    deepspeed = libraries["deepspeed"]
    assert sorted(f.rule for f in deepspeed.findings).count("NL072") == 3
    assert deepspeed.headline.startswith("deepspeed (no Neuron backend): 1 import and ")
    strategies_only = [f for f in result.findings if f.path == "finetune.py"]
    assert [f.rule for f in strategies_only] == ["NL072"]


def test_a_library_group_without_imports_does_not_count_zero_imports(tmp_path):
    write(
        tmp_path,
        {"finetune.py": 'import lightning as L\n\ntrainer = L.Trainer(strategy="deepspeed_stage_3")\n'},
    )
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True)
    (cause,) = _by_kind(build_groups(result.findings, result.db, result.context), "library").values()
    assert cause.headline == "deepspeed (no Neuron backend): 1 use in finetune.py"


def test_a_guarded_replacement_reads_as_one_line_in_the_headline(tmp_path):
    """The fix for `torch.cuda.empty_cache()` is a guard on two lines; a root cause's one-line
    change shows it as the one-line statement it equals (the text output escapes a raw newline as
    `\\x0a`, followed by the indentation)."""
    (tmp_path / "train.py").write_text(
        textwrap.dedent(
            """
            import torch

            def step(model, batch):
                loss = model(batch)
                torch.cuda.empty_cache()
                return loss
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "neuronlint", "scan", ".", "-f", "json", "--exit-zero", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(proc.stdout)
    (finding,) = [f for f in report["findings"] if f["rule"] == "NL105"]
    assert "\n" in finding["fix"]["edits"][-1]["content"]  # the fix itself keeps its two lines
    (cache,) = [g for g in report["groups"] if "empty_cache" in g["headline"]]
    assert cache["change"] == (
        "Replace with `if torch.accelerator.is_available(): torch.accelerator.empty_cache()`."
    )


def test_a_fix_that_deletes_says_so_instead_of_replace_with_nothing(tmp_path):
    """NL202's fix deletes `device_ids=`: the root cause's change is its description, never
    "Replace with ``"."""
    (tmp_path / "train.py").write_text(
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "def wrap(model, local_rank):\n"
        "    return DDP(model, device_ids=[local_rank])\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "neuronlint",
            "scan",
            "train.py",
            "-f",
            "json",
            "--exit-zero",
            "--select",
            "NL202",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    (group,) = json.loads(proc.stdout)["groups"]
    assert group["change"].startswith("Remove `device_ids`")
    assert "Replace with ``" not in group["change"]


def test_a_numba_kernel_module_counts_its_launch_as_a_launch(tmp_path):
    # BEVDet's kitti_utils/rotate_iou.py: `@cuda.jit` kernels and, in the host function, one launch
    # `kernel[blocks, threads, stream](...)`; the cause counts kernels and launches apart.
    write(
        tmp_path,
        {
            "det/__init__.py": "",
            "det/rotate_iou.py": textwrap.dedent(
                """\
                from numba import cuda


                @cuda.jit(device=True)
                def area(box):
                    return box[2] * box[3]


                @cuda.jit
                def iou_kernel(n, boxes, out):
                    i = cuda.grid(1)
                    if i < n:
                        out[i] = area(boxes[i])


                def iou(boxes, out):
                    stream = cuda.stream()
                    iou_kernel[4, 64, stream](boxes.shape[0], cuda.to_device(boxes), out)
                """
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True)
    causes = build_groups(result.findings, result.db, result.context)
    kernels = _by_kind(causes, "kernel-module")["det.rotate_iou"]
    assert sorted((f.line, f.rule) for f in kernels.findings) == [(4, "NL305"), (9, "NL305"), (18, "NL305")]
    assert "2 kernels, 1 launch" in kernels.headline
