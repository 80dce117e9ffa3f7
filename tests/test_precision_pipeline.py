"""Input-pipeline code and host data the code shows (docs/what-counts.md): `DataLoader` subclasses
and dataset transforms are data-pipeline code; what a data-preparation function
returns, a dict filled only with host values and a cast to a variable named as a dtype stay on the
host. And files a migration engineer would not flag at all (a configuration dataclass, a tokenizer,
a CPU data pipeline, plotting, offline metrics, a checkpoint converter, a device-generic model)
produce no finding. Each snippet is parsed and scanned for real; `# expect:` lines must fire, and
nothing else may."""

from __future__ import annotations

import textwrap

import pytest

from tests.annotated_source import check


def test_a_dataloader_subclass_is_data_pipeline_code(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch.utils.data import DataLoader


        class KHopSampler(torch.utils.data.DataLoader):
            def __init__(self, data, depth, node_idx=None, **kwargs):
                self.data = data
                if node_idx is None:
                    node_idx = torch.arange(data.num_nodes)
                elif node_idx.dtype == torch.bool:
                    node_idx = node_idx.nonzero(as_tuple=False).view(-1)
                super().__init__(node_idx.tolist(), collate_fn=self.__collate__, **kwargs)

            def __collate__(self, n_id):
                n_id = torch.tensor(n_id)
                return n_id[n_id < self.data.num_nodes]


        class ChunkLoader(DataLoader):
            def sizes(self, lengths):
                return lengths[lengths > 0].tolist()


        class Sampler:
            # only named like a data-pipeline class: a diffusion or token sampler runs on the device
            def step(self, logits):
                keep = logits.argmax(-1).nonzero()  # expect: NL601
                return keep
        """,
    )


def test_dataset_transforms_are_data_pipeline_code(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch_geometric.transforms import BaseTransform


        class RemoveTrainingClasses(BaseTransform):
            def __init__(self, classes):
                self.classes = classes

            def forward(self, data):
                data.train_mask = data.train_mask.clone()
                for i in self.classes:
                    data.train_mask[data.y == i] = False
                return data


        class Delaunay(BaseTransform):
            def forward(self, data):
                pos = data.pos.cpu().numpy()
                return pos


        class LearnedAugment(nn.Module):
            def forward(self, x):
                return x[x.abs() > 1]  # expect: NL602


        class Transform3d:
            # named after a transform, not derived from one: device math
            def inverse(self, m):
                if m.det().abs().min().item() < 1e-8:  # expect: NL603, NL701
                    raise ValueError("singular")
                return m.inverse()
        """,
    )


def test_what_a_data_preparation_function_returns_is_host_data(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from PIL import Image

        from .datasets.utils import preprocess_image_with_resize, preprocess_video_with_resize


        def validate(pipe, images, videos, height, width, device):
            artifacts = []
            for image, video in zip(images, videos):
                image = preprocess_image_with_resize(image, height, width)
                image = image.to(torch.uint8)
                image = image.permute(1, 2, 0).cpu().numpy()
                video = preprocess_video_with_resize(video, 49, height, width)
                video = video.round().clamp(0, 255).to(torch.uint8)
                frames = [Image.fromarray(f.permute(1, 2, 0).cpu().numpy()) for f in video]
                moved = preprocess_image_with_resize(image, height, width, device=device)
                latents = pipe(moved)
                artifacts.append((Image.fromarray(image), frames, latents.cpu()))  # expect: NL703
            return artifacts
        """,
    )


def test_a_dict_filled_with_host_values_and_dtype_casts_stay_on_the_host(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def convert(src, dst, dtype="bf16"):
            ckpt = torch.load(src, map_location="cpu", weights_only=True)
            torch_dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
            out = {}
            for key, value in ckpt.items():
                out[key.removeprefix("module.")] = value.to(torch_dtype).contiguous()
            nan = [k for k, v in out.items() if torch.isnan(v).any().item()]
            torch.save(out, dst)
            return nan


        def gather(model, batch):
            stats = {}
            stats["loss"] = model(batch).mean()
            return stats["loss"].item()  # expect: NL701
        """,
    )


