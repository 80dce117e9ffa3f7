"""compile-backend: torch.compile and its CUDA-only modes, backends and Inductor options."""

from __future__ import annotations

import libcst as cst

from neuronlint.static.calls import is_true, kwarg
from neuronlint.static.context import FileContext
from neuronlint.static.engine import on, triggers

triggers("compile", "inductor")

_CUDA_MODES = frozenset({"reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"})
_CUDA_BACKENDS = frozenset({"inductor", "cudagraphs", "tensorrt", "torch_tensorrt", "onnxrt", "tvm"})
_NEURON_BACKENDS = frozenset({"neuron", "neuronx", "openxla", "openxla_eval"})


def _compile_call(node: cst.Call, ctx: FileContext) -> None:
    if ctx.qualname(node.func) != "torch.compile":
        return
    backend = kwarg(node, "backend")
    backend_name = ctx.strings(backend.value) if backend is not None else None
    name = backend_name[0] if backend_name else None
    if name in _NEURON_BACKENDS:
        ctx.report("NL909", backend, backend=name)
        return
    if name in _CUDA_BACKENDS:
        ctx.report("NL803", backend, option=f'backend="{name}"')
    mode = kwarg(node, "mode")
    mode_name = ctx.strings(mode.value) if mode is not None else None
    if mode_name and mode_name[0] in _CUDA_MODES:
        ctx.report("NL802", mode, mode=mode_name[0])
    options = kwarg(node, "options")
    if options is not None:
        ctx.report("NL803", options, option="options={...}")
    dynamic = kwarg(node, "dynamic")
    if dynamic is not None and is_true(dynamic.value):
        ctx.report("NL804", dynamic, symbol="dynamic=True")
    if backend is None or name is None:
        ctx.report("NL801", node.func, backend=name or "inductor (default)")


on(cst.Call)(_compile_call)


@on(cst.Decorator)
def _compile_decorator(node: cst.Decorator, ctx: FileContext) -> None:
    if not isinstance(node.decorator, cst.Call) and ctx.qualname(node.decorator) == "torch.compile":
        ctx.report("NL801", node.decorator, backend="inductor (default)")
