"""Terminal report, in the order a migration engineer reads it (formats/triage.py):

1. the root causes that block the code on the chosen chip and release, ranked, each with the one
   change that removes it; then those that need changes without blocking;
2. one line for test code (summarised apart: it never blocks);
3. the per-file detail: every finding with its source line and the span underlined when there are
   few (or with `--full`), else the files with the most severe findings and their counts;
4. a summary table by category and severity.

`--quiet` prints the per-file detail only; `--statistics` prints counts per rule instead of all this.
Colour and width come from RenderOptions: the command asks rich about the real stdout."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from typing import TYPE_CHECKING

from neuronlint.findings import CATEGORIES, Finding, Severity
from neuronlint.formats import Report, plural, summary
from neuronlint.formats import triage as triage_view
from neuronlint.safe_text import neutralise_lines, printable, visible_controls

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

_STYLE = {"blocker": "bold red", "warning": "yellow", "info": "cyan"}


def safe_console(**options: object) -> Console:
    """A rich Console whose output carries no control character but the styles it adds itself.

    Every segment rich renders, whatever the renderable (Text, tables, markup-free strings), has its
    text passed through `visible_controls`: an ESC in a file name or a source line is shown as
    `\\x1b`, also when colour is on (a terminal, FORCE_COLOR), and only rich's own style codes,
    written around the segments, reach the output. Fields are made `printable` where they are
    inserted too, so that the layout counts what is shown. (rich is imported here, not at the
    module's top: plain output never loads it.)
    """
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        def render(self, renderable, options=None):  # type: ignore[no-untyped-def, override]
            for segment in super().render(renderable, options):
                if segment.control is None and segment.text and not segment.text.isprintable():
                    cleaned = visible_controls(segment.text)
                    if cleaned != segment.text:
                        segment = Segment(cleaned, segment.style, segment.control)
                yield segment

    return SafeConsole(**options)  # type: ignore[arg-type]


def _source_lines(path: str, cache: dict[str, list[str]]) -> list[str]:
    if path not in cache:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                cache[path] = handle.read().splitlines()
        except OSError:
            cache[path] = []
    return cache[path]


def _notebook_cells(path: str, cache: dict) -> dict[tuple[int, int], str]:
    """(cell, line in cell) -> that source line, for a notebook: its findings show the cell's own
    line, not the JSON line that holds it (escaped, with other columns)."""
    key = path + "\0cells"
    if key not in cache:
        from neuronlint.filetypes.notebook import NotebookError, parse_notebook

        try:
            module, mapping = parse_notebook("\n".join(_source_lines(path, cache)))
        except (NotebookError, ValueError):
            cache[key] = {}
        else:
            cache[key] = {
                (mapping.cell[i], mapping.cell_line[i]): line
                for i, line in enumerate(module.splitlines()[: len(mapping.cell)])
            }
    return cache[key]


def location(f: Finding) -> str:
    """`line:column`, or `cell N:line:column` for a notebook (the notebook's cell and its line)."""
    cell = f.extra.get("cell") if f.extra else None
    if cell:
        return f"cell {cell['cell']}:{cell['line']}:{cell['column']}"
    return f"{f.line}:{f.column}"


class _Parts(list):
    """A line's (text, style) parts: a rich Text on a terminal, the bare text otherwise."""

    def append(self, text: str, style: str | None = None) -> None:  # type: ignore[override]
        super().append((text, style))

    def plain(self) -> str:
        return "".join(text for text, _ in self)

    def rich(self) -> Text:
        from rich.text import Text

        return Text.assemble(*self)


def _finding_block(
    f: Finding,
    lines: list[str],
    show_source: bool,
    unsafe_fixes: bool = False,
    cells: dict[tuple[int, int], str] | None = None,
) -> _Parts:
    text = _Parts()
    where = location(f)
    text.append(f"  {where}".ljust(max(10, len(where) + 3)), style="dim")
    text.append(f"{f.severity.value:<8}", style=_STYLE[f.severity.value])
    text.append(f" {f.rule} ", style="bold")
    if f.fix is not None and f.fix.automatic and (f.fix.applicability == "safe" or unsafe_fixes):
        text.append("[*] ", style="green bold")  # fixable with `neuronlint fix` (ruff's marker)
    text.append(f"[{f.category}] ", style="magenta")
    text.append(printable(f.message))
    if f.suppressed is not None:
        text.append(f"  (suppressed: {printable(str(f.suppressed))})", style="dim")
    if f.fix is not None and f.fix.automatic:
        unsafe = " (unsafe: --unsafe-fixes)" if f.fix.applicability == "unsafe" else ""
        text.append(f"\n{'':10}fix{unsafe}: {f.fix.description}", style="green")
    elif f.fix is not None:
        text.append(f"\n{'':10}fix: {f.fix.replacement}", style="green")
    if (f.fix is None or not f.fix.automatic) and f.extra.get("no_fix"):
        text.append(f"\n{'':10}{printable(f.extra['no_fix'])}", style="dim")
    cell = f.extra.get("cell") if f.extra else None
    if cell and cells and (cell["cell"], cell["line"]) in cells:
        source, column = cells[(cell["cell"], cell["line"])], cell["column"]
        end = column + (f.end_column - f.column) if f.end_line == f.line else len(source) + 1
    elif 0 < f.line <= len(lines):
        source, column = lines[f.line - 1], f.column
        end = f.end_column if f.end_line == f.line else len(source) + 1
    else:
        source = None
    if show_source and source is not None:
        source = source.rstrip("\n").expandtabs(4)
        stripped = source.lstrip()
        indent = len(source) - len(stripped)
        text.append(f"\n{'':10}{printable(stripped[:160])}", style="dim")
        width = max(1, min(end, len(source) + 1) - column)
        start = max(0, column - 1 - indent)
        if start < 160:
            text.append(
                f"\n{'':10}{' ' * start}{'^' * min(width, 160 - start)}", style=_STYLE[f.severity.value]
            )
    return text


GLOSSARY_URL = "https://github.com/neuronlint/neuronlint/blob/main/docs/glossary.md"


def render(report: Report) -> str:
    if (
        report.options.quiet
        and not report.statistics
        and not report.options.color
        and not report.options.width
    ):
        plain = _plain_quiet(report)
        if plain is not None:
            return plain
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    # The command decides colour and width from the real stdout (cli/scan.py::terminal_style):
    # rendering into a StringIO, rich alone would see no terminal and drop every style.
    color = report.options.color
    console = safe_console(
        file=buffer,
        force_terminal=color,
        color_system="auto" if color else None,
        width=report.options.width or 120,
        highlight=False,
        no_color=not color,
    )
    if report.statistics:
        _print_statistics(console, report)
        return _finish(buffer.getvalue(), console)
    quiet = bool(report.options.quiet)
    view = triage_view.triage(report)
    full = quiet or report.options.full or len(view.shown) <= triage_view.FULL_BELOW
    if not quiet:
        _print_causes(console, view, report)
    listed = view.shown + (view.tests if quiet or report.options.full else [])
    if full:
        _print_detail(console, report, listed)
    else:
        _print_file_counts(console, view.shown)
    if quiet:
        return _finish(buffer.getvalue(), console)  # --quiet: findings only
    counts = summary(report.findings)
    if counts["total"]:
        table = Table(title="Findings by category", title_justify="left")
        table.add_column("category")
        for sev in ("blocker", "warning", "info"):
            table.add_column(sev, justify="right", style=_STYLE[sev])
        for cat in CATEGORIES:
            row = counts["by_category"].get(cat)
            if row:
                table.add_row(cat, *(str(row[s]) for s in ("blocker", "warning", "info")))
        table.add_row(
            "total", *(str(counts["by_severity"][s]) for s in ("blocker", "warning", "info")), style="bold"
        )
        console.print(table)
    console.print(summary_line(report, counts), soft_wrap=report.options.width is None)
    console.print(Text(f"Terms (trn2, native backend, NKI, NxD, neuronx-cc): {GLOSSARY_URL}", style="dim"))
    safe, unsafe = counts["fixable"]["safe"], counts["fixable"]["unsafe"]
    if report.options.unsafe_fixes and (safe or unsafe):
        console.print(f"[*] {safe + unsafe} fixable with `neuronlint fix --unsafe-fixes`.", markup=False)
    elif safe or unsafe:
        more = f" ({unsafe} more with `neuronlint fix --unsafe-fixes`)" if unsafe else ""
        console.print(f"[*] {safe} fixable with `neuronlint fix`{more}.", markup=False)
    # Scanned text is printed above; no line of it may act as a CI workflow command.
    return _finish(buffer.getvalue(), console)


def _print_causes(console: Console, view: triage_view.Triage, report: Report) -> None:
    from rich.text import Text

    console.print(
        Text(triage_view.headline(view, report.context), style="bold"), soft_wrap=report.options.width is None
    )
    for number, cause in enumerate(view.causes[: triage_view.MAX_CAUSES], start=1):
        severity = cause.severity.value
        line = Text(f"{number:>3}. ")
        line.append(f"{severity:<8}", style=_STYLE[severity])
        line.append(f"{printable(cause.headline)}  ")
        line.append(f"[{cause.id}]", style="dim")
        console.print(line, soft_wrap=report.options.width is None)
        console.print(
            Text(f"       fix:   {printable(cause.change)}", style="green"),
            soft_wrap=report.options.width is None,
        )
        console.print(
            Text(f"       where: {printable(triage_view.where(cause))}", style="dim"),
            soft_wrap=report.options.width is None,
        )
    hidden = view.causes[triage_view.MAX_CAUSES :]
    if hidden:
        counts = triage_view.Counter(c.severity.value for c in hidden)
        console.print(
            f"     … {triage_view.plural(len(hidden), 'more root cause')} "
            f"({triage_view.count_text(counts)}): `--format json` lists every group"
        )
    tests = triage_view.test_summary(view)
    if tests:
        console.print(Text(tests, style="dim"), soft_wrap=report.options.width is None)
    left_out = triage_view.left_out_summary(report)
    if left_out:
        console.print(Text(left_out, style="dim"), soft_wrap=report.options.width is None)
    console.print()


def _print_detail(console: Console, report: Report, findings: list[Finding]) -> None:
    from rich.text import Text

    wanted = {id(f) for f in findings}
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if id(f) in wanted or (f.suppressed is not None and report.options.show_suppressed):
            by_file[f.path].append(f)
    for path in sorted(by_file):
        cache: dict[str, list[str]] = {}  # this file's lines only: 20,000 files' sources never at once
        console.print(Text(printable(path), style="bold underline"))
        lines = _source_lines(path, cache) if report.show_source else []
        cells = _notebook_cells(path, cache) if report.show_source and path.endswith(".ipynb") else None
        for f in by_file[path]:
            # Piped: long messages stay one line (greppable). On a terminal rich wraps them at its
            # real width, between words.
            console.print(
                _finding_block(f, lines, report.show_source, report.options.unsafe_fixes, cells).rich(),
                soft_wrap=report.options.width is None,
            )
        console.print()


# What rich would change in plain text: control characters (stripped), tabs (expanded), a line
# longer than the 120 columns it wraps unwrapped lines at. Text with none of them is printed as is.
_RICH_CHANGES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _plain_quiet(report: Report) -> str | None:
    """`--quiet` without colour (piped, CI, pre-commit): the per-file detail as rich prints it when
    no style applies and every finding line is soft-wrapped, without importing rich; None when
    rich would print the text differently (then rich renders it)."""
    view = triage_view.triage(report)
    wanted = {id(f) for f in view.shown + view.tests}
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if id(f) in wanted or (f.suppressed is not None and report.options.show_suppressed):
            by_file[f.path].append(f)
    out: list[str] = []
    for path in sorted(by_file):
        if not (path.isascii() and len(path) <= 120):
            return None  # rich wraps a header line at 120 cells
        cache: dict[str, list[str]] = {}  # this file's lines only: 20,000 files' sources never at once
        out.append(path)
        lines = _source_lines(path, cache) if report.show_source else []
        cells = _notebook_cells(path, cache) if report.show_source and path.endswith(".ipynb") else None
        for f in by_file[path]:
            out.append(
                _finding_block(f, lines, report.show_source, report.options.unsafe_fixes, cells).plain()
            )
        out.append("")
    text = "".join(line + "\n" for line in out)
    if _RICH_CHANGES.search(text):
        return None
    return neutralise_lines("\n".join(printable(line) for line in text.split("\n")))


def _print_file_counts(console: Console, findings: list[Finding]) -> None:
    from rich.text import Text

    ranked = triage_view.file_counts(findings)
    console.print(Text(f"Findings by file ({len(ranked):,} files, most severe first):", style="bold"))
    shown = [(printable(path), counts) for path, counts in ranked[: triage_view.MAX_FILES]]
    width = min(70, max((len(path) for path, _ in shown), default=0))
    for path, counts in shown:  # a file name is text, never rich markup (`[link=…]`)
        console.print(f"  {path:<{width}}  {triage_view.count_text(counts)}", soft_wrap=True, markup=False)
    if len(ranked) > triage_view.MAX_FILES:
        console.print(
            f"  … {triage_view.plural(len(ranked) - triage_view.MAX_FILES, 'more file')}: "
            "`--full` lists every finding with its source line"
        )
    console.print()


def summary_line(report: Report, counts: dict) -> str:
    """`Scanned 1 file (3 lines) ...: 1 blocker, 0 warnings, 0 info.` plus what --severity hid."""
    ctx = report.context
    by = counts["by_severity"]
    suppressed = f", {counts['suppressed']} suppressed" if counts["suppressed"] else ""
    hidden = report.options.hidden_by_severity
    floor = Severity.parse(report.options.min_severity).rank
    shown = [s for s in ("blocker", "warning", "info") if Severity.parse(s).rank >= floor]
    parts = [plural(by[s], s) for s in shown]
    text = (
        f"Scanned {plural(len(report.files), 'file')} ({plural(report.lines, 'line')}) for Neuron SDK "
        f"{ctx.sdk} on {ctx.target} ({ctx.backend} backend): {', '.join(parts)}{suppressed}"
    )
    if hidden:
        left = ", ".join(plural(hidden[s], s) for s in ("blocker", "warning", "info") if s in hidden)
        text += f"; {left} not shown (--severity {report.options.min_severity})"
    return text + "."


def _finish(text: str, console: Console) -> str:
    """No line of the report may act as a CI workflow command; when not a terminal (CI logs,
    pipes), no terminal control sequence from scanned text survives either."""
    if not console.is_terminal:
        text = "\n".join(printable(line) for line in text.split("\n"))
    return neutralise_lines(text)


def _print_statistics(console: Console, report: Report) -> None:
    """`--statistics`: the counts per rule and the summary line instead of the findings (ruff)."""
    from rich.table import Table
    from rich.text import Text

    counts = summary(report.findings)
    if counts["by_rule"]:
        stats = Table(title="Statistics by rule", title_justify="left")
        stats.add_column("count", justify="right")
        stats.add_column("rule")
        stats.add_column("severity")
        stats.add_column("name")
        severities: dict[str, str] = {}
        for f in report.active:
            severities.setdefault(f.rule, f.severity.value)
        for rule_id, count in sorted(counts["by_rule"].items(), key=lambda kv: (-kv[1], kv[0])):
            severity = severities.get(rule_id, "")
            stats.add_row(
                str(count),
                rule_id,
                Text(severity, style=_STYLE.get(severity, "")),
                report.db.rules[rule_id].name,
            )
        console.print(stats)
    if not report.options.quiet:
        console.print(summary_line(report, counts), soft_wrap=report.options.width is None)
