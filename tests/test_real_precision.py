"""Constructs that are not findings, on real files from public repositories: dtype tables, data
that lives on the host, device abstractions (docs/what-counts.md).

Each case names a Python file by its git blob id in a local mirror of its repository
(`/work/.mirror/<owner>+<name>/repo`, or $NEURONLINT_MIRRORS); the blob is read with `git cat-file`,
written under its own path into a temporary directory and scanned there, so that path-based sites
(tests/, data/) are the real ones. Only the ids and the (line, rule) pairs are committed, labelled
by reading the files: `present` must be reported, `absent` must not. A case is skipped when its
mirror or blob is not available. None of these files is in benchmarks/accuracy/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import scan_paths
from tests.test_real_files import _blob

CASES = [
    # (repository, path, blob, present {(line, rule)}, absent {(line, rule)})
    (
        "NVIDIA/NeMo",
        "nemo/lightning/io/fdl_torch.py",
        "70a181c8e380e0f08df5a94ea8d6e5046f01284b",
        set(),
        # a table of (dtype, importable name) pairs for serialisation: no tensor is made there
        {(45, "NL507"), (49, "NL501"), (50, "NL502"), (51, "NL502")},
    ),
    (
        "hpcaitech/ColossalAI",
        "colossalai/lazy/construction.py",
        "6764eaf774abb43303f03eb85ebfe6cd95e869ca",
        set(),
        # {"DoubleTensor": torch.double, ...}: the dtype of each legacy constructor, looked up by name
        {(36, "NL501"), (43, "NL507")},
    ),
    (
        "huggingface/peft",
        "src/peft/utils/incremental_pca.py",
        "de4a7c05174dc436f4c75965ef9585afb480183c",
        # float64 sums and .double() where the statistics are computed
        {(154, "NL501"), (158, "NL501"), (172, "NL501")},
        {(100, "NL501")},  # valid_dtypes = [torch.float32, torch.float64]: a list checked against
    ),
    (
        "huggingface/trl",
        "tests/test_utils.py",
        "9f9b1289f685d40594e850b060bbece5eda708b0",
        # @pytest.mark.parametrize("dtype", [torch.float64, ...]): the test runs in each dtype
        {(618, "NL501"), (867, "NL501"), (886, "NL501")},
        {(621, "NL501")},  # `if dtype in (torch.float64, torch.float32)`: a comparison
    ),
]


@pytest.mark.parametrize("repo, path, blob, present, absent", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_real_lines(tmp_path: Path, repo: str, path: str, blob: str, present: set, absent: set) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_blob(repo, blob))
    findings = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"]).active
    found = {(f.line, f.rule) for f in findings}
    assert present <= found, f"missing: {sorted(present - found)}"
    assert not (absent & found), f"reported but must not be: {sorted(absent & found)}"
