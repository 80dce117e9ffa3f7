"""What the portable fixes mean at run time, on this CPU-only machine with torch 2.13: small
real-world-shaped CUDA scripts fail before the fix and run after it; guarded code that already ran
on the CPU gives bit-identical output after it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neuronlint.fix import flavour_for
from neuronlint.fix.run import fix_files
from neuronlint.pipeline import ScanOptions, run_scan

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the point is a machine without CUDA")

TRAIN = """
import torch
import torch.nn as nn

torch.backends.cudnn.benchmark = True


def main():
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    print("devices", torch.cuda.device_count())
    for step in range(3):
        x = torch.randn(8, 16, device="cuda")
        y = torch.randn(8, 1).to("cuda", non_blocking=True)
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            loss = (model(x).float() - y).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        torch.cuda.synchronize()
        print(f"step {step} loss {loss.item():.6f} peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
    torch.cuda.empty_cache()
    print("done")


if __name__ == "__main__":
    main()
"""

DDP_SETUP = """
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def setup():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(local_rank)
    model = torch.nn.Linear(4, 2).cuda()
    return DDP(model, device_ids=[local_rank], output_device=local_rank), local_rank


if __name__ == "__main__":
    model, rank = setup()
    out = model(torch.ones(3, 4).cuda())
    out.sum().backward()
    dist.all_reduce(out.detach().sum())
    print("backend", dist.get_backend(), "rank", rank, "grad", model.module.weight.grad.shape)
    dist.destroy_process_group()
"""

GUARDED = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(1234)
if torch.cuda.is_available():
    torch.cuda.manual_seed_all(1234)

model = nn.Sequential(nn.Linear(10, 20), nn.Tanh(), nn.Linear(20, 1)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    x = torch.randn(16, 10, device=device)
    target = x.sum(dim=1, keepdim=True)
    loss = nn.functional.mse_loss(model(x), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    print(step, repr(loss.item()))
if torch.cuda.is_available():
    print("peak", torch.cuda.max_memory_allocated())
name = "cuda" if torch.cuda.is_available() else "cpu"
print("device", device.type, name, model[0].weight.sum().item())
"""


def run(path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), PYTHONWARNINGS="ignore")
    return subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env, cwd=path.parent
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fix(tmp_path: Path, code: str, unsafe: bool = False) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(code).lstrip("\n"))
    options = ScanOptions(paths=[path], base=tmp_path, jobs=1)
    result = run_scan(options)
    fix_files(result, options, flavour_for("portable", result.context, result.db), unsafe, True, tmp_path)
    return path


def test_training_loop_fails_before_and_runs_after_the_safe_fixes(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(TRAIN)
    before = run(path)
    assert before.returncode != 0 and "CUDA" in before.stderr
    fixed = fix(tmp_path, TRAIN)
    after = run(fixed)
    assert after.returncode == 0, after.stderr
    assert after.stdout.splitlines()[0] == "devices 0"
    assert [line.split()[0] for line in after.stdout.splitlines()[1:]] == ["step", "step", "step", "done"]
    assert "torch.cuda" not in fixed.read_text()


def test_ddp_setup_with_nccl_runs_single_process_on_gloo_after_the_unsafe_fixes(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(DDP_SETUP)
    assert run(path).returncode != 0
    fixed = fix(tmp_path, DDP_SETUP, unsafe=True)
    after = run(fixed)
    assert after.returncode == 0, after.stderr
    assert "backend gloo rank 0 grad torch.Size([2, 4])" in after.stdout


def test_guarded_code_gives_bit_identical_results(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(GUARDED)
    before = run(path)
    assert before.returncode == 0, before.stderr
    fixed = fix(tmp_path, GUARDED)
    text = fixed.read_text()
    assert "torch.accelerator.current_accelerator(check_available=True)" in text
    assert "torch.accelerator.synchronize()" in text
    after = run(fixed)
    assert after.returncode == 0, after.stderr
    assert after.stdout == before.stdout


LEGACY = """
import torch

if torch.cuda.is_available():
    device = "cuda"
else:
    device = "cpu"


class Double(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad):
        return grad * 2


def main():
    x = torch.cuda.FloatTensor([1.0, 2.0, 3.0])
    buffer = torch.cuda.HalfTensor(2, 3)
    ones = torch.ones(3, dtype=torch.int64).type(torch.cuda.FloatTensor)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    x.requires_grad_()
    Double.apply(x).sum().backward()
    print(device, x.grad.tolist(), tuple(buffer.shape), buffer.dtype, ones.dtype, ones.tolist())


if __name__ == "__main__":
    main()
"""


def test_legacy_types_custom_fwd_and_the_statement_idiom_run_after_the_fixes(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(LEGACY)
    before = run(path)
    assert before.returncode != 0  # torch.cuda.FloatTensor cannot be built without CUDA
    fixed = fix(tmp_path, LEGACY, unsafe=True)  # `.type(...)` is unsafe (on a module it differs)
    text = fixed.read_text()
    assert "torch.cuda" not in text, text
    after = run(fixed)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "cpu [2.0, 2.0, 2.0] (2, 3) torch.float16 torch.float32 [1.0, 1.0, 1.0]"
