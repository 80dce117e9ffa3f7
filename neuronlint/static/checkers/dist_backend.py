"""dist-backend: NCCL as a backend name or setting, DDP device_ids, NCCL/CUDA environment setup."""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.static.calls import kwarg
from neuronlint.static.context import FileContext
from neuronlint.static.literal_roles import (
    ROLE_ATTRIBUTE,
    ROLE_MESSAGE,
    ROLE_OPTION,
    ROLE_TEST,
    ROLE_VALUE,
    literal_role,
)
from neuronlint.static.registry import Checker, on

_ENV = re.compile(
    r"^((TORCH_)?NCCL_[A-Z0-9_]+|CUDA_VISIBLE_DEVICES|PYTORCH_CUDA_ALLOC_CONF|CUDA_LAUNCH_BLOCKING|CUDA_DEVICE_MAX_CONNECTIONS|PYTORCH_NVML_BASED_CUDA_CHECK)$"
)
_CUDA_TEST = re.compile(r"(?i)is_available|cuda|gpu")
# torch's DDP, and MMCV 1.x's subclass of it (its `device_ids=` pins CUDA ordinals the same way).
_DDP = (
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
    "mmcv.parallel.MMDistributedDataParallel",
    "mmcv.parallel.distributed.MMDistributedDataParallel",
)


# A per-device backend string, `init_process_group("cpu:gloo,cuda:nccl")`: NCCL for the CUDA devices.
_DEVICE_BACKEND_MAP = re.compile(r"(?i)^\s*\w+:\w+(\s*,\s*\w+:\w+)*\s*$")


_CPU_BACKENDS = frozenset({"gloo", "mpi", "ucc"})


def _searches_names(node: cst.CSTNode, ctx: FileContext) -> bool:
    """The literal is what `in` looks for inside another string: `"NCCL" in k`. Backends are named in
    lower case (`dist.get_backend()` gives 'nccl'); the upper-case word is the prefix of NCCL's
    environment variables."""
    parent = ctx.parent()
    return (
        type(parent) is cst.Comparison
        and parent.left is node
        and all(type(c.operator) is cst.In for c in parent.comparisons)
    )


def _falls_back(node: cst.CSTNode, ctx: FileContext) -> bool:
    """`"nccl" if torch.cuda.is_available() else "gloo"`, `"NCCL" if has_gpu else "GLOO"`: without
    CUDA the other backend is chosen, so on Neuron the collectives silently run through gloo on the CPU."""
    ifexp = ctx.parent()
    if type(ifexp) is not cst.IfExp:
        return False
    other = ifexp.orelse if ifexp.body is node else ifexp.body
    values = ctx.strings(other) or ()
    if any(v.lower() in _CPU_BACKENDS for v in values):
        return True
    return bool(_CUDA_TEST.search(ctx.code(ifexp.test)))


class DistBackend(Checker):
    """NCCL named as a backend or in settings (NL201), DDP pinned to CUDA ordinals (NL202), NCCL/CUDA env vars (NL204)."""

    emits = {
        "NL201": ("symbol", "comparison", "fallback", "xla_alt"),
        "NL202": ("symbol",),
        "NL204": ("symbol",),
    }
    triggers = (
        "nccl",
        "NCCL",
        "device_ids",
        "CUDA_VISIBLE_DEVICES",
        "PYTORCH_CUDA_ALLOC_CONF",
        "CUDA_LAUNCH_BLOCKING",
        "CUDA_DEVICE_MAX_CONNECTIONS",
        "DataParallel",
        "fully_shard",
    )

    @on(cst.Call)
    def ddp_device_ids(self, node: cst.Call, ctx: FileContext) -> None:
        callee = ctx.qualname(node.func) or ""
        named = type(node.func) is cst.Name and node.func.value in ("DDP", "DistributedDataParallel")
        if callee not in _DDP and not named:
            return
        # One finding per call: `device_ids=`, or `output_device=` where it stands alone (its fix
        # removes both; an `output_device=` on the next line of the same call is no second place to edit)
        for key in ("device_ids", "output_device"):
            arg = kwarg(node, key)
            if arg is not None and not (type(arg.value) is cst.Name and arg.value.value == "None"):
                ctx.report("NL202", arg, symbol=f"{key}=" + ctx.code(arg.value))
                return

    @on(cst.SimpleString)
    def literal(self, node: cst.CSTNode, ctx: FileContext) -> None:
        value = ctx.literal_value(node)
        if value is None:
            return
        if value.lower() == "nccl" or ("nccl" in value.lower() and _DEVICE_BACKEND_MAP.match(value)):
            role = literal_role(node, ctx)
            if role not in (ROLE_VALUE, ROLE_TEST):
                return  # a dispatch-table key, a `choices=`/`Literal[...]` option, an attribute name, text
            if value == "NCCL" and _searches_names(node, ctx):
                return  # `if "NCCL" in k:` over `os.environ`: the NCCL_* variables' names, not a backend
            ctx.report(
                "NL201",
                node,
                symbol=repr(value),
                comparison=role == ROLE_TEST,
                fallback=_falls_back(node, ctx),
                xla_alt=node.value.replace(value, "xla") if type(node) is cst.SimpleString else None,
            )
        elif _ENV.match(value) and literal_role(node, ctx) not in (ROLE_OPTION, ROLE_ATTRIBUTE, ROLE_MESSAGE):
            ctx.report("NL204", node, symbol=value)
