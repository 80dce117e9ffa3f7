"""Failure records: why tracing failed (a short stable kind), where (the innermost user frame)."""

from __future__ import annotations

from typing import Any

from neuronlint.graph.sourcemap import UserCode, traceback_frames


def is_memory_error(exc: BaseException) -> bool:
    text = str(exc)
    return (
        isinstance(exc, MemoryError)
        or "can't allocate memory" in text
        or "DefaultCPUAllocator" in text
        or "failed to map segment" in text  # a shared library (torch itself) does not fit under the cap
    )


def classify(exc: BaseException) -> str:
    """A short, stable description of why tracing failed (the `kind` fact of NL013/NL015)."""
    if is_memory_error(exc):
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
