"""Bounded fuzzing: random and mutated real files through the whole scan, no internal error, no crash.

Inputs are the repository's fixtures (and, when a local mirror of public repositories exists under
/work/.mirror, Python files read from it with git), mutated byte- and token-wise, spliced, and
mixed with expressions from a small grammar that favours the shapes that hurt parsers (deep
nesting, long chains, odd line endings, decorators, f-strings). The seed is fixed, so a failure
reproduces; NEURONLINT_FUZZ_SECONDS sets the budget (default 20 s) and NEURONLINT_FUZZ_SEED the seed.

"No internal error" means no NL002 finding and no exception out of the scan; every file must be
reported (files_scanned equals files written).
"""

from __future__ import annotations

import os
import random
import subprocess
import time
import warnings
from pathlib import Path

from tests.conftest import FIXTURES, scan_paths

BUDGET = float(os.environ.get("NEURONLINT_FUZZ_SECONDS", "20"))
SEED = int(os.environ.get("NEURONLINT_FUZZ_SEED", "16"))
MIRRORS = Path("/work/.mirror")

TOKENS = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "    ",
    "\\",
    "'",
    '"',
    '"""',
    "if ",
    "elif ",
    "else:",
    "lambda: ",
    "not ",
    " and ",
    " or ",
    "yield ",
    "await ",
    "async ",
    "match x:",
    "case _:",
    "f'{",
    "}'",
    "@",
    "*",
    "**",
    "=",
    ":=",
    "->",
    "\x00",
    "\xff",
    "\x1b[2J",
    "::error::",
    "# neuronlint: noqa",
    "# neuronlint: ignore[NL101]",
    "torch.",
    ".cuda()",
    "torch.cuda.",
    "import torch\n",
    "from torch.utils.cpp_extension import load\n",
    "dtype=torch.float64",
    ".item()",
    "nccl",
    "cuda",
    "def f(x):\n",
    "class M(torch.nn.Module):\n",
    "return ",
    "global ",
    "del ",
    "1e309",
    "0x",
    "é",
    "\u202e",
]


def _real_sources(rng: random.Random, limit: int = 60) -> list[bytes]:
    sources = [p.read_bytes() for p in sorted(FIXTURES.rglob("*.py"))]
    sources += [p.read_bytes() for p in sorted(FIXTURES.rglob("requirements*.txt"))]
    if MIRRORS.is_dir():
        for mirror in sorted(MIRRORS.glob("*+*/repo"))[:6]:
            try:
                names = subprocess.run(
                    ["git", "-C", str(mirror), "ls-tree", "-r", "--name-only", "HEAD"],
                    capture_output=True,
                    timeout=20,
                    check=True,
                    text=True,
                ).stdout.split()
            except (OSError, subprocess.SubprocessError):
                continue
            python = [n for n in names if n.endswith(".py")]
            for name in rng.sample(python, min(len(python), limit // 6)):
                try:
                    blob = subprocess.run(
                        ["git", "-C", str(mirror), "show", f"HEAD:{name}"],
                        capture_output=True,
                        timeout=20,
                        check=True,
                    ).stdout
                except (OSError, subprocess.SubprocessError):
                    continue
                if len(blob) < 200_000:
                    sources.append(blob)
    return sources


def _expression(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.2:
        return rng.choice(["x", "1", "torch", "'s'", "None", "cuda", "x.cuda()", "torch.zeros(1)"])
    inner = _expression(rng, depth - 1)
    return rng.choice(
        [
            f"({inner})",
            f"[{inner}]",
            f"{{1: {inner}}}",
            f"f({inner})",
            f"{inner}.cuda()",
            f"{inner}[0]",
            f"not {inner}",
            f"-{inner}",
            f"lambda: {inner}",
            f"{inner} if x else {inner}",
            f"{inner} and {inner}",
            f"{inner} + {inner}",
            f"f'{{{inner}}}'",
            f"{inner}.to('cuda')",
        ]
    )


def _generated(rng: random.Random) -> bytes:
    lines = ["import torch"]
    for _ in range(rng.randint(1, 12)):
        kind = rng.random()
        if kind < 0.5:
            lines.append(f"y = {_expression(rng, rng.choice([3, 10, 40, 150]))}")
        elif kind < 0.7:
            lines.append(
                "y = "
                + rng.choice([" and ", "+", ".", " if x else "]).join(["x"] * rng.choice([10, 600, 3000]))
            )
        elif kind < 0.85:
            lines.append("if x:\n    pass\n" + "elif x:\n    pass\n" * rng.choice([5, 700]))
        else:
            lines.append("@d\n" * rng.randint(1, 50) + "def f():\n    return torch.zeros(1).cuda()")
    return ("\n".join(lines) + "\n").encode()


def _mutate(rng: random.Random, data: bytes, sources: list[bytes]) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        roll = rng.random()
        position = rng.randrange(len(buffer) + 1)
        if roll < 0.35:
            buffer[position:position] = rng.choice(TOKENS).encode("utf-8", "surrogateescape")
        elif roll < 0.5 and buffer:
            del buffer[position : position + rng.randint(1, 40)]
        elif roll < 0.6 and buffer:
            buffer[min(position, len(buffer) - 1)] = rng.randrange(256)
        elif roll < 0.7:
            other = rng.choice(sources)
            start = rng.randrange(len(other) + 1)
            buffer[position:position] = other[start : start + rng.randint(1, 400)]
        elif roll < 0.8:
            del buffer[position:]
        elif roll < 0.9:
            lines = bytes(buffer).split(b"\n")
            if lines:
                index = rng.randrange(len(lines))
                lines.insert(index, lines[index] * rng.randint(1, 3))
                buffer = bytearray(b"\n".join(lines))
        else:
            buffer[position:position] = _generated(rng)
    return bytes(buffer)


def test_fuzz_scan_never_errors_or_crashes(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    sources = _real_sources(rng)
    deadline = time.monotonic() + BUDGET
    rounds = written = 0
    while time.monotonic() < deadline:
        batch = tmp_path / f"round{rounds}"
        batch.mkdir()
        for index in range(30):
            roll = rng.random()
            data = _generated(rng) if roll < 0.25 else _mutate(rng, rng.choice(sources), sources)
            name = f"f{index}.py"
            if roll > 0.95:
                name = "requirements.txt"
            elif roll > 0.9:
                name = "pyproject.toml"
                data = data.replace(b"import", b'[project]\ndependencies = ["cupy"]\n', 1)
            (batch / name).write_bytes(data)
        files = len(list(batch.iterdir()))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = scan_paths([batch], cwd=batch, select=["ALL"])
        # A scanned file's SyntaxWarning (invalid escapes, `is` with a literal) is not ours to print.
        parse_warnings = [
            str(w.message)
            for w in caught
            if issubclass(w.category, (SyntaxWarning, DeprecationWarning))
            and w.filename in ("<unknown>", "<cell>")
        ]
        assert not parse_warnings, f"seed {SEED} round {rounds}: {parse_warnings[:3]}"
        internal = [(f.path, f.message) for f in result.findings if f.rule == "NL002"]
        assert not internal, f"seed {SEED} round {rounds}: {internal[:3]}"
        assert len(result.files) == files
        written += files
        rounds += 1
    assert rounds >= 1 and written >= 25
