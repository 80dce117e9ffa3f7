"""neuron-lockin rules (NL901-NL909): code tied to Neuron is reported at info/warning, never as a blocker."""

from __future__ import annotations

import pytest

from tests.annotated_source import check, only
from tests.conftest import scan_source

LOCKIN = {"select": ["neuron-lockin"]}


def test_torch_xla_imports_device_strings_and_process_group(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch
        import torch.distributed as dist
        import torch_xla  # expect: NL901
        import torch_xla.core.xla_model as xm  # expect: NL901
        import torch_xla.runtime as xr  # expect: NL901
        import torch_xla.distributed.xla_backend  # expect: NL901
        from torch_xla.distributed.parallel_loader import MpDeviceLoader  # expect: NL901

        def setup(loader, model):
            dist.init_process_group("xla", init_method="xla://")  # expect: NL902
            device = torch_xla.device()  # expect: NL901
            model = model.to("xla")  # expect: NL902
            return MpDeviceLoader(loader, device), xr.world_size(), model  # expect: NL901
    """,
        **LOCKIN,
    )
    backend = next(f for f in findings if f.line == 10)
    assert "process-group backend" in backend.message
    assert "device" in next(f for f in findings if f.line == 12).message
    assert all(f.severity.value != "blocker" for f in findings)


def test_xla_lifecycle_raises_torch_xla_to_warning(tmp_path):
    source = "import torch_xla.core.xla_model as xm  # expect: NL901\n"
    old = only(check(tmp_path, source, sdk="2.29", target="trn1", **LOCKIN), "NL901")
    assert old.severity.value == "info"
    new = only(check(tmp_path, source, sdk="2.31", target="trn1", **LOCKIN), "NL901")
    assert new.severity.value == "warning" and "2.30" in new.message


def test_deprecated_and_removed_xla_apis(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch_xla.core.xla_model as xm  # expect: NL901

        def step(model, optimizer):
            device = xm.xla_device()  # expect: NL908
            world = xm.xrt_world_size()  # expect: NL908
            rank = xm.get_ordinal()  # expect: NL908
            xm.optimizer_step(optimizer)  # expect: NL901
            xm.mark_step()  # expect: NL908
            return device, world, rank
    """,
        sdk="2.31",
        target="trn1",
        **LOCKIN,
    )
    removed = next(f for f in findings if f.line == 5)
    assert removed.fix is not None and removed.fix.replacement == "torch_xla.runtime.world_size"
    assert "torch_xla.runtime.world_size()" in removed.message
    assert all(f.severity.value != "blocker" for f in findings)


