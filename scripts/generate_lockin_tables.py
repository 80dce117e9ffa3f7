"""The parameter tables of docs/lock-in.md, generated from rules/lockin.toml so that they cannot drift.

Regenerate with `python scripts/generate_lockin_tables.py` (rewrites the block between the markers
in docs/lock-in.md); tests/test_lockin_docs.py fails when the committed block is stale. A
development tool of the checkout: it is not installed with neuronlint.
"""

from __future__ import annotations

import sys
from pathlib import Path

from neuronlint.lockin.params import LockinParams, load_params
from neuronlint.ruledb import load_ruledb

BEGIN = "<!-- BEGIN generated lock-in tables (python scripts/generate_lockin_tables.py) -->"
END = "<!-- END generated lock-in tables -->"
DOC = Path(__file__).resolve().parent.parent / "docs" / "lock-in.md"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(value: float) -> str:
    return f"{value:g}"


def tables(params: LockinParams) -> str:
    """Markdown tables of areas, weight overrides, scopes, effort classes, grades and model settings."""
    out = [
        "### Areas",
        "",
        "| Area | Direction | Members | Max | Half | Cap | Weights (blocker / warning / info) | Rationale |",
        "| --- | --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for a in params.areas:
        members = ", ".join([*(f"`{r}`" for r in a.rules), *(f"category `{c}`" for c in a.categories)])
        weights = " / ".join(_num(a.weights[s]) for s in ("blocker", "warning", "info"))
        out.append(
            f"| {a.title} (`{a.name}`) | {a.direction} | {members} | {_num(a.max)} | {_num(a.half)} | {a.cap} | {weights} | {_cell(a.rationale)} |"
        )
    out += [
        "",
        "### Per-rule weights",
        "",
        "| Name | Rule | Only when | Weight | Effort | Rationale |",
        "| --- | --- | --- | ---: | --- | --- |",
    ]
    for o in sorted(params.overrides, key=lambda o: (o.rule, o.name)):
        facts = ", ".join(f"{k} = {v}" for k, v in o.facts.items()) or "always"
        out.append(
            f"| `{o.name}` | {o.rule} | {_cell(facts)} | {_num(o.weight)} | {o.effort or 'rule default'} | {_cell(o.rationale)} |"
        )
    out += [
        "",
        "### Scopes",
        "",
        "| Name | Paths (regular expressions) | Factor | Rationale |",
        "| --- | --- | ---: | --- |",
    ]
    for s in params.scopes:
        patterns = ", ".join(f"`{_cell(p.pattern)}`" for p in s.patterns)
        out.append(f"| `{s.name}` | {patterns} | {_num(s.factor)} | {_cell(s.rationale)} |")
    out += [
        "",
        "### Effort classes",
        "",
        "| Class | First finding of a unit (h) | Each further finding (h) | Rationale |",
        "| --- | ---: | ---: | --- |",
    ]
    for e in params.efforts.values():
        out.append(f"| {e.effort} | {_num(e.first)} | {_num(e.more)} | {_cell(e.rationale)} |")
    out += ["", "### Grades", "", "| Grade | Scores | Label | Rationale |", "| --- | --- | --- | --- |"]
    low = 0
    for g in params.grades:
        out.append(f"| {g.grade} | {low}-{min(g.below - 1, 100)} | {g.label} | {_cell(g.rationale)} |")
        low = g.below
    severities = "; ".join(f"{d}: {', '.join(sorted(v))}" for d, v in params.effort_severities.items())
    out += [
        "",
        "### Model settings",
        "",
        f"- `reference_lines` = {params.reference_lines}",
        f"- `hot_spot_share` = {_num(params.hot_spot_share)}%",
        f"- `hours_per_week` = {_num(params.hours_per_week)}",
        f"- `effort_severities`: {severities}",
        f"- Rationale: {params.rationale}",
    ]
    return "\n".join(out)


def render_block(params: LockinParams) -> str:
    return f"{BEGIN}\n\n{tables(params)}\n\n{END}"


def current_doc(text: str, params: LockinParams) -> str:
    """`text` with its generated block replaced by the current one (ValueError without markers)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{DOC}: the markers of the generated block are missing")
    return text[:start] + render_block(params) + text[end + len(END) :]


def main() -> int:
    params = load_params(load_ruledb())
    text = DOC.read_text(encoding="utf-8")
    updated = current_doc(text, params)
    if updated != text:
        DOC.write_text(updated, encoding="utf-8")
        print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
