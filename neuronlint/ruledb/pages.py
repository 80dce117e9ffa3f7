"""Rule pages from the rule database: `neuronlint explain`, SARIF rule help, and docs/rules/*.md.

scripts/generate_rule_docs.py writes docs/rules/ from the bundled database (never from a policy
pack); tests/test_docs.py fails when the committed pages are stale. A page's Example and Instead
code are the rule's first firing and first quiet `[[rule.case]]`.
"""

from __future__ import annotations

from typing import Any

from neuronlint.ruledb.cases import language, page_cases
from neuronlint.ruledb.model import Rule, RuleDB, RuleDBError, Verdict

DOCS_URL = "https://github.com/neuronlint/neuronlint/blob/main/docs/rules/{id}.md"
REGENERATE = "python scripts/generate_rule_docs.py"
BACKEND_LABELS = {
    "xla": "PyTorch/XLA backend (torch-neuronx ≤ 2.9, device `xla`)",
    "native": "Native TorchNeuron (device `neuron`, Trn2/Trn3, Neuron 2.33+)",
    "any": "On any Neuron backend",
}
BACKEND_NAMES = {"xla": "PyTorch/XLA", "native": "TorchNeuron"}


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _short(verdict: Verdict) -> str:
    return f"{verdict.severity.value}, {verdict.status}" + ("" if verdict.enabled else " (not reported)")


def verdict_grid(db: RuleDB, rule: Rule) -> dict[tuple[str, str], dict[str, str]]:
    """(release, chip) -> {backend: 'severity, status'} for every backend the release offers there."""
    grid: dict[tuple[str, str], dict[str, str]] = {}
    for version in db.versions():
        for target in db.chips:
            cells = {}
            for backend in db.releases[version].backends_for(target):
                try:
                    ctx = db.context(version, target, backend)
                except RuleDBError:  # pragma: no cover - backends_for already filtered
                    continue
                cells[backend] = _short(db.judge(rule.id, {}, ctx))
            grid[(version, target)] = cells
    return grid


def version_table(db: RuleDB, rule: Rule) -> list[list[str]]:
    """Verdict per SDK release (rows) and chip (columns); '—' where the release lacks the chip."""
    grid = verdict_grid(db, rule)
    rows = []
    for version in reversed(db.versions()):
        row = [version]
        for target in db.chips:
            cells = grid[(version, target)]
            if not cells:
                row.append("—")
            elif len(cells) == 1:
                ((backend, text),) = cells.items()
                row.append(f"{text} ({backend})")
            else:
                row.append("<br>".join(f"{backend}: {text}" for backend, text in cells.items()))
        rows.append(row)
    return rows


def verdict_history(db: RuleDB, rule: Rule) -> list[str]:
    """HIPIFY-style history per chip and backend: the release each verdict starts, and where it ends."""
    grid = verdict_grid(db, rule)
    lines = []
    for target in db.chips:
        for backend in ("xla", "native"):
            spans: list[list[Any]] = []  # [verdict, first release, last release]
            for version in db.versions():
                text = grid[(version, target)].get(backend)
                if text is None:
                    continue
                if spans and spans[-1][0] == text and spans[-1][2] == _previous(db, version):
                    spans[-1][2] = version
                else:
                    spans.append([text, version, version])
            if not spans:
                continue
            parts = [
                f"{text} in {first}" + ("" if first == last else f"–{last}") for text, first, last in spans
            ]
            newest = db.versions()[-1]
            if spans[-1][2] != newest:
                parts.append(f"not offered from {_next(db, spans[-1][2])}")
            lines.append(f"- **{target}, {BACKEND_NAMES[backend]}:** " + "; ".join(parts))
    return lines


def _previous(db: RuleDB, version: str) -> str | None:
    versions = db.versions()
    index = versions.index(version)
    return versions[index - 1] if index else None


def _next(db: RuleDB, version: str) -> str:
    versions = db.versions()
    return versions[versions.index(version) + 1]


def _api_rows(db: RuleDB, rule: Rule) -> list[str]:
    rows = []
    for api in db.tables.get("api", ()):
        if api["rule"] != rule.id or not (api.get("xla") or api.get("native") or api.get("note")):
            continue
        none = "no direct equivalent"
        rows.append(
            f"| `{_cell(api['name'])}` | {_cell(api.get('xla') or none)} | {_cell(api.get('native') or none)} | "
            f"{_cell(api.get('note', ''))} | <{api['source']}> |"
        )
    return rows


