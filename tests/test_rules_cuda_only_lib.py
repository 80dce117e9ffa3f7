"""cuda-only-lib rules (NL401-NL404) on real scans of small snippets and dependency files, both ways."""

from __future__ import annotations

import textwrap

import pytest

from neuronlint.ruledb import load_ruledb
from tests.annotated_source import check, only
from tests.conftest import scan_paths, scan_source

LIBS = {"select": ["cuda-only-lib"]}


@pytest.mark.parametrize(
    "statement, library",
    [
        ("import flash_attn", "flash_attn"),
        ("from flash_attn import flash_attn_func", "flash_attn"),
        ("from flash_attn_interface import flash_attn_func", "flash_attn"),
        ("import xformers.ops as xops", "xformers"),
        ("from apex import amp", "apex"),
        ("from apex.normalization import FusedLayerNorm", "apex"),
        ("import bitsandbytes as bnb", "bitsandbytes"),
        ("import triton", "triton"),
        ("from mamba_ssm import Mamba", "mamba_ssm"),
        ("from causal_conv1d import causal_conv1d_fn", "causal_conv1d"),
        ("import transformer_engine.pytorch as te", "transformer_engine"),
        ("from deepspeed.ops.adam import FusedAdam", "deepspeed"),
        ("import torch_tensorrt", "torch_tensorrt"),
        ("import cupy as cp", "cupy"),
        ("import pycuda.autoinit", "pycuda"),
        ("from numba import cuda", "numba_cuda"),
        ("from nvidia.dali import pipeline_def", "nvidia_dali"),
        ("import flashinfer", "flashinfer"),
        ("import deep_ep", "deep_ep"),
        ("from cuda import cudart", "cuda_python"),
        ("import pynvml", "pynvml"),
        ("from polygraphy.backend.trt import engine_from_bytes", "polygraphy_trt"),
        ("from mmdeploy.backend.tensorrt import from_onnx", "mmdeploy_trt"),
        ("import cuda.tile as ct", "cutile"),
        ("import cutlass.cute as cute", "cutlass_dsl"),
        ("from torch2trt import TRTModule", "torch2trt"),
        ("from quack.rmsnorm import rmsnorm", "quack"),
        ("import tilelang.language as T", "tilelang"),
        ("from xfuser.core.distributed import get_sp_group", "xfuser"),
        ("from fbgemm_gpu.quantize_comm import QuantizedCommCodec", "fbgemm_gpu"),
        ("from auto_gptq import AutoGPTQForCausalLM", "auto_gptq"),
        ("from torch_int.nn.linear import W8A8B8O8Linear", "torch_int"),
        ("from spconv.pytorch import SparseConv3d, SubMConv3d", "spconv"),
        ("import tinycudann as tcnn", "tinycudann"),
        ("from fla.ops.based import fused_chunk_based", "fla"),
        ("import thunderkittens as tk", "thunderkittens"),
        ("from pykeops.torch import LazyTensor", "pykeops"),
        ("import MinkowskiEngine as ME", "MinkowskiEngine"),
    ],
)
def test_imports_of_cuda_only_libraries(tmp_path, statement, library):
    findings = check(tmp_path, f"{statement}  # expect: NL401\n", **LIBS)
    finding = only(findings, "NL401")
    assert f"({library})" in finding.message and "Neuron alternative:" in finding.message
    # The severity and the claim follow the library's record (rules/libraries.toml).
    record = next(lib for lib in load_ruledb().tables["library"] if lib["name"] == library)
    assert record["runs_on"] in finding.message
    if record["support"] == "nvidia-only":
        assert finding.severity.value == "blocker" and "It has no Neuron build." in finding.message
    else:
        assert record["support"] == "multi-backend"
        assert finding.severity.value == "warning" and "None of these is Neuron" in finding.message
        assert "runs only on NVIDIA" not in finding.message


def test_imports_that_are_not_cuda_only_stay_quiet(tmp_path):
    check(
        tmp_path,
        """
        import numba
        from numba import njit
        import torch.cuda
        import torch.nn.functional as F
        from mypkg import cuda_utils
        from .apex_compat import fused_norm
        import deepspeed_config
    """,
        name="mypkg/mod.py",
        **LIBS,
    )


