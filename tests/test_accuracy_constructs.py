"""Issue 10 constructs on real code: files from public repositories (local mirrors, read in test
setup, skipped when absent, never committed), each with the (line, rule) pairs it must report.

The pairs were labelled by reading the files against docs/what-counts.md; a test checks only the
rules it names, so other findings of the same file do not make it fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import mirrors
from tests.conftest import scan_paths


def _scan(tmp_path: Path, files: dict[str, bytes], **options):
    for rel, data in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return scan_paths([tmp_path], cwd=tmp_path, select=["ALL"], **options).active


CASES = [
    # (repository, path, blob, rules checked, {(line, rule)})
    (
        "NVIDIA/NeMo",
        "nemo/collections/tts/models/vits.py",
        "3c53442a0863cd2caec6d82689b2f2a6196980cd",
        ("NL107",),
        {(24, "NL107")},  # from torch.cuda.amp import autocast (the import line; its uses as well)
    ),
    (
        "facebookresearch/dinov2",
        "dinov2/eval/setup.py",
        "959128c0673cc51036dbf17dcc4ee68a037988fb",
        ("NL109",),
        {(10, "NL109")},  # import torch.backends.cudnn as cudnn
    ),
    (
        "hpcaitech/ColossalAI",
        "examples/community/fp8/mnist/main.py",
        "2bb912dec247933f420195df8f7425e6f330dfa4",
        ("NL110",),
        {(195, "NL110")},  # cuda_kwargs = {"num_workers": 1, "pin_memory": True, ...}
    ),
    (
        "Lightning-AI/pytorch-lightning",
        "src/lightning/fabric/accelerators/cuda.py",
        "562dcfc9cd7448ef54a419f32c32fe18880489b4",
        ("NL114",),
        {(185, "NL114")},  # torch._C._cuda_clearCublasWorkspaces()
    ),
    (
        "pytorch/xla",
        "test/torch_distributed/test_ddp.py",
        "b8d482a53e2c5b29a4f05820309fd102be3bf876",
        ("NL902",),
        {(33, "NL902")},  # init_method="xla://": the XLA rendezvous of an xla process group
    ),
    (
        "hpcaitech/ColossalAI",
        "applications/ColossalChat/examples/training_scripts/train_sft.py",
        "e319340c3f60505b754fac844917f81f17c7a752",
        ("NL402",),
        {(50, "NL402")},  # attn_implementation="flash_attention_2": flash_attn through transformers
    ),
    (
        "openai/guided-diffusion",
        "guided_diffusion/resample.py",
        "c82eccdcd47c468d41e7cbe02de6a731f2c9bf81",
        ("NL604",),
        # batch sizes gathered from every rank and read (`[x.item() for x in batch_sizes]`): the pad
        # buffers `th.zeros(max_bs)` and the slices `y[:bs]` of `zip(..., batch_sizes)`
        {(96, "NL604"), (97, "NL604"), (101, "NL604"), (103, "NL604")},
    ),
    (
        "huggingface/peft",
        "src/peft/tuners/lora/eva.py",
        "bc895d1a724da84bd81d7ebd95ccc7ad2875301c",
        ("NL604",),
        # the same gather with `.tolist()`: `new_zeros((max(all_sizes), ...))`, `tensor[:size]`
        {(91, "NL604"), (99, "NL604")},
    ),
    (
        "pytorch/examples",
        "distributed/FSDP/T5_training.py",
        "c4d9a4fb69d400011af3fa40d20e154076cba314",
        ("NL603", "NL704"),
        # `curr_val_loss = validation(...)` (another module's helper), then `curr_val_loss.item()`:
        # a tensor, so `if curr_val_loss < best_val_loss` decides on its value and the record's
        # f-string formats it
        {(173, "NL603"), (188, "NL603"), (192, "NL704")},
    ),
    (
        "microsoft/LoRA",
        "examples/NLG/src/gpt2_ft.py",
        "18c56ee7ea4c16d913fc5e86deaddf29122af48a",
        ("NL402",),
        # `amp.scale_loss(...)` in a function above `if __name__ == "__main__": ... from apex import amp`
        {(124, "NL402"), (132, "NL402")},
    ),
    (
        "IDEA-Research/DINO",
        "models/dino/dn_components.py",
        "e9f995b2c1894ea3623ea8cf0bd5f4f8bd0a3882",
        ("NL603", "NL705"),
        # `known_num = [sum(k) for k in known]` over `.cuda()` tensors: `int(max(known_num))` reads
        # and Python compares device values
        {(39, "NL603"), (39, "NL705"), (43, "NL603"), (68, "NL603"), (68, "NL705")},
    ),
    (
        "mistralai/mistral-inference",
        "src/mistral_inference/cache.py",
        "6f8aa7d2c18186ea4c1e9294605659bf9f3a8674",
        ("NL602",),
        # `xk[self.metadata.to_cache_mask]`, the field declared `to_cache_mask: torch.Tensor`
        {(91, "NL602"), (92, "NL602")},
    ),
]


@pytest.mark.parametrize("repo, path, blob, rules, expected", CASES, ids=[c[1] for c in CASES])
def test_real_file(tmp_path, repo, path, blob, rules, expected):
    found = _scan(tmp_path, {path: mirrors.blob(repo, blob)})
    got = {(f.line, f.rule) for f in found if f.rule in rules}
    assert expected <= got, f"missing {sorted(expected - got)}"


def test_a_library_fork_inside_the_repository_is_first_party(tmp_path):
    """neuronx-nemo-megatron carries its own apex (apex/setup.py beside nemo/): NeMo's apex
    imports are the code being ported, not a CUDA-only dependency."""
    repo = "aws-neuron/neuronx-nemo-megatron"
    files = {
        "apex/setup.py": mirrors.blob(repo, "fc3a9ad60325414f25a3d6d52e68e5bf2935c6a4"),
        "nemo/nemo/collections/nlp/modules/common/megatron/adapters/parallel_adapters.py": b"",
    }
    adapters = "nemo/nemo/collections/nlp/modules/common/megatron/adapters/parallel_adapters.py"
    files[adapters] = mirrors.show(repo, "HEAD", adapters)
    (tmp_path / ".git").mkdir()
    found = _scan(tmp_path, files, triage=True)
    assert not [f for f in found if f.rule in ("NL401", "NL402") and f.facts.get("library") == "apex"]
    # The same file in a repository without the fork keeps its findings.
    other = tmp_path / "consumer"
    other.mkdir()
    (other / ".git").mkdir()
    kept = _scan(other, {"adapters.py": files[adapters]}, triage=True)
    assert [f for f in kept if f.rule == "NL401" and f.facts.get("library") == "apex"]
