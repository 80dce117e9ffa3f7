"""Helper functions of a module whose every return value is on the host.

`def maybe_zero_3(param): ... return param.detach().cpu().clone()`, a method that ends with
`data.to_numpy(); return data`, `def load(path): return torch.from_numpy(np.load(path))`: a call of
such a helper in the same module gives a host value, so reading it (`.cpu()`, `.item()`,
`.tolist()`) copies nothing from a device.

The judgement is syntactic and runs once per file, on first use: each module-level function and
each method of a module-level class is read statement by statement, with the names it assigns
tracked as host or not (a branch keeps a name host only if every way through it does; a loop or
`try` body may not run). A helper qualifies when it has at least one `return` of a value and every
`return` gives a host value (or `None`). Calls between helpers are followed; a cycle counts as not
host. Parameters are not host (a helper that returns its argument, moved or not, is left alone).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from neuronlint.static.calls import CPU_DEVICE_NAMES, name_of
from neuronlint.static.nodes import children_of

# Methods whose result is on the host, whatever they are called on.
_HOST_RESULTS = frozenset({"cpu", "numpy", "tolist", "item", "to_numpy"})
# Methods that move a value to a device.
_DEVICE_MOVES = frozenset({"cuda", "xla", "neuron", "npu", "mps"})
# Methods that keep a value where it is (a tensor's view, copy or cast).
_KEEPS_PLACE = frozenset(
    {
        "clone",
        "detach",
        "float",
        "half",
        "double",
        "long",
        "int",
        "bool",
        "contiguous",
        "view",
        "reshape",
        "flatten",
        "squeeze",
        "unsqueeze",
        "permute",
        "transpose",
        "t",
        "copy",
        "astype",
    }
)
# Methods called as a statement that convert a container's values in place
# (`mask_data.to_numpy()`): the name holds host values afterwards.
IN_PLACE_CONVERSIONS = frozenset({"to_numpy"})

Key = tuple[str | None, str]  # (class name or None, function name)


class HostReturns:
    """Which functions of one module return host values; `resolve` gives a dotted name's module
    path (`np.asarray` -> `numpy.asarray`) from the module's imports."""

    def __init__(
        self,
        module: cst.Module,
        resolve: Callable[[cst.BaseExpression], str | None],
        host_roots: frozenset[str],
        host_constructors: frozenset[str],
        generators: bool = True,
    ):
        """`generators`: whether the module may define one (False: its text has no `yield`)."""
        self._generators = generators
        self._resolve = resolve
        self._host_roots = host_roots
        self._constructors = host_constructors
        self._functions: dict[Key, cst.FunctionDef] = {}
        for statement in module.body:
            if type(statement) is cst.FunctionDef:
                self._functions[(None, statement.name.value)] = statement
            elif type(statement) is cst.ClassDef:
                for item in statement.body.body:
                    if type(item) is cst.FunctionDef:
                        self._functions[(statement.name.value, item.name.value)] = item
        self._answers: dict[Key, bool] = {}

    def returns_host(self, key: Key) -> bool:
        answer = self._answers.get(key)
        if answer is not None:
            return answer
        function = self._functions.get(key)
        if (
            function is None
            or function.asynchronous is not None
            or (self._generators and _is_generator(function))
        ):
            self._answers[key] = False
            return False
        self._answers[key] = False  # while it is being read: a cycle counts as not host
        flow = _Flow(self, key[0])
        flow.block(function.body)
        answer = flow.returned_host and not flow.returned_other
        self._answers[key] = answer
        return answer

    # ---- expressions ------------------------------------------------------------------------
    def host_expr(self, node: cst.BaseExpression, names: dict[str, bool], cls: str | None) -> bool:
        tp = type(node)
        if tp is cst.Name:
            return names.get(node.value, False)
        if tp in (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
            return True
        if tp is cst.Subscript or (tp is cst.Attribute and self._resolve(node) is None):
            return self.host_expr(node.value, names, cls)  # `out[0]`, `out.logits` of a host value
        if tp in (cst.Tuple, cst.List, cst.Dict):
            # every element plain (no `*x` / `**x`) and a host value; a dict's values, not its keys
            element = cst.DictElement if tp is cst.Dict else cst.Element
            values = [e.value for e in node.elements if type(e) is element]
            return (
                bool(values)
                and len(values) == len(node.elements)
                and all(self.host_expr(v, names, cls) for v in values)
            )
        if tp is cst.DictComp:
            return self.host_expr(node.value, names, cls)
        if tp is cst.ListComp:
            return self.host_expr(node.elt, names, cls)
        if tp is cst.Call:
            return self._host_call(node, names, cls)
        return False

    def _host_call(self, node: cst.Call, names: dict[str, bool], cls: str | None) -> bool:
        func = node.func
        qualified = self._resolve(func)
        if qualified is not None:
            return qualified.split(".", 1)[0] in self._host_roots or qualified in self._constructors
        if type(func) is cst.Name:
            return self.returns_host((None, func.value))
        if type(func) is not cst.Attribute:
            return False
        method = func.attr.value
        receiver = func.value
        if type(receiver) is cst.Name and receiver.value == "self" and cls is not None:
            if (cls, method) in self._functions:
                return self.returns_host((cls, method))
        if method in _HOST_RESULTS:
            return True
        if method in _DEVICE_MOVES:
            return False
        if method == "to":
            if _names_cpu(node):
                return True
            if not _only_cast(node, self._resolve):
                return False
            return self.host_expr(receiver, names, cls)
        if method in _KEEPS_PLACE:
            return self.host_expr(receiver, names, cls)
        return False


def _names_cpu(call: cst.Call) -> bool:
    """`.to("cpu")`, `.to(device="cpu")`, `.to(torch.device("cpu"))`."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "device":
            value = arg.value
            if type(value) is cst.Call and value.args:
                value = value.args[0].value
            if type(value) in (cst.Name, cst.Attribute):
                return name_of(value) in CPU_DEVICE_NAMES  # `.to(self.cpu_device)`
            return type(value) is cst.SimpleString and value.value[1:-1] == "cpu"
    return False


def _only_cast(call: cst.Call, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """`.to(torch.float32)`, `.to(dtype=...)`: a cast that keeps the value where it is."""
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in ("dtype", "non_blocking", "copy", "memory_format"):
                return False
        else:
            qualified = resolve(arg.value) or ""
            if not qualified.startswith("torch.") or qualified == "torch.device":
                return False
    return bool(call.args)


def _is_generator(function: cst.FunctionDef) -> bool:
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Yield:
            return True
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend(children_of(node))  # LibCST's `children` runs a visitor: slow
    return False


class _Flow:
    """One function read statement by statement: which names hold host values at each point."""

    def __init__(self, owner: HostReturns, cls: str | None):
        self.owner = owner
        self.cls = cls
        self.names: dict[str, bool] = {}
        self.returned_host = False
        self.returned_other = False

    def block(self, body: cst.BaseSuite) -> None:
        if type(body) is cst.IndentedBlock:
            for statement in body.body:
                self.statement(statement)
        elif type(body) is cst.SimpleStatementSuite:
            for small in body.body:
                self.small(small)

    def branches(self, *bodies: cst.BaseSuite | None) -> None:
        """Bodies of which exactly one runs (a `None` body: nothing runs on that way)."""
        before = dict(self.names)
        results = []
        for body in bodies:
            self.names = dict(before)
            if body is not None:
                self.block(body)
            results.append(self.names)
        keys = set().union(*results)
        self.names = {k: all(r.get(k, False) for r in results) for k in keys}

    def statement(self, node: cst.CSTNode) -> None:
        tp = type(node)
        if tp is cst.SimpleStatementLine:
            for small in node.body:
                self.small(small)
        elif tp is cst.If:
            orelse = node.orelse
            if orelse is None:
                self.branches(node.body, None)
            elif type(orelse) is cst.If:
                wrapper = cst.IndentedBlock(body=[orelse])
                self.branches(node.body, wrapper)
            else:
                self.branches(node.body, orelse.body)
        elif tp is cst.With:
            for item in node.items:
                if item.asname is not None:
                    self.assign(item.asname.name, None)
            self.block(node.body)
        elif tp in (cst.For, cst.While):
            if tp is cst.For:
                self.assign(node.target, None)
            self.branches(node.body, None)
            if node.orelse is not None:
                self.branches(node.orelse.body, None)
        elif tp is cst.Try:
            self.branches(node.body, None, *(h.body for h in node.handlers))
            if node.orelse is not None:
                self.branches(node.orelse.body, None)
            if node.finalbody is not None:
                self.block(node.finalbody.body)
        elif tp in (cst.FunctionDef, cst.ClassDef):
            self.names[node.name.value] = False
        else:
            self.returned_other = True  # match statements and anything else: not followed

    def small(self, node: cst.BaseSmallStatement) -> None:
        tp = type(node)
        if tp is cst.Return:
            value = node.value
            if value is None or (type(value) is cst.Name and value.value == "None"):
                return
            if self.owner.host_expr(value, self.names, self.cls):
                self.returned_host = True
            else:
                self.returned_other = True
        elif tp is cst.Assign:
            for target in node.targets:
                self.assign(target.target, node.value)
        elif tp is cst.AnnAssign:
            if node.value is not None:
                self.assign(node.target, node.value)
        elif tp is cst.AugAssign:
            self.assign(node.target, None)
        elif tp is cst.Expr:
            call = node.value
            if (
                type(call) is cst.Call
                and not call.args
                and type(call.func) is cst.Attribute
                and call.func.attr.value in IN_PLACE_CONVERSIONS
                and type(call.func.value) is cst.Name
            ):
                self.names[call.func.value.value] = True  # `data.to_numpy()`: converted in place

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if type(target) is cst.Name:
            self.names[target.value] = value is not None and self.owner.host_expr(value, self.names, self.cls)
        elif type(target) in (cst.Tuple, cst.List):
            for element in target.elements:
                self.assign(element.value, None)
