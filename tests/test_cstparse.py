"""The scan's LibCST parse skips the per-node validation of the parser's own nodes; its trees must
equal `libcst.parse_module`'s, it must reject what LibCST rejects, and nodes built anywhere else
must still be validated."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from neuronlint.static import cstparse
from tests import mirrors

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "neuronlint").rglob("*.py")) + sorted((ROOT / "fixtures").rglob("*.py"))


def _same_tree(source: bytes) -> None:
    try:
        expected: cst.Module | type = cst.parse_module(source)
    except Exception as exc:  # noqa: BLE001 - what LibCST raises is what the scan must raise
        with pytest.raises(type(exc)):
            cstparse.parse_module(source)
        return
    got = cstparse.parse_module(source)
    assert got.deep_equals(expected) and got.code == expected.code


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_trees_equal_libcst_on_own_sources_and_fixtures(path: Path) -> None:
    _same_tree(path.read_bytes())


@pytest.mark.parametrize(
    "source",
    [b"def f(:\n", b"x = (1,\n", b"print 'py2'\n", b"\xff\xfe\n", b"", b"a = 1\r\nb = 2", b"\tif x:\n  y\n"],
)
def test_broken_sources_fail_as_in_libcst(source: bytes) -> None:
    _same_tree(source)


def test_real_files_from_public_repositories() -> None:
    """Every `.py` file of one real repository (the local peft mirror, read here, never committed)."""
    repo = "huggingface/peft"
    paths = [n for n in mirrors.names(repo) if n.endswith(".py") and n.startswith("src/")][:80]
    assert paths
    for name in paths:
        _same_tree(mirrors.show(repo, "HEAD", name))


def test_nodes_built_outside_a_parse_are_validated() -> None:
    cstparse.parse_module(b"x = 1\n")  # installs the hook
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("a", lpar=[cst.LeftParen()])  # unbalanced parentheses


def test_other_threads_validate_while_this_one_parses() -> None:
    cstparse.parse_module(b"x = 1\n")
    me = threading.get_ident()
    cstparse._PARSING.add(me)  # as while parse_module runs on this thread
    raised: list[bool] = []

    def build() -> None:
        try:
            cst.Name("")
            raised.append(False)
        except cst.CSTValidationError:
            raised.append(True)

    try:
        cst.Name("")  # this thread is "parsing": not validated
        worker = threading.Thread(target=build)
        worker.start()
        worker.join()
    finally:
        cstparse._PARSING.discard(me)
    assert raised == [True]
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
