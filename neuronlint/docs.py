"""Rule documentation generated from the rule database (docs/rules/*.md and `neuronlint explain`).

Regenerate with `python -m neuronlint.docs`; a test fails when the committed pages are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from neuronlint.ruledb import RuleDB, RuleDBError, load_ruledb
from neuronlint.ruledb.model import TARGETS, Rule
from neuronlint.ruledb.versions import parse_version

DOCS_URL = "https://github.com/neuronlint/neuronlint/blob/main/docs/rules/{id}.md"


def version_table(db: RuleDB, rule: Rule) -> list[list[str]]:
    """Verdict per SDK release (rows) and chip (columns), HIPIFY-style; '—' where the release lacks the chip."""
    rows = []
    for version in sorted(db.releases, key=parse_version):
        row = [version]
        for target in TARGETS:
            try:
                ctx = db.context(version, target)
            except RuleDBError:
                row.append("—")
                continue
            verdict = db.judge(rule.id, {}, ctx)
            row.append(f"{verdict.severity.value} ({verdict.status}, {ctx.backend})")
        rows.append(row)
    return rows


def rule_markdown(db: RuleDB, rule: Rule) -> str:
    lines = [
        f"# {rule.id} {rule.name}: {rule.title}",
        "",
        f"- **Category:** `{rule.category}`",
        f"- **Default severity:** {rule.severity.value}" + ("" if rule.default_enabled else " (opt-in: enable with `--extend-select " + rule.id + "`)"),
        f"- **Neuron support status:** {rule.status}",
        f"- **Effort to fix:** {rule.effort}",
        f"- **Analysis:** {rule.origin}",
        "",
        "## What it detects",
        "",
        rule.summary,
        "",
        "## Why it matters on Neuron",
        "",
        rule.why,
        "",
        "## Example",
        "",
        "```python",
        rule.example.rstrip("\n"),
        "```",
    ]
    if rule.example_fixed.strip():
        lines += ["", "Instead:", "", "```python", rule.example_fixed.rstrip("\n"), "```"]
    lines += ["", "## What to do instead", ""]
    labels = {"xla": "PyTorch/XLA backend (torch-neuronx ≤ 2.9, device `xla`)", "native": "Native TorchNeuron (device `neuron`, Trn2/Trn3, Neuron 2.33+)", "any": "On any Neuron backend"}
    for key in ("xla", "native", "any"):
        if rule.instead.get(key):
            lines.append(f"- **{labels[key]}:** {rule.instead[key]}")
    if rule.verdicts:
        lines += ["", "## Verdict conditions", "", "The first matching condition refines the default verdict:", ""]
        for v in rule.verdicts:
            sev = v.severity.value if v.severity else rule.severity.value
            lines.append(f"- {v.when.describe()}: {sev}, {v.status or rule.status}" + (f". {v.note}" if v.note else ""))
    lines += ["", "## Verdict by Neuron SDK release and chip", "", "| SDK | " + " | ".join(TARGETS) + " |", "|---|" + "---|" * len(TARGETS)]
    for row in version_table(db, rule):
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Sources", ""]
    sources = list(rule.sources) + [s for v in rule.verdicts for s in v.sources if s not in rule.sources]
    lines += [f"- <{s}>" for s in dict.fromkeys(sources)]
    lines.append("")
    return "\n".join(lines)


def index_markdown(db: RuleDB) -> str:
    lines = ["# Rules", "", "Generated from `rules/` by `python -m neuronlint.docs`; do not edit by hand.", "",
             "| ID | Name | Category | Default severity | Title |", "|---|---|---|---|---|"]  # fmt: skip
    for rule in sorted(db.rules.values(), key=lambda r: r.id):
        opt = " (opt-in)" if not rule.default_enabled else ""
        lines.append(f"| [{rule.id}]({rule.id}.md) | {rule.name} | {rule.category} | {rule.severity.value}{opt} | {rule.title} |")
    lines.append("")
    return "\n".join(lines)


def generated_pages(db: RuleDB) -> dict[str, str]:
    pages = {f"{rule.id}.md": rule_markdown(db, rule) for rule in db.rules.values()}
    pages["README.md"] = index_markdown(db)
    return pages


def write_docs(directory: Path) -> list[Path]:
    db = load_ruledb()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    pages = generated_pages(db)
    for stale in directory.glob("NL*.md"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "docs" / "rules"
    changed = write_docs(target)
    print(f"{len(changed)} page(s) updated in {target}")