def _uses_libraries(rule: Rule) -> bool:
    text = rule.message + " ".join(rule.instead.values())
    return "{alternative}" in text or "{library}" in text


_FIX_SAFETY = {
    "safe": "safe: `neuronlint fix` (and `scan --fix`) applies it; behaviour on CUDA is unchanged.",
    "unsafe": "unsafe: applied only with `--unsafe-fixes`, because it changes behaviour a reviewer must judge.",
    "mixed": "safe for some forms, unsafe for others (below); `--unsafe-fixes` applies the unsafe ones.",
    "none": "no automatic fix.",
}
_FIX_FLAVOURS = (
    ("portable", "portable (`--to portable`, default)"),
    ("neuron", "TorchNeuron (`--to neuron`)"),
    ("xla", "PyTorch/XLA (`--to xla`)"),
)


def fix_section(rule: Rule) -> list[str]:
    """The page's "Fix" section: whether `neuronlint fix` handles the rule, how safely, per flavour."""
    fix = rule.fix
    lines = ["## Fix", ""]
    if not fix:
        return [*lines, "No automatic fix: the change needs a person (see What to do instead)."]
    if fix["safety"] == "none":
        return [*lines, fix.get("note") or "No automatic fix."]
    lines.append(f"Fix safety: {_FIX_SAFETY[fix['safety']]}")
    flavours = [(label, fix[key]) for key, label in _FIX_FLAVOURS if fix.get(key)]
    if flavours:
        lines.append("")
        lines += [f"- **{label}:** {text}" for label, text in flavours]
    if fix.get("note"):
        lines += ["", fix["note"]]
    return lines


def rule_markdown(db: RuleDB, rule: Rule) -> str:
    """One rule's page: detection, reason, example, what to write per backend, verdicts, sources."""
    opt_in = "" if rule.default_enabled else f" (opt-in: enable with `--extend-select {rule.id}`)"
    lines = [
        f"# {rule.id} {rule.name}: {rule.title}",
        "",
        f"- **Category:** `{rule.category}`",
        f"- **Default severity:** {rule.severity.value}{opt_in}",
        f"- **Neuron support status (default):** {rule.status}",
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
    ]
    example, fixed = page_cases(rule.cases)
    if example is not None:
        lines += [f"```{language(example)}", example.shown, "```"]
    if fixed is not None:
        lines += ["", "Instead:", "", f"```{language(fixed)}", fixed.shown, "```"]
    lines += ["", "## What to do instead", ""]
    for key in ("xla", "native", "any"):
        if rule.instead.get(key):
            lines.append(f"- **{BACKEND_LABELS[key]}:** {rule.instead[key]}")
    for backend in ("xla", "native"):
        if backend not in rule.instead and "any" not in rule.instead:
            lines.append(f"- **{BACKEND_LABELS[backend]}:** no documented replacement.")
    for advice in rule.advice:  # [[rule.advice]]: where a platform condition replaces the advice
        text = " ".join(f"{BACKEND_LABELS[k]}: {v}" if k != "any" else v for k, v in advice.instead.items())
        cites = " " + " ".join(f"[source]({s})" for s in advice.sources) if advice.sources else ""
        lines.append(f"- **Where {advice.when.describe()}:** {text}{cites}")
    api_rows = _api_rows(db, rule)
    if api_rows:
        lines += [
            "",
            "Replacements per API (from `rules/apis.toml`):",
            "",
            "| API | PyTorch/XLA | TorchNeuron | Note | Source |",
            "|---|---|---|---|---|",
            *api_rows,
        ]
    if _uses_libraries(rule) and db.tables.get("library"):
        lines += [
            "",
            "Libraries and their documented Neuron alternatives (from `rules/libraries.toml`):",
            "",
            "| Library | Runs on (its own documentation) | Neuron status | Alternative | Source |",
            "|---|---|---|---|---|",
        ]
        for lib in sorted(db.tables["library"], key=lambda item: item["name"]):
            runs = f"{lib['support']}: {lib.get('runs_on', '')}".rstrip(": ")
            if lib.get("support_source"):
                runs += f" ([source]({lib['support_source']}))"
            lines.append(
                f"| `{_cell(lib['name'])}` | {_cell(runs)} | {lib['status']} | {_cell(lib['alternative'])} | "
                f"<{lib['source']}> |"
            )
    lines += ["", *fix_section(rule)]
    if rule.verdicts:
        lines += [
            "",
            "## Verdict conditions",
            "",
            "The first matching condition refines the default verdict:",
            "",
        ]
        for v in rule.verdicts:
            sev = v.severity.value if v.severity else rule.severity.value
            state = f"{sev}, {v.status or rule.status}" + ("" if v.enabled else ", not reported")
            cites = " " + " ".join(f"[source]({s})" for s in v.sources) if v.sources else ""
            lines.append(f"- {v.when.describe()}: {state}" + (f". {v.note}" if v.note else "") + cites)
    lines += [
        "",
        "## Verdict by Neuron SDK release and chip",
        "",
        "Severity and status of the construct without extra facts, newest release first; the backend "
        "is in parentheses, and both are shown where a release offers two. '—' means the release "
        "supports no PyTorch backend on that chip.",
        "",
        "| SDK | " + " | ".join(db.chips) + " |",
        "|---|" + "---|" * len(db.chips),
    ]
    for row in version_table(db, rule):
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "History per chip and backend:", "", *verdict_history(db, rule)]
    lines += ["", "## Sources", ""]
    lines += [f"- <{s}>" for s in rule.all_sources()]
    lines.append("")
    return "\n".join(lines)


