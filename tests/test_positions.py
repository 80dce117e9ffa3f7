"""Positions come from per-statement code generation; they must equal whole-module generation exactly."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from neuronlint.ruledb import load_ruledb
from neuronlint.static import positions
from neuronlint.static.context import FileContext
from neuronlint.static.data import build_static_data
from neuronlint.static.engine import default_engine, walk
from tests.conftest import FIXTURES, scan_source

TRICKY = '''\
import torch


def a():
    if not torch.cuda.is_available():
        pass


def b(x):
    if x:
        pass
    elif not torch.cuda.is_available():
        pass
    y = x.cuda()
    y = x.cuda()
    with torch.no_grad():
        z = x.item(); w = x.tolist()


class C:
    """    y = x.cuda()"""

    @torch.compile(mode="max-autotune")
    def f(self, x):
        return x.to(
            "cuda"
        )
'''


# An `elif` generated on its own reads `if ...`, which here also occurs verbatim in another function.
ELIF_CASE = """\
import pytest
import torch


def skip_without_backend(name: str) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs the GPU backend")


def run(name, mode) -> None:
    if mode != 1:
        skip_without_backend(name)
    elif not torch.cuda.is_available():
        pytest.skip("needs the GPU backend")
"""


def _both(source: bytes) -> tuple[dict, dict]:
    module = cst.parse_module(source)
    ctx = FileContext("t.py", module, "t", build_static_data(load_ruledb()))
    walk(module, ctx, default_engine(ctx.data))
    targets = [(d.node, d.top, d.stmt, d.indents) for d in ctx.detections]
    fast = positions.locate(module, source, targets)
    whole = positions._whole_module(module, {id(n) for n, _, _, _ in targets})
    return fast, whole


def test_tricky_statements_match_whole_module_generation() -> None:
    fast, whole = _both(TRICKY.encode())
    assert fast and fast == whole


def test_elif_is_reported_on_its_own_line(tmp_path: Path) -> None:
    fast, whole = _both(ELIF_CASE.encode())
    assert fast == whole
    findings = scan_source(tmp_path, ELIF_CASE, select=["NL106"])
    assert [(f.line, f.column) for f in findings] == [(6, 12), (13, 14)]
    assert [f.line for f in scan_source(tmp_path, TRICKY, select=["NL106"])] == [5, 12]


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.py")), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_positions_match_whole_module_generation(path: Path) -> None:
    fast, whole = _both(path.read_bytes())
    assert fast == whole


# Findings on the first line of long statements (generation stops at the end of that line), first
# lines that occur twice with different continuations (the whole statement decides), whole
# statements that occur twice (the stdlib parser's statement starts decide), and a last line
# without a newline.
PREFIX_CASE = """\
import torch


def a(x):
    y = x.cuda(); z = torch.zeros(
        3,
        4,
    )
    w = torch.zeros(3, device="cuda").sum(
        dim=0,
    )
    w = torch.zeros(3, device="cuda").sum(
        dim=1,
    )
    return w


def b(x):
    w = torch.zeros(3, device="cuda").sum(
        dim=0,
    )
    return w.cuda(
        0
    ).item()
v = torch.zeros(1).cuda()"""


def test_statement_prefixes_match_whole_module_generation() -> None:
    import ast

    source = PREFIX_CASE.encode()
    fast, whole = _both(source)
    assert fast and fast == whole
    module = cst.parse_module(source)
    ctx = FileContext("t.py", module, "t", build_static_data(load_ruledb()))
    walk(module, ctx, default_engine(ctx.data))
    targets = [(d.node, d.top, d.stmt, d.indents) for d in ctx.detections]
    same_module_whole = positions._whole_module(module, {id(n) for n, _, _, _ in targets})
    assert positions.locate(module, source, targets, ast.parse(source)) == same_module_whole  # guard's tree


# The same statement text several times inside one module-level statement, in every kind of block:
# the statement's place among its module-level statement's statements is its place in the stdlib
# parser's tree, so the function is not generated as a whole to find them.
REPEATED_CASE = """\
import torch


