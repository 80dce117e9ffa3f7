"""Op collection: every aten op of a graph as a record (op, dtypes, user line, dynamic, count), and
torch's facts about each op (view, composite kernels, out= variants, what it expands to)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
import torch.fx
from torch.utils._python_dispatch import TorchDispatchMode

from neuronlint.graph.sourcemap import Frame, UserCode, parse_stack_trace

# Ops torch.export inserts for its own bookkeeping (shape asserts, symbolic sizes), and aten::alias,
# a no-op view that depends on how the graph was functionalized: not compute, not counted.
BOOKKEEPING_OPS = frozenset(
    {
        "aten::sym_size.int",
        "aten::sym_numel",
        "aten::sym_stride.int",
        "aten::sym_storage_offset",
        "aten::_assert_async",
        "aten::_assert_async.msg",
        "aten::_assert_scalar",
        "aten::sym_constrain_range",
        "aten::sym_constrain_range_for_size",
        "aten::_assert_tensor_metadata",
        "aten::_functional_assert_async.msg",
        "aten::_functional_sym_constrain_range",
        "aten::_functional_sym_constrain_range_for_size",
        "aten::alias",
    }
)
HOST_READ_OPS = frozenset({"aten::_local_scalar_dense", "aten::item"})


class OpCollector:
    """Aggregates graph nodes into op records keyed by (op, dtypes, user line, dynamic)."""

    def __init__(self, user: UserCode):
        self.user = user
        self.records: dict[tuple, dict[str, Any]] = {}
        self.op_facts: dict[str, dict[str, Any]] = {}
        self._frames: dict[str, Frame | None] = {}

    def frame_of(self, stack_trace: str | None) -> Frame | None:
        if not stack_trace:
            return None
        if stack_trace not in self._frames:
            self._frames[stack_trace] = self.user.innermost(parse_stack_trace(stack_trace))
        return self._frames[stack_trace]

    def facts_for(
        self, op: Any, name: str, args: tuple | None = None, kwargs: dict | None = None, depth: int = 0
    ) -> None:
        """Torch's facts about an op: view, composite kernels, out= variants, what it expands to."""
        if name in self.op_facts:
            return
        has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
        schema = op._schema.name
        overload = f"{schema}.{op._overloadname}" if op._overloadname != "default" else schema
        # CompositeExplicitAutogradNonFunctional is left out on purpose: it wraps the op's out=
        # kernel, which is backend-specific, so it is no decomposition.
        composite = [
            key
            for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd")
            if has_kernel(overload, key)
        ]
        tags = {str(t).rsplit(".", 1)[-1] for t in getattr(op, "tags", ())}
        self.op_facts[name] = facts = {
            "view": bool(getattr(op, "is_view", False)),
            "composite": composite,
            "wraps_out": bool(has_kernel(overload, "CompositeExplicitAutogradNonFunctional")),
            "out_variants": _out_variants(op),
            "core": "core" in tags,
            "dynamic_output_shape": "dynamic_output_shape" in tags,
            "expands_to": None,
        }
        if composite == ["CompositeExplicitAutograd"] and args is not None and depth < 3:
            facts["expands_to"] = self.expand(op, args, kwargs or {}, depth)

    def expand(self, op: Any, args: tuple, kwargs: dict, depth: int) -> list[str] | None:
        """The ops a CompositeExplicitAutograd kernel calls, found by running it on meta tensors.

        torch-xla serves such an op through that kernel unless it lowers the op itself, so its
        support is the support of what it calls. None when the kernel cannot run on meta tensors.
        """
        called: list[tuple[Any, tuple, dict]] = []

        class Calls(TorchDispatchMode):
            def __torch_dispatch__(
                self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None
            ) -> Any:
                called.append((func, args, kwargs or {}))
                return func(*args, **(kwargs or {}))

        try:
            meta_args = torch.utils._pytree.tree_map(_to_meta, (args, kwargs))
            with Calls():
                op._op_dk(torch._C.DispatchKey.CompositeExplicitAutograd, *meta_args[0], **meta_args[1])
        except Exception:  # noqa: BLE001 - no meta kernel or symbolic sizes: support stays unknown
            return None
        names: list[str] = []
        for func, sub_args, sub_kwargs in called:
            if not isinstance(func, torch._ops.OpOverload):
                continue
            name = func.name()
            if name not in names:
                names.append(name)
            self.facts_for(func, name, sub_args, sub_kwargs, depth + 1)
        return names

    def add(
        self,
        name: str,
        inputs: list[str],
        outputs: list[str],
        shapes: str | Callable[[], str],
        frame: Frame | None,
        dynamic: str = "",
        count: int = 1,
    ) -> None:
        """Count one op call; `shapes` (example shapes, or a callable making them) is kept from the first."""
        key = (
            name,
            tuple(inputs),
            tuple(outputs),
            frame.path if frame else None,
            frame.line if frame else 0,
            dynamic,
        )
        record = self.records.get(key)
        if record is None:
            self.records[key] = {
                "op": name,
                "inputs": inputs,
                "outputs": outputs,
                "shapes": shapes() if callable(shapes) else shapes,
                "frame": frame.to_dict() if frame else None,
                "dynamic": dynamic,
                "count": count,
            }
        else:
            record["count"] += count

    def walk(self, graph_module: Any) -> None:
        """Every compute op in the graph and in the subgraphs of higher-order ops."""
        OpOverload = torch._ops.OpOverload
        for node in graph_module.graph.nodes:
            if node.op != "call_function":
                continue
            target = node.target
            if not isinstance(target, OpOverload):
                for (
                    arg
                ) in node.args:  # higher-order ops (cond, wrap_with_set_grad_enabled, ...) hold subgraphs
                    if getattr(arg, "op", None) == "get_attr":
                        sub = getattr(graph_module, arg.target, None)
                        if sub is not None and hasattr(sub, "graph"):
                            self.walk(sub)
                continue
            name = target.name()
            if name in BOOKKEEPING_OPS or not name.startswith("aten::"):
                if not name.startswith("aten::") and name not in BOOKKEEPING_OPS:
                    self.other_namespace(node, name)
                continue
            if name not in self.op_facts:
                self.facts_for(target, name, *_meta_values(node))
            inputs = [d for d in (dtype_of(v) for v in _arg_values(node)) if d]
            outputs = [d for d in (dtype_of(v) for v in flatten(node.meta.get("val"))) if d]
            dynamic = ""
            if name in HOST_READ_OPS:
                dynamic = "host-read"
            elif node.meta.get("unbacked_bindings") or (
                self.op_facts[name]["dynamic_output_shape"] and has_unbacked(node.meta.get("val"))
            ):
                dynamic = "data-dependent-shape"
            shapes = _shapes(node)
            self.add(name, inputs, outputs, shapes, self.frame_of(node.meta.get("stack_trace")), dynamic)

    def other_namespace(self, node: Any, name: str) -> None:
        """Custom ops (other namespaces) are recorded as they are: no database covers them."""
        inputs = [d for d in (dtype_of(v) for v in _arg_values(node)) if d]
        outputs = [d for d in (dtype_of(v) for v in flatten(node.meta.get("val"))) if d]
        self.op_facts.setdefault(
            name, {"view": False, "composite": [], "core": False, "dynamic_output_shape": False}
        )
        self.add(name, inputs, outputs, _shapes(node), self.frame_of(node.meta.get("stack_trace")))


