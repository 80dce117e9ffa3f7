"""serving: Python uses of serving tools (rules/serving.toml), NL080.

The first import of a tool's module in a file (`from vllm import LLM`, `import tensorrt_llm`,
TorchServe handlers) and an ONNX Runtime GPU provider name (`"CUDAExecutionProvider"`) are one
finding each, carrying the tool's Neuron verdict: the verdict is about the file's dependency on the
tool, so the file's further imports of the same tool (`from vllm.inputs import ...` under `from vllm
import SamplingParams`) say nothing new and are not reported again. Dependency files, images and launch commands are read by
neuronlint/filetypes/.
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.bindings import absolute_module, dotted
from neuronlint.static.context import FileContext
from neuronlint.static.registry import Checker, on

_FACTS = ("tool", "serving", "use", "neuron_status", "verdict", "gpu_only")


def _entry_for_module(ctx: FileContext, module: str) -> dict | None:
    for entry in ctx.data.serving:
        for prefix in entry.get("modules", ()):
            if module == prefix or module.startswith(prefix + "."):
                return entry
    return None


def _facts(entry: dict, use: str) -> dict:
    return {
        "tool": entry["title"],
        "serving": entry["name"],
        "use": use,
        "neuron_status": entry["status"],
        "verdict": entry["verdict"],
        "gpu_only": bool(entry.get("gpu_only", False)),
    }


def _first_import(entry: dict, ctx: FileContext) -> bool:
    """Whether this is the file's first import of the tool (the one that is reported)."""
    if entry["name"] in ctx.serving_imports:
        return False
    ctx.serving_imports.add(entry["name"])
    return True


class Serving(Checker):
    """Imports of serving tools and ONNX Runtime GPU provider names (NL080)."""

    emits = {"NL080": _FACTS}
    triggers = (
        "vllm",
        "tensorrt_llm",
        "sglang",
        "ts.torch_handler",
        "ts.context",
        "tritonserver",
        "ExecutionProvider",
    )

    @on(cst.Import)
    def imports(self, node: cst.Import, ctx: FileContext) -> None:
        for alias in node.names:
            module = dotted(alias.name)
            entry = _entry_for_module(ctx, module)
            if entry is not None:
                if _first_import(entry, ctx):
                    ctx.report("NL080", alias, **_facts(entry, f"import `{module}`"))
                return  # one finding per line

    @on(cst.ImportFrom)
    def import_from(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        if node.relative or node.module is None:
            return
        module = absolute_module(node, ctx)
        entry = _entry_for_module(ctx, module)
        if entry is not None and _first_import(entry, ctx):
            ctx.report("NL080", node.module, **_facts(entry, f"import from `{module}`"))

    @on(cst.SimpleString)
    def provider(self, node: cst.SimpleString, ctx: FileContext) -> None:
        if "ExecutionProvider" not in node.value:
            return
        values = ctx.strings(node)
        if not values:
            return
        for entry in ctx.data.serving:
            if values[0] in entry.get("providers", ()):
                ctx.report("NL080", node, **_facts(entry, f"provider `{values[0]}`"))
                return
