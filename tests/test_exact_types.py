"""The static checkers test some LibCST node types with `type(node) is cst.X` (and `type(node) in`
a set of classes) instead of isinstance(): a failing isinstance() on LibCST's ABC-based classes goes
through ABCMeta.__instancecheck__, which measured several times slower on the walk's hot paths.
That is exact only for classes that nothing subclasses; this test finds every class named that way
in the source and checks it. Name resolution's memo of answers (FileContext.qualname) must forget
them when a binding changes; that is observed through real scans."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from neuronlint.static import nodes
from tests.annotated_source import check

ROOT = Path(__file__).resolve().parent.parent
STATIC = sorted((ROOT / "neuronlint" / "static").rglob("*.py"))
_EXACT = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def _compared_by_type(source: str) -> set[str]:
    """Names X of every `cst.X` compared with `type(...)` (`type(n) is cst.X`, `type(n) in (cst.A,
    cst.B)`, `tp is cst.X` after `tp = type(n)`), found by parsing the source (not by a pattern)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Comparison(self, node: cst.Comparison) -> None:
            left = node.left
            by_type = (
                isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "type"
            ) or (isinstance(left, cst.Name) and left.value == "tp")
            if not by_type:
                return
            for target in node.comparisons:
                if isinstance(target.operator, _EXACT):
                    found.update(_attributes(target.comparator))

    cst.parse_module(source).visit(Finder())
    return found


def _attributes(node: cst.CSTNode) -> list[str]:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "cst":
        return [node.attr.value]
    if isinstance(node, cst.Tuple):
        return [name for element in node.elements for name in _attributes(element.value)]
    return []


def test_classes_compared_by_type_have_no_subclasses():
    names: set[str] = set()
    for path in STATIC:
        names |= _compared_by_type(path.read_text(encoding="utf-8"))
    assert {"Name", "Attribute", "Subscript", "ConcatenatedString", "Call", "If", "FunctionDef"} <= names
    for name in sorted(names):
        cls = getattr(cst, name)
        assert cls.__subclasses__() == [], f"cst.{name} has subclasses; a type() test would miss them"
    for cls in nodes._NOT_A_USE:
        assert cls.__subclasses__() == [], cls


def test_rebinding_a_name_forgets_what_it_resolved_to(tmp_path):
    check(
        tmp_path,
        """
        import torch.cuda as tc
        import torch

        tc.synchronize()  # expect: NL102
        tc = object()
        tc.synchronize()
        torch.cuda.synchronize()  # expect: NL102


        def f(tc):
            tc.synchronize()


        def g():
            import torch.cuda as tc

            tc.synchronize()  # expect: NL102
        """,
    )
