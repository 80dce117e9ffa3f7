"""`ast_to_cst.convert` builds the tree `libcst.parse_module` gives, whitespace and punctuation aside.

Real LibCST parses are the reference: every case below is parsed by both, and the trees compared
with tests/cst_structure.same_structure (node types and every field but whitespace/punctuation).
"""

from __future__ import annotations

import ast
import subprocess
import warnings
from pathlib import Path

import libcst as cst
import pytest

from neuronlint.static import cstparse
from neuronlint.static.ast_to_cst import Unsupported, convert
from tests import mirrors
from tests.cst_structure import same_structure

ROOT = Path(__file__).resolve().parent.parent
OWN_FILES = sorted(
    p
    for base in (ROOT / "neuronlint", ROOT / "tests", ROOT / "fixtures")
    if base.is_dir()
    for p in base.rglob("*.py")
)


def check(source: str, *, skip_invalid: bool = False) -> str:
    """'equal' or 'unsupported' ('invalid' for what either parser rejects, when skip_invalid);
    fails on a structural difference."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a scanned file's invalid escapes are not ours to report
            tree = ast.parse(source)
        expected = cst.parse_module(source)
    except Exception:  # noqa: BLE001 - not Python both parsers accept: not the converter's case
        if skip_invalid:
            return "invalid"
        raise
    try:
        module, stmt_map = convert(tree, source)
    except Unsupported:
        return "unsupported"
    diff = same_structure(module, expected)
    assert diff is None, diff
    _check_map(module, stmt_map)
    return "equal"


def _check_map(module: cst.Module, stmt_map: dict) -> None:
    """Every statement node of the tree is in the map, with an ast statement on its first line."""
    seen = []

    class Statements(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                seen.append(node)
            return True

    module.visit(Statements())
    for node in seen:
        assert id(node) in stmt_map, node
        assert isinstance(stmt_map[id(node)], ast.stmt)
    assert len(stmt_map) == len(seen)


def files_result(paths: list[tuple[str, str]]) -> tuple[int, list[str]]:
    """(number of files that both parsers accept, names of those convert rejects)."""
    n = 0
    unsupported = []
    for name, text in paths:
        result = check(text, skip_invalid=True)
        n += result != "invalid"
        if result == "unsupported":
            unsupported.append(name)
    return n, unsupported


def test_own_sources_fixtures_and_tests() -> None:
    n, unsupported = files_result([(str(p), p.read_text("utf-8")) for p in OWN_FILES])
    assert n > 200
    assert len(unsupported) <= 2, unsupported


CASES = {
    "empty": "",
    "no trailing newline": "x = 1",
    "comment only": "# hello\n",
    "constants": "a = (True, False, None, ..., 1, 0x1F, 1_000, 1.5e-3, 2j, 1e10j, -1, +2)\n",
    "strings": "a = ('s', \"d\", r'\\d', b'x', rb'y', u'u', '''t\n''', \"\"\"q\\\"\"\"\")\n",
    "escaped quote": "a = 'it\\'s'\nb = 'x\\\\'\n",
    "implicit concatenation": "a = ('x' 'y'\n     'z')\nb = 'p' f'{q}' 'r'\n",
    "f-strings": "a = f'{x!r:>{w}} {y:.2f}'\nb = f'{f\"{z}\"}'\nc = f'''\n{x}\n'''\n",
    "non-ascii before literals": "s = 'héllo'; n = 1; t = 'é' + 'ü'\nπ = 3.14; x = f'{π}'\n",
    "names and attributes": "a.b.c\nx = a.b(c).d\n",
    "calls": "print(*a, **k)\nf(a, b=1, *c, d=2, **e)\nf(x for x in y)\nf(a)(b)\n",
    "subscripts": "x[a]\nx[a, b]\nx[(a, b)]\nx[()]\nx[a,]\nx[a:b, c]\nx[::2]\nx[1:]\nx[:, None]\nx[(a), b]\nx[..., 0]\n",
    "comparisons": "a < b < c\na == b\na != b\na in b\na not in b\na is b\na is not b\na <= b >= c > d\n",
    "boolean": "not a and b or c\na and b and c\na or b or c and d\n",
    "arithmetic": "-x ** 2\na + b * c - d / e // f % g @ h\na << b >> c | d & e ^ ~f\n",
    "conditional": "a if b else c\n",
    "lambda": "f = lambda *a, b=1, **k: 0\ng = lambda: 0\nh = lambda x, /, y, *, z=2: x\n",
    "comprehensions": "[x for x in y]\n{x for x in y if x}\n{k: v for k, v in d.items()}\n"
    "(x for x in y for z in x if z if w)\n[a async for a in b]\n",
    "collections": "a = [1, *b]\nb = (1,)\nc = {1, 2}\nd = {'a': 1, **e}\ne = {}\nf = ()\n",
    "walrus": "if (n := len(a)) > 10:\n    pass\n",
    "assignments": "a = b = c\na, *b = c\na: int = 1\nb: list[int]\na += 1\na @= b\na //= 2\na **= 2\n",
    "yield": "def f():\n    x = yield\n    yield a\n    yield from b\n    return\n",
    "simple statements": "del a, b\ndel (a, b)\ndel a[0]\nglobal x, y\nassert x, 'm'\nassert y\n"
    "raise\nraise E\nraise E from e\npass\n",
    "nonlocal": "def f():\n    x = 1\n    def g():\n        nonlocal x\n",
    "imports": "import a\nimport a.b.c as d, e\nfrom . import x\nfrom ..a.b import (c as d, e)\n"
    "from ... import z\nfrom a import *\nfrom .m import (\n    p,\n    q,\n)\n",
    "semicolons": "a = 1; b = 2; c = 3\nx = (1,\n     2); y = 3\n",
    "same-line suites": "if x: y; z\nfor a in b: pass\nwhile c: break\nclass A: pass\ndef f(): return 1\n",
    "if elif else": "if a:\n    x\nelif b:\n    y\nelif c:\n    z\nelse:\n    w\n",
    "else then if": "if a:\n    x\nelse:\n    if b:\n        y\n",
    "loops with else": "for a in b:\n    continue\nelse:\n    c\nwhile d:\n    e\nelse:\n    f\n",
    "try": "try:\n    a\nexcept E as e:\n    b\nexcept (F, G):\n    c\nexcept:\n    d\nelse:\n    e\n"
    "finally:\n    f\n",
    "try star": "try:\n    a\nexcept* E as e:\n    b\n",
    "with": "with a as b, c:\n    pass\nwith (a as b, c as d):\n    pass\nwith (a, b):\n    pass\n"
    "with (a, b) as c:\n    pass\n",
    "functions": "@dec\n@dec.call(1, k=2)\ndef f(a, /, b, *, c) -> int:\n    '''doc'''\n    return a\n"
    "def g(a: int = 1, *args: str, b, c: float = 2.0, **kw: object) -> None: ...\n"
    "def h(*, a): pass\ndef i(a, b=2, /, c=3): pass\n",
    "async": "async def f():\n    async for a in b:\n        await c\n    async with d as e:\n        pass\n"
    "    return [x async for x in y]\n",
    "classes": "@dataclass\nclass A(B, *C, metaclass=M, **kw):\n    x: int = 1\n\n    def f(self):\n        pass\n",
    "nested blocks": "class A:\n    def f(self):\n        if x:\n            for y in z:\n                pass\n",
    "tabs": "if x:\n\ty = 1\n\tif z:\n\t\tw = 2\n",
    "two-space indent": "def f():\n  if x:\n    y\n  return 1\n",
    "mixed relative indents": "if a:\n    b\n    if c:\n        d\nif e:\n  f\n  if g:\n        h\n",
    "CRLF": "import a\r\nif x:\r\n    y = 'é'\r\n",
    "CR only": "a = 1\rif b:\r  c\r",
    "backslash continuation": "x = 1 + \\\n    2\nif a and \\\n   b:\n    pass\n",
    "form feed line": "x = 1\n\x0c\ndef f():\n    pass\n",
    "comments in odd places": "x = [  # c\n  1,  # d\n]\nif x:  # e\n    # f\n    y  # g\n",
    "docstrings": '"""Module."""\n\n\nclass A:\n    """Doc."""\n',
    "match": "match x:\n    case 1:\n        pass\n",
}


@pytest.mark.parametrize("source", list(CASES.values()), ids=list(CASES))
def test_case(source: str) -> None:
    expected = "unsupported" if "match" in source.split(None, 1)[:1] else "equal"
    assert check(source) == expected


def test_unsupported_constructs_raise() -> None:
    for source in ("match x:\n    case 1:\n        pass\n", "x[*a]\n"):
        with pytest.raises(Unsupported):
            convert(ast.parse(source), source)


def test_statement_map() -> None:
    source = "import a\nx = 1; y = 2\nif x:\n    z = 3\nelif y:\n    pass\n"
    tree = ast.parse(source)
    module, stmt_map = convert(tree, source)
    line = module.body[1]
    assert stmt_map[id(line)] is tree.body[1]  # the first statement of `x = 1; y = 2`
    if_node = module.body[2]
    assert stmt_map[id(if_node)] is tree.body[3]
    assert stmt_map[id(if_node.orelse)] is tree.body[3].orelse[0]  # the elif
    assert stmt_map[id(if_node.body.body[0])] is tree.body[3].body[0]


def test_validation_stays_on_outside_convert() -> None:
    source = "x = 1\n"
    convert(ast.parse(source), source)
    assert not cstparse._PARSING
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def _mirror_files(repo: str, limit: int) -> list[tuple[str, str]]:
    git_dir = mirrors.git_dir(repo)
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "HEAD"], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    blobs = []
    for row in listing.splitlines():
        meta, _, path = row.partition("\t")
        mode, kind, sha = meta.split()
        if kind == "blob" and path.endswith(".py") and mode != "120000":
            blobs.append((path, sha))
    blobs = blobs[:limit]
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(sha + "\n" for _, sha in blobs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    out = []
    pos = 0
    for path, _ in blobs:
        end = batch.index(b"\n", pos)
        size = int(batch[pos:end].split()[2])
        pos = end + 1
        try:
            out.append((path, batch[pos : pos + size].decode("utf-8")))
        except UnicodeDecodeError:
            pass
        pos += size + 1
    return out


@pytest.mark.parametrize("repo", ["pytorch/ao", "huggingface/peft"])
def test_real_repositories(repo: str) -> None:
    n, unsupported = files_result(_mirror_files(repo, limit=150))
    assert n > 50
    assert len(unsupported) <= max(2, n // 100), unsupported
