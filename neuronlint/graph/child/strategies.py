"""Capture strategies for one target, tried in order: torch.export, torch.fx symbolic trace, and a
partial run on fake tensors that records the ops dispatched before the failure (`run`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.fx
import torch.fx.proxy as proxy

from neuronlint.graph.child.build import build_model, make_inputs, parameter_summary
from neuronlint.graph.child.collect import OpCollector
from neuronlint.graph.child.failures import failure, is_memory_error
from neuronlint.graph.child.lower import DecomposingRecorder, lower_graph, on_fake_tensors
from neuronlint.graph.child.progress import Progress
from neuronlint.graph.entrypoints import load, parse_entrypoint
from neuronlint.graph.sourcemap import Frame, UserCode
from neuronlint.graph.specs import parse_specs


def capture_export(model: Any, inputs: tuple, collector: OpCollector, progress: Progress) -> None:
    """torch.export (non-strict), then the core-ATen ops of the program into `collector`."""
    progress.stage("export")
    program = torch.export.export(model, inputs, strict=False)
    progress.done("export")
    if os.environ.get("NEURONLINT_DECOMPOSE") != "retrace":
        try:
            lower_graph(program.module(), inputs, collector, progress)
            return
        except Exception:  # noqa: BLE001 - the canonical (slower) route below gives the same ops
            collector.records.clear()
    progress.stage("decompose")
    graph_module = program.run_decompositions().graph_module
    progress.done("decompose")
    progress.stage("collect")
    collector.walk(graph_module)
    progress.done("collect")


def capture_symbolic(model: Any, inputs: tuple, collector: OpCollector, progress: Progress) -> None:
    """torch.fx.symbolic_trace (recording user lines), then the core-ATen ops of its graph."""
    progress.stage("symbolic_trace")
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(model)
    traced = torch.fx.GraphModule(tracer.root, graph)
    progress.done("symbolic_trace")
    lower_graph(traced, inputs, collector, progress)


def capture_partial(model: Any, inputs: tuple, collector: OpCollector, progress: Progress) -> dict | None:
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
    recorder = DecomposingRecorder(collector, frame_of)
    fake_inputs, mode = on_fake_tensors(inputs)
    outcome = None
    try:
        with mode, recorder.mode():
            model(*fake_inputs)
    except Exception as exc:  # noqa: BLE001 - the failure is what we report
        outcome = failure("partial", exc, user)
    recorder.finish()
    progress.done("partial")
    return outcome


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
            failure("import", exc, user, "out of memory" if is_memory_error(exc) else "import error")
        )
        return result
    progress.done("import")
    progress.stage("build")
    try:
        model, mode = build_model(target, dict(request.get("kwargs") or {}))
        inputs = make_inputs(specs)
    except BaseException as exc:  # noqa: BLE001
        result["failures"].append(
            failure("build", exc, user, "out of memory" if is_memory_error(exc) else "constructor error")
        )
        return result
    progress.done("build")
    result["build_mode"] = mode
    result["params"] = parameter_summary(model)
    collector = OpCollector(user)
    strategies: list[tuple[str, Callable[..., Any]]] = [
        ("export", capture_export),
        ("symbolic_trace", capture_symbolic),
    ]
    for name, strategy in strategies:
        collector.records.clear()
        try:
            strategy(model, inputs, collector, progress)
        except Exception as exc:  # noqa: BLE001
            progress.done(f"{name} (failed)")
            if is_memory_error(exc):
                result["failures"].append(failure(name, exc, user, "out of memory"))
                return result
            result["failures"].append(failure(name, exc, user))
            continue
        result["capture"], result["ok"] = name, True
        break
    else:
        collector.records.clear()
        partial_failure = capture_partial(model, inputs, collector, progress)
        result["capture"] = "partial"
        if partial_failure is not None:
            result["failures"].append(partial_failure)
    result["ops"] = list(collector.records.values())
    result["op_facts"] = collector.op_facts
    return result
