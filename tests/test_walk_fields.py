"""The engine's walk reads only the fields that may hold nodes and does not push leaves; it must
visit the same nodes, in the same order, with the same `ctx.parents` at every handler call, as a
walk that reads every field and pushes every node (the walk before that was cut)."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from types import SimpleNamespace

import libcst as cst
import pytest

from neuronlint.static import engine, nodes

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "neuronlint").rglob("*.py")) + sorted((ROOT / "fixtures").rglob("*.py"))
TYPES = nodes.node_types()


def _every_field(tp: type) -> tuple[str, ...]:
    """The fields the walk read before text-only fields were left out."""
    return tuple(
        f.name
        for f in dataclasses.fields(tp)
        if f.name not in nodes._SKIP_FIELDS and not f.name.startswith("whitespace")
    )


def _reference(module: cst.Module, record: list) -> None:
    parents: list[cst.CSTNode] = []

    def visit(node: cst.CSTNode) -> None:
        record.append(("enter", id(node), tuple(map(id, parents))))
        parents.append(node)
        if type(node) not in engine._OPAQUE:
            for name in _every_field(type(node)):
                value = getattr(node, name)
                if type(value) in TYPES:
                    visit(value)
                elif type(value) in (tuple, list):
                    for item in value:
                        if type(item) in TYPES:
                            visit(item)
        parents.pop()
        record.append(("leave", id(node), tuple(map(id, parents))))

    visit(module)


def _walked(module: cst.Module) -> list:
    record: list = []
    ctx = SimpleNamespace(parents=[])

    def enter(node: cst.CSTNode, ctx: SimpleNamespace) -> None:
        record.append(("enter", id(node), tuple(map(id, ctx.parents))))

    def leave(node: cst.CSTNode, ctx: SimpleNamespace) -> None:
        record.append(("leave", id(node), tuple(map(id, ctx.parents))))

    recording = engine.Engine([])
    recording.plan = {tp: ((enter,), fields, (leave,)) for tp, (_, fields, _) in recording.plan.items()}
    engine.walk(module, ctx, recording)  # type: ignore[arg-type]
    assert ctx.parents == []
    return record


def _check(source: bytes) -> None:
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return
    expected: list = []
    _reference(module, expected)
    assert _walked(module) == expected


def test_leaves_have_no_fields_to_walk() -> None:
    for tp in (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.FormattedStringText, cst.Ellipsis):
        assert nodes.node_fields(tp) == ()
    assert "value" in nodes.node_fields(cst.Attribute) and "attr" in nodes.node_fields(cst.Attribute)
    assert nodes.node_fields(cst.FormattedString) == ("parts",)  # not `start`/`end`: text


def test_left_out_fields_are_declared_as_text() -> None:
    for tp in TYPES:
        hints = typing.get_type_hints(tp)
        for name in set(_every_field(tp)) - set(nodes.node_fields(tp)):
            assert nodes._text_only(hints[name]), (tp.__name__, name)


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: str(p.relative_to(ROOT)))
def test_same_visits_as_every_field_on_own_sources(path: Path) -> None:
    _check(path.read_bytes())


def test_same_visits_on_every_construct() -> None:
    _check(
        b"""
from a import (b as c, d)
import e.f as g
@dec(x=1)
async def h(p: int = 2, /, *args, q: "str" = 'x', **kw) -> None:
    global z
    async with a as (b, c), d:
        async for i in range(3):
            yield from (x async for x in y if x)
    match p:
        case [1, *rest] | {"k": v, **others} if v:
            pass
        case Point(x=0, y=_) as pt:
            del pt
    t = f"{a!r:>{w}} {b=}" "tail" r'\\d'
    lam = lambda *a, k=1: (a, k)
    s = {1, 2} | {k: v for k, v in d.items()}
    n = -1 ** 2 @ m[1:2, ::3, ...]
    try:
        raise E from None
    except* (A, B) as e:
        assert e, "msg"
    finally:
        nonlocal_ = 1j + 1.5e3
    while n := n - 1:
        break
    else:
        continue
type Alias[T: int, *Ts, **P] = list[T]
class K[T](Base, metaclass=M):
    x: int = 1; y += 2
"""
    )


def test_field_text_on_real_files() -> None:
    """Every value in a left-out field of a real file's nodes is text (None, a str), never a node."""
    for path in SOURCES[1::5]:
        module = cst.parse_module(path.read_bytes())
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            tp = type(node)
            for name in _every_field(tp):
                value = getattr(node, name)
                if name not in nodes.node_fields(tp):
                    assert value is None or type(value) is str, (path, tp.__name__, name)
                elif type(value) in TYPES:
                    stack.append(value)
                elif type(value) in (tuple, list):
                    stack.extend(item for item in value if type(item) in TYPES)
