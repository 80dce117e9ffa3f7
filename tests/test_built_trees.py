"""The fast path (checkers on a tree built from the stdlib parser, statements realised by LibCST)
must give exactly what LibCST's own parse gives: the same detections, positions, facts and
snippets, file by file. Compared on the bundled fixtures, on hand-written hard cases and on real
files of public repositories (read from local mirrors; skipped when absent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuronlint.ruledb import load_ruledb
from neuronlint.static import engine, realize
from neuronlint.static.data import build_static_data
from tests.conftest import FIXTURES
from tests.mirrors import MIRRORS, git, names

_DATA = build_static_data(load_ruledb())
# Facts that hold a node's id (guards and what they guard): equal when they pair up alike.
_ID_FACTS = ("cuda_guard_of", "cuda_guard")


def _analyse(path: str, data: bytes, built: bool) -> tuple[str, bool]:
    """The file's analysis as comparable text, and whether the built tree gave it."""
    taken = []
    analyse_built = engine._analyze_built

    def spy(*args, **kwargs):
        result = analyse_built(*args, **kwargs)
        taken.append(result is not None)
        return result

    engine.use_built_trees = built
    engine._analyze_built = spy
    try:
        result = engine.analyze_python(path, data, _DATA).to_dict()
    finally:
        engine.use_built_trees = True
        engine._analyze_built = analyse_built
    ids: dict[str, str] = {}
    for det in result["detections"]:
        for key in _ID_FACTS:
            if key in det["facts"]:
                det["facts"][key] = ids.setdefault(det["facts"][key], f"guard{len(ids)}")
    return json.dumps(result, sort_keys=True, default=sorted), any(taken)


def _same(path: str, data: bytes) -> bool:
    """Assert both paths agree on the file; whether the built tree was used."""
    slow, _ = _analyse(path, data, built=False)
    fast, used = _analyse(path, data, built=True)
    assert fast == slow, path
    return used


HARD = {
    "statements_twice.py": """\
import torch


def a(x):
    y = x.cuda()
    y = x.cuda()
    if x:
        pass
    elif not torch.cuda.is_available():
        y = x.cuda(); z = x.item()
    try:
        x.cuda()
    except torch.cuda.OutOfMemoryError:  # a type in a handler: not the header of `try`
        pass
    return y


class C:
    @torch.compile(mode="max-autotune")
    def f(self, x):
        # a comment above the flagged statement
        assert torch.all(x > 0).item(), "positive"
        return x.to("cuda")
""",
    "continuation.py": """\
import torch
dev = torch.device(
    "cuda"  # the device
    if torch.cuda.is_available() else "cpu"
)
x = torch.zeros(3, device=("cuda"))
if True: y = x.cuda()
while x.sum().item() > 0: x = x - 1
with torch.cuda.device(0), \\
        torch.autocast("cuda"):
    pass
""",
    "unicode.py": """\
import torch
s = "ünïcödé"; t = torch.zeros(2).cuda()
café = torch.ones(1, device="cuda")  # é before and after: columns count characters
""",
    "form_feed.py": "import torch\n\x0c\nx = torch.zeros(1).cuda()\ns = 'a\u2028b'; y = x.cuda()\nz = x.item()\n",
    "tabs.py": "import torch\nif True:\n\tx = torch.zeros(1).cuda()\n\tif x.item():\n\t\tprint(f'{x.cuda()}')\n",
    "strings.py": '''\
import torch
x = torch.zeros(1, device=f"cuda:{0}")
y = x.to("cu" "da")
z = torch.device("""cuda""")
w = x.to(r'cuda')
''',
}


@pytest.mark.parametrize("name", sorted(HARD))
def test_hard_cases(name: str) -> None:
    assert _same(name, HARD[name].encode())


def _fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixtures(path: Path) -> None:
    _same(str(path.relative_to(FIXTURES)), path.read_bytes())


def test_most_fixtures_take_the_fast_path() -> None:
    files = [p for p in _fixture_files() if b"\r" not in p.read_bytes()]
    used = [_analyse(str(p), p.read_bytes(), built=True)[1] for p in files]
    assert sum(used) >= 0.8 * len(files), f"{sum(used)} of {len(files)} fixtures on the built tree"


def test_a_statement_that_does_not_line_up_goes_libcsts_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """The realizer refuses (here: every statement): the file is analysed on LibCST's own tree,
    with the same result."""
    source = HARD["statements_twice.py"].encode()
    slow, _ = _analyse("a.py", source, built=False)

    def refuse(self, stmt, header):
        raise realize.Unrealizable("refused")

    monkeypatch.setattr(realize.Realizer, "real", refuse)
    fast, used = _analyse("a.py", source, built=True)
    assert not used and fast == slow


# Real repositories at pinned commits: every Python file of a few folders (a few hundred files).
REAL = [
    ("pytorch/ao", "36027d82d", ("torchao/float8/", "torchao/quantization/", "benchmarks/")),
    ("huggingface/peft", "5d602fdbf", ("src/peft/tuners/lora/", "examples/")),
]


def _real_files(repo: str, commit: str, folders: tuple[str, ...]) -> Iterator[tuple[str, bytes]]:
    for path in names(repo, commit):
        if path.endswith(".py") and path.startswith(folders):
            yield path, git(repo, "show", f"{commit}:{path}")


@pytest.mark.parametrize("repo,commit,folders", REAL, ids=[r[0] for r in REAL])
def test_real_repositories(repo: str, commit: str, folders: tuple[str, ...]) -> None:
    if not (MIRRORS / repo.replace("/", "+") / "repo").is_dir():
        pytest.skip(f"no local mirror of {repo}")
    files = list(_real_files(repo, commit, folders))
    assert len(files) > 50
    used = sum(_same(path, data) for path, data in files)
    assert used >= 0.9 * len(files), f"{used} of {len(files)} files on the built tree"


def test_the_fix_planner_gets_libcsts_tree_of_a_file_with_a_fixable_detection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a fix planner (engine.tree_rules), a file analysed on a built tree that has a detection
    of a rule with a fixer is parsed by LibCST too and kept for the planner; another is not."""
    monkeypatch.setattr(engine, "keep_trees", True)
    monkeypatch.setattr(engine, "tree_rules", frozenset({"NL101"}))
    engine.forget_trees()
    fixable = b"import torch\nx = torch.zeros(1).cuda()\n"
    other = b"import torch\nx = torch.zeros(1)\nprint(x.sum().item())\n"
    try:
        assert _analyse("fixable.py", fixable, built=True)[1]
        assert _analyse("other.py", other, built=True)[1]
        kept = engine.parsed_tree(fixable)
        assert kept is not None and kept.code == fixable.decode()  # LibCST's own tree, whitespace and all
        assert engine.parsed_tree(other) is None
    finally:
        engine.forget_trees()


def test_an_internal_error_on_a_built_tree_goes_libcsts_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error of the fast path itself (here: placing the findings) is not reported as NL002:
    the file is analysed on LibCST's own tree, which gives what it gives."""
    source = HARD["statements_twice.py"].encode()
    slow, _ = _analyse("a.py", source, built=False)

    def broken(self, targets, texts):
        raise ValueError("broken")

    monkeypatch.setattr(realize.Realizer, "locate", broken)
    fast, used = _analyse("a.py", source, built=True)
    assert not used and fast == slow and "NL002" not in fast
