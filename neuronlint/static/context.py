"""Per-file analysis state: scopes with import aliases and constants, ancestors, detections.

Name resolution is our own, not LibCST's QualifiedNameProvider: that provider multiplies parse
cost by about seven, while the questions we ask ("does this name mean torch.cuda?") need only the
import table and simple assignments of the enclosing scopes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

# A binding: what a local name stands for.
#   ("module", "torch.cuda")   import alias or alias assignment (qualified name)
#   ("str", ("cuda", "cpu"))   a name assigned string constants
#   ("numpy", "")              a value produced by numpy (methods like .item() are host-side already)
#   ("kernel", "triton")       a function decorated as a GPU kernel in this module
Binding = tuple[str, Any]


@dataclass(slots=True)
class Detection:
    """A construct found in source, before the database turns it into a Finding for an SDK and chip."""

    rule: str
    node: cst.CSTNode
    facts: dict[str, Any]
    anchor: cst.CSTNode  # node whose source is the fingerprint snippet
    end_node: cst.CSTNode | None = None  # when the span runs past `node` (e.g. `.cuda()` up to its ')')
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    snippet: str = ""


@dataclass(slots=True)
class Scope:
    kind: str  # module | function | class | lambda
    bindings: dict[str, Binding] = field(default_factory=dict)
    loop_depth: int = 0


_WS = re.compile(r"\s+")


class FileContext:
    """What checkers see: resolution helpers, the ancestor chain and a way to report."""

    def __init__(self, path: str, module: cst.Module, module_name: str, static_data: Any):
        self.path = path
        self.module = module
        self.module_name = module_name  # dotted module name of this file within the scan, e.g. "pkg.models.gpt"
        self.data = static_data  # StaticData from the rule database (library tables, …)
        self.scopes: list[Scope] = [Scope("module")]
        self.parents: list[cst.CSTNode] = []  # ancestors of the node being visited, outermost first
        self.detections: list[Detection] = []
        self._seen: set[tuple[str, int]] = set()
        # Cross-file facts gathered while walking (kept in the cache with the detections).
        self.imports: set[str] = set()  # absolute module names imported by this file
        self.defines_kernels: list[str] = []  # kinds of GPU kernels this file defines
        self.extension_modules: set[str] = set()  # names of compiled extensions this file builds
        self.has_training_loop = False

    # ---- scopes ---------------------------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def bind(self, name: str, binding: Binding) -> None:
        self.scope.bindings[name] = binding

    def unbind(self, name: str) -> None:
        self.scope.bindings.pop(name, None)

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.scopes):
            found = scope.bindings.get(name)
            if found is not None:
                return found
            # Class bodies do not enclose the functions defined in them.
        return None

    @property
    def in_loop(self) -> bool:
        return self.scope.loop_depth > 0

    # ---- resolution -----------------------------------------------------------------------
    def qualname(self, node: cst.CSTNode | None) -> str | None:
        """'tc.synchronize' -> 'torch.cuda.synchronize' when tc is an alias of torch.cuda."""
        if isinstance(node, cst.Name):
            binding = self.lookup(node.value)
            if binding is not None and binding[0] == "module":
                return binding[1]
            return None
        if isinstance(node, cst.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def strings(self, node: cst.CSTNode | None) -> tuple[str, ...] | None:
        """Constant string values an expression may take; f-string fields become '{}'."""
        if isinstance(node, cst.SimpleString):
            try:
                value = node.evaluated_value
            except Exception:  # noqa: BLE001 - malformed escapes are the parser's problem, not ours
                return None
            return (value,) if isinstance(value, str) else None
        if isinstance(node, cst.FormattedString):
            parts = []
            for part in node.parts:
                parts.append(part.value if isinstance(part, cst.FormattedStringText) else "{}")
            return ("".join(parts),)
        if isinstance(node, cst.ConcatenatedString):
            left, right = self.strings(node.left), self.strings(node.right)
            if left and right:
                return tuple(a + b for a in left for b in right)
            return None
        if isinstance(node, cst.IfExp):
            body, orelse = self.strings(node.body), self.strings(node.orelse)
            if body or orelse:
                return (body or ()) + (orelse or ())
            return None
        if isinstance(node, cst.Name):
            binding = self.lookup(node.value)
            if binding is not None and binding[0] == "str":
                return binding[1]
        return None

    def is_numpy(self, node: cst.CSTNode) -> bool:
        """Whether an expression evaluates to a numpy value (heuristic: numpy calls and names bound to them)."""
        while isinstance(node, (cst.Subscript, cst.Attribute)) and not (
            isinstance(node, cst.Attribute) and self.qualname(node)
        ):
            node = node.value
        if isinstance(node, cst.Call):
            func = node.func
            name = self.qualname(func) or ""
            if name.split(".")[0] in ("numpy", "pandas"):
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in ("numpy", "to_numpy"):
                return True
            if isinstance(func, cst.Attribute):
                return self.is_numpy(func.value)
            return False
        if isinstance(node, cst.Name):
            binding = self.lookup(node.value)
            return binding is not None and binding[0] == "numpy"
        name = self.qualname(node) or ""
        return name.split(".")[0] in ("numpy", "pandas")

    def imports_seen(self) -> set[str]:
        """Root packages imported so far ('torch', 'numpy', ...)."""
        return {name.split(".")[0] for name in self.imports}

    # ---- ancestors ------------------------------------------------------------------------
    def parent(self, depth: int = 1) -> cst.CSTNode | None:
        return self.parents[-depth] if len(self.parents) >= depth else None

    def enclosing(self, *types: type) -> cst.CSTNode | None:
        for node in reversed(self.parents):
            if isinstance(node, types):
                return node
        return None

    def anchor_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement-sized piece of code around a node, used as its fingerprint snippet."""
        best = node
        for ancestor in reversed(self.parents):
            if isinstance(ancestor, (cst.BaseSmallStatement, cst.Decorator)):
                return ancestor
            if isinstance(ancestor, (cst.BaseCompoundStatement, cst.BaseSuite, cst.Module)):
                return best
            best = ancestor
        return best

    # ---- reporting ------------------------------------------------------------------------
    def report(self, rule: str, node: cst.CSTNode, end_node: cst.CSTNode | None = None, **facts: Any) -> None:
        key = (rule, id(node))
        if key in self._seen:  # the same node may be reached through two checkers
            return
        self._seen.add(key)
        facts.setdefault("in_loop", self.in_loop)
        self.detections.append(Detection(rule, node, facts, self.anchor_of(node), end_node))

    def snippet(self, node: cst.CSTNode) -> str:
        return _WS.sub(" ", self.module.code_for_node(node)).strip()[:200]
