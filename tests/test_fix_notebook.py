"""`neuronlint fix` on Jupyter notebooks: only code cells' sources change; outputs, metadata, key
order, indentation and the trailing newline stay byte for byte; magics and shell escapes are left
alone; the JSON edits attached to findings give the same file; real notebooks from a local mirror
of a public repository (read with `git cat-file`, never committed; skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuronlint.findings import Edit
from neuronlint.fix import flavour_for
from neuronlint.fix.model import apply_edits
from neuronlint.fix.notebook import _sources
from neuronlint.fix.run import attach, fix_files
from neuronlint.pipeline import ScanOptions, run_scan
from tests import mirrors

REAL = {
    "NVIDIA+NeMo": [
        "tutorials/VoiceSwapSample.ipynb",
        "tutorials/tts/NeMo_TTS_Primer.ipynb",
        "tutorials/asr/Speech_Commands.ipynb",
    ],
}


def cell(source, outputs=None, kind="code", **extra):
    data = {"cell_type": kind, "execution_count": 1, "metadata": {"id": "x", "collapsed": False}}
    if kind == "code":
        data["outputs"] = outputs or []
    data["source"] = source
    data.update(extra)
    return data


OUTPUT = [{"name": "stdout", "output_type": "stream", "text": ["tensor([1.], device='cuda:0')\n"]}]
IMAGE = [
    {
        "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]},
        "metadata": {},
        "output_type": "display_data",
    }
]


def notebook(indent=1) -> str:
    doc = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "language": "python"}, "zeta": 1, "alpha": "ü"},
        "cells": [
            cell(["%matplotlib inline\n", "!pip install torch\n", "import torch\n", "import numpy as np"]),
            cell("# Training\nSome *markdown* with torch.cuda.synchronize()", kind="markdown"),
            cell(
                [
                    "%%time\n",
                    "model = torch.nn.Linear(2, 2).cuda()\n",
                    "torch.cuda.synchronize()\n",
                    "x = torch.ones(2, device='cuda')  # über",
                ],
                OUTPUT,
            ),
            cell(["!nvidia-smi\n", "y = model(x).cuda()\n", "files = !ls\n", "y"], IMAGE),
            cell([], []),
        ],
    }
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def outside_sources(text: str) -> list[str]:
    """The JSON text with every cell's source value cut out: what a fix must leave alone."""
    pieces, cursor = [], 0
    for source in sorted(_sources(text).values(), key=lambda s: s.start):
        pieces.append(text[cursor : source.start])
        cursor = source.end
    return [*pieces, text[cursor:]]


def scan(base: Path):
    options = ScanOptions(paths=[base], base=base, jobs=1)
    return options, run_scan(options)


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_fix_rewrites_code_cells_only(tmp_path, indent):
    path = tmp_path / "train.ipynb"
    original = notebook(indent)
    path.write_text(original, encoding="utf-8")
    options, result = scan(tmp_path)
    flavour = flavour_for("portable", result.context, result.db)
    report = fix_files(result, options, flavour, False, True, tmp_path)
    fixed = path.read_text(encoding="utf-8")
    assert report.changed() and report.files[0].error is None
    assert outside_sources(fixed) == outside_sources(original)  # outputs, metadata, layout: bytes
    assert fixed.endswith("}\n")
    before, after = json.loads(original), json.loads(fixed)
    for old, new in zip(before["cells"], after["cells"], strict=True):
        assert {k: v for k, v in old.items() if k != "source"} == {
            k: v for k, v in new.items() if k != "source"
        }
    assert after["cells"][1] == before["cells"][1]  # markdown untouched
    first, train, other = (
        after["cells"][0]["source"],
        after["cells"][2]["source"],
        after["cells"][3]["source"],
    )
    assert first[:3] == ["%matplotlib inline\n", "!pip install torch\n", "import torch\n"]
    assert any(line.startswith("DEVICE = torch.accelerator.current_accelerator") for line in first)
    assert first[-1] != "" and not first[-1].endswith("\n")  # the last line keeps having no newline
    assert train[0] == "%%time\n"  # the cell magic stays the first line
    assert train[1] == "model = torch.nn.Linear(2, 2).to(DEVICE)\n"
    assert "if torch.accelerator.is_available():\n" in train
    assert train[-1] == "x = torch.ones(2, device=DEVICE.type)  # über"
    assert other == ["!nvidia-smi\n", "y = model(x).to(DEVICE)\n", "files = !ls\n", "y"]
    assert sum(report.fixed.values()) == 4

    options, again = scan(tmp_path)
    assert not fix_files(again, options, flavour, False, True, tmp_path).changed()  # idempotent
    assert not [f for f in again.findings if f.rule in ("NL101", "NL102")]


