"""Cross-file links: imports resolve to scanned modules by the names Python would import them under."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import scan_paths

KERNEL = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _nl306(root: Path, cwd: Path) -> list[tuple[str, int, str]]:
    result = scan_paths([root], cwd=cwd, select=["NL306"])
    return [(f.path, f.line, f.message.split("`")[1]) for f in result.active]


def test_package_under_src_root_and_relative_import(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/ops/__init__.py": "",
            "src/pkg/ops/kernels.py": KERNEL,
            "src/pkg/model.py": "from pkg.ops.kernels import k\n",
            "src/pkg/ops/layer.py": "from .kernels import k\n",
            "tools/run.py": "import pkg.ops.kernels\n",
        },
    )
    assert _nl306(tmp_path, tmp_path) == [
        ("src/pkg/model.py", 1, "src.pkg.ops.kernels"),
        ("src/pkg/ops/layer.py", 1, "src.pkg.ops.kernels"),
        ("tools/run.py", 1, "src.pkg.ops.kernels"),
    ]


def test_same_basename_elsewhere_is_not_a_match(tmp_path: Path) -> None:
    # `from utils import x` means a top-level `utils`, not some package's `utils` submodule.
    _write(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/triton_ops/__init__.py": "",
            "lib/triton_ops/utils.py": KERNEL,
            "scripts/train.py": "from utils import helper\n",
            "scripts/utils.py": "def helper():\n    pass\n",
        },
    )
    assert _nl306(tmp_path, tmp_path) == []


def test_scan_outside_cwd_names_modules_from_the_scan_root(tmp_path: Path) -> None:
    _write(
        tmp_path / "repo",
        {"pkg/__init__.py": "", "pkg/kern.py": KERNEL, "pkg/use.py": "from .kern import k\n"},
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    [(path, line, module)] = _nl306(tmp_path / "repo", elsewhere)
    assert module == "pkg.kern" and path.endswith("repo/pkg/use.py") and line == 1
