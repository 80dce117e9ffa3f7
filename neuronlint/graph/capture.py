"""The tracing child: build the model without weights, capture its graph, record every aten op.

Run as `python -m neuronlint.graph.capture REQUEST.json RESULT_DIR` by runner.py, which enforces
the timeouts; this process caps its own address space first, then imports torch and user code.
One child traces a batch of targets (torch's start-up costs seconds; each model after that far
less). Never raises: every failure becomes a record in the target's result file, and
RESULT_DIR/progress.jsonl tells the parent which target and stage a crash or hang happened in.

Pipeline:
  1. import the entrypoint; build the model under torch.device("meta") (no storage), retrying
     with small tensors on the CPU when a constructor needs values (see build_model);
  2. torch.export.export(strict=False); lower the program to core ATen (the op level the Neuron
     backends see) by interpreting its graph on fake tensors with the standard decomposition
     table (DecomposingRecorder), or with run_decompositions() when NEURONLINT_DECOMPOSE=retrace;
  3. if export fails: record why and where, then torch.fx.symbolic_trace and the same lowering;
  4. if that fails too: run the forward on fake tensors and record the ops dispatched before the
     failure ("partial").
"""

from __future__ import annotations

import dataclasses
import faulthandler
import json
import os
import resource
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neuronlint.graph.entrypoints import load, parse_entrypoint
from neuronlint.graph.sourcemap import Frame, UserCode, parse_stack_trace, traceback_frames
from neuronlint.graph.specs import parse_specs

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


class Progress:
    """Appends one JSON line per stage (target index, stage, wall-clock time), so a parent that
    kills us knows which target and stage it was, and times each target against its timeout."""

    def __init__(self, path: Path):
        self.path = path
        self.target: int | None = None
        self.timing: dict[str, float] = {}
        self._last = time.perf_counter()

    def start(self, target: int) -> None:
        self.target, self.timing = target, {}
        self.stage("start")

    def stage(self, name: str) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"target": self.target, "stage": name, "time": time.time()}) + "\n")
        self._last = time.perf_counter()

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.timing[name] = round(now - self._last, 3)
        self._last = now


# ---- failures ---------------------------------------------------------------------------------
def _is_memory_error(exc: BaseException) -> bool:
    text = str(exc)
    return (
        isinstance(exc, MemoryError)
        or "can't allocate memory" in text
        or "DefaultCPUAllocator" in text
        or "failed to map segment" in text  # a shared library (torch itself) does not fit under the cap
    )


def classify(exc: BaseException) -> str:
    """A short, stable description of why tracing failed (the `kind` fact of NL013/NL015)."""
    if _is_memory_error(exc):
        return "out of memory"
    names = {cls.__name__ for cls in type(exc).__mro__}
    text = str(exc)
    if names & {"GuardOnDataDependentSymNode", "DataDependentError", "PendingUnbackedSymbolNotFound"}:
        return "data-dependent control flow"
    if "TraceError" in names and "control flow" in text:
        return "data-dependent control flow"
    if names & {
        "UnsupportedOperatorException",
        "DynamicOutputShapeException",
        "DataDependentOutputException",
    }:
        return "op without a shape function"
    if isinstance(exc, NotImplementedError) and ("Meta" in text or "meta" in text):
        return "op without a shape function"
    if names & {"UserError", "Unsupported"} or "register a pytree" in text:
        return "unsupported by torch.export"
    if "TraceError" in names or any(
        word in text for word in ("meta tensor", "Meta tensor", "FakeTensor", "numpy()")
    ):
        return "unsupported Python"  # the code needs real values (numpy, data access) or Python the tracer cannot follow
    return "forward raised an exception"


