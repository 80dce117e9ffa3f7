"""First-party detection and the dependency rule (NL404) on the layouts of real repositories."""

from __future__ import annotations

import pytest

from neuronlint.filters.first_party import import_name, project_names
from neuronlint.static.requirements import installs_on_linux
from tests.conftest import scan_paths
from tests.test_groups import write

# bitsandbytes-foundation/bitsandbytes: a flat package next to pyproject.toml, tests beside it.
BITSANDBYTES = {
    "pyproject.toml": '[project]\nname = "bitsandbytes"\ndependencies = ["torch"]\n',
    "bitsandbytes/__init__.py": "from . import functional\n",
    "bitsandbytes/functional.py": "import torch\n\ndef dequantize_4bit(x):\n    return x\n",
    "bitsandbytes/nn/__init__.py": "",
    "bitsandbytes/nn/modules.py": (
        "import bitsandbytes as bnb\n"
        "from bitsandbytes.functional import dequantize_4bit\n\n"
        "def forward(w):\n    return dequantize_4bit(w) + bnb.functional.dequantize_4bit(w)\n"
    ),
    "tests/test_functional.py": "import bitsandbytes as bnb\n\ndef test_q():\n    bnb.functional.dequantize_4bit(1)\n",
}

# linkedin/Liger-Kernel: a src/ layout whose distribution name differs in spelling (liger_kernel).
LIGER = {
    "setup.py": 'from setuptools import setup\nsetup(name="liger_kernel", package_dir={"": "src"})\n',
    "src/liger_kernel/__init__.py": "",
    "src/liger_kernel/transformers/__init__.py": "",
    "src/liger_kernel/transformers/rms_norm.py": (
        "from liger_kernel.ops.rms_norm import LigerRMSNormFunction\n\n"
        "def rms(x):\n    return LigerRMSNormFunction.apply(x)\n"
    ),
}

# Dao-AILab/causal-conv1d (and flash-attention, mamba): setup.py names the distribution through a
# constant, `setup(name=PACKAGE_NAME, ...)`, and builds the compiled extension beside it.
CONSTANT_NAMED = {
    "setup.py": (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        'PACKAGE_NAME = "causal_conv1d"\n\n'
        "setup(\n"
        "    name=PACKAGE_NAME,\n"
        '    ext_modules=[CUDAExtension(name="causal_conv1d_cuda", sources=["csrc/conv.cu"])],\n'
        '    cmdclass={"build_ext": BuildExtension},\n'
        ")\n"
    ),
    "causal_conv1d/interface.py": (
        "import torch\n"
        "from causal_conv1d.cpp_functions import causal_conv1d_fwd_function\n\n"
        "def causal_conv1d_fn(x, w):\n    return causal_conv1d_fwd_function(x, w)\n"
    ),
}

# A consumer of bitsandbytes (the shape of huggingface/peft): its imports stay findings.
CONSUMER = {
    "pyproject.toml": '[project]\nname = "peft"\n',
    "src/peft/__init__.py": "",
    "src/peft/tuners/lora/bnb.py": "import bitsandbytes as bnb\n\ndef f(w):\n    return bnb.functional.dequantize_4bit(w)\n",
}


def _library_findings(tmp_path, files):
    write(tmp_path, files)
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True, select=["cuda-only-lib"])
    return [f for f in result.active if f.rule in ("NL401", "NL402")]


def test_project_names_from_pyproject_setup_and_package_dirs(tmp_path):
    write(tmp_path / "bnb", BITSANDBYTES)
    write(tmp_path / "liger", LIGER)
    assert project_names([tmp_path / "bnb"]) >= {"bitsandbytes"}
    assert project_names([tmp_path / "bnb" / "bitsandbytes" / "nn"]) >= {"bitsandbytes"}  # a subdirectory
    assert project_names([tmp_path / "liger"]) == {"liger_kernel"}
    assert import_name("flash-attn") == "flash_attn"
    write(tmp_path / "conv", CONSTANT_NAMED)
    assert "causal_conv1d" in project_names([tmp_path / "conv"])  # no __init__.py needed: setup.py names it


def test_internal_imports_of_the_library_itself_are_not_findings(tmp_path):
    assert _library_findings(tmp_path, BITSANDBYTES) == []
    assert _library_findings(tmp_path / "liger", LIGER) == []
    assert _library_findings(tmp_path / "conv", CONSTANT_NAMED) == []  # `name=PACKAGE_NAME`


