"""The three targets of a fix (`--to`) and which frames offer them.

- portable: device-generic PyTorch (torch.accelerator, torch.amp, the device's default process-group
  backend) that runs on CUDA, Neuron and the CPU alike. Offered in every frame.
- neuron: native TorchNeuron (the `neuron` device). Offered only where the frame's backend is native
  (Neuron 2.33+ on trn2/trn3).
- xla: torch-neuronx on PyTorch/XLA (the `xla` device, `torch_xla.sync()`, the `xla` process-group
  backend). Offered only where the frame's backend is xla.
"""

from __future__ import annotations

from dataclasses import dataclass

from neuronlint.ruledb import Context, RuleDB

FLAVOURS = ("portable", "neuron", "xla")
_BACKEND = {"neuron": "native", "xla": "xla"}


class FlavourError(ValueError):
    """A flavour that the frame (SDK release, chip, backend) does not have."""


@dataclass(frozen=True, slots=True)
class Flavour:
    """What the fixes write: portable PyTorch, or the Neuron or XLA spelling."""

    name: str
    # torch-xla 2.8 renamed xm.xla_device()/xm.mark_step() to torch_xla.device()/torch_xla.sync();
    # the new names are used when every torch-xla of the release has them.
    xla_new_api: bool = True

    def xla_module(self) -> tuple[str, str | None]:
        """The module the XLA device and sync calls live on (and the alias to import it as)."""
        return ("torch_xla", None) if self.xla_new_api else ("torch_xla.core.xla_model", "xm")

    def xla_device(self, base: str) -> str:
        return f"{base}.device()" if self.xla_new_api else f"{base}.xla_device()"

    def xla_sync(self, base: str) -> str:
        return f"{base}.sync()" if self.xla_new_api else f"{base}.mark_step()"


def flavour_for(name: str, ctx: Context, db: RuleDB) -> Flavour:
    """The flavour `--to name` asks for, checked against the frame; FlavourError when it lacks it."""
    if name not in FLAVOURS:
        raise FlavourError(f"unknown --to {name!r}; expected one of: {', '.join(FLAVOURS)}")
    if name == "portable":
        return Flavour(name)
    backend = _BACKEND[name]
    if ctx.backend != backend:
        release = db.release(ctx.sdk)
        usable = release.backends_for(ctx.target)
        hint = (
            f" (use --backend {backend})"
            if backend in usable
            else f" (Neuron SDK {ctx.sdk} offers {', '.join(usable) or 'no backend'} on {ctx.target})"
        )
        raise FlavourError(
            f"--to {name} needs the {backend} backend, but the frame is Neuron SDK {ctx.sdk} on "
            f"{ctx.target} with the {ctx.backend} backend{hint}"
        )
    if name == "xla":
        versions = db.release(ctx.sdk).backends.get("xla", {}).get("torch_xla", ())
        new = bool(versions) and all(_version(v) >= (2, 8) for v in versions)
        return Flavour(name, xla_new_api=new)
    return Flavour(name)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())