def _reason(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(first) > 300:
        first = first[:297] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def failure(stage: str, exc: BaseException, user: UserCode, kind: str | None = None) -> dict[str, Any]:
    """A failure record: stage, kind, reason and the innermost user frame of the traceback."""
    frame = user.innermost(traceback_frames(exc.__traceback__))
    return {
        "stage": stage,
        "kind": kind or classify(exc),
        "reason": _reason(exc),
        "exception": type(exc).__name__,
        "frame": frame.to_dict() if frame else None,
    }


# ---- building -----------------------------------------------------------------------------------
# Factory functions whose result size the small-tensor policy can tell from the call.
_SIZED_FACTORIES = (
    "empty",
    "zeros",
    "ones",
    "full",
    "rand",
    "randn",
    "randint",
    "randperm",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "tensor",
    "as_tensor",
)
SMALL_TENSOR = 1 << 20  # elements: below this a constructor gets a real CPU tensor in the values fallback


def build_model(target: Any, kwargs: dict[str, Any], torch: Any) -> tuple[Any, str]:
    """(module on the meta device, how it was built). Raises the constructor's exception.

    First under torch.device("meta"): no storage at all. A constructor that needs tensor values
    (`.tolist()`, `.item()`, numpy) fails there, and fake tensors have no values either; so the
    retry gives tensors of up to SMALL_TENSOR elements real CPU storage (the memory cap bounds the
    total) and larger ones stay on meta. Either way the model ends up entirely on meta.
    """
    nn = torch.nn

    def construct() -> Any:
        if isinstance(target, type):
            if not issubclass(target, nn.Module):
                raise TypeError(f"{target.__name__} is a class but not a torch.nn.Module subclass")
            return target(**kwargs)
        if callable(target):
            return target(**kwargs)
        raise TypeError(f"{target!r} is neither a factory nor an nn.Module class")

    try:
        with torch.device("meta"):
            model = construct()
        mode = "meta"
    except Exception as meta_error:  # noqa: BLE001 - the constructor may need values: retry with small real tensors
        if _is_memory_error(meta_error):
            raise
        try:
            with _small_tensors_real(torch)():
                model = construct()
        except Exception:  # noqa: BLE001 - report the meta-device error: it is the user's first failure
            raise meta_error from None
        mode = "meta+values"
    if not isinstance(model, nn.Module):
        raise TypeError(f"the entrypoint returned {type(model).__name__}, not a torch.nn.Module")
    if any(t.device.type != "meta" for t in [*model.parameters(), *model.buffers()]):
        model = model.to("meta")  # tensors with real storage (explicit device, values fallback): drop it
    return model.eval(), mode


def _small_tensors_real(torch: Any) -> Any:
    """A TorchFunctionMode placing new tensors on the CPU when small (or built from data), else on meta."""
    from torch.overrides import TorchFunctionMode

    factories = {getattr(torch, name) for name in _SIZED_FACTORIES}

    def elements(name: str, args: tuple, kwargs: dict) -> int:
        if name in ("tensor", "as_tensor"):
            return 0  # built from Python data the constructor already holds
        if name in ("arange", "linspace", "logspace"):
            numbers = [a for a in args if isinstance(a, (int, float))]
            if name == "arange":
                start, end, step = (0, numbers[0], 1) if len(numbers) == 1 else (numbers + [1])[:3]
                return int(abs((end - start) / step)) if step else 0
            return int(kwargs.get("steps", numbers[2] if len(numbers) > 2 else 100))
        if name == "randperm":
            return int(args[0]) if args else 0
        if name == "eye":
            rows = int(args[0]) if args else 0
            return rows * (int(args[1]) if len(args) > 1 and isinstance(args[1], int) else rows)
        shape = kwargs.get(
            "size", args[0] if args and isinstance(args[0], (tuple, list, torch.Size)) else args
        )
        if name == "randint":
            shape = kwargs.get(
                "size", next((a for a in args if isinstance(a, (tuple, list, torch.Size))), ())
            )
        if name == "full":
            shape = args[0] if args else kwargs.get("size", ())
        total = 1
        for dim in shape if isinstance(shape, (tuple, list, torch.Size)) else ():
            total *= int(dim) if isinstance(dim, int) else 1
        return total

    class SmallTensorsReal(TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None
        ) -> Any:
            kwargs = dict(kwargs or {})
            if func in factories and kwargs.get("device") is None:
                kwargs["device"] = "cpu" if elements(func.__name__, args, kwargs) <= SMALL_TENSOR else "meta"
            return func(*args, **kwargs)

    return SmallTensorsReal


def make_inputs(specs: list[Any], torch: Any) -> tuple[Any, ...]:
    return tuple(torch.empty(spec.shape, dtype=getattr(torch, spec.dtype), device="meta") for spec in specs)


def parameter_summary(model: Any) -> dict[str, Any]:
    """Parameter count and bytes at the dtypes the model was built with (shared weights once)."""
    seen: set[int] = set()
    count = size = 0
    dtypes: dict[str, int] = {}
    for param in model.parameters():
        if id(param) in seen:
            continue
        seen.add(id(param))
        count += param.numel()
        nbytes = param.numel() * param.element_size()
        size += nbytes
        name = str(param.dtype).removeprefix("torch.")
        dtypes[name] = dtypes.get(name, 0) + nbytes
    return {"count": count, "bytes": size, "bytes_by_dtype": dtypes}


# ---- graph walking ----------------------------------------------------------------------------
class OpCollector:
    """Aggregates graph nodes into op records keyed by (op, dtypes, user line, dynamic)."""

    def __init__(self, torch: Any, user: UserCode):
        self.torch = torch
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
        has_kernel = self.torch._C._dispatch_has_kernel_for_dispatch_key
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
            "out_variants": _out_variants(op, self.torch),
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
        from torch.utils._python_dispatch import TorchDispatchMode

        torch = self.torch
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
        OpOverload = self.torch._ops.OpOverload
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
            inputs = [d for d in (_dtype(v) for v in _arg_values(node)) if d]
            outputs = [d for d in (_dtype(v) for v in _flatten(node.meta.get("val"))) if d]
            dynamic = ""
            if name in HOST_READ_OPS:
                dynamic = "host-read"
            elif node.meta.get("unbacked_bindings") or (
                self.op_facts[name]["dynamic_output_shape"] and _has_unbacked(node.meta.get("val"))
            ):
                dynamic = "data-dependent-shape"
            shapes = _shapes(node)
            self.add(name, inputs, outputs, shapes, self.frame_of(node.meta.get("stack_trace")), dynamic)

    def other_namespace(self, node: Any, name: str) -> None:
        """Custom ops (other namespaces) are recorded as they are: no database covers them."""
        inputs = [d for d in (_dtype(v) for v in _arg_values(node)) if d]
        outputs = [d for d in (_dtype(v) for v in _flatten(node.meta.get("val"))) if d]
        self.op_facts.setdefault(
            name, {"view": False, "composite": [], "core": False, "dynamic_output_shape": False}
        )
        self.add(name, inputs, outputs, _shapes(node), self.frame_of(node.meta.get("stack_trace")))


_TENSOR_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory", "memory_format"})


def _out_variants(op: Any, torch: Any) -> list[str]:
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
    import torch.fx

    def value(arg: Any) -> Any:
        return arg.meta.get("val")

    return torch.fx.node.map_arg(node.args, value), torch.fx.node.map_arg(node.kwargs, value)


@dataclasses.dataclass(frozen=True)
class _TensorSpec:
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: Any


def _spec(value: Any) -> Any:
    """A tensor argument recorded during the fake run -> its metadata (None if sizes are symbolic)."""
    import torch

    if isinstance(value, torch.Tensor):
        try:
            return _TensorSpec(
                tuple(int(d) for d in value.shape), tuple(int(s) for s in value.stride()), value.dtype
            )
        except Exception:  # noqa: BLE001 - unbacked sizes
            return None
    return value


def _from_spec(value: Any) -> Any:
    import torch

    if isinstance(value, _TensorSpec):
        return torch.empty_strided(value.shape, value.stride, dtype=value.dtype, device="meta")
    if isinstance(value, torch.device):
        return torch.device("meta")
    return value


def _to_meta(value: Any) -> Any:
    """A fake tensor from the graph -> an empty meta tensor of the same shape, stride and dtype."""
    import torch

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


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [item for v in value for item in _flatten(v)]
    return [value]


def _arg_values(node: Any) -> list[Any]:
    values = []
    for arg in _flatten(list(node.args) + list(node.kwargs.values())):
        if hasattr(arg, "meta"):
            values.extend(_flatten(arg.meta.get("val")))
    return values


def _dtype(value: Any) -> str | None:
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "shape"):
        return None
    return str(dtype).removeprefix("torch.")