_CONFIG = '''
"""Training configuration.

Defaults assume one node with 8 GPUs; set ``device`` to ``"cuda"`` or ``"cpu"`` on the command
line. ``backend`` is the torch.distributed backend (``nccl`` on GPUs).
"""

import argparse
from dataclasses import asdict, dataclass, field
from typing import Literal, Optional


@dataclass
class TrainConfig:
    model_name: str = "gpt2"
    seq_len: int = 2048
    precision: Literal["fp32", "bf16", "fp16"] = "bf16"
    device: Optional[str] = None
    backend: Optional[str] = None
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def parse_args(argv=None) -> TrainConfig:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="bf16")
    parser.add_argument("--device", default=None, help="cuda, cpu or mps; autodetected when unset")
    parser.add_argument("--backend", default=None, help="process group backend, e.g. nccl or gloo")
    args = parser.parse_args(argv)
    return TrainConfig(precision=args.precision, device=args.device, backend=args.backend)
'''

_TOKENIZER = '''
"""A byte-level BPE tokenizer."""

import json
from pathlib import Path

import torch


class BPETokenizer:
    def __init__(self, vocab_file: str, eos_token: str = "<|endoftext|>"):
        self.encoder = json.loads(Path(vocab_file).read_text())
        self.decoder = {v: k for k, v in self.encoder.items()}
        self.eos_id = self.encoder[eos_token]

    def encode(self, text: str) -> list[int]:
        return [self.encoder[t] for t in text.split()] + [self.eos_id]

    def decode(self, ids) -> str:
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        return " ".join(self.decoder[i] for i in ids if i != self.eos_id)

    def batch_encode(self, texts, max_len: int, pad_id: int = 0):
        rows = [self.encode(t)[:max_len] for t in texts]
        ids = torch.full((len(rows), max_len), pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), max_len), dtype=torch.bool)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = True
        lengths = mask.sum(dim=1)
        if (lengths == max_len).any():
            print(f"truncated {(lengths == max_len).sum().item()} of {len(rows)} sequences")
        return {"input_ids": ids, "attention_mask": mask}
'''

_PIPELINE = '''
"""Packing of tokenized documents into fixed-length blocks (CPU side)."""

import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class PackedDataset(Dataset):
    def __init__(self, path: str, block_size: int):
        self.data = np.memmap(path, dtype=np.uint16, mode="r")
        self.block_size = block_size

    def __len__(self) -> int:
        return (len(self.data) - 1) // self.block_size

    def __getitem__(self, i: int):
        start = i * self.block_size
        chunk = torch.from_numpy(self.data[start : start + self.block_size + 1].astype(np.int64))
        x, y = chunk[:-1], chunk[1:]
        keep = y != 0
        return x, y[keep] if keep.any() else y


class ShuffledStream(IterableDataset):
    def __init__(self, shards, block_size: int, seed: int = 0):
        self.shards, self.block_size, self.seed = shards, block_size, seed

    def __iter__(self):
        info = get_worker_info()
        shards = self.shards if info is None else self.shards[info.id :: info.num_workers]
        for shard in random.Random(self.seed).sample(shards, len(shards)):
            tokens = torch.from_numpy(np.fromfile(shard, dtype=np.uint16).astype(np.int64))
            for j in torch.randperm(len(tokens) // self.block_size).tolist():
                yield tokens[j * self.block_size : (j + 1) * self.block_size]


def collate(batch):
    xs, ys = zip(*batch)
    y = torch.full((len(ys), max(len(r) for r in ys)), -100, dtype=torch.long)
    for i, row in enumerate(ys):
        y[i, : len(row)] = row
    return torch.stack(xs), y


def make_loader(dataset, batch_size: int, num_workers: int = 4) -> DataLoader:
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers, collate_fn=collate)
'''

_PLOT = '''
"""Plot training curves and an attention map saved by a run."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch


def load(path):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return np.array([r["step"] for r in rows]), np.array([r["loss"] for r in rows])


def plot_attention(path, out):
    attn = torch.load(path, map_location="cpu")
    weights = attn["weights"][0].float()
    top = weights.max(dim=-1).values
    print("max attention", top.max().item(), "mean", top.mean().item())
    fig, ax = plt.subplots()
    ax.imshow(weights.numpy(), cmap="viridis")
    fig.savefig(out)


def plot_losses(paths, out):
    fig, ax = plt.subplots()
    for path in paths:
        steps, loss = load(path)
        good = loss < 20
        ax.plot(steps[good], loss[good], label=Path(path).stem)
    fig.savefig(out, dpi=150)
'''

_METRICS = '''
"""Offline evaluation metrics over saved predictions."""

import numpy as np
from sklearn.metrics import f1_score


def summarize(scores: np.ndarray, labels: np.ndarray, threshold: float = 0.5) -> dict:
    preds = (scores >= threshold).astype(np.int64)
    valid = labels >= 0
    out = {"accuracy": float((preds[valid] == labels[valid]).mean()), "f1": float(f1_score(labels[valid], preds[valid]))}
    if valid.sum() < len(labels):
        out["skipped"] = float(len(labels) - valid.sum())
    return out
'''

