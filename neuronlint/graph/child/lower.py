"""Lowering to core ATen: run code on fake tensors under the standard decomposition table and record
every op that remains (the op level the Neuron backends see)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx
from torch.utils._python_dispatch import TorchDispatchMode

from neuronlint.graph.child.collect import (
    BOOKKEEPING_OPS,
    HOST_READ_OPS,
    OpCollector,
    TensorSpec,
    dtype_of,
    flatten,
    from_spec,
    has_unbacked,
    shape_text,
    to_spec,
)
from neuronlint.graph.child.progress import Progress
from neuronlint.graph.sourcemap import Frame


def on_fake_tensors(inputs: tuple) -> tuple[tuple, Any]:
    """Fake copies of the inputs and the FakeTensorMode they belong to."""
    # Imported here, not at the top: symbolic_shapes pulls in sympy (seconds), which belongs to the
    # stage that lowers a graph, not to the child's start-up and its timeout budget.
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

    def __init__(self, collector: OpCollector, frame_of: Callable[[], Frame | None]):
        self.collector, self.frame_of = collector, frame_of
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
                torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd")
            )
        return found

    def record(self, func: Any, args: tuple, kwargs: dict, result: Any) -> None:
        name = func.name()
        if name in BOOKKEEPING_OPS or name.startswith("prim::"):  # prim::device etc. are attribute reads
            return
        collector = self.collector
        if name not in self.pending and name not in collector.op_facts:
            self.pending[name] = (func, torch.utils._pytree.tree_map(to_spec, (args, kwargs)))
        inputs = [d for d in (dtype_of(v) for v in flatten(list(args) + list(kwargs.values()))) if d]
        outputs = [d for d in (dtype_of(v) for v in flatten(result)) if d]
        dynamic = ""
        if name in HOST_READ_OPS:
            dynamic = "host-read"
        elif "dynamic_output_shape" in {str(t).rsplit(".", 1)[-1] for t in func.tags} and has_unbacked(
            result
        ):
            dynamic = "data-dependent-shape"
        tensors_in = [v for v in flatten(list(args) + list(kwargs.values())) if dtype_of(v)]
        collector.add(
            name,
            inputs,
            outputs,
            lambda: shape_text(tensors_in, [v for v in flatten(result) if dtype_of(v)]),
            self.frame_of(),
            dynamic,
        )

    def finish(self) -> None:
        """Torch facts for every op seen, computed outside the fake mode on meta tensors."""
        for name, (func, specs) in self.pending.items():
            args, kwargs = torch.utils._pytree.tree_map(
                from_spec, specs, is_leaf=lambda x: isinstance(x, TensorSpec)
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


def lower_graph(module: Any, inputs: tuple, collector: OpCollector, progress: Progress) -> None:
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

    recorder = DecomposingRecorder(collector, frame_of)
    fake_inputs, mode = on_fake_tensors(inputs)
    with mode, recorder.mode():
        Interpreter(module).run(*fake_inputs)
    recorder.finish()
    progress.done("decompose")
