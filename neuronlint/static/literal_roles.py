"""Where a string literal stands, for checkers that judge device and backend names by their position.

`"cuda"` means different things in `x.to("cuda")` (a device in use), `device == "cuda"` (a test),
`{"cuda": torch.cuda.empty_cache}` (the key of a per-device dispatch table), `choices=["cuda", "cpu"]`
or `Literal["nccl", "gloo"]` (a list of what is allowed) and `hasattr(torch.backends, "cuda")` (an
attribute name), and nothing at all in `print("cuda")` or `logger.info("using nccl")` (the text of a
message). Checkers ask `literal_role` once and decide per role.
"""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.static.calls import name_of
from neuronlint.static.context import FileContext, owner_names

ROLE_VALUE = "value"  # used as a value: an argument, a default, an assignment, a dict value
ROLE_TEST = "test"  # compared: ==, !=, in, not in (also as a member of the compared collection), `case`, .startswith()
ROLE_KEY = "key"  # a dict key, a subscript index, a class's `name = "..."`: it names an entry of a table
ROLE_OPTION = "option"  # an element of `choices=[...]` or of `typing.Literal[...]`: it lists what is allowed
ROLE_ATTRIBUTE = "attribute"  # an attribute name given to getattr/hasattr/setattr/delattr/patch.object
ROLE_MESSAGE = "message"  # an argument of print(), a logging call, warnings.warn or an exception: text
ROLE_PATH = "path"  # a part of a filesystem path: os.path.join(src, "cuda"), Path(...) / "cuda", glob

_ATTRIBUTE_FUNCTIONS = frozenset(
    {"getattr", "hasattr", "setattr", "delattr", "object"}
)  # `object`: mock.patch.object
_TEST_METHODS = frozenset({"startswith", "endswith", "__contains__"})
_CONTAINERS = (cst.Element, cst.List, cst.Tuple, cst.Set)
# Calls whose string arguments are parts of a filesystem path (`os.path.join(extensions_dir, "cuda",
# "*.cu")` in a build file names the folder of the CUDA sources, not a device).
_PATH_FUNCTIONS = frozenset({"join", "joinpath", "Path", "PurePath", "glob", "iglob"})
# Methods of a logger (`logger.info(...)`, `logging.warning(...)`, `log.debug(...)`) and
# `warnings.warn`: what they are given is the text of a message.
_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "critical", "exception", "fatal", "log"}
)
_LOGGER_NAME = re.compile(r"log|warnings", re.IGNORECASE)
_EXCEPTION_NAME = re.compile(r"(Error|Exception|Warning)$")


def _prints_message(call: cst.Call, ctx: FileContext) -> bool:
    """`print(...)`, `logger.info(...)`, `logging.warning(...)`, `warnings.warn(...)`,
    `ValueError(...)`: a call whose arguments are the text it shows (the built-in `print` only)."""
    func = call.func
    if type(func) is cst.Name:
        if func.value == "print":
            return ctx.lookup("print") is None
        return bool(_EXCEPTION_NAME.search(func.value))
    if type(func) is not cst.Attribute:
        return False
    if func.attr.value not in _LOG_METHODS:
        return bool(_EXCEPTION_NAME.search(func.attr.value))
    return any(_LOGGER_NAME.search(name) for name in owner_names(func.value))


def literal_role(node: cst.CSTNode, ctx: FileContext) -> str:
    """The role of the literal `node`, which must be the node being visited (ctx.parents are its ancestors)."""
    parents = ctx.parents
    child: cst.CSTNode = node
    for index in range(len(parents) - 1, -1, -1):
        parent = parents[index]
        if isinstance(parent, _CONTAINERS):
            child = parent  # `x in ["cuda", "xpu"]`, `("cuda", 7): ...`: judge the collection by its place
            continue
        if type(parent) is cst.ConcatenatedString:
            child = parent  # `"cu" "da"`, `"using " f"{x}"`: the string as a whole stands there
            continue
        if type(parent) is cst.DictElement:
            return ROLE_KEY if parent.key is child else ROLE_VALUE
        if type(parent) in (cst.Comparison, cst.ComparisonTarget, cst.MatchValue):
            return ROLE_TEST
        if type(parent) is cst.Index:
            subscript = parents[index - 2] if index >= 2 else None
            if type(subscript) is cst.Subscript and name_of(subscript.value) == "Literal":
                return ROLE_OPTION
            return ROLE_KEY
        if type(parent) is cst.Annotation:
            return ROLE_OPTION
        if type(parent) is cst.Arg:
            call = parents[index - 1] if index >= 1 else None
            if parent.keyword is not None and parent.keyword.value == "choices":
                return ROLE_OPTION
            if type(call) is cst.Call:
                if child is parent.value and _prints_message(call, ctx):
                    return ROLE_MESSAGE  # `print("cuda")`, `logger.info("nccl")`: the text of a message
                name = name_of(call.func)
                if name in _ATTRIBUTE_FUNCTIONS and len(call.args) > 1 and call.args[1] is parent:
                    # monkeypatch.setattr("pkg.mod.device", "cuda") takes a dotted path first: then the value follows
                    if type(call.args[0].value) not in (cst.SimpleString, cst.ConcatenatedString):
                        return ROLE_ATTRIBUTE
                if name in _TEST_METHODS:
                    return ROLE_TEST
                if name in _PATH_FUNCTIONS and _path_call(call):
                    return ROLE_PATH
            return ROLE_VALUE
        if type(parent) is cst.BinaryOperation and type(parent.operator) is cst.Divide:
            return ROLE_PATH  # `root / "cuda"`: a string divides nothing but a path
        if type(parent) is cst.Assign and _registry_name(parent, child, ctx):
            return ROLE_KEY
        return ROLE_VALUE
    return ROLE_VALUE


def _path_call(call: cst.Call) -> bool:
    """A path-building call: `join` only as a path function (`os.path.join`, `osp.join`), not a
    string's `",".join([...])`, which may join device names."""
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "join":
        return type(func.value) not in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
    return True


def _registry_name(assign: cst.Assign, value: cst.CSTNode, ctx: FileContext) -> bool:
    """`class DeviceNeuron(Device): name = "neuron"`: the class's name in a registry of its kind (a
    key users select it by), not a device or backend the code uses."""
    return (
        assign.value is value
        and ctx.scope.kind == "class"
        and len(assign.targets) == 1
        and type(assign.targets[0].target) is cst.Name
        and assign.targets[0].target.value == "name"
    )
