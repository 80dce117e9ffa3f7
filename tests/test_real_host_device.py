"""host-sync and dynamic-shape findings on real files from public repositories (issue 10).

Each case names a Python file by its git blob id in a local mirror of its repository
(`/work/.mirror/<owner>+<name>/repo`, or $NEURONLINT_MIRRORS); the blob is read with
`git cat-file`, written under its own path into a temporary directory and scanned there, so the
path-based sites (tests/, data/) are the real ones. Only the ids and the (line, rule) pairs are
committed, labelled by reading the files (docs/what-counts.md): `present` must be reported,
`absent` must not. A case is skipped when its mirror or blob is not available. None of these files
is in benchmarks/accuracy/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import mirrors
from tests.conftest import scan_paths

CASES = [
    # (repository, path, blob, present {(line, rule)}, absent {(line, rule)}, scope of the findings)
    (
        "huggingface/trl",
        "trl/experimental/gold/gold_trainer.py",
        "3c592ba7dc52e740a7960c60adca36bcc75dd419",
        {(2800, "NL705")},  # loss_scalar = float(loss.detach()) in the training step
        set(),
        "source",
    ),
    (
        "karpathy/llm.c",
        "dev/data/mmlu.py",
        "bda8855b868b66baba3af7df1a8a1e77c3839089",
        # an evaluation loop kept under data/: it moves the model and batches to the device, so its
        # reads are device syncs (argmin().item() per example, .item() in an f-string)
        {(123, "NL701"), (124, "NL701"), (138, "NL701")},
        {(138, "NL704")},  # the .item() in the field is the sync, reported once as such
        "source",
    ),
    (
        "NVIDIA/Megatron-LM",
        "tests/unit_tests/generalized_tensor_parallel/test_gtp_grad_correctness.py",
        "9186547113e8485ce129c4aa447f3489d4557e9b",
        {(125, "NL701")},  # return float(loss.item()): test code is ported too, in the test scope
        {(125, "NL705")},  # float() of the number .item() already read copies nothing more
        "test",
    ),
    (
        "hpcaitech/ColossalAI",
        "examples/images/diffusion/ldm/modules/ema.py",
        "c3863269675e466f4571cf2d256c0f92fe1984cd",
        # buffers registered on self: `if self.num_updates >= 0` and `min(self.decay, ...)`
        {(33, "NL603"), (35, "NL603")},
        set(),
        "example",
    ),
    (
        "hpcaitech/ColossalAI",
        "examples/images/diffusion/ldm/models/diffusion/ddim.py",
        "a9e28792f86494b7dfbde1bd737f32c0f583c453",
        # DDIMSampler is a diffusion sampler (device code), not a torch.utils.data sampler
        {(43, "NL703")},
        set(),
        "example",
    ),
]


@pytest.mark.parametrize(
    "repo, path, blob, present, absent, scope", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES]
)
def test_real_host_device_lines(
    tmp_path: Path, repo: str, path: str, blob: str, present: set, absent: set, scope: str
) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(mirrors.blob(repo, blob))
    findings = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"]).active
    found = {(f.line, f.rule) for f in findings}
    assert present <= found, f"missing: {sorted(present - found)}"
    assert not (absent & found), f"reported but must not be: {sorted(absent & found)}"
    scopes = {f.scope for f in findings if (f.line, f.rule) in present}
    assert scopes == {scope}