def _has_unbacked(value: Any) -> bool:
    for item in _flatten(value):
        for dim in getattr(item, "shape", ()):
            if "u" in str(dim) and not str(dim).isdigit():
                return True
    return False


def _shape_text(inputs: list[Any], outputs: list[Any]) -> str:
    """'(float32[2,64], int64[2]) -> (float32[2,64])'; symbolic sizes print as their symbols (u0)."""

    def fmt(values: list[Any]) -> str:
        return ", ".join(f"{_dtype(v)}[{','.join(str(d) for d in v.shape)}]" for v in values if _dtype(v))

    return f"({fmt(inputs)}) -> ({fmt(outputs)})"


def _shapes(node: Any) -> str:
    return _shape_text(_arg_values(node), _flatten(node.meta.get("val")))


# ---- capture strategies -----------------------------------------------------------------------
def capture_export(model: Any, inputs: tuple, torch: Any, collector: OpCollector, progress: Progress) -> None:
    """torch.export (non-strict), then the core-ATen ops of the program into `collector`."""
    progress.stage("export")
    program = torch.export.export(model, inputs, strict=False)
    progress.done("export")
    if os.environ.get("NEURONLINT_DECOMPOSE") != "retrace":
        try:
            lower_graph(program.module(), inputs, torch, collector, progress)
            return
        except Exception:  # noqa: BLE001 - the canonical (slower) route below gives the same ops
            collector.records.clear()
    progress.stage("decompose")
    graph_module = program.run_decompositions().graph_module
    progress.done("decompose")
    progress.stage("collect")
    collector.walk(graph_module)
    progress.done("collect")


