"""Write docs/rules/ (one page per rule and an index) from the bundled rule database.

    python scripts/generate_rule_docs.py [DIRECTORY]

tests/test_docs.py fails when the committed pages differ from what this writes. The pages
themselves come from neuronlint.ruledb.pages (also used by `neuronlint explain` and SARIF help).
A development tool of the checkout: it is not installed with neuronlint.
"""

from __future__ import annotations

import sys
from pathlib import Path

from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.pages import generated_pages


def docs_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "docs" / "rules"


def write_docs(directory: Path) -> list[Path]:
    """Write the pages that differ, delete pages of rules that no longer exist; return what changed."""
    db = load_ruledb()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    pages = generated_pages(db)
    for stale in directory.glob("NL*.md"):
        if stale.name not in pages:
            stale.unlink()
            written.append(stale)
    for name, text in pages.items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else docs_dir()
    changed = write_docs(target)
    print(f"{len(changed)} page(s) updated in {target}")