_TENSOR_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory", "memory_format"})


def _out_variants(op: Any) -> list[str]:
    """Names of the out= overloads computing the same thing as `op` (same non-option arguments)."""
    packet = getattr(torch.ops.aten, op._schema.name.split("::", 1)[1], None)
    if packet is None:
        return []
    wanted = [(a.name, str(a.type)) for a in op._schema.arguments if a.name not in _TENSOR_OPTIONS]
    found = []
    for overload in packet.overloads():
        schema = getattr(packet, overload)._schema
        outs = [
            a for a in schema.arguments if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write
        ]
        if not outs or overload == op._overloadname:
            continue
        rest = [
            (a.name, str(a.type)) for a in schema.arguments if a not in outs and a.name not in _TENSOR_OPTIONS
        ]
        if rest == wanted:
            found.append(f"{schema.name}.{overload}" if overload != "default" else schema.name)
    return found


def _meta_values(node: Any) -> tuple[tuple, dict]:
    def value(arg: Any) -> Any:
        return arg.meta.get("val")

    return torch.fx.node.map_arg(node.args, value), torch.fx.node.map_arg(node.kwargs, value)


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: Any


def to_spec(value: Any) -> Any:
    """A tensor argument recorded during the fake run -> its metadata (None if sizes are symbolic)."""
    if isinstance(value, torch.Tensor):
        try:
            return TensorSpec(
                tuple(int(d) for d in value.shape), tuple(int(s) for s in value.stride()), value.dtype
            )
        except Exception:  # noqa: BLE001 - unbacked sizes
            return None
    return value


def from_spec(value: Any) -> Any:
    if isinstance(value, TensorSpec):
        return torch.empty_strided(value.shape, value.stride, dtype=value.dtype, device="meta")
    if isinstance(value, torch.device):
        return torch.device("meta")
    return value


def _to_meta(value: Any) -> Any:
    """A fake tensor from the graph -> an empty meta tensor of the same shape, stride and dtype."""
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(
            tuple(int(d) for d in value.shape),
            tuple(int(s) for s in value.stride()),
            dtype=value.dtype,
            device="meta",
        )
    if isinstance(value, torch.device):
        return torch.device("meta")
    return value


def flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [item for v in value for item in flatten(v)]
    return [value]


def _arg_values(node: Any) -> list[Any]:
    values = []
    for arg in flatten(list(node.args) + list(node.kwargs.values())):
        if hasattr(arg, "meta"):
            values.extend(flatten(arg.meta.get("val")))
    return values


def dtype_of(value: Any) -> str | None:
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "shape"):
        return None
    return str(dtype).removeprefix("torch.")


def has_unbacked(value: Any) -> bool:
    for item in flatten(value):
        for dim in getattr(item, "shape", ()):
            if "u" in str(dim) and not str(dim).isdigit():
                return True
    return False


def shape_text(inputs: list[Any], outputs: list[Any]) -> str:
    """'(float32[2,64], int64[2]) -> (float32[2,64])'; symbolic sizes print as their symbols (u0)."""

    def fmt(values: list[Any]) -> str:
        return ", ".join(f"{dtype_of(v)}[{','.join(str(d) for d in v.shape)}]" for v in values if dtype_of(v))

    return f"({fmt(inputs)}) -> ({fmt(outputs)})"


def _shapes(node: Any) -> str:
    return shape_text(_arg_values(node), flatten(node.meta.get("val")))
