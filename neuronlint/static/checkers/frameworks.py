"""Training frameworks: what PyTorch Lightning/Fabric and Hugging Face Trainer/accelerate pick on a
Neuron host, from the arguments that choose device, strategy, precision and optimizer.

NL070 a CUDA accelerator (`Trainer(accelerator="gpu")`, `Fabric(accelerator="cuda")`,
`CUDAAccelerator`, the old `gpus=`), NL071 Lightning's XLA accelerator/strategies/precision (the
way onto XLA devices: Neuron lock-in on the other side), NL072 a DeepSpeed strategy, NL073 fp16
mixed precision (`precision="16-mixed"`, `TrainingArguments(fp16=True)`,
`Accelerator(mixed_precision="fp16")`), NL074 `optim="adamw_torch_fused"`, NL075 `bf16=True` in
`TrainingArguments` on the XLA backend. Only calls that resolve to the frameworks' own classes
count (a project's own `Trainer` is not Lightning's).

NL076: torchrun/elastic launch settings made in Python that size or place the workers by CUDA
devices: `LaunchConfig(nproc_per_node=torch.cuda.device_count())`, `mp.spawn(..., nprocs=
torch.cuda.device_count())`, `torch.distributed.run.main(["--nproc_per_node=gpu", ...])`. `picks`
says what each does on a Neuron host. (The LOCAL_RANK-to-CUDA-device mapping,
`torch.cuda.set_device(local_rank)` / `f"cuda:{local_rank}"`, is NL106 / NL101, which fix it.)
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.bindings import dotted
from neuronlint.static.calls import is_true
from neuronlint.static.context import FileContext
from neuronlint.static.registry import Checker, on

_LIGHTNING = ("lightning.", "pytorch_lightning.", "lightning_fabric.")
_LIGHTNING_ENTRY = ("Trainer", "Fabric")
_HF_ARGS = ("transformers.", "trl.")
_FP16_PRECISION = {"16", "16-mixed", "16-true", "fp16", "half"}
_XLA_CLASSES = {
    "XLAAccelerator",
    "XLAStrategy",
    "XLAFSDPStrategy",
    "SingleDeviceXLAStrategy",
    "XLAPrecision",
    "XLABf16Precision",
}
_CUDA_CLASSES = {"CUDAAccelerator"}
_DEEPSPEED_CLASSES = {"DeepSpeedStrategy", "DeepSpeedPrecision"}


def _value(node: cst.BaseExpression, ctx: FileContext) -> str | None:
    if type(node) is cst.Integer:
        return node.value
    values = ctx.strings(node)
    return values[0] if values and len(values) == 1 else None


def _kind(qualname: str) -> str | None:
    last = qualname.rsplit(".", 1)[-1]
    if qualname.startswith(_LIGHTNING) or qualname in ("lightning", "pytorch_lightning"):
        if last in _LIGHTNING_ENTRY:
            return "lightning"
        if last in _XLA_CLASSES:
            return "lightning-xla"
        if last in _CUDA_CLASSES:
            return "lightning-cuda"
        if last in _DEEPSPEED_CLASSES:
            return "lightning-deepspeed"
        return None
    if qualname.startswith(_HF_ARGS) and (last.endswith("TrainingArguments") or last.endswith("Config")):
        return "hf-args" if qualname.startswith("transformers.") or last.endswith("Config") else None
    if qualname == "accelerate.Accelerator" or qualname.endswith(".accelerator.Accelerator"):
        return "accelerate" if qualname.startswith("accelerate") else None
    return None


# NL076: what each launch setting does on a Neuron host (the record's message shows it).
_PICKS = {
    "device_count": "`torch.cuda.device_count()` is 0 there, so it asks for no workers",
    "gpu": "torchrun resolves `gpu` with `torch.cuda.device_count()` and refuses to start without CUDA",
}
_LAUNCH_CONFIG = ("torch.distributed.launcher.api.LaunchConfig", "torch.distributed.launcher.LaunchConfig")
_SPAWN = ("torch.multiprocessing.spawn", "torch.multiprocessing.start_processes")
_RUN_ENTRY = (
    "torch.distributed.run.main",
    "torch.distributed.run.run",
    "torch.distributed.run.parse_args",
    "torch.distributed.launch.main",
)
_NPROC_FLAGS = ("--nproc_per_node", "--nproc-per-node")


def _launch(node: cst.Call, qualname: str, ctx: FileContext) -> None:
    """NL076: launch settings that count or select CUDA devices."""
    if qualname in _LAUNCH_CONFIG or qualname in _SPAWN:
        keyword = "nproc_per_node" if qualname in _LAUNCH_CONFIG else "nprocs"
        for index, arg in enumerate(node.args):
            named = arg.keyword is not None and arg.keyword.value == keyword
            positional = arg.keyword is None and qualname in _SPAWN and index == 2
            if (named or positional) and "cuda.device_count" in ctx.code(arg.value):
                setting = f"{qualname.rsplit('.', 1)[-1]}({keyword}={ctx.code(arg.value)})"
                ctx.report("NL076", arg, setting=setting, kind="device_count", picks=_PICKS["device_count"])
        return
    if qualname in _RUN_ENTRY and node.args and type(node.args[0].value) is cst.List:
        previous = ""
        for element in node.args[0].value.elements:
            values = ctx.strings(element.value) or ()
            value = values[0] if len(values) == 1 else ""
            if value in (f"{flag}=gpu" for flag in _NPROC_FLAGS) or (
                previous in _NPROC_FLAGS and value == "gpu"
            ):
                setting = f"{qualname.rsplit('.', 1)[-1]}([... {previous + ' ' if previous in _NPROC_FLAGS else ''}{value} ...])"
                ctx.report("NL076", element, setting=setting, kind="gpu", picks=_PICKS["gpu"])
            previous = value
        return


class Frameworks(Checker):
    """Lightning/Fabric and Hugging Face Trainer/accelerate arguments (NL070-NL075), torchrun and
    elastic launch settings made in Python (NL076)."""

    emits = {
        "NL070": ("setting",),
        "NL071": ("api",),
        "NL072": ("setting", "library"),
        "NL073": ("setting",),
        "NL074": ("setting",),
        "NL075": ("setting",),
        "NL076": ("setting", "kind", "picks"),
    }
    triggers = (
        "lightning",
        "TrainingArguments",
        "Accelerator",
        "SFTConfig",
        "DPOConfig",
        "GRPOConfig",
        "KTOConfig",
        "ORPOConfig",
        "RewardConfig",
        "device_count",
        "nproc",
    )

    @on(cst.Call)
    def call(self, node: cst.Call, ctx: FileContext) -> None:
        _call(node, ctx)

    @on(cst.ImportFrom)
    def import_line(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        """`from lightning.fabric.strategies import XLAFSDPStrategy`: Lightning's XLA glue is lock-in
        at every use, its import included (on the import's first line, once). Importing the CUDA
        or DeepSpeed classes picks nothing yet: NL070/NL072 sit where they are built."""
        if node.relative or node.module is None or type(node.names) is cst.ImportStar:
            return
        module = dotted(node.module)  # not ctx.code: generating code for every import is slow
        if not module.startswith(_LIGHTNING) and module not in ("lightning", "pytorch_lightning"):
            return
        for alias in node.names:
            name = dotted(alias.name)
            if _kind(f"{module}.{name}") == "lightning-xla":
                ctx.report("NL071", node.module, api=name)
                return


def _call(node: cst.Call, ctx: FileContext) -> None:
    qualname = ctx.qualname(node.func)
    if not qualname:
        return
    if qualname.startswith("torch."):
        _launch(node, qualname, ctx)
        return
    kind = _kind(qualname)
    if kind is None:
        func = node.func
        # `XLAAccelerator.auto_device_count()`: a use of the class. The receiver's name is tested
        # first, so that ordinary method calls cost no qualname lookup.
        if type(func) is cst.Attribute and type(func.value) is cst.Name and "XLA" in func.value.value:
            owner = ctx.qualname(func.value)
            if owner and _kind(owner) == "lightning-xla":
                ctx.report("NL071", func, api=ctx.code(func))
        return
    name = qualname.rsplit(".", 1)[-1]
    if kind == "lightning-xla":
        ctx.report("NL071", node.func, api=name)
        return
    if kind == "lightning-cuda":
        ctx.report("NL070", node.func, setting=name)
        return
    if kind == "lightning-deepspeed":
        ctx.report("NL072", node.func, setting=name, library="deepspeed")
        return
    seen: set[str] = set()  # one finding per rule and call (`accelerator="tpu", strategy="xla"`)
    for arg in node.args:
        if arg.keyword is None:
            continue
        key = arg.keyword.value
        value = _value(arg.value, ctx)
        setting = f"{key}={ctx.code(arg.value)}"
        if kind == "lightning":
            _lightning_arg(key, value, arg, setting, ctx, seen)
        elif kind == "hf-args":
            if key in ("fp16", "fp16_full_eval") and is_true(arg.value) and "NL073" not in seen:
                seen.add("NL073")
                ctx.report("NL073", arg, setting=f"{name}({key}=True)")
            elif key == "half_precision_backend" and value in ("apex", "cuda_amp") and "NL073" not in seen:
                seen.add("NL073")
                ctx.report("NL073", arg, setting=f"{name}({setting})")
            elif key == "optim" and value == "adamw_torch_fused":
                ctx.report("NL074", arg, setting=f"{name}({setting})")
            elif key == "bf16" and is_true(arg.value):
                ctx.report("NL075", arg, setting=f"{name}(bf16=True)")
        elif kind == "accelerate" and key == "mixed_precision" and value == "fp16":
            ctx.report("NL073", arg, setting=f"Accelerator({setting})")


def _lightning_arg(
    key: str, value: str | None, arg: cst.Arg, setting: str, ctx: FileContext, seen: set[str]
) -> None:
    rule, facts = None, {}
    if key == "accelerator" and value == "gpu":  # "cuda" is already a CUDA device string (NL101)
        rule, facts = "NL070", {"setting": setting}
    elif key == "gpus" and value not in ("0", "None") and ctx.code(arg.value) != "None":
        rule, facts = "NL070", {"setting": setting}
    elif (key == "accelerator" and value in ("tpu", "xla")) or (
        key == "strategy" and value and value.startswith("xla")
    ):
        rule, facts = "NL071", {"api": setting}
    elif key == "strategy" and value and value.startswith("deepspeed"):
        rule, facts = "NL072", {"setting": setting, "library": "deepspeed"}
    elif key == "precision" and value in _FP16_PRECISION:
        rule, facts = "NL073", {"setting": setting}
    if rule is not None and rule not in seen:
        seen.add(rule)
        ctx.report(rule, arg, **facts)