def capture_symbolic(
    model: Any, inputs: tuple, torch: Any, collector: OpCollector, progress: Progress
) -> None:
    """torch.fx.symbolic_trace (recording user lines), then the core-ATen ops of its graph."""
    progress.stage("symbolic_trace")
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(model)
    traced = torch.fx.GraphModule(tracer.root, graph)
    progress.done("symbolic_trace")
    lower_graph(traced, inputs, torch, collector, progress)


def _fake_inputs(inputs: tuple, torch: Any) -> tuple[tuple, Any]:
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    mode = FakeTensorMode(allow_non_fake_inputs=True, shape_env=ShapeEnv())
    return tuple(
        mode.from_tensor(t, static_shapes=True) if isinstance(t, torch.Tensor) else t for t in inputs
    ), mode


class DecomposingRecorder:
    """Runs code on fake tensors and records every aten op after the core-ATen decompositions.

    Used to lower an exported graph (interpreting it node by node is several times cheaper than
    re-tracing it with ExportedProgram.run_decompositions, with the same decomposition table) and
    for the partial run after a failed capture. `frame_of()` gives the user frame of the op being
    run: from the graph node's stack trace, or from the live Python stack.
    """

    def __init__(self, torch: Any, collector: OpCollector, frame_of: Callable[[], Frame | None]):
        from torch.utils._python_dispatch import TorchDispatchMode

        self.torch, self.collector, self.frame_of = torch, collector, frame_of
        self.pending: dict[str, tuple[Any, Any]] = {}  # op name -> (op, meta specs of its first arguments)
        self._implicit: dict[Any, bool] = {}
        table = torch.export.default_decompositions().materialize()
        recorder = self
        op_overload = torch._ops.OpOverload

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(
                self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None
            ) -> Any:
                kwargs = kwargs or {}
                decomposition = table.get(func)
                if decomposition is not None:
                    with self:
                        result = decomposition(*args, **kwargs)
                    if result is not NotImplemented:
                        return result
                elif isinstance(func, op_overload) and recorder.implicit(func):
                    # A CompositeImplicitAutograd op reached us (e.g. aten::to): decompose it the way
                    # run_decompositions does, so the ops recorded are the same.
                    with self:
                        result = func.decompose(*args, **kwargs)
                    if result is not NotImplemented:
                        return result
                result = func(*args, **kwargs)
                if isinstance(func, op_overload):
                    recorder.record(func, args, kwargs, result)
                return result

        self.mode = Mode

    def implicit(self, func: Any) -> bool:
        """Whether the op has a CompositeImplicitAutograd kernel (cached per op)."""
        found = self._implicit.get(func)
        if found is None:
            name = func.name()
            found = self._implicit[func] = name.startswith("aten::") and bool(
                self.torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd")
            )
        return found

    def record(self, func: Any, args: tuple, kwargs: dict, result: Any) -> None:
        name = func.name()
        if name in BOOKKEEPING_OPS or name.startswith("prim::"):  # prim::device etc. are attribute reads
            return
        collector = self.collector
        if name not in self.pending and name not in collector.op_facts:
            self.pending[name] = (func, self.torch.utils._pytree.tree_map(_spec, (args, kwargs)))
        inputs = [d for d in (_dtype(v) for v in _flatten(list(args) + list(kwargs.values()))) if d]
        outputs = [d for d in (_dtype(v) for v in _flatten(result)) if d]
        dynamic = ""
        if name in HOST_READ_OPS:
            dynamic = "host-read"
        elif "dynamic_output_shape" in {str(t).rsplit(".", 1)[-1] for t in func.tags} and _has_unbacked(
            result
        ):
            dynamic = "data-dependent-shape"
        tensors_in = [v for v in _flatten(list(args) + list(kwargs.values())) if _dtype(v)]
        collector.add(
            name,
            inputs,
            outputs,
            lambda: _shape_text(tensors_in, [v for v in _flatten(result) if _dtype(v)]),
            self.frame_of(),
            dynamic,
        )

    def finish(self) -> None:
        """Torch facts for every op seen, computed outside the fake mode on meta tensors."""
        for name, (func, specs) in self.pending.items():
            args, kwargs = self.torch.utils._pytree.tree_map(
                _from_spec, specs, is_leaf=lambda x: isinstance(x, _TensorSpec)
            )
            if name.startswith("aten::"):
                self.collector.facts_for(func, name, args, kwargs)
            else:
                self.collector.op_facts.setdefault(
                    name,
                    {
                        "view": False,
                        "composite": [],
                        "core": False,
                        "dynamic_output_shape": False,
                        "expands_to": None,
                    },
                )
        self.pending.clear()


