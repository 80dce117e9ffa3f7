"""Where a string literal stands, for checkers that judge device and backend names by their position.

`"cuda"` means different things in `x.to("cuda")` (a device in use), `device == "cuda"` (a test),
`{"cuda": torch.cuda.empty_cache}` (the key of a per-device dispatch table), `choices=["cuda", "cpu"]`
or `Literal["nccl", "gloo"]` (a list of what is allowed) and `hasattr(torch.backends, "cuda")` (an
attribute name). Checkers ask `literal_role` once and decide per role.
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.context import FileContext

ROLE_VALUE = "value"  # used as a value: an argument, a default, an assignment, a dict value
ROLE_TEST = "test"  # compared: ==, !=, in, not in (also as a member of the compared collection), `case`, .startswith()
ROLE_KEY = "key"  # a dict key or a subscript index: it names an entry of a table
ROLE_OPTION = "option"  # an element of `choices=[...]` or of `typing.Literal[...]`: it lists what is allowed
ROLE_ATTRIBUTE = "attribute"  # an attribute name given to getattr/hasattr/setattr/delattr/patch.object

_ATTRIBUTE_FUNCTIONS = frozenset(
    {"getattr", "hasattr", "setattr", "delattr", "object"}
)  # `object`: mock.patch.object
_TEST_METHODS = frozenset({"startswith", "endswith", "__contains__"})
_CONTAINERS = (cst.Element, cst.List, cst.Tuple, cst.Set)


def _callee_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def literal_role(node: cst.CSTNode, ctx: FileContext) -> str:
    """The role of the literal `node`, which must be the node being visited (ctx.parents are its ancestors)."""
    parents = ctx.parents
    child: cst.CSTNode = node
    for index in range(len(parents) - 1, -1, -1):
        parent = parents[index]
        if isinstance(parent, _CONTAINERS):
            child = parent  # `x in ["cuda", "xpu"]`, `("cuda", 7): ...`: judge the collection by its place
            continue
        if isinstance(parent, cst.DictElement):
            return ROLE_KEY if parent.key is child else ROLE_VALUE
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.MatchValue)):
            return ROLE_TEST
        if isinstance(parent, cst.Index):
            subscript = parents[index - 2] if index >= 2 else None
            if isinstance(subscript, cst.Subscript) and _callee_name(subscript.value) == "Literal":
                return ROLE_OPTION
            return ROLE_KEY
        if isinstance(parent, cst.Annotation):
            return ROLE_OPTION
        if isinstance(parent, cst.Arg):
            call = parents[index - 1] if index >= 1 else None
            if parent.keyword is not None and parent.keyword.value == "choices":
                return ROLE_OPTION
            if isinstance(call, cst.Call):
                name = _callee_name(call.func)
                if name in _ATTRIBUTE_FUNCTIONS and len(call.args) > 1 and call.args[1] is parent:
                    # monkeypatch.setattr("pkg.mod.device", "cuda") takes a dotted path first: then the value follows
                    if not isinstance(call.args[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                        return ROLE_ATTRIBUTE
                if name in _TEST_METHODS:
                    return ROLE_TEST
            return ROLE_VALUE
        return ROLE_VALUE
    return ROLE_VALUE