def test_call_sites_and_subclasses_of_library_names(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import transformer_engine as te  # expect: NL401
        from flash_attn import flash_attn_func  # expect: NL401
        from apex.optimizers import FusedAdam  # expect: NL401

        import xformers.ops  # expect: NL401

        class TELinear(te.pytorch.Linear):  # expect: NL402
            pass

        def attention(q, k, v, params):
            out = flash_attn_func(q, k, v, causal=True)  # expect: NL402
            out = xformers.ops.memory_efficient_attention(q, k, v)  # expect: NL402
            opt = FusedAdam(params, lr=1e-3)  # expect: NL402
            with te.fp8_autocast(enabled=True):  # expect: NL402
                out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            return out, opt
    """,
        **LIBS,
    )


def test_optional_imports_are_warnings(tmp_path):
    findings = check(
        tmp_path,
        """
        try:
            from flash_attn import flash_attn_func  # expect: NL401
            HAVE_FLASH = True
        except ImportError:
            HAVE_FLASH = False

        if HAVE_TE:
            import transformer_engine as te  # expect: NL401

        def is_xformers_available():
            return False

        if is_xformers_available():
            import xformers  # expect: NL401

        def attend(q, k, v, args):
            if HAVE_FLASH:
                return flash_attn_func(q, k, v)  # expect: NL402
            if args.use_flash_attn:
                import flash_attn  # expect: NL401
            return q
    """,
        **LIBS,
    )
    assert {f.severity.value for f in findings} == {"warning"}
    assert "try/except ImportError" in findings[0].message


def test_unconditional_call_is_a_blocker_the_import_a_warning(tmp_path):
    # bitsandbytes is multi-backend without a Neuron backend: importing it works on the host (its CPU
    # backend), calling its 8-bit optimizer needs a device backend it does not have on Neuron.
    findings = check(
        tmp_path,
        """
        import bitsandbytes as bnb  # expect: NL401

        def optimizer(params, verbose):
            if verbose:
                print("8-bit Adam")
            return bnb.optim.Adam8bit(params)  # expect: NL402
    """,
        **LIBS,
    )
    assert {(f.rule, f.severity.value) for f in findings} == {("NL401", "warning"), ("NL402", "blocker")}


def test_triton_calls_inside_kernels_are_not_call_sites(tmp_path):
    check(
        tmp_path,
        """
        import triton  # expect: NL401
        import triton.language as tl  # expect: NL401

        @triton.jit
        def k(x_ptr):
            pid = tl.program_id(0)
            tl.store(x_ptr + pid, 1.0)
    """,
        **LIBS,
    )


def test_bitsandbytes_quantization_flags(tmp_path):
    check(
        tmp_path,
        """
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig
        from transformers import BitsAndBytesConfig as HFBnbConfig

        def load(name, quantize):
            a = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True)  # expect: NL403
            b = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=quantize)  # expect: NL403
            c = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")  # expect: NL403
            d = HFBnbConfig(load_in_8bit=True)  # expect: NL403
            e = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=False, load_in_4bit=None)
            return a, b, c, d, e
    """,
        **LIBS,
    )


def test_a_quantisation_flag_given_as_a_variable_is_a_warning(tmp_path):
    """`load_in_8bit=load_8bit` (alpaca-lora's generate.py, fine-tuning scripts' `--load_8bit`):
    the program quantizes with bitsandbytes when the flag is set; a literal `True` is a blocker."""
    findings = check(
        tmp_path,
        """
        from transformers import AutoModelForCausalLM

        def load(name, args):
            fixed = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True)  # expect: NL403
            chosen = AutoModelForCausalLM.from_pretrained(
                name, load_in_4bit=args.bits == 4  # expect: NL403
            )
            return fixed, chosen
        """,
        **LIBS,
    )
    by_line = {f.line: f for f in findings}
    assert by_line[4].severity.value == "blocker" and "switched" not in by_line[4].facts
    chosen = by_line[6]
    assert chosen.severity.value == "warning" and chosen.facts["switched"] is True
    assert "`load_in_4bit=args.bits == 4`" in chosen.message
    assert "only when it is true" in chosen.message


def test_setup_py_dependencies(tmp_path):
    findings = check(
        tmp_path,
        """
        from setuptools import setup

        setup(
            name="trainer",
            install_requires=[
                "torch>=2.1",
                "flash-attn>=2.5",  # expect: NL404
                "numpy",
            ],
            extras_require={"quant": ["bitsandbytes"], "docs": ["sphinx"]},  # expect: NL404
        )
    """,
        name="setup.py",
        **LIBS,
    )
    assert "flash-attn>=2.5" in findings[0].message and "NKI" in findings[0].message


def test_requirements_and_pyproject(tmp_path):
    (tmp_path / "requirements.txt").write_text(
        "torch==2.5.1\n# xformers is optional\nxformers==0.0.28\n-r base.txt\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent("""
        [project]
        name = "trainer"
        dependencies = ["torch", "transformer-engine[pytorch]>=1.9"]

        [project.optional-dependencies]
        gpu = ["apex", "mamba-ssm>=2"]
    """).lstrip()
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL404"])
    assert sorted((f.path, f.line) for f in result.active) == [
        ("pyproject.toml", 3),
        ("pyproject.toml", 6),
        ("pyproject.toml", 6),
        ("requirements.txt", 3),
    ]


def test_install_requires_outside_setup_py_is_ignored(tmp_path):
    findings = scan_source(
        tmp_path, 'config = dict(install_requires=["flash-attn"])\n', name="config.py", **LIBS
    )
    assert findings == []


def test_multi_line_imports_and_calls_are_reported_on_their_first_line(tmp_path):
    source = (
        "from flash_attn import (\n"
        "    flash_attn_func,\n"
        "    flash_attn_varlen_func,\n"
        ")\n"
        "\n"
        "def attend(q, k, v):\n"
        "    return flash_attn_func(\n"
        "        q, k, v,\n"
        "        causal=True,\n"
        "    )\n"
    )
    findings = scan_source(tmp_path, source, **LIBS)
    assert sorted((f.rule, f.line, f.column) for f in findings) == [("NL401", 1, 6), ("NL402", 7, 12)]


def test_only_polygraphys_tensorrt_backend_is_cuda_only(tmp_path):
    """Polygraphy drives ONNX-Runtime on the CPU too: its common loaders are no finding, its
    TensorRT backend is."""
    check(
        tmp_path,
        """
        from polygraphy.backend.common import bytes_from_path
        from polygraphy.backend.trt import engine_from_bytes  # expect: NL401

        engine = engine_from_bytes(bytes_from_path("model.plan"))  # expect: NL402
        """,
        **LIBS,
    )


def test_ring_flash_attention_runs_where_flash_attention_does(tmp_path):
    # OpenRLHF's ring attention: the import inside the function that uses it, and the call.
    (imported, called) = check(
        tmp_path,
        """
        def update_params(cu_seqlens, group):
            from ring_flash_attn import update_ring_flash_attn_params  # expect: NL401

            update_ring_flash_attn_params(cu_seqlens, group)  # expect: NL402
        """,
        select=["cuda-only-lib"],
    )
    assert "FlashAttention" in imported.message and "ring-attention" in called.message


def test_requirements_a_setup_helper_returns(tmp_path):
    # Liger-Kernel's setup.py chooses its dependencies by detected platform in helpers.
    check(
        tmp_path,
        """
        from setuptools import setup


        def get_default_dependencies(platform):
            if platform in ["cuda", "cpu"]:
                return [
                    "torch>=2.1.2",
                    "triton>=2.3.1",  # expect: NL404
                ]
            return ["torch>=2.6.0"]


        def get_version():
            return "bitsandbytes"


        setup(name="pkg", install_requires=get_default_dependencies("cuda"))
        """,
        name="setup.py",
        select=["cuda-only-lib"],
    )


def test_a_library_imported_below_the_functions_that_use_it(tmp_path):
    """microsoft/LoRA's GPT-2 fine-tuning: `optimizer_step` calls `amp.scale_loss(...)`, and `amp`
    is imported further down, in `if __name__ == "__main__":` under `if args.fp16: try:`. A function
    resolves its globals when it runs, so the call is apex's, with the optional import's severity."""
    findings = check(
        tmp_path,
        """
        import torch


        def optimizer_step(loss, optimizer, args):
            if args.fp16:
                with amp.scale_loss(loss, optimizer) as scaled:  # expect: NL402
                    scaled.backward()
            else:
                loss.backward()


        if __name__ == "__main__":
            args = parse()
            if args.fp16:
                try:
                    from apex import amp  # expect: NL401
                except Exception:
                    pass
        """,
    )
    assert only(findings, "NL402").severity.value == "warning"