def lower_graph(module: Any, inputs: tuple, torch: Any, collector: OpCollector, progress: Progress) -> None:
    """Record the core-ATen ops of a captured graph by interpreting it on fake tensors."""
    progress.stage("decompose")
    current: list[Any] = [None]

    class Interpreter(torch.fx.Interpreter):
        def run_node(self, node: Any) -> Any:
            current[0] = node
            return super().run_node(node)

    def frame_of() -> Frame | None:
        node = current[0]
        return collector.frame_of(node.meta.get("stack_trace")) if node is not None else None

    recorder = DecomposingRecorder(torch, collector, frame_of)
    fake_inputs, mode = _fake_inputs(inputs, torch)
    with mode, recorder.mode():
        Interpreter(module).run(*fake_inputs)
    recorder.finish()
    progress.done("decompose")


def capture_partial(
    model: Any, inputs: tuple, torch: Any, collector: OpCollector, progress: Progress
) -> dict | None:
    """Run forward on fake tensors, recording decomposed ops until the first failure."""
    user = collector.user

    def frame_of() -> Frame | None:
        frame = sys._getframe(1)
        while frame is not None:  # innermost first: the first user frame is the op's line
            if frame.f_code.co_filename in user:
                return Frame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
            frame = frame.f_back
        return None

    progress.stage("partial")
    recorder = DecomposingRecorder(torch, collector, frame_of)
    fake_inputs, mode = _fake_inputs(inputs, torch)
    outcome = None
    try:
        with mode, recorder.mode():
            model(*fake_inputs)
    except Exception as exc:  # noqa: BLE001 - the failure is what we report
        outcome = failure("partial", exc, user)
    recorder.finish()
    progress.done("partial")
    return outcome


# ---- main -------------------------------------------------------------------------------------
class _UserFrameAnchors:
    """Stands in for torch.fx.proxy._STACK_TRACE_ANCHORS: every frame in user code is an anchor.

    torch.export records only frames of `forward` methods in node stack traces; helper functions
    (e.g. `apply_rotary(q, freqs)`) would vanish and findings would point at their caller.
    """

    def __init__(self, user: UserCode, anchors: Any):
        self.user, self.anchors = user, anchors

    def __contains__(self, item: Any) -> bool:
        return item in self.anchors or (isinstance(item, tuple) and bool(item) and item[0] in self.user)

    def add(self, item: Any) -> None:
        self.anchors.add(item)


def keep_user_frames(user: UserCode) -> None:
    import torch.fx.proxy as proxy

    anchors = getattr(proxy, "_STACK_TRACE_ANCHORS", None)
    if isinstance(anchors, set):  # a private hook of torch 2.13; without it forward frames still map
        proxy._STACK_TRACE_ANCHORS = _UserFrameAnchors(user, anchors)


