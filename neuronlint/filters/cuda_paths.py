"""Code that runs only where CUDA exists is not what stops a port (the `cuda_path` facts of
neuronlint/static/cuda_paths.py).

1. A CUDA guard is part of what it guards: the `torch.cuda.is_available()` (or `x.is_cuda`,
   `device.type == "cuda"`) in the test of an `if` whose body has findings is folded into them.
2. In test and benchmark code, what runs only with CUDA is left out: tests skipped without CUDA or
   a CUDA-only library, their skip conditions, `if torch.cuda.is_available():` bodies, and files
   that exercise a CUDA-only feature (they import an in-repo GPU kernel module, define GPU kernels,
   or import a CUDA-only library outside a guard; benchmarks also a compiled extension). Such
   tests are skipped on a Neuron host and go with the feature they test, which is reported where
   it is defined. `--show-ok` lists them.
3. Dependency entries of an optional extra named for a CUDA or ROCm build (`cu124`,
   `cu128-ampere-torch271`, `rocm72-torch2100`, `amd`) are left out: a Neuron install does not
   select that extra, so there is nothing to change (`--show-ok` lists them).
4. Elsewhere, a blocker that runs only where CUDA exists (in the body of a CUDA check, in a
   function that returns early without CUDA) is a warning: on Neuron the other branch runs, so the
   code does not stop, it takes the non-CUDA path (`capped_from` keeps the verdict). A CUDA value
   that is only the fallback for PyTorch without `torch.accelerator` (`... if hasattr(torch,
   "accelerator") else "cuda"`) is `info`: TorchNeuron has `torch.accelerator`.
"""

from __future__ import annotations

import re
from collections import Counter

from neuronlint.findings import Finding, Severity
from neuronlint.scope import BENCHMARK, TEST

LEFT_OUT_SCOPES = frozenset({TEST, BENCHMARK})
_CUDA_ONLY = frozenset({"gated", "skip", "branch", "fallback"})
_KERNEL_RULES = frozenset({"NL301", "NL305", "NL306", "NL307", "NL308"})


def _feature_files(findings: list[Finding]) -> set[str]:
    """Test and benchmark files that exercise a CUDA-only feature (see the module docstring)."""
    files: set[str] = set()
    for f in findings:
        if f.scope not in LEFT_OUT_SCOPES or f.suppressed is not None:
            continue
        if f.rule in _KERNEL_RULES:
            files.add(f.path)
        elif f.rule == "NL401" and not f.facts.get("guarded") and not f.facts.get("helper"):
            if not f.facts.get("neuron_path"):
                files.add(f.path)
        elif f.rule == "NL303" and f.scope == BENCHMARK:
            files.add(f.path)
    return files


# An optional extra named for a CUDA or ROCm build (`cu124`, `cu128-ampere-torch271`,
# `cu126onlytorch290`, `rocm72-torch2100`, `amd`): a Neuron install never selects it. Not `gpu`
# extras (`gpu-flash2`): a port reads what they pull in as the GPU features to replace.
_CUDA_EXTRA_PART = re.compile(r"^(cu\d+\w*|cuda\d*|rocm\w*|amd)$", re.IGNORECASE)
CUDA_EXTRA_KEY = "cuda-extra"


def in_cuda_extra(f: Finding) -> bool:
    """A dependency finding (NL404, NL050) on an entry of an extra named for a CUDA or ROCm build."""
    extra = f.facts.get("extra") if f.rule in ("NL404", "NL050") and f.facts.get("optional") else None
    return isinstance(extra, str) and any(_CUDA_EXTRA_PART.match(p) for p in re.split(r"[-_.]", extra))


def is_cuda_only(f: Finding, feature_files: set[str]) -> bool:
    """Test or benchmark code that a Neuron host never runs."""
    if f.scope not in LEFT_OUT_SCOPES:
        return False
    return f.facts.get("cuda_path") in _CUDA_ONLY or f.path in feature_files


def apply(
    findings: list[Finding],
    show_ok: bool = False,
    left_out: Counter | None = None,
    folded: list[Finding] | None = None,
) -> list[Finding]:
    """Fold guards, leave out test and benchmark code that runs only with CUDA, cap CUDA-only
    branches elsewhere at warning. `left_out` counts what was left out, by scope; `folded` gets
    the guards folded into the findings they guard (they are findings again once those are fixed)."""
    guarded = {(f.path, f.facts["cuda_guard"]) for f in findings if f.facts.get("cuda_guard")}
    kept: list[Finding] = []
    for f in findings:
        guard = f.facts.get("cuda_guard_of")
        if guard and (f.path, guard) in guarded and f.suppressed is None:
            if left_out is not None:
                left_out["guard"] += 1
            if folded is not None:
                folded.append(f)
            continue
        kept.append(f)
    feature_files = _feature_files(kept)
    result: list[Finding] = []
    for f in kept:
        if f.suppressed is None and in_cuda_extra(f):
            if show_ok:
                f.extra["cuda_only"] = True
            else:
                if left_out is not None:
                    left_out[CUDA_EXTRA_KEY] += 1
                continue
        elif f.suppressed is None and is_cuda_only(f, feature_files):
            if show_ok:
                f.extra["cuda_only"] = True
            else:
                if left_out is not None:
                    left_out[f.scope] += 1
                continue
        elif f.facts.get("cuda_path") in ("branch", "gated") and f.severity is Severity.BLOCKER:
            f.capped_from = f.capped_from or f.severity
            f.severity = Severity.WARNING
            f.extra["cuda_only"] = True
        elif f.facts.get("cuda_path") == "fallback" and f.severity is not Severity.INFO:
            f.capped_from = f.capped_from or f.severity
            f.severity = Severity.INFO
            f.extra["cuda_only"] = True
        result.append(f)
    return result
