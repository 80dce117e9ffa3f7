"""Host syncs and data-dependent checks in test code are left out of the default output (counted,
listed by --show-ok); in source code, and for other categories in tests, nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import run
from tests.test_groups import write

FILES = {
    "tests/test_layer.py": (
        "import torch\n\n"
        "def test_layer():\n"
        "    x = torch.ones(2).cuda()\n"  # cuda-api: a test that fails on Neuron, kept
        "    assert torch.equal(x, x)\n"  # dynamic-shape in a test: left out
        "    assert x.sum().item() == 2\n"  # host-sync + dynamic-shape in a test: left out
        "    print(x.tolist())\n"  # host-sync in a test: left out
    ),
    "src/pkg/train.py": "import torch\n\ndef step(loss):\n    return loss.item()\n",  # kept
}


def _findings(data: dict) -> list[tuple[str, int, str]]:
    return sorted((f["path"], f["line"], f["category"]) for f in data["findings"])


def test_test_checks_are_left_out_and_counted(tmp_path: Path):
    write(tmp_path, FILES)
    data = json.loads(run(["scan", ".", "--no-cache", "-f", "json"], tmp_path).output)
    assert _findings(data) == [("src/pkg/train.py", 4, "host-sync"), ("tests/test_layer.py", 4, "cuda-api")]
    assert data["summary"]["left_out"]["test-checks"] == 4
    text = run(["scan", ".", "--no-cache"], tmp_path).output
    assert "left out: 4 test findings on host syncs and data-dependent checks" in text


def test_show_ok_lists_them(tmp_path: Path):
    write(tmp_path, FILES)
    data = json.loads(run(["scan", ".", "--no-cache", "-f", "json", "--show-ok"], tmp_path).output)
    tests = [f for f in _findings(data) if f[0].startswith("tests/")]
    assert ("tests/test_layer.py", 5, "dynamic-shape") in tests
    assert ("tests/test_layer.py", 6, "host-sync") in tests
    assert ("tests/test_layer.py", 7, "host-sync") in tests
    assert "left_out" not in data["summary"] or "test-checks" not in data["summary"]["left_out"]


# A test file of an application's device planner: it imports no tensor library, so its "cuda"
# strings are inputs and mocked answers (written for this test after the constructs a precision
# audit judged on a fine-tuning toolkit's studio tests).
PLANNER_TESTS = {
    "tests/test_planner.py": (
        "import os\n"
        "from app.planner import plan, pick_backend\n\n"
        "def test_plan(monkeypatch):\n"
        '    monkeypatch.setattr("app.planner.probe", lambda: {"backend": "cuda", "free_gb": 24})\n'
        '    assert plan(device="cuda", load_in_4bit=True).offload is False\n'
        '    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n'
        '    assert pick_backend() == "cuda"\n'
    ),
    "tests/test_real_device.py": "import torch\n\ndef test_move():\n    assert torch.ones(1).to('cuda').sum() == 1\n",
    "tests/test_mixed.py": (
        "from app.planner import plan\n\n"
        "def test_plan():\n"
        '    assert plan(device="cuda").offload is False\n\n'
        "def test_load():\n"
        "    import torch\n"
        '    assert plan(device="cuda", dtype=torch.float16)\n'
    ),
}


def test_findings_of_tensorless_test_files_are_test_data(tmp_path: Path):
    write(tmp_path, PLANNER_TESTS)
    data = json.loads(run(["scan", ".", "--no-cache", "-f", "json"], tmp_path).output)
    found = _findings(data)
    assert not [f for f in found if f[0] == "tests/test_planner.py"]
    assert ("tests/test_real_device.py", 4, "cuda-api") in found  # places a tensor: kept
    # the test that imports torch may place tensors with that "cuda"; the other test does not
    assert [f for f in found if f[0] == "tests/test_mixed.py"] == [("tests/test_mixed.py", 8, "cuda-api")]
    left = data["summary"]["left_out"]["test-data"]
    assert left >= 4
    text = run(["scan", ".", "--no-cache"], tmp_path).output
    assert f"left out: {left} test findings in test files that import no tensor library" in text
    shown = json.loads(run(["scan", ".", "--no-cache", "-f", "json", "--show-ok"], tmp_path).output)
    planner = {f[1] for f in _findings(shown) if f[0] == "tests/test_planner.py"}
    assert {5, 6, 8} <= planner  # line 7, an environment variable, is opt-in (NL204)