class Bench:
    def run(self, x, mode):
        torch.cuda.synchronize()
        if mode:
            torch.cuda.synchronize()
        elif mode is None:
            torch.cuda.synchronize()
        else:
            torch.cuda.synchronize()
        for _ in range(3):
            torch.cuda.synchronize()
        else:
            torch.cuda.synchronize()
        while x:
            torch.cuda.synchronize()
        try:
            torch.cuda.synchronize()
        except ValueError:
            torch.cuda.synchronize()
        else:
            torch.cuda.synchronize()
        finally:
            torch.cuda.synchronize()
        with torch.no_grad():
            # a comment before it
            torch.cuda.synchronize()
        if x: y = x.cuda(); torch.cuda.synchronize()
        async def inner():
            async with x:
                torch.cuda.synchronize()
            async for _ in x:
                torch.cuda.synchronize()

        @torch.compile
        def decorated():
            torch.cuda.synchronize()

        @torch.compile
        def decorated():
            torch.cuda.synchronize()
        return torch.cuda.synchronize()


def matched(x, mode):  # a match's cases sit in no indented block: generated alone, their indentation differs
    match mode:
        case 1:
            torch.cuda.synchronize()
        case _:
            y = x.cuda(); torch.cuda.synchronize()
"""


def test_repeated_statements_in_one_definition_match_whole_module_generation(monkeypatch) -> None:
    import ast

    source = REPEATED_CASE.encode()
    module = cst.parse_module(source)
    ctx = FileContext("t.py", module, "t", build_static_data(load_ruledb()))
    walk(module, ctx, default_engine(ctx.data))
    targets = [(d.node, d.top, d.stmt, d.indents) for d in ctx.detections]
    assert len(targets) > 20
    whole = positions._whole_module(module, {id(n) for n, _, _, _ in targets})
    generated: list[type] = []
    original = positions._RecordingState.before_codegen

    def record(self, node):  # which statements are generated from their start
        if not self.tokens:
            generated.append(type(node))
        return original(self, node)

    monkeypatch.setattr(positions._RecordingState, "before_codegen", record)
    assert positions.locate(module, source, targets, ast.parse(source)) == whole
    assert cst.ClassDef not in generated  # no statement of the class needed the class generated whole


def _snippets(source: bytes) -> tuple[dict[int, str], dict[int, str]]:
    """Snippets from the code generated in place for positions, and from code_for_node, by anchor."""
    import ast

    from neuronlint.static.context import snippet_of

    module = cst.parse_module(source)
    ctx = FileContext("t.py", module, "t", build_static_data(load_ruledb()))
    walk(module, ctx, default_engine(ctx.data))
    targets = [(d.node, d.top, d.stmt, d.indents) for d in ctx.detections]
    anchors = {id(d.anchor): d.anchor for d in ctx.detections}
    texts: dict[int, str] = {}
    positions.locate(module, source, targets, ast.parse(source), set(anchors), texts)
    in_place = {key: snippet_of(text) for key, text in texts.items()}
    return in_place, {key: ctx.snippet(anchors[key]) for key in in_place}


@pytest.mark.parametrize(
    "source", [TRICKY, PREFIX_CASE, REPEATED_CASE, ELIF_CASE], ids=["tricky", "prefix", "repeated", "elif"]
)
def test_snippets_generated_in_place_are_the_nodes_own_code(source: str) -> None:
    in_place, alone = _snippets(source.encode())
    assert in_place and in_place == alone


def test_fixture_snippets_generated_in_place_are_the_nodes_own_code() -> None:
    for path in sorted(FIXTURES.rglob("*.py")):
        in_place, alone = _snippets(path.read_bytes())
        assert in_place == alone, path
