"""`neuronlint rules` (effective rules for an SDK and chip), `rules diff` and `explain`.

Plain `neuronlint rules` lists; `neuronlint rules diff OLD NEW --target T` compares two releases.
They read `[tool.neuronlint]` (sdk, target, backend, rules-dir, compiler-flags) like `scan` does.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any

import typer

from neuronlint.cli.options import DATABASE, FRAME, RunSettings, ScanFlags, fail, shared_options
from neuronlint.ruledb import Context, RuleDB, RuleDBError
from neuronlint.ruledb.diff import ReleaseDiff, diff_releases
from neuronlint.ruledb.diff import plain_text as _plain
from neuronlint.ruledb.versions import parse_version

FormatOpt = Annotated[str, typer.Option("--format", "-f", help="text or json.")]

rules_app = typer.Typer(
    name="rules",
    help="Show the effective rules for a Neuron SDK release and chip, or what changes between two releases.",
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _database(flags: ScanFlags) -> tuple[RuleDB, RunSettings]:
    """The database with policy packs from the config's `rules-dir` and from --rules-dir."""
    settings = flags.settings(check_paths=False)
    try:
        return settings.database(), settings
    except RuleDBError as exc:
        raise fail(str(exc)) from None


def _frame(db: RuleDB, settings: RunSettings) -> Context:
    try:
        return settings.frame(db)
    except RuleDBError as exc:
        raise fail(str(exc)) from None


def _check_format(format: str) -> None:
    if format not in ("text", "json"):
        raise fail(f"unknown format {format!r} (expected text or json)")


# ---- neuronlint rules ------------------------------------------------------------------------------
def effective_rules(db: RuleDB, ctx: Context) -> dict[str, Any]:
    """The frame, its release and platform facts, and every rule's verdict in it (JSON-ready)."""
    release = db.releases[ctx.sdk]
    backend = release.backends[ctx.backend]
    rules = []
    for rule in sorted(db.rules.values(), key=lambda r: r.id):
        verdict = db.judge(rule.id, {}, ctx)
        rules.append(
            {
                "id": rule.id,
                "name": rule.name,
                "category": rule.category,
                "severity": verdict.severity.value,
                "default_severity": rule.severity.value,
                "status": verdict.status,
                "reported": verdict.enabled,
                "condition": verdict.condition,
                "note": verdict.note,
                "title": rule.title,
                "default_enabled": rule.default_enabled,
                "origin": rule.origin,
                "sources": list(verdict.sources),
            }
        )
    platform = {}
    for name, value in ctx.platform.items():
        entry = db.platform_entry(ctx, name)
        platform[name] = {
            "value": value,
            "note": entry.note if entry else "",
            "source": db.platform_source(ctx, name),  # none when no entry says: unknown
            "evidence": entry.evidence if entry else "documented",
        }
    return {
        "sdk": ctx.sdk,
        "target": ctx.target,
        "backend": ctx.backend,
        "compiler_flags": sorted(ctx.flags),
        "release": {
            "date": release.date,
            "note": release.note,
            "source": release.source,
            "backends_available": release.backends_for(ctx.target),
            "torch": release.torch_for(ctx.backend, ctx.target),
            "backend": {k: backend[k] for k in backend},
        },
        "chip": {k: v for k, v in db.chips[ctx.target].raw.items() if k != "dtypes"},
        "dtypes": dict(db.chips[ctx.target].dtypes),
        "platform": platform,
        "rules": rules,
    }


@shared_options(*FRAME, *DATABASE)
def rules_list(context: typer.Context, flags: ScanFlags, format: FormatOpt = "text") -> None:
    """List the rules with their effective severity and status for an SDK release and chip."""
    if context.invoked_subcommand is not None:
        return
    _check_format(format)
    db, settings = _database(flags)
    data = effective_rules(db, _frame(db, settings))
    if format == "json":
        typer.echo(json.dumps(data, indent=2))
        return
    _print_rules_text(data)


