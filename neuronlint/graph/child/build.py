"""Build the model on the meta device (no storage), with a small-values fallback; make meta inputs."""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from neuronlint.graph.child.failures import is_memory_error

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


def build_model(target: Any, kwargs: dict[str, Any]) -> tuple[Any, str]:
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
        if is_memory_error(meta_error):
            raise
        try:
            with _small_tensors_real()():
                model = construct()
        except Exception:  # noqa: BLE001 - report the meta-device error: it is the user's first failure
            raise meta_error from None
        mode = "meta+values"
    if not isinstance(model, nn.Module):
        raise TypeError(f"the entrypoint returned {type(model).__name__}, not a torch.nn.Module")
    if any(t.device.type != "meta" for t in [*model.parameters(), *model.buffers()]):
        model = model.to("meta")  # tensors with real storage (explicit device, values fallback): drop it
    return model.eval(), mode


def _small_tensors_real() -> Any:
    """A TorchFunctionMode placing new tensors on the CPU when small (or built from data), else on meta."""
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


def make_inputs(specs: list[Any]) -> tuple[Any, ...]:
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