def test_a_consumer_of_the_library_keeps_its_findings(tmp_path):
    found = _library_findings(tmp_path, CONSUMER)
    assert sorted(f.rule for f in found) == ["NL401", "NL402"]


# huggingface/optimum-neuron: the package `optimum.neuron` uses itself; its examples use it as users do,
# and its own modules' uses of another Neuron package (torch_xla) are lock-in like anyone's.
OPTIMUM_NEURON = {
    "pyproject.toml": '[project]\nname = "optimum-neuron"\n',
    "optimum/neuron/trainers/metrics/throughput.py": (
        "from optimum.neuron.trainers.metrics.base import MetricPlugin\n"
        "import torch_xla.core.xla_model as xm\n\n"
        "class Throughput(MetricPlugin):\n    def step(self):\n        xm.mark_step()\n"
    ),
    "examples/generation.py": (
        "from optimum.neuron import NeuronModelForCausalLM\n\n"
        "model = NeuronModelForCausalLM.from_pretrained('m')\n"
    ),
}


def test_a_neuron_package_using_itself_is_not_lock_in(tmp_path):
    write(tmp_path, OPTIMUM_NEURON)
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True, select=["neuron-lockin"])
    found = {(f.path, f.line, f.rule) for f in result.active}
    own = "optimum/neuron/trainers/metrics/throughput.py"
    assert not any(path == own and rule == "NL906" for path, _, rule in found)
    assert (own, 2, "NL901") in found and (own, 6, "NL908") in found  # torch_xla: another package
    assert ("examples/generation.py", 1, "NL906") in found
    assert ("examples/generation.py", 3, "NL906") in found


@pytest.mark.parametrize(
    "requirement, expected",
    [
        ("flash-attn>=2", True),
        ('flash-attn>=2; sys_platform == "linux"', True),
        ('triton-windows; sys_platform == "win32"', False),
        ("bitsandbytes; platform_system == 'Darwin'", False),
        ('deepspeed; platform_system != "Windows"', True),
        ('xformers; sys_platform != "linux"', False),
        ('xformers; sys_platform == "win32" or sys_platform == "linux"', True),
        ('xformers; python_version >= "3.10" and sys_platform == "darwin"', False),
        ('xformers; python_version >= "3.10"', True),
    ],
)
def test_environment_markers(requirement, expected):
    assert installs_on_linux(requirement) is expected


# The pyproject.toml of huggingface/trl has the same CUDA-only package in several extras.
TRL_PYPROJECT = """\
[project]
name = "trl"
dependencies = [
    "accelerate>=1.4.0",
    "datasets>=3.0.0",
]

[project.optional-dependencies]
deepspeed = [
    "deepspeed>=0.14.4"
]
liger = [
    "liger-kernel>=0.8.0,<0.8.1"  # temporary hotfix
]
quantization = [
    "bitsandbytes",
]
windows = [
    'triton-windows; sys_platform == "win32"',
]
dev = [
    "deepspeed>=0.14.4",
    "liger-kernel>=0.8.0,<0.8.1",
    "bitsandbytes",
]
"""


def test_pyproject_extras_markers_and_lines(tmp_path):
    (tmp_path / "pyproject.toml").write_text(TRL_PYPROJECT, encoding="utf-8")
    result = scan_paths([tmp_path / "pyproject.toml"], cwd=tmp_path, triage=True, select=["NL404"])
    found = [(f.line, f.facts["package"], f.severity.value) for f in result.active]
    assert found == [
        (10, "deepspeed>=0.14.4", "info"),
        (13, "liger-kernel>=0.8.0,<0.8.1", "info"),
        (16, "bitsandbytes", "info"),
        (22, "deepspeed>=0.14.4", "info"),
        (23, "liger-kernel>=0.8.0,<0.8.1", "info"),
        (24, "bitsandbytes", "info"),
    ]
    assert len({(f.line, f.rule) for f in result.active}) == len(result.active)  # no duplicates
    message = result.active[0].message
    assert "already optional (extra `deepspeed`)" in message
    assert "Make it an optional extra" not in message