_MODEL = '''
"""A decoder block that runs wherever its parameters are."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def precompute_rope(dim: int, end: int, theta: float = 10000.0, device=None):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device).float() / dim))
    t = torch.arange(end, device=device).float()
    return torch.cos(torch.outer(t, freqs)), torch.sin(torch.outer(t, freqs))


class Attention(nn.Module):
    def __init__(self, dim: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.n_head, -1).transpose(1, 2) for z in self.qkv(x).split(c, dim=2))
        with torch.autocast(device_type=x.device.type, enabled=False):
            y = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
        return self.proj(y.to(x.dtype).transpose(1, 2).reshape(b, t, c))
'''


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("proj/config.py", _CONFIG),
        ("proj/text/bpe_tokenizer.py", _TOKENIZER),
        ("proj/data/pipeline.py", _PIPELINE),
        ("scripts/plot_curves.py", _PLOT),
        ("proj/eval/metrics.py", _METRICS),
        ("proj/models/attention.py", _MODEL),
    ],
)
def test_clean_files_have_no_finding(tmp_path, name, source):
    # the rules a scan runs by default, with the detection view's `--show-ok` findings
    check(tmp_path, source, name=name, select=[], show_ok=True)


def test_a_serving_tool_is_reported_at_its_first_import_in_a_file(tmp_path):
    check(
        tmp_path,
        """
        import ray
        import vllm.entrypoints.cli.serve  # expect: NL080
        from vllm import SamplingParams
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.inputs import TokensPrompt

        import tensorrt_llm  # expect: NL080, NL401


        def engine(model):
            from vllm.v1.engine.async_llm import AsyncLLM

            args = AsyncEngineArgs(model=model)
            return AsyncLLM.from_engine_args(args), SamplingParams(), TokensPrompt, ray
        """,
    )


def _triaged(tmp_path, rel: str, source: str) -> list:
    """The active findings, after triage, of one file `rel` of a repository holding only it."""
    from tests.conftest import scan_paths

    root = tmp_path / "repo"
    path = root / rel
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return scan_paths([root], cwd=root, triage=True).active


def test_a_test_function_in_a_source_module_is_test_code(tmp_path):
    findings = _triaged(
        tmp_path,
        "pkg/ops.py",
        """
            import torch
            import torch.nn.functional as F


            def chunked_interpolate(x, scale, chunks=4):
                return torch.cat([F.interpolate(c, scale_factor=scale) for c in x.chunk(chunks)])


            def resize(x):
                return chunked_interpolate(x.cuda(), 2)


            def test_chunked_interpolate():
                x = torch.randn(2, 3, 8, 8).cuda()
                out = chunked_interpolate(x, 2)
                ref = F.interpolate(x, scale_factor=2)
                assert torch.allclose(out, ref)
                print(out.abs().max())
            """,
    )
    by_line = {(f.line, f.rule): f for f in findings}
    model = by_line[(10, "NL101")]
    assert (model.scope, model.severity.value) == ("source", "blocker")
    embedded = by_line[(14, "NL101")]
    assert embedded.scope == "test" and embedded.severity.value == "warning"
    assert embedded.capped_from is not None and embedded.capped_from.value == "blocker"
    assert not [f for f in findings if f.line in (17, 18)]  # the test's own checks and prints


def test_a_test_split_evaluation_loop_in_a_training_script_is_source_code(tmp_path):
    """`def test_epoch(model, loader)` evaluates on the test split on the device: it is ported like
    the training loop (source scope, blockers stay blockers), unlike a test that asserts."""
    findings = _triaged(
        tmp_path,
        "train.py",
        """
            import torch


            def test_epoch(model, loader):
                model.eval()
                total = 0.0
                for x, y in loader:
                    x, y = x.cuda(), y.cuda()
                    total += torch.nn.functional.cross_entropy(model(x), y).item()
                return total / len(loader)


            def test_forward_matches():
                x = torch.ones(2, 2).cuda()
                torch.testing.assert_close(x * 2, x + x)
            """,
    )
    by_line = {(f.line, f.rule): f for f in findings}
    loop = by_line[(8, "NL101")]
    assert (loop.scope, loop.severity.value) == ("source", "blocker")
    assert (9, "NL701") in by_line  # the per-batch host read of an evaluation loop is reported
    checked = by_line[(14, "NL101")]
    assert checked.scope == "test" and checked.severity.value == "warning"