def test_attached_json_edits_give_the_fixed_notebook(tmp_path):
    path = tmp_path / "train.ipynb"
    original = notebook()
    path.write_text(original, encoding="utf-8")
    options, result = scan(tmp_path)
    flavour = flavour_for("portable", result.context, result.db)
    assert attach(result, flavour, tmp_path) == 4
    fixable = [f for f in result.findings if f.fix is not None and f.fix.automatic]
    assert {f.extra["cell"]["cell"] for f in fixable} == {3, 4}
    for finding in fixable:  # each finding's edits alone give a valid notebook with that fix
        text = apply_edits(original, list(finding.fix.edits))
        json.loads(text)
        assert outside_sources(text) == outside_sources(original)
        assert all(isinstance(e, Edit) for e in finding.fix.edits)


def test_magics_lines_are_never_edited(tmp_path):
    # `.cuda()` on a line IPython runs as a shell command is not Python: no finding, no edit.
    doc = json.loads(notebook())
    doc["cells"][0]["source"] = [
        "import torch\n",
        "!python train.py --device cuda\n",
        "x = torch.ones(1).cuda()",
    ]
    text = json.dumps(doc, indent=1) + "\n"
    (tmp_path / "a.ipynb").write_text(text)
    options, result = scan(tmp_path)
    flavour = flavour_for("portable", result.context, result.db)
    fix_files(result, options, flavour, False, True, tmp_path)
    source = json.loads((tmp_path / "a.ipynb").read_text())["cells"][0]["source"]
    assert "!python train.py --device cuda\n" in source
    assert source[-1] == "x = torch.ones(1).to(DEVICE)"


def _read(repo: str, path: str) -> bytes | None:
    return mirrors.try_show(repo, "HEAD", path)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_real_notebooks(tmp_path, unsafe):
    originals = {}
    for repo, names in REAL.items():
        for name in names:
            data = _read(repo, name)
            if data is not None:
                target = tmp_path / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                originals[name] = data.decode("utf-8")
    if not originals:
        pytest.skip("no local mirror of the notebooks' repository")
    options, before = scan(tmp_path)
    flavour = flavour_for("portable", before.context, before.db)
    report = fix_files(before, options, flavour, unsafe, True, tmp_path)
    assert report.changed()
    for item in report.files:
        assert item.error is None, item.error
        text = (tmp_path / item.path).read_text(encoding="utf-8")
        assert outside_sources(text) == outside_sources(originals[item.path])
        old, new = json.loads(originals[item.path]), json.loads(text)
        assert len(old["cells"]) == len(new["cells"])
        for a, b in zip(old["cells"], new["cells"], strict=True):
            assert {k: v for k, v in a.items() if k != "source"} == {
                k: v for k, v in b.items() if k != "source"
            }
            if a["cell_type"] != "code":
                assert a == b
            else:  # magics and shell escapes are kept, line for line
                magics = [line for line in a["source"] if line.lstrip().startswith(("!", "%"))]
                assert magics == [line for line in b["source"] if line.lstrip().startswith(("!", "%"))]
    options, after = scan(tmp_path)
    active = [f for f in before.findings if f.suppressed is None]
    left = [f for f in after.findings if f.suppressed is None]
    assert sum(report.fixed.values()) > 0
    # Every change of the count is accounted for: fixed, gone without a fix of their own, new; a
    # CUDA guard folded into the code it guards counts once, as a finding of its own.
    accounted = len(active) + len(before.folded_guards) - len(left) - len(after.folded_guards)
    assert accounted == sum(report.fixed.values()) + report.also_gone - report.appeared
    assert len(report.remaining) == len(left)
    assert not fix_files(after, options, flavour, unsafe, True, tmp_path).changed()
