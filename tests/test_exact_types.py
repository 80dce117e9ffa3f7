"""The static checkers test some LibCST node types with `type(node) is cst.X` (and `type(node) in`
a set of classes) instead of isinstance(): a failing isinstance() on LibCST's ABC-based classes goes
through ABCMeta.__instancecheck__, which measured several times slower on the walk's hot paths.
That is exact only for classes that nothing subclasses; this test finds every class named that way
in the source and checks it. Name resolution's memo of answers (FileContext.qualname) must forget
them when a binding changes; that is observed through real scans."""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst

from neuronlint.static.checkers import api_names
from tests.annotated_source import check

ROOT = Path(__file__).resolve().parent.parent
STATIC = sorted((ROOT / "neuronlint" / "static").rglob("*.py"))
_TYPE_IS = re.compile(r"\btype\((?:[^()]|\([^()]*\))*\) is (?:not )?cst\.(\w+)|\btp is (?:not )?cst\.(\w+)")


def _named_classes() -> set[str]:
    names: set[str] = set()
    for path in STATIC:
        for match in _TYPE_IS.finditer(path.read_text(encoding="utf-8")):
            names.add(match.group(1) or match.group(2))
    return names


def test_classes_compared_by_type_have_no_subclasses():
    names = _named_classes()
    assert {"Name", "Attribute", "Subscript", "ConcatenatedString"} <= names  # the scan finds them
    for name in sorted(names):
        cls = getattr(cst, name)
        assert cls.__subclasses__() == [], f"cst.{name} has subclasses; type() is would miss them"
    for cls in api_names._NOT_A_USE_TYPES:
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