def test_an_entry_is_not_placed_on_a_longer_entry_that_starts_the_same(tmp_path):
    # A Windows-only entry (never installed on Linux, not a finding) written before extras that
    # repeat it without the marker: each extra's finding sits on its own line and names it.
    (tmp_path / "pyproject.toml").write_text(
        "[project]\n"
        'name = "toolkit"\n'
        "[project.optional-dependencies]\n"
        "windows = [\n    \"bitsandbytes>=0.45 ; (sys_platform == 'win32')\",\n]\n"
        'quant = [\n    "bitsandbytes>=0.45",\n]\n'
        'serving = [\n    "bitsandbytes>=0.45",\n]\n',
        encoding="utf-8",
    )
    result = scan_paths([tmp_path / "pyproject.toml"], cwd=tmp_path, triage=True, select=["NL404"])
    found = [(f.line, f.facts.get("extra")) for f in result.active]
    assert found == [(8, "quant"), (11, "serving")]
    assert "(extra `quant`)" in result.active[0].message


def test_extras_named_for_cuda_or_rocm_builds_are_left_out(tmp_path):
    # A Neuron install never selects an extra named for a CUDA or ROCm build: its CUDA-only
    # entries (and CUDA wheel URLs) are left out of the default output, listed by --show-ok.
    (tmp_path / "pyproject.toml").write_text(
        "[project]\n"
        'name = "toolkit"\n'
        "[project.optional-dependencies]\n"
        'cu124-torch260 = [\n    "bitsandbytes>=0.45",\n'
        '    "xformers @ https://download.pytorch.org/whl/cu124/xformers-0.0.29-cp311-cp311-linux_x86_64.whl",\n]\n'
        'rocm72 = [\n    "triton>=3",\n]\n'
        'quant = [\n    "bitsandbytes>=0.45",\n]\n',
        encoding="utf-8",
    )
    result = scan_paths([tmp_path / "pyproject.toml"], cwd=tmp_path, triage=True)
    assert [(f.line, f.rule) for f in result.active] == [(12, "NL404")]
    assert result.left_out["cuda-extra"] == 4
    shown = scan_paths([tmp_path / "pyproject.toml"], cwd=tmp_path, triage=True, show_ok=True)
    assert sorted((f.line, f.rule) for f in shown.active) == [
        (5, "NL404"),
        (6, "NL050"),
        (6, "NL404"),
        (9, "NL404"),
        (12, "NL404"),
    ]


def test_required_dependency_is_a_warning_with_the_advice(tmp_path):
    (tmp_path / "requirements.txt").write_text(
        "torch\nflash-attn==2.6.3  # fast attention\n", encoding="utf-8"
    )
    result = scan_paths([tmp_path / "requirements.txt"], cwd=tmp_path, triage=True, select=["NL404"])
    [finding] = result.active
    assert (finding.line, finding.severity.value) == (2, "warning")
    assert "already optional" not in finding.message


def test_setup_py_extras_are_optional_and_markers_are_honoured(tmp_path):
    # The setup.py shape of EleutherAI/gpt-neox and hpcaitech/ColossalAI: install_requires plus extras.
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "setup(\n"
        '    name="pkg",\n'
        '    install_requires=["torch", "deepspeed>=0.12"],\n'
        '    extras_require={"fused": ["flash-attn>=2"], "win": [\'triton-windows; sys_platform == "win32"\']},\n'
        ")\n",
        encoding="utf-8",
    )
    result = scan_paths([tmp_path / "setup.py"], cwd=tmp_path, triage=True, select=["NL404"])
    found = sorted((f.line, f.facts["package"], f.severity.value) for f in result.active)
    assert found == [(4, "deepspeed>=0.12", "warning"), (5, "flash-attn>=2", "info")]
    assert "already optional (extra `fused`)" in next(f.message for f in result.active if f.line == 5)


def test_a_folder_that_only_shares_a_neuron_packages_name_keeps_its_findings(tmp_path):
    # The Neuron SDK docs keep NKI examples under `nki/examples/`: not the nki package's own code.
    write(
        tmp_path,
        {
            "README.md": "docs\n",
            "nki/examples/tensor_addition.py": (
                "import neuronxcc.nki as nki\nimport nki.language as nl\n\n"
                "@nki.jit\ndef add(a, b):\n    return nl.add(a, b)\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True, select=["neuron-lockin"])
    assert {f.line for f in result.active if f.rule == "NL905"} >= {1, 2, 4}
