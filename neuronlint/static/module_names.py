"""Receivers that name an `nn.Module`, not a tensor: `model.to("cpu")` / `model.cpu()` moves weights
and reads no value; `model.to(device)` moves a module, not a tensor."""

from __future__ import annotations

import re

import libcst as cst

# Receivers that name a module, not a tensor: `model.to("cpu")` / `model.cpu()` moves weights, it
# reads no value (before an export or a CPU evaluation).
_MODULE_NAME = re.compile(
    r"(^|_)(model|module|net|network|encoder|decoder|backbone|head|transformer|unet|vae|pipe|"
    r"pipeline|policy|critic|classifier|embedder|submodule|teacher|student|ema_model|embed_tokens|"
    r"lm_head)s?$|^(layer|block)s?$",
    re.IGNORECASE,
)


# Loaders that return a model: `AutoModelForCausalLM.from_pretrained(path).to("cpu")` moves weights.
_MODEL_LOADERS = frozenset({"from_pretrained", "from_config", "from_single_file"})


# Functions named for making a model: `create_model(cfg)`, `build_vae(...)`, `load_unet(path)`.
_MODEL_MAKER = re.compile(
    r"^(create|build|load|get|make|init|instantiate)_(\w+_)?"
    r"(model|module|net|network|encoder|decoder|backbone|unet|vae|pipeline|transformer)$",
    re.IGNORECASE,
)


def names_module(receiver: cst.BaseExpression) -> bool:
    """`model`, `self.encoder`, `ddp_model.module`, `layers[0]`, `Auto*.from_pretrained(...)`,
    `create_model(cfg)`: the receiver is an `nn.Module` by its name or by the loader that made it."""
    if type(receiver) is cst.Call:
        func = receiver.func
        name = func.attr.value if type(func) is cst.Attribute else getattr(func, "value", None)
        if type(func) is cst.Attribute and name in _MODEL_LOADERS:
            return True
        if name == "deepcopy" and len(receiver.args) == 1:
            return names_module(receiver.args[0].value)  # `copy.deepcopy(ema_net)`
        return isinstance(name, str) and bool(_MODEL_MAKER.match(name))
    if type(receiver) is cst.Subscript:
        # `layers[0]`, `self.blocks[i]`: one of a list of modules; not an entry of a state dict
        # (`tp_models[j]["model"][key]`)
        index = receiver.slice[0].slice
        if type(receiver.value) not in (cst.Name, cst.Attribute) or type(index) is not cst.Index:
            return False
        return type(index.value) in (cst.Name, cst.Integer) and names_module(receiver.value)
    name = receiver.attr.value if type(receiver) is cst.Attribute else getattr(receiver, "value", None)
    return isinstance(name, str) and bool(_MODULE_NAME.search(name))
