"""NL003: suppression comments that silenced nothing in this scan (`--report-unused-suppressions`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuronlint import fingerprints
from neuronlint.filters.selection import Selection
from neuronlint.findings import Finding
from neuronlint.ruledb import Context, RuleDB

UNUSED_SUPPRESSION_RULE = "NL003"


def _line_text(path: Path, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if number == line:
                    return text.rstrip("\r\n")
    except OSError:
        pass
    return ""


def _rules_all_disabled(selector: str, db: RuleDB, selection: Selection) -> bool:
    """True when the rules a suppression names exist but none ran: its use cannot be judged."""
    matching = [rule_id for rule_id in db.rules if rule_id.startswith(selector)]
    if not matching:
        return False  # names no rule at all: certainly unused
    return not any(selection.enabled(db, rule_id) for rule_id in matching)


def unknown_selectors(entry: dict[str, Any], db: RuleDB) -> list[str]:
    """The names in a suppression comment that match no rule ID, prefix or category."""
    categories = {r.category for r in db.rules.values()}
    return [s for s in entry["rules"] if s not in categories and not any(r.startswith(s) for r in db.rules)]


def is_broken(entry: dict[str, Any], db: RuleDB) -> bool:
    """A misspelt keyword or a comment naming no rule: reported without --report-unused-suppressions."""
    return entry.get("invalid") is not None or bool(unknown_selectors(entry, db))


def unused_suppression_findings(
    unused: list[tuple[str, dict[str, Any]]], db: RuleDB, ctx: Context, selection: Selection, cwd: Path
) -> list[Finding]:
    """NL003 findings for the (path, suppression comment) pairs that silenced nothing.

    A comment naming only rules that this run did not check (e.g. a narrower --select) is not
    reported: nothing says whether it would have been used. NL003 itself is opt-in by the flag:
    only an --ignore turns it off.
    """
    rule = UNUSED_SUPPRESSION_RULE
    if rule not in db.rules or not Selection(
        selection.select, selection.extend_select + [rule], selection.ignore
    ).enabled(db, rule):
        return []
    out: list[Finding] = []
    for path, entry in unused:
        if any(_rules_all_disabled(selector, db, selection) for selector in entry["rules"]):
            continue
        names = f"[{', '.join(entry['rules'])}]" if entry["rules"] else ""
        directive = ("-file" if entry["file"] else "") + names
        verdict = db.judge(rule, {"rules": directive, "target": ctx.target}, ctx)
        if not verdict.enabled:
            continue
        message = verdict.message
        unknown = unknown_selectors(entry, db)
        if entry.get("invalid") is not None:
            message = (
                f"`# neuronlint: {entry['invalid']}` is not a suppression comment: the keyword is "
                "`ignore[...]` or `ignore-file[...]`."
            )
        elif unknown:
            message = (
                f"`# neuronlint: ignore{directive}` names no rule: {', '.join(unknown)} "
                "(a rule ID, an ID prefix or a category)."
            )
        text = _line_text(cwd / path, entry["line"])
        column = entry["column"]
        end_column = max(len(text) + 1, column + 1)
        out.append(
            Finding(
                rule=rule,
                category=verdict.rule.category,
                severity=verdict.severity,
                path=path,
                line=entry["line"],
                column=column,
                end_line=entry["line"],
                end_column=end_column,
                message=message,
                name=verdict.rule.name,
                status=verdict.status,
                snippet=fingerprints.normalise(text) or f"# neuronlint: ignore{directive}",
                extra={"sources": list(verdict.sources)},
            )
        )
    return out
