"""Portable fixes on real training and inference scripts (read from local mirrors of public
repositories with `git cat-file`; never committed here, skipped when a mirror is absent): every
fixed file parses and compiles, a rescan shows the fixed findings gone and no new ones, and a second
fix run changes nothing."""

from __future__ import annotations

import collections

import pytest

from neuronlint.filters.notes import is_note
from neuronlint.fix import flavour_for
from neuronlint.fix.run import fix_files
from neuronlint.pipeline import ScanOptions, run_scan
from tests import mirrors

# repository -> files: training loops, DDP setup, benchmarks, evaluation and inference code.
FILES = {
    "karpathy+llm.c": ["train_gpt2.py", "train_llama3.py"],
    "huggingface+peft": [
        "examples/lora_dreambooth/train_dreambooth.py",
        "examples/eva_finetuning/eva_finetuning_multi_accelerator.py",
    ],
    "pytorch+ao": [
        "benchmarks/mx_formats/cast_bench.py",
        "benchmarks/prototype/moe_training/mxfp8/roofline_unified.py",
    ],
    "huggingface+trl": ["trl/models/activation_offloading.py", "trl/generation/vllm_client.py"],
    "facebookresearch+dinov2": ["dinov2/eval/linear.py", "dinov2/train/ssl_meta_arch.py"],
    "NVIDIA+Megatron-LM": ["megatron/training/initialize.py", "megatron/training/utils/common_utils.py"],
}


def _read(repo: str, path: str) -> bytes | None:
    return mirrors.try_show(repo, "HEAD", path)


def _counts(findings) -> collections.Counter:
    # Notes (supported code, shown because the fix scan runs with show_ok) are not findings.
    return collections.Counter((f.path, f.rule) for f in findings if f.suppressed is None and not is_note(f))


def _with_folded(findings) -> collections.Counter:
    """Every rule a scan reports, those folded into another finding of their line included."""
    out = collections.Counter()
    for f in findings:
        if f.suppressed is None:
            out[(f.path, f.rule)] += 1
            for rule in f.extra.get("also", ()):
                out[(f.path, rule)] += 1
    return out


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("repo", sorted(FILES))
def test_portable_fixes_on_real_files(tmp_path, repo, unsafe):
    present = 0
    for name in FILES[repo]:
        data = _read(repo, name)
        if data is None:
            continue
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        present += 1
    if not present:
        pytest.skip(f"no local mirror of {repo} (or its files moved)")
    options = ScanOptions(
        paths=[tmp_path], base=tmp_path, jobs=1, show_ok=True
    )  # as `neuronlint fix` runs it
    before = run_scan(options)
    flavour = flavour_for("portable", before.context, before.db)
    report = fix_files(before, options, flavour, unsafe, True, tmp_path)
    assert report.changed(), "real CUDA code has something mechanical to fix"
    for item in report.files:
        assert item.error is None, item.error
        compile(item.after, item.path, "exec")

    after = run_scan(options)
    # A CUDA guard is folded into the findings of its body; once they are fixed it is a finding
    # of its own (on Neuron it still skips the code), so it counts on both sides.
    before_all = before.findings + before.folded_guards
    after_all = after.findings + after.folded_guards
    old, new = _counts(before_all), _counts(after_all)
    # No new findings: a rule the rescan shows was there before, if only folded into another
    # finding of its line (one finding per line and category), which the fix then removed.
    assert not (new - _with_folded(before_all)), f"the fixes introduced findings: {new - old}"
    # A guard folded into the code it guards is the same finding when the rescan shows it on its own.
    assert not any(item.appeared for item in report.files)
    # ... and each guard no longer folded is counted once: fixed, or left on its own.
    unfolded = len(before.folded_guards) - len(after.folded_guards)
    assert report.guards_fixed + report.guards_shown == unfolded
    folded_old, folded_new = _with_folded(before_all), _with_folded(after_all)
    for item in report.files:
        for rule, count in item.fixed.items():
            assert folded_old[(item.path, rule)] - folded_new[(item.path, rule)] >= count, (item.path, rule)
    # The count is honest: the findings fixed are the findings the rescan no longer shows.
    assert sum(old.values()) - sum(new.values()) == sum(report.fixed.values()) + report.also_gone
    assert _counts(report.remaining) == _counts(after.findings)
    assert len(report.remaining) == sum(_counts(after.findings).values())  # notes are not findings left

    again = fix_files(after, options, flavour, unsafe, True, tmp_path)
    assert not again.changed(), "a second fix run must be a no-op"