def run(request: dict[str, Any], root: Path, progress: Progress) -> dict[str, Any]:
    """Trace one target ({entrypoint, inputs, kwargs}); failures are recorded, never raised."""
    user = UserCode(root)
    result: dict[str, Any] = {
        "ok": False,
        "capture": None,
        "ops": [],
        "op_facts": {},
        "failures": [],
        "build_mode": None,
        "params": None,
        "timing": progress.timing,
    }
    progress.stage("import")
    try:
        entry = parse_entrypoint(request["entrypoint"])
        specs = parse_specs(request.get("inputs", []))
        target = load(entry, root)
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a user module is a failure too
        result["failures"].append(
            failure("import", exc, user, "out of memory" if _is_memory_error(exc) else "import error")
        )
        return result
    progress.done("import")
    import torch

    progress.stage("build")
    try:
        model, mode = build_model(target, dict(request.get("kwargs") or {}), torch)
        inputs = make_inputs(specs, torch)
    except BaseException as exc:  # noqa: BLE001
        result["failures"].append(
            failure("build", exc, user, "out of memory" if _is_memory_error(exc) else "constructor error")
        )
        return result
    progress.done("build")
    result["build_mode"] = mode
    result["params"] = parameter_summary(model)
    collector = OpCollector(torch, user)
    strategies: list[tuple[str, Callable[..., Any]]] = [
        ("export", capture_export),
        ("symbolic_trace", capture_symbolic),
    ]
    for name, strategy in strategies:
        collector.records.clear()
        try:
            strategy(model, inputs, torch, collector, progress)
        except Exception as exc:  # noqa: BLE001
            progress.done(f"{name} (failed)")
            if _is_memory_error(exc):
                result["failures"].append(failure(name, exc, user, "out of memory"))
                return result
            result["failures"].append(failure(name, exc, user))
            continue
        result["capture"], result["ok"] = name, True
        break
    else:
        collector.records.clear()
        partial_failure = capture_partial(model, inputs, torch, collector, progress)
        result["capture"] = "partial"
        if partial_failure is not None:
            result["failures"].append(partial_failure)
    result["ops"] = list(collector.records.values())
    result["op_facts"] = collector.op_facts
    return result


def _cap_memory(limit_bytes: int | None) -> None:
    if limit_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


def main(argv: list[str]) -> int:
    """`capture REQUEST.json RESULT_DIR`: trace request["targets"][i] into RESULT_DIR/result-<i>.json."""
    request_path, result_dir = Path(argv[0]), Path(argv[1])
    request = json.loads(request_path.read_text(encoding="utf-8"))
    _cap_memory(request.get("memory_limit"))
    faulthandler.enable()  # a crash prints the Python stack: the parent maps it to the user's line
    faulthandler.register(signal.SIGUSR1, all_threads=False)  # the parent asks for it before a timeout kill
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    root = Path(request["root"])
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    progress = Progress(result_dir / "progress.jsonl")
    progress.stage("startup")
    started = time.perf_counter()
    try:
        import torch

        with torch.device("meta"):  # first use of the meta device loads its kernels: once per process
            torch.nn.Linear(2, 2)
        keep_user_frames(UserCode(root))
    except BaseException as exc:  # noqa: BLE001 - e.g. torch missing or the memory cap too low for it
        kind = "out of memory" if _is_memory_error(exc) else "import error"
        failed = {"ok": False, "failures": [failure("startup", exc, UserCode(root), kind)]}
        for index, _ in enumerate(request["targets"]):
            _write(result_dir / f"result-{request.get('first_index', 0) + index}.json", failed)
        return 0
    startup = round(time.perf_counter() - started, 3)
    for offset, target in enumerate(request["targets"]):
        index = request.get("first_index", 0) + offset
        progress.start(index)
        began, cpu_began = time.perf_counter(), _cpu_seconds()
        result = run(target, root, progress)
        result["wall_seconds"] = round(time.perf_counter() - began, 3)
        result["cpu_seconds"] = round(_cpu_seconds() - cpu_began, 3)
        result["startup_seconds"] = startup
        result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        _write(result_dir / f"result-{index}.json", result)
    return 0


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _write(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temporary, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