def test_torch_neuronx_nki_nxd_optimum(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch
        import torch_neuronx  # expect: NL903
        import nki  # expect: NL905
        import nki.language as nl  # expect: NL905
        from neuronxcc import nki as legacy_nki  # expect: NL905
        from neuronx_distributed.parallel_layers import ColumnParallelLinear  # expect: NL904
        from optimum.neuron import NeuronModelForCausalLM  # expect: NL906

        @nki.jit  # expect: NL905
        def add_kernel(a, b):
            return nl.add(a, b)

        def export(model, example):
            return torch_neuronx.trace(model, example)  # expect: NL903
    """,
        sdk="2.31",
        target="trn2",
        **LOCKIN,
    )
    legacy = next(f for f in findings if f.line == 5)
    assert legacy.severity.value == "warning" and "2.30" in legacy.message
    assert all(f.severity.value != "blocker" for f in findings)


def test_uses_above_a_late_module_level_import(tmp_path):
    # aws-samples ml-specialized-hardware question_answering.py: `train()` uses xm and pl, which the
    # `if __name__ == "__main__":` block imports below it; the function finds them when it runs.
    check(
        tmp_path,
        """
        import torch
        from torch.optim import AdamW


        def train(model, loader, device):
            optimizer = AdamW(model.parameters(), lr=1e-4 * xm.get_ordinal())  # expect: NL908
            loader = pl.MpDeviceLoader(loader, device)  # expect: NL901
            for batch in loader:
                loss = model(**batch).loss
                loss.backward()
                xm.optimizer_step(optimizer)  # expect: NL901
            xm.master_print("done")  # expect: NL901
            xm.save(model.state_dict(), "model.pt")  # expect: NL901


        def evaluate(model):
            import numpy as xm

            return xm.zeros(3)


        if __name__ == "__main__":
            import torch_xla.core.xla_model as xm  # expect: NL901
            import torch_xla.distributed.parallel_loader as pl  # expect: NL901

            device = xm.xla_device()  # expect: NL908
            train(torch.nn.Linear(2, 2), [], device)
    """,
        **LOCKIN,
    )


def test_legacy_torch_neuron_imports(tmp_path):
    # aws-samples ml-specialized-hardware tutorials/01 inference.py: the Inf1 package torch-neuron.
    check(
        tmp_path,
        """
        import os
        import torch
        import torch.neuron  # expect: NL903
        import torch_neuron  # expect: NL903
        from torch import neuron  # expect: NL903

        def model_fn(model_dir):
            return torch.jit.load(os.path.join(model_dir, "model_neuron.pt"))  # expect: NL903

        def export(model, example):
            return torch_neuron.trace(model, example)  # expect: NL903

        def export_again(model, example):
            # aws-do-eks neuron-test: the trace call of the torch.neuron namespace is the artifact
            return torch.neuron.trace(model, example_inputs=[example])  # expect: NL903
    """,
        **LOCKIN,
    )


def test_loading_a_model_traced_for_neuron(tmp_path):
    """A Neuron inference handler loads the TorchScript artifacts `torch_neuronx.trace` saved
    (aws-neuron-sagemaker-samples' stable-diffusion `inference.py`): each load is lock-in. Without
    torch-neuronx in the file, `torch.jit.load` is a plain TorchScript load (openai CLIP)."""
    check(
        tmp_path,
        """
        import torch
        import torch_neuronx  # expect: NL903

        def model_fn(pipe, unet_path, vae_path):
            pipe.unet = torch_neuronx.DataParallel(torch.jit.load(unet_path), None)  # expect: NL903
            pipe.vae.decoder = torch.jit.load(vae_path)  # expect: NL903
            return pipe
    """,
        **LOCKIN,
    )
    check(
        tmp_path,
        """
        import torch

        def load(path):
            return torch.jit.load(path, map_location="cpu").eval()
    """,
        **LOCKIN,
    )


def test_a_device_class_registry_name_is_no_device_in_use(tmp_path):
    """composer's `class DeviceNeuron(Device): name = 'neuron'` names the class in the device
    registry; the device it uses is `xm.xla_device()`. A `name` outside a class body, or any other
    attribute, still names a device."""
    check(
        tmp_path,
        """
        import torch
        import torch_xla.core.xla_model as xm  # expect: NL901

        class DeviceNeuron:
            name = "neuron"
            default = "neuron"  # expect: NL902

            def __init__(self):
                self._device = xm.xla_device()  # expect: NL908

        name = "neuron"  # expect: NL902
    """,
        **LOCKIN,
    )


def test_neuron_environment_variables(tmp_path):
    check(
        tmp_path,
        """
        import os

        os.environ["NEURON_CC_FLAGS"] = "--auto-cast=none"  # expect: NL907
        os.environ["XLA_USE_BF16"] = "1"  # expect: NL907
        cores = os.environ.get("NEURON_RT_VISIBLE_CORES")  # expect: NL907
    """,
        **LOCKIN,
    )


def test_neuron_names_that_bind_nothing_stay_quiet(tmp_path):
    check(
        tmp_path,
        """
        import torch

        _SUPPORTED = {"cuda": 8, "xla": 4, "neuron": 4}
        DEVICES = ("cuda", "xpu")

        def args(parser):
            parser.add_argument("--device", choices=["cpu", "xla", "neuron"])
            compiled = torch.compile(parser, backend="neuron")  # expect: NL909
            has_neuron = hasattr(torch, "neuron")
            print("run this on an xla device")
            return compiled, has_neuron
    """,
        **LOCKIN,
    )


def test_device_string_needs_torch(tmp_path):
    check(
        tmp_path,
        """
        config = {"accelerator": "xla"}
    """,
        **LOCKIN,
    )


@pytest.mark.parametrize(
    "sdk, target", [("2.29", "trn1"), ("2.31", "trn2"), ("2.33", "trn2"), ("2.33", "trn3")]
)
def test_lockin_is_never_a_blocker(tmp_path, sdk, target):
    findings = scan_source(
        tmp_path,
        """
import os
import torch
import torch_xla.core.xla_model as xm
import torch_neuronx
from neuronxcc import nki
from neuronx_distributed.parallel_layers import ColumnParallelLinear
from optimum.neuron import NeuronModelForCausalLM
os.environ["XLA_USE_BF16"] = "1"
x = torch.zeros(2).to("xla")
xm.mark_step()
w = xm.xrt_world_size()
model = torch.compile(x, backend="neuronx")
""",
        sdk=sdk,
        target=target,
        **LOCKIN,
    )
    assert len(findings) >= 9
    assert {f.severity.value for f in findings} <= {"info", "warning"}


def test_each_use_of_the_torch_neuron_device_module_is_a_finding(tmp_path):
    """accelerate's RNG sync: `torch.neuron.manual_seed_all(seed)` is the device module's
    counterpart of `torch.cuda.manual_seed_all`; a feature probe and an annotation use nothing."""
    found = check(
        tmp_path,
        """
        import torch


        def seed_all(seed) -> "torch.neuron.Generator":
            if hasattr(torch, "neuron"):
                torch.neuron.manual_seed_all(seed)  # expect: NL902
            state: torch.neuron.RNGState = torch.neuron.get_rng_state()  # expect: NL902
            with torch.neuron.amp.autocast():  # expect: NL902
                return state
        """,
    )
    assert [f.message.split(" names ")[0] for f in found] == [
        "`torch.neuron.manual_seed_all`",
        "`torch.neuron.get_rng_state`",
        "`torch.neuron.amp.autocast`",
    ]
    assert all("device-module API" in f.message for f in found)


def test_nki_kernels_made_by_a_wrapper_and_custom_hlo_ops_are_launched_by_name(tmp_path):
    # optimum-neuron's on-device sampling: `nki_jit()(nki_cumsum)` makes a kernel it calls by the
    # variable's name, and `@xla_hlo_call` makes a function an HLO op; each call is lock-in.
    check(
        tmp_path,
        """
        import torch
        from neuronxcc.nki._private_kernels.cumsum import cumsum as nki_cumsum  # expect: NL905
        from torch_neuronx.xla_impl.ops import nki_jit, xla_hlo_call  # expect: NL903


        def cumsum(tensor_in):
            nki_cumsum_func = nki_jit()(nki_cumsum)  # expect: NL905, NL903
            output = torch.zeros_like(tensor_in)
            nki_cumsum_func(tensor_in, output, axis=1)  # expect: NL905
            return output


        @xla_hlo_call  # expect: NL903
        def rand_like(tensor):
            return tensor.dtype[tensor.sizes].Rng()


        def select(zeros, on_cpu):
            return torch.rand_like(zeros) if on_cpu else rand_like(zeros)  # expect: NL903
        """,
        select=["neuron-lockin"],
    )


def test_nki_kernels_a_getter_returns_are_launched_where_unpacked(tmp_path):
    # neuronx-distributed's flash attention: a getter imports the kernels and returns them; the
    # caller unpacks them and launches each with a grid. `nl` (nki.language) is no kernel.
    check(
        tmp_path,
        """
        def get_flash_attn_kernels(use_sharded=False):
            from neuronxcc.nki.kernels import flash_fwd, flash_attn_bwd  # expect: NL905
            if use_sharded:
                import neuronxcc.nki.language as nl  # expect: NL905
                return flash_fwd, flash_attn_bwd, nl  # expect: NL905
            return flash_fwd, flash_attn_bwd, None  # expect: NL905


        def forward(q, k, v, bs, heads, use_sharded):
            flash_fwd, _, nl = get_flash_attn_kernels(use_sharded)
            if use_sharded:
                return flash_fwd[bs, nl.nc(2) * heads](q, k, v)  # expect: NL905
            return flash_fwd[bs, heads](q, k, v)  # expect: NL905


        def not_kernels(x):
            a, b = x.split(2)
            return a[0](b)
        """,
        select=["neuron-lockin"],
    )


def test_undecorated_helpers_written_in_the_nki_language_are_kernel_code(tmp_path):
    """A fused NKI kernel composes helpers that are not decorated themselves (trainium ports'
    `gqa_fused_compose`): their `nl.*`/`nisa.*`/nkilib calls are the kernel's own code, reported once
    on the kernel's decorator. A PyTorch function that only names NKI (a reference check) still
    reports its uses."""
    found = check(
        tmp_path,
        """
        import nki  # expect: NL905
        import nki.isa as nisa  # expect: NL905
        import nki.language as nl  # expect: NL905
        from nkilib.core.qkv.qkv_tkg import qkv_tkg  # expect: NL905


        def scatter(cache, rows, T):
            for t in nl.affine_range(T):
                nisa.dma_copy(dst=cache[t], src=rows[t])
            return qkv_tkg(cache)


        @nki.jit  # expect: NL905
        def fused(cache, rows):
            out = nl.ndarray(cache.shape, dtype=cache.dtype, buffer=nl.shared_hbm)
            scatter(out, rows, 4)
            return out


        def describe():
            return qkv_tkg.__name__  # expect: NL905
        """,
        select=["neuron-lockin"],
    )
    assert only([f for f in found if f.line == 13], "NL905").severity.value == "warning"


def test_version_reads_are_metadata_not_uses(tmp_path):
    """`torch_neuronx.__version__` records which SDK a model was compiled with; nothing of Neuron
    is used, so leaving Neuron rewrites nothing there. The import and `torch_neuronx.trace` are
    the lock-in."""
    check(
        tmp_path,
        """
        import torch_neuronx  # expect: NL903


        def metadata(model, example):
            versions = {"torch_neuronx": torch_neuronx.__version__}
            traced = torch_neuronx.trace(model, example)  # expect: NL903
            return versions, traced
        """,
        **LOCKIN,
    )


def test_uses_of_a_module_a_helper_imports_and_returns(tmp_path):
    """A lazy-import helper (`def _load_xla_model(): import torch_xla.core.xla_model as xm; return
    xm`) hands the module to its callers: `xm = _load_xla_model()` then `xm.mark_step()` is a use
    of torch_xla, as after a top-level import; the `return xm` that hands it over is none. A
    helper returning something else hands nothing."""
    check(
        tmp_path,
        """
        import torch


        def _load_xla_model():
            import torch_xla.core.xla_model as xm  # expect: NL901
            return xm


        def _load_config():
            import json as js
            return js.loads("{}")


        def sync(device):
            xm = _load_xla_model()
            xm.mark_step()  # expect: NL908
            cfg = _load_config()
            return cfg.get("x")
        """,
        **LOCKIN,
    )


def test_nki_kernels_wrapped_for_a_benchmark_or_returned_by_a_factory_are_launched_by_name(tmp_path):
    # trainium-kernel-fusion's study: `benchmark(warmup, iters)(kernel)` and `nki.profile(...)(kernel)`
    # make runners that launch the kernel on a NeuronCore; torchneuronx's `make_kernel()` returns its
    # `@nki.jit` function, which the caller launches without a grid.
    check(
        tmp_path,
        """
        import nki  # expect: NL905
        from neuronxcc.nki import benchmark  # expect: NL905
        from neuronxcc import nki as legacy  # expect: NL905


        def make_kernel():
            @nki.jit  # expect: NL905
            def row_softmax(x_in):
                return x_in

            return row_softmax


        def bench(kernel, x):
            runner = benchmark(warmup=2, iters=10)(kernel)  # expect: NL905
            runner(x)  # expect: NL905
            profiled = legacy.profile(working_directory="out")(kernel)  # expect: NL905
            profiled(x)  # expect: NL905
            softmax = make_kernel()
            return softmax(x)  # expect: NL905


        def plain(x):
            helper = sorted
            return helper(x)
        """,
        select=["neuron-lockin"],
    )
