"""The parse guard skips subtrees too small to reach a limit; its decisions must equal a full walk's.

`parse_guard._depths(tree, data)` does not walk a subtree whose source is too short to nest past
RISKY_DEPTH or RISKY_BRACKETS. These tests compare it with the full walk (`_depths(tree)`) on
shapes built at and around every limit, on each shape of the hostile-input tests, and on the
repository's own sources and fixtures (real code of every construct the checkers see).
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from neuronlint.static import parse_guard
from neuronlint.static.engine import FileResult

ROOT = Path(__file__).resolve().parent.parent


def _decisions(depth: int, brackets: int) -> tuple:
    """What measure() decides from the two values, and the values it prints (past a MAX limit)."""
    return (
        depth > parse_guard.RISKY_DEPTH,
        brackets > parse_guard.RISKY_BRACKETS,
        depth if depth > parse_guard.MAX_DEPTH else None,
        brackets if brackets > parse_guard.MAX_BRACKETS else None,
    )


def _same(source: bytes) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError):
        return  # measure() never walks what the stdlib parser refuses
    full, bounded = parse_guard._depths(tree), parse_guard._depths(tree, source)
    assert _decisions(*bounded) == _decisions(*full), source[:200]
    assert bounded[0] <= full[0] and bounded[1] <= full[1]


def _shapes() -> dict[str, str]:
    shapes: dict[str, str] = {}
    for n in (20, 30, 38, 39, 40, 41, 45, 60, 99, 100, 101, 120, 499, 501):
        shapes[f"parens_{n}"] = "y = " + "(" * n + "1" + ")" * n
        shapes[f"call_{n}"] = "y = " + "f(" * n + "1" + ")" * n
        shapes[f"list_{n}"] = "y = " + "[" * n + "1" + "]" * n
        shapes[f"subscript_tuple_{n}"] = "y = " + "x[" * n + "1" + ",]" * n
        shapes[f"calls_{n}"] = "y = f" + "()" * n
        shapes[f"genexp_{n}"] = "y = " + "f(" * n + "x" + " for x in y)" * n
        shapes[f"unary_{n}"] = "y = " + "-" * n + "1"
        shapes[f"attr_{n}"] = "y = a" + ".b" * n
        shapes[f"boolop_{n}"] = "y = " + " or ".join(["a"] * n)
        shapes[f"binop_{n}"] = "y = " + "+".join(["1"] * n)
        shapes[f"fstring_{n}"] = "y = f'{" + "(" * min(n, 150) + "x" + ")" * min(n, 150) + "}'"
        shapes[f"multiline_{n}"] = (
            "y = (\n" + "".join(f"    [{i},\n" for i in range(n)) + "0" + "]" * n + "\n)"
        )
        shapes[f"nested_blocks_{n}"] = (
            "".join("    " * i + "if x:\n" for i in range(min(n, 99))) + "    " * min(n, 99) + "pass\n"
        )
        shapes[f"decorated_{n}"] = "@d(" + "[" * n + "1" + "]" * n + ")\ndef f(): pass\n"
        shapes[f"lambda_{n}"] = "y = " + "lambda: " * n + "1"
    return shapes


@pytest.mark.parametrize("name", sorted(_shapes()))
def test_bounded_walk_decides_as_the_full_walk_on_shapes(name: str) -> None:
    _same(_shapes()[name].encode())


def test_bounded_walk_decides_as_the_full_walk_on_the_hostile_shapes() -> None:
    from tests.test_hostile import DEEP_SHAPES

    for source in DEEP_SHAPES.values():
        try:
            ast.parse(source)
        except (SyntaxError, RecursionError, MemoryError):
            continue  # measure() never walks what the stdlib parser refuses
        _same(source.encode())


def test_bounded_walk_decides_as_the_full_walk_on_real_sources() -> None:
    files = sorted(
        p
        for base in ("neuronlint", "tests", "fixtures", "benchmarks", "scripts")
        for p in (ROOT / base).rglob("*.py")
    )
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        with warnings.catch_warnings():
            # benchmarks/accuracy/corpus (laid out, git-ignored) holds others' invalid escapes
            warnings.simplefilter("ignore")
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                continue
            _same(data)


def test_a_non_utf8_source_is_walked_in_full() -> None:
    source = "# -*- coding: latin-1 -*-\ny = ['caf\xe9', " + "[" * 45 + "1" + "]" * 45 + "]\n"
    data = source.encode("latin-1")
    assert not parse_guard._utf8(data)
    assert parse_guard._utf8(b"# coding: utf-8\nx = 1\n") and parse_guard._utf8(b"x = 1\n")
    assert parse_guard.measure(data).risky  # 45 brackets: over RISKY_BRACKETS, found by the full walk


def test_file_result_dict_has_every_field() -> None:
    import dataclasses

    result = FileResult(path="a.py")
    assert list(result.to_dict()) == [f.name for f in dataclasses.fields(FileResult)]


def test_token_count_is_the_number_of_token_matches() -> None:
    """count_tokens counts by byte classes; it must equal the matches of the token pattern."""
    import random
    import re

    pattern = re.compile(rb"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")
    rnd = random.Random(7)
    inputs = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(300))) for _ in range(500)]
    inputs += [b"", b"a", b" ", b".", b"a.", b".a", b"aa bb", b"\xff\xfea_1", "é_x ü\n\t\x0b\x0c".encode()]
    inputs += [path.read_bytes() for path in sorted((ROOT / "neuronlint").rglob("*.py"))]
    for data in inputs:
        assert parse_guard.count_tokens(data) == sum(1 for _ in pattern.finditer(data)), data[:80]
