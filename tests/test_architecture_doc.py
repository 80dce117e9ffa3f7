"""docs/architecture.md names only modules, scripts and files that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "neuronlint"
# File names the doc uses as examples of what a rule case scans, not as files of this checkout.
EXAMPLE_FILES = {"setup.py", "kernel.cu", "requirements.txt"}


def _exists(name: str) -> bool:
    name = name.rstrip("/")
    if (
        name in EXAMPLE_FILES or "*" in name or "<" in name
    ):  # a pattern such as rules/catalogue/<category>.toml
        return True
    for base in (ROOT, PACKAGE, PACKAGE / "static", PACKAGE / "ruledb", PACKAGE / "ruledb" / "schema"):
        if (base / name).exists():
            return True
    return False


def test_every_path_in_the_architecture_doc_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = set(re.findall(r"`([\w./-]+(?:\.py|\.toml|\.md|/))`", text))
    names |= set(re.findall(r"`([\w./-]+\.py)[:` ]", text))
    assert len(names) > 30, "the doc should name the modules it describes"
    missing = sorted(n for n in names if not _exists(n))
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
