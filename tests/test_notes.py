"""Notes about supported code: left out by default, marked `extra.note` when --show-ok adds them, so
a consumer (and the accuracy scorer's detection view) can tell them from findings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import run
from tests.test_groups import write


def test_show_ok_marks_notes_and_only_notes(tmp_path: Path):
    write(
        tmp_path,
        {
            "train.py": (
                "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n"
                "def wrap(m):\n    m = m.cuda()\n    return DDP(m)\n"
            ),
        },
    )
    default = json.loads(run(["scan", ".", "--no-cache", "-f", "json"], tmp_path).output)
    assert [f["rule"] for f in default["findings"]] == ["NL101"]
    assert "note" not in default["findings"][0]["extra"]
    shown = json.loads(run(["scan", ".", "--no-cache", "-f", "json", "--show-ok"], tmp_path).output)
    marked = {f["rule"]: f["extra"].get("note", False) for f in shown["findings"]}
    assert marked == {"NL101": False, "NL205": True}