def index_markdown(db: RuleDB) -> str:
    """docs/rules/README.md: every rule, then the releases and chips the verdicts are computed for."""
    lines = [
        "# Rules",
        "",
        f"Generated from `rules/` by `{REGENERATE}`; do not edit by hand.",
        "",
        "| ID | Name | Category | Default severity | Title |",
        "|---|---|---|---|---|",
    ]
    for rule in sorted(db.rules.values(), key=lambda r: r.id):
        opt = " (opt-in)" if not rule.default_enabled else ""
        lines.append(
            f"| [{rule.id}]({rule.id}.md) | {rule.name} | {rule.category} | {rule.severity.value}{opt} | {_cell(rule.title)} |"
        )
    lines += [
        "",
        "## Neuron SDK releases in the database",
        "",
        "| SDK | Date | Backend | Status | Training | Chips | PyTorch | torch-xla | Source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for version in reversed(db.versions()):
        release = db.releases[version]
        for backend, info in release.backends.items():
            lines.append(
                f"| {version} | {release.date} | {BACKEND_NAMES[backend]} | {info['status']} | "
                f"{'yes' if info['training'] else 'no'} | {', '.join(info['chips'])} | {', '.join(info['torch'])} | "
                f"{', '.join(info.get('torch_xla', [])) or '—'} | <{info['source']}> |"
            )
    notes = [(v, db.releases[v].note) for v in reversed(db.versions()) if db.releases[v].note]
    if notes:
        lines += ["", "Notes:", ""] + [f"- **{v}:** {_cell(note)}" for v, note in notes]
    lines += [
        "",
        "## Chips",
        "",
        "| Chip | NeuronCore | Cores | HBM | int64 | Source |",
        "|---|---|---|---|---|---|",
    ]
    for chip in db.chips.values():
        lines.append(
            f"| {chip.name} ({_cell(chip.title)}) | {chip.neuroncore} | {chip.cores} | {chip.hbm_gib} GiB | "
            f"{_cell(chip.int64_mode)} | <{chip.source}> |"
        )
    dtypes = list(dict.fromkeys(name for chip in db.chips.values() for name in chip.dtypes))
    lines += [
        "",
        "Data types per chip (status; see `rules/chips.toml` for notes and sources):",
        "",
        "| dtype | " + " | ".join(db.chips) + " |",
        "|---|" + "---|" * len(db.chips),
    ]
    for name in dtypes:
        cells = [chip.dtypes[name]["status"] if name in chip.dtypes else "—" for chip in db.chips.values()]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Platform facts",
        "",
        "Values verdicts can depend on (`rules/platform.toml`); the first entry that applies wins, and "
        "anything no entry covers is `unknown`.",
        "",
        "| Fact | Value | SDK | Chips | Backend | Needs flag | Source |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in db.platform:
        when = entry.when
        lines.append(
            f"| {entry.fact} | {entry.value} | {when.sdk.text if when.sdk else 'any'} | "
            f"{', '.join(when.targets) or 'any'} | {when.backend or 'any'} | {entry.flag or '—'} | <{entry.source}> |"
        )
    lines.append("")
    return "\n".join(lines)


def generated_pages(db: RuleDB) -> dict[str, str]:
    """File name -> content of every page under docs/rules/."""
    pages = {f"{rule.id}.md": rule_markdown(db, rule) for rule in db.rules.values()}
    pages["README.md"] = index_markdown(db)
    return pages