def _print_rules_text(data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    backend = data["release"]["backend"]
    console = Console(width=max(110, _width()), highlight=False)
    flags = " ".join(data["compiler_flags"]) or "none declared"
    console.print(
        f"Neuron SDK {data['sdk']} ({data['release']['date']}) on {data['target']}: {data['backend']} backend "
        f"({data['platform']['backend_status']['value']}), {backend['package']} for torch "
        f"{', '.join(data['release']['torch'])}, "
        f"training {'supported' if backend['training'] else 'not supported'}; compiler flags: {flags}",
        markup=False,
    )
    if data["release"]["note"]:
        console.print(f"Note: {data['release']['note']}", markup=False)
    facts = ", ".join(
        f"{name}={item['value']}"
        + (" (reported, not documented)" if item.get("evidence") == "reported" else "")
        for name, item in data["platform"].items()
    )
    console.print(f"Platform: {facts}", markup=False)
    table = Table(title=None)
    for column in ("id", "category", "severity", "status", "title"):
        table.add_column(column)
    for row in data["rules"]:
        title = (
            row["title"]
            + ("" if row["default_enabled"] else " (opt-in)")
            + ("" if row["reported"] else " (not reported here)")
        )
        table.add_row(row["id"], row["category"], row["severity"], row["status"], title)
    console.print(table)


def _width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120


# ---- neuronlint rules diff ------------------------------------------------------------------------
@shared_options("target", "backend", "compiler_flags", *DATABASE)
def rules_diff(
    old: Annotated[str, typer.Argument(help="The release you are on, e.g. 2.29.")],
    new: Annotated[str, typer.Argument(help="The release you consider, e.g. 2.33.")],
    flags: ScanFlags,
    format: FormatOpt = "text",
) -> None:
    """What changes on one chip between two releases: verdicts, backends, platform facts, release notes, ops."""
    _check_format(format)
    db, settings = _database(flags)
    o = settings.options
    try:
        diff = diff_releases(db, old, new, o.target, o.backend, o.compiler_flags)
    except RuleDBError as exc:
        raise fail(str(exc)) from None
    if format == "json":
        typer.echo(json.dumps(diff.to_dict(), indent=2))
    else:
        sys.stdout.write(diff_text(diff))


def _versions(ctx: Context, torch: list[str]) -> str:
    return f"{ctx.backend} (torch {', '.join(torch)})"


def diff_text(diff: ReleaseDiff) -> str:
    """The plain-text report of a release diff (stable, no colour: fit for review and CI logs)."""
    old, new = diff.old, diff.new
    out = [f"Neuron SDK {old.sdk} -> {new.sdk} on {new.target}"]
    backend_line = f"{_versions(old, diff.torch_old)} -> {_versions(new, diff.torch_new)}"
    gained = [b for b in diff.backends_new if b not in diff.backends_old]
    lost = [b for b in diff.backends_old if b not in diff.backends_new]
    if gained or lost:
        backend_line += "; " + "; ".join(
            [f"backend gained: {', '.join(gained)}"] * bool(gained)
            + [f"backend lost: {', '.join(lost)}"] * bool(lost)
        )
    out.append(f"  backend   {backend_line}")
    out.append(f"  training  {_yes(old.training)} -> {_yes(new.training)}")
    chips = []
    if diff.chips_gained:
        chips.append(f"gained {', '.join(diff.chips_gained)}")
    if diff.chips_lost:
        chips.append(f"lost {', '.join(diff.chips_lost)}")
    out.append(f"  chips     {'; '.join(chips) or 'no change'} (any PyTorch backend)")
    out.append(f"  flags     {' '.join(sorted(new.flags)) or 'none declared'}")

    out += ["", f"Platform facts that change ({len(diff.facts)}):"]
    for fact in diff.facts:
        out.append(f"  {fact.fact:<18} {fact.old} -> {fact.new}" + (f"  {fact.note}" if fact.note else ""))
        out.append(f"  {'':<18} {fact.source}")
    if not diff.facts:
        out.append("  none")

    milder = sum(1 for c in diff.rules if c.relaxed and not c.advice_only)
    advice = sum(1 for c in diff.rules if c.advice_only)
    stricter = len(diff.rules) - milder - advice
    out += [
        "",
        f"Rules whose verdict changes ({len(diff.rules)}; {milder} milder, {stricter} stricter"
        + (f", {advice} with new advice only" if advice else "")
        + "):",
    ]
    for change in diff.rules:
        arrow = "advice changes" if change.advice_only else "milder" if change.relaxed else "stricter"
        case = f" [{change.case}]" if change.case else ""
        out.append(
            f"  {change.rule} {change.name}{case}: {change.old.label()} -> {change.new.label()} ({arrow})"
        )
        if change.reason:
            out.append(f"        {'no longer applies: ' if change.reason_is_old else ''}{change.reason}")
        if change.advice_changed:
            out.append(f"        advice now: {change.new.advice}")
    if not diff.rules:
        out.append("  none")

    if diff.replacements:
        out += ["", f"What to write instead changes with the backend ({old.backend} -> {new.backend}):"]
        for item in diff.replacements:
            out.append(f"  {item.subject}")
            out.append(f"        {old.backend}: {item.old}")
            out.append(f"        {new.backend}: {item.new}")

    out += [
        "",
        f"Release notes after {min(old.sdk, new.sdk, key=parse_version)} up to {max(old.sdk, new.sdk, key=parse_version)} ({len(diff.notes)}):",
    ]
    for note in diff.notes:
        out.append(f"  {note.version}  {note.text}")
        out.append(f"        {note.source}")
    if not diff.notes:
        out.append("  none")

    out.append("")
    if diff.ops is None:
        out.append(
            "Operators: no operator table is registered in the database; ops gained/lost not computed."
        )
    elif not diff.ops.comparable:
        out.append(
            f"Operators ([[{diff.ops.table}]]): not comparable, {diff.ops.old_basis} -> {diff.ops.new_basis}; "
            "the table does not describe both frames (operator support on TorchNeuron is not in the database)."
        )
    else:
        out.append(
            f"Operators ([[{diff.ops.table}]], {diff.ops.old_basis} -> {diff.ops.new_basis}): "
            f"{len(diff.ops.gained)} gained, {len(diff.ops.lost)} lost"
        )
        out += [f"  + {op}" for op in diff.ops.gained] + [f"  - {op}" for op in diff.ops.lost]
    if diff.caveats:
        out += ["", "Caveats:"] + [f"  {c}" for c in diff.caveats]
    return "\n".join(out) + "\n"


def _yes(value: bool) -> str:
    return "supported" if value else "not supported"


# ---- neuronlint explain ---------------------------------------------------------------------------
@shared_options(*FRAME, *DATABASE)
def explain(
    rule: Annotated[str, typer.Argument(help="Rule ID, e.g. NL101, or its name, e.g. cuda-device.")],
    flags: ScanFlags,
) -> None:
    """Show a rule's documentation: what it detects, why, what to do instead, sources, verdicts per release."""
    from neuronlint.ruledb.pages import rule_markdown

    db, settings = _database(flags)
    wanted = rule.strip()
    match = db.rules.get(wanted.upper()) or next((r for r in db.rules.values() if r.name == wanted), None)
    if match is None:
        raise fail(f"unknown rule {rule!r}; `neuronlint rules` lists them")
    text = rule_markdown(db, match)
    if flags.sdk or flags.target or flags.backend or flags.compiler_flags:
        ctx = _frame(db, settings)
        verdict = db.judge(match.id, {}, ctx)
        frame = f"Neuron SDK {ctx.sdk} on {ctx.target} ({ctx.backend} backend)"
        # The frame's own advice ([[rule.advice]] may replace `instead`), fields not filled in named plainly.
        said = _plain(" ".join(part for part in (verdict.note, verdict.advice) if part))
        head = f"> **{frame}:** {verdict.severity.value}, {verdict.status}. {said}\n\n"
        title, _, rest = text.partition("\n\n")
        text = f"{title}\n\n{head}{rest}"
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    else:
        sys.stdout.write(text)


def register(app: typer.Typer) -> None:
    """Attach `rules` (with `rules diff`) and `explain` to the main command line."""
    rules_app.callback(invoke_without_command=True)(rules_list)
    rules_app.command("diff")(rules_diff)
    app.add_typer(rules_app, name="rules")
    app.command("explain")(explain)
