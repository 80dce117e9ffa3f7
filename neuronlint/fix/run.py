"""Fixing files: attach fixes to a scan's findings, and apply them until nothing fixable is left.

`attach` gives every fixable finding of a scan its Fix (the exact edits, safe or unsafe), so text,
JSON and SARIF can show them. `fix_files` applies them: per file it plans, applies the edits that do
not conflict, rescans the new text and repeats (as ruff does) until no selected fix remains; a file
is written only when its new text parses. A second run therefore finds nothing to do.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from neuronlint.filters import first_party, triage
from neuronlint.filters.notes import is_note
from neuronlint.findings import Finding, Fix
from neuronlint.fix.engine import FilePlan, blocks, choose, plan_file, suppressed_lines
from neuronlint.fix.fixers import FIXERS
from neuronlint.fix.flavours import Flavour, FlavourError, flavour_for
from neuronlint.fix.model import SAFE, Edit, Plan, apply_edits
from neuronlint.pipeline import ScanOptions, ScanResult, findings_in_frame
from neuronlint.ruledb import Context, RuleDB
from neuronlint.scope import ScopeRules
from neuronlint.static.data import build_static_data
from neuronlint.static.link import link_result

MAX_ROUNDS = 10
FIXED_SUFFIXES = (".py", ".ipynb")


def fixable_rules() -> frozenset[str]:
    return frozenset(FIXERS)


def _check_parses(code: str, path: str) -> None:
    """SyntaxError unless Python parses the new text (top-level await allowed, as in notebooks)."""
    compile(code, path, "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def _by_file(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        out.setdefault(finding.path, []).append(finding)
    return out


def _read(base: Path, path: str) -> str | None:
    try:
        return (base / path).read_bytes().decode("utf-8")  # bytes: line endings stay as they are
    except (OSError, UnicodeDecodeError):
        return None


def attach(result: ScanResult, flavour: Flavour, base: Path) -> int:
    """Give each fixable finding its Fix; returns how many findings have an automatic fix.

    A notebook's fix carries the edits of its JSON text (what `fix` writes there). A finding of a
    rule that has no automatic fix by design (kernels, CUDA-only libraries, dynamic shapes...) gets
    its rule's reason in `extra["no_fix"]`, which the outputs show."""
    rules = fixable_rules()
    for finding in result.findings:
        rule = result.db.rules.get(finding.rule)
        if rule is not None and rule.fix.get("safety") == "none" and rule.fix.get("note"):
            finding.extra["no_fix"] = rule.fix["note"]
    count = 0
    planned = result.fix_plans if result.fix_plans_flavour == flavour else {}
    for path, findings in _by_file(result.findings).items():
        if not path.endswith(FIXED_SUFFIXES) or not any(
            f.rule in rules and f.suppressed is None for f in findings
        ):
            continue
        given = _give_planned(findings, planned.pop(path, None))
        if given is not None:
            count += given
            continue
        code = _read(base, path)
        if code is None:
            continue
        if path.endswith(".ipynb"):
            count += _attach_notebook(path, code, findings, flavour)
            continue
        plan = plan_file(path, code, findings, flavour)
        for index, item in plan.plans.items():
            _give(findings[index], item, item.edits)
            count += 1
    result.fix_plans = {}  # what the findings do not need: plans of detections the filters left out
    return count


def _key(finding: Finding) -> tuple[str, int, int, int, int]:
    return (finding.rule, finding.line, finding.column, finding.end_line, finding.end_column)


def _give_planned(findings: list[Finding], plans: dict[tuple, Plan | None] | None) -> int | None:
    """Give one file's findings the fixes its worker planned (`worker_planner`), as `plan_file`
    would; None (nothing given) when a fixable finding has no plan from the worker, so that the
    file is planned here."""
    if plans is None:
        return None
    wanted = [i for i, f in enumerate(findings) if f.suppressed is None and f.rule in FIXERS]
    if any(_key(findings[i]) not in plans for i in wanted):
        return None
    blocked = suppressed_lines(findings)
    count = 0
    for index in wanted:
        item = plans[_key(findings[index])]
        if item is not None and not blocks(item, blocked):
            _give(findings[index], item, item.edits)
            count += 1
    return count


@dataclass(frozen=True)
class WorkerPlanner:
    """What a scan's pool worker runs on each Python file it analysed (ScanOptions.fix_planner):
    the fix of every detection of a rule with a fixer, planned on the worker's own tree of the
    file, so that the parent neither reads nor parses the file again to show its fixes. A plan
    belongs to a detection's rule and span; the parent gives it to the finding of that rule and
    span, leaving out those that touch a suppressed finding's line, as `plan_file` does."""

    flavour: Flavour

    @property
    def rules(self) -> frozenset[str]:
        """The rules it plans fixes for (the analysis keeps LibCST's tree of a file with one)."""
        return frozenset(FIXERS)

    def __call__(self, data: bytes, detections: list[dict]) -> dict[tuple, Plan | None] | None:
        from neuronlint.findings import Severity
        from neuronlint.fix.context import FixContext
        from neuronlint.fix.engine import plan_one
        from neuronlint.fix.source import SourceFile
        from neuronlint.static.engine import parsed_tree

        wanted = dict.fromkeys(
            (d["rule"], d["line"], d["column"], d["end_line"], d["end_column"])
            for d in detections
            if d["rule"] in FIXERS and "cell" not in d
        )
        module = parsed_tree(data) if wanted else None
        if module is None:  # nothing to fix, or analysed in an isolated child: the parent plans it
            return None
        try:
            source = SourceFile.of_tree(data.decode("utf-8"), module)
            context = FixContext(source, self.flavour)
            plans = {}
            for key in wanted:
                rule, line, column, end_line, end_column = key
                finding = Finding(rule, "", Severity.WARNING, "", line, column, end_line, end_column, "")
                plans[key] = plan_one(finding, source, context)
        except Exception:  # noqa: BLE001 - the parent plans the file and meets the same error there
            return None
        return plans


def worker_planner(name: str, db: RuleDB, ctx: Context) -> WorkerPlanner | None:
    """The planner of `--to name` in the scan's frame (ScanOptions.fix_planner); None when the
    frame lacks that flavour (the command reports it after the scan)."""
    try:
        return WorkerPlanner(flavour_for(name, ctx, db))
    except FlavourError:
        return None


def _give(finding: Finding, plan: Plan, edits: tuple[Edit, ...]) -> None:
    finding.fix = Fix(
        replacement=plan.edits[-1].content,
        description=plan.description,
        applicability=plan.applicability,
        edits=edits,
    )


def _attach_notebook(path: str, text: str, findings: list[Finding], flavour: Flavour) -> int:
    from neuronlint.fix.notebook import NotebookDocument

    try:
        document = NotebookDocument.parse(text)
    except ValueError:
        return 0
    located = [(i, document.module_finding(f)) for i, f in enumerate(findings)]
    located = [(i, f) for i, f in located if f is not None]
    plan = plan_file(path, document.module, [f for _, f in located], flavour)
    count = 0
    for index, item in plan.plans.items():
        if not document.allows(item):
            continue
        try:
            fixed = document.apply(list(item.edits), apply_edits(document.module, list(item.edits)))
        except ValueError:
            continue
        _give(findings[located[index][0]], item, document.json_edits(fixed))
        count += 1
    return count


class PythonDocument:
    """A Python file: its text is the Python text the fixers edit."""

    def __init__(self, text: str) -> None:
        self.text = text

    def allows(self, plan: Plan) -> bool:
        return True

    def apply(self, edits: list[Edit], new: str) -> PythonDocument:
        return PythonDocument(new)


Document = PythonDocument  # or neuronlint.fix.notebook.NotebookDocument: the same three members


@dataclass
class FileFix:
    """One file's fix: its text before and after, and what the fixes removed."""

    path: str
    before: str
    after: str
    fixed: Counter = field(default_factory=Counter)  # rule -> findings fixed
    error: str | None = None
    unsafe_left: int = 0  # findings whose (unsafe) fix was not applied
    appeared: int = 0  # findings the rescans show that the file did not have (uncovered or new)
    also_gone: int = 0  # findings without a fix of their own that the rescans no longer show
    guards_fixed: int = 0  # of `fixed`: CUDA guards the scan had folded into the code they guard
    guards_shown: int = 0  # such guards left as findings of their own (the code they guard fixed)
    removed: list[Finding] = field(default_factory=list)  # the input findings the fixes removed

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        import difflib

        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"a/{self.path}",
            tofile=f"b/{self.path}",
        )
        # A last line without a newline gets git's marker, so that `git apply`/`patch` accept it
        # and the next line of the diff does not run on.
        return "".join(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
            for line in lines
        )


@dataclass
class FixReport:
    """Every file's fix, and the findings left after fixing."""

    files: list[FileFix]
    remaining: list[Finding]  # findings left after fixing (active ones)

    @property
    def fixed(self) -> Counter:
        total: Counter = Counter()
        for item in self.files:
            total.update(item.fixed)
        return total

    def changed(self) -> list[FileFix]:
        return [f for f in self.files if f.changed]

    @property
    def appeared(self) -> int:
        return sum(f.appeared for f in self.files)

    @property
    def also_gone(self) -> int:
        return sum(f.also_gone for f in self.files)

    @property
    def guards_fixed(self) -> int:
        return sum(f.guards_fixed for f in self.files)

    @property
    def guards_shown(self) -> int:
        return sum(f.guards_shown for f in self.files)


class Rescanner:
    """Scan one file's new text in-process as the scan did: its imports of the project's kernel
    modules and compiled extensions linked against the scan's index (NL306, NL303, NL308: what a file
    alone cannot show), judged in the scan's frame with its rule selection, then the scan's noise
    filters (one finding per line and category, notes dropped...), so a rescan's findings are
    comparable, one for one, with the scan's."""

    def __init__(self, result: ScanResult, options: ScanOptions) -> None:
        self.result = result
        self.options = options
        self.static_data = build_static_data(result.db)
        self.module_paths = {r["path"]: r.get("module_path", r["path"]) for r in result.results}
        self.scope_rules = ScopeRules.from_config(options.scope_paths, options.config_root, options.base)
        self.first_party = first_party.project_names(options.paths)
        self._module_table: dict[str, frozenset[str]] | None = None

    def _modules(self) -> dict[str, frozenset[str]]:
        """The scan's importable module names (static.link.LinkIndex.modules), built once, when
        a changed file is first rescanned."""
        if self._module_table is None:
            self._module_table = self.result.links.modules(self.module_paths.values())
        return self._module_table

    def findings(self, path: str, code: str, folded: list[Finding] | None = None) -> list[Finding]:
        """The findings of a Python module's text (a notebook's joined code cells included);
        `folded` gets the CUDA guards folded into them, as the scan's `folded_guards`."""
        from neuronlint.static.engine import analyze_python

        module_path = self.module_paths.get(path, path)
        notebook = module_path.endswith(".ipynb")
        if notebook:
            module_path = module_path.removesuffix(".ipynb") + ".py"
        data = analyze_python(module_path, code.encode("utf-8"), self.static_data).to_dict()
        if not notebook:  # the scan links a Python file's imports of in-repo kernels, never a notebook's
            data["module_path"] = module_path
            text = code.encode("utf-8")
            link_result(data, self.result.links, self._modules(), lambda: text)
        return self._judged(path, data, folded)

    def notebook_findings(self, path: str, text: str) -> list[Finding]:
        """The findings of a notebook's JSON text, located as the scan locates them."""
        from neuronlint.filetypes.analyze import analyze_notebook
        from neuronlint.static.engine import FileResult

        module_path = self.module_paths.get(path, path)
        result = FileResult(path=module_path, lines=text.count("\n"))
        analysed = analyze_notebook(module_path, text, self.static_data, result)
        return self._judged(path, analysed.to_dict())

    def _judged(self, path: str, data: dict, folded: list[Finding] | None = None) -> list[Finding]:
        data["path"] = path
        data.setdefault("module_path", self.module_paths.get(path, path))
        findings, _ = findings_in_frame([data], self.result.db, self.result.context, self.options)
        within = {path: data["module_path"]} if path.startswith(("../", "/")) else None
        return triage.prepare(
            findings,
            enabled=self.options.triage,
            scope_rules=self.scope_rules,
            within_root=within,
            test_cap=self.options.test_cap,
            first_party_names=self.first_party,
            show_ok=self.options.show_ok,
            folded=folded,
        )


def removed_and_new(
    before_text: str, after_text: str, before: list[Finding], after: list[Finding]
) -> tuple[list[Finding], list[Finding], dict[int, Finding]]:
    """Which active findings of `before_text` the rescan of `after_text` no longer shows, and which
    of its findings are new, matched one for one by (line, category): a finding's identity in a
    scan (one per line and category). Lines are followed through the edit by a line diff; a
    finding whose line was rewritten matches a finding of its category anywhere in the rewrite.

    A fix of one rule on a line where another rule of the same category was folded into it leaves
    that other rule's finding: the finding is not removed, and is not counted as fixed. The third
    value maps id(a finding of `after`) to the finding of `before` it is."""
    import difflib  # fixing, not scanning

    old_lines, new_lines = before_text.splitlines(), after_text.splitlines()
    where: dict[int, range] = {}
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for i in range(i1, i2):
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                where[i + 1] = range(j1 + 1 + i - i1, j1 + 2 + i - i1)
            else:
                where[i + 1] = range(j1 + 1, j2 + 1)
    waiting: dict[tuple[int, str], list[Finding]] = {}
    for finding in after:
        if finding.suppressed is None:
            waiting.setdefault((finding.line, finding.category), []).append(finding)
    removed: list[Finding] = []
    same: dict[int, Finding] = {}
    for finding in before:
        if finding.suppressed is not None:
            continue
        lines = where.get(finding.line, range(finding.line, finding.line + 1))
        for line in lines:
            candidates = waiting.get((line, finding.category))
            if candidates:
                same[id(candidates.pop(0))] = finding
                break
        else:
            removed.append(finding)
    new = [f for group in waiting.values() for f in group]
    return removed, new, same


def fix_file(
    path: str,
    code: str,
    findings: list[Finding],
    flavour: Flavour,
    unsafe: bool,
    rescan: Rescanner,
    document: Document | None = None,
    guards: list[Finding] = (),
) -> tuple[FileFix, list[Finding]]:
    """Apply the selected fixes to one file's text, round after round; returns the result and the
    file's findings after the last round.

    `fixed` counts, by rule, the findings whose fix was applied and that the round's rescan no
    longer shows (removed_and_new), not the fixes applied: a fixed construct that leaves a finding
    on its line is not a finding fixed. Findings the rescan no longer shows without a fix of their
    own are `also_gone`; findings it shows that were not there are `appeared` (the fixed code can
    tell the analysis more: `device = "cpu"` in a branch made `.to(device)` a host copy).
    `document` carries a non-Python file (a notebook) whose Python text is `code`.

    `guards` are the CUDA guards the scan folded into `findings` (`ScanResult.folded_guards`).
    Each is counted once, as a finding of the file: it is not fixed while folded (rewriting
    `if torch.cuda.is_available():` alone would send the CUDA code it guards down the Neuron
    path); once the fixes leave its body without findings, the rescan shows it as a finding of its
    own (the same finding, not a new one), the next round fixes it, and it counts as fixed (also in
    `guards_fixed`), or it stays among the findings left (`guards_shown`). Notes (supported code, listed because
    `fix` scans with show_ok) are not findings: they are never counted."""
    document = document or PythonDocument(code)
    item = FileFix(path=path, before=document.text, after=document.text)
    text = code
    folded = list(guards)
    # a finding of this round (or a guard folded into one) -> the one it was in the input
    origin = {id(f): f for f in [*findings, *folded]}
    input_guards = {id(f) for f in folded}
    for _ in range(MAX_ROUNDS):
        plan: FilePlan = plan_file(path, text, findings, flavour)
        selected = [i for i in sorted(plan.selected(unsafe)) if document.allows(plan.plans[i])]
        chosen = [plan.plans[i] for i in selected]
        item.unsafe_left = 0 if unsafe else len(plan.plans) - len(plan.selected(False))
        if not chosen:
            break
        edits, applied = choose(chosen)
        try:
            new = apply_edits(text, edits)
            _check_parses(new, path)
            changed = document.apply(edits, new)
        except (ValueError, SyntaxError) as exc:  # a fixer bug must never break a file
            item.error = f"fix abandoned: {exc}"
            break
        if new == text:
            break
        after_folded: list[Finding] = []
        # a fix can uncover findings (one per line and category), and the guard of the code it fixed
        after = rescan.findings(path, new, after_folded)
        removed, appeared, same = removed_and_new(
            text, new, _counted(findings, folded), _counted(after, after_folded)
        )
        by_plan = {id(p): i for i, p in plan.plans.items()}
        targeted = {id(plan.findings[by_plan[id(p)]]) for p in applied}
        for finding in removed:
            first = origin.get(id(finding), finding)
            if id(finding) in targeted:
                item.fixed[finding.rule] += 1
                item.guards_fixed += id(first) in input_guards
            else:
                item.also_gone += 1  # no fix of its own: the fixed code no longer shows it
            item.removed.append(first)
        item.appeared += len(appeared)
        origin = {after_id: origin.get(id(b), b) for after_id, b in same.items()}
        text, findings, folded, document = new, after, after_folded, changed
        if not any(f.rule in FIXERS and f.suppressed is None for f in findings):
            break  # nothing fixable left: no need to parse the new text again to find out
    item.after = document.text
    item.guards_shown = sum(id(origin.get(id(f), f)) in input_guards for f in _counted(findings, []))
    return item, findings


def _counted(findings: list[Finding], folded: list[Finding]) -> list[Finding]:
    """What a fix accounts for: a file's findings and the guards folded into them, notes left out."""
    return [f for f in [*findings, *folded] if not is_note(f)]


def fix_files(
    result: ScanResult, options: ScanOptions, flavour: Flavour, unsafe: bool, write: bool, base: Path
) -> FixReport:
    """Fix every file of a scan that has a fixable finding (Python files and notebooks' code
    cells); write them when `write`. `remaining` is what a scan shows afterwards (notes left out)."""
    rules = fixable_rules()
    rescan = Rescanner(result, options)
    guards = _by_file(result.folded_guards)
    files: list[FileFix] = []
    remaining: list[Finding] = []
    for path, findings in _by_file(result.findings).items():
        wanted = [f for f in findings if f.rule in rules and f.suppressed is None]
        code = _read(base, path) if path.endswith(FIXED_SUFFIXES) and wanted else None
        if code is None:
            remaining.extend(f for f in findings if f.suppressed is None and not is_note(f))
            continue
        if path.endswith(".ipynb"):
            item = fix_notebook(path, code, flavour, unsafe, rescan, findings)
            after = rescan.notebook_findings(path, item.after) if item.changed else findings
        else:
            item, after = fix_file(path, code, findings, flavour, unsafe, rescan, guards=guards.get(path, []))
            if not item.changed:
                after = findings
        files.append(item)
        remaining.extend(f for f in after if f.suppressed is None and not is_note(f))
        if write and item.changed:
            (base / path).write_bytes(item.after.encode("utf-8"))
    return FixReport(files=files, remaining=remaining)


def check_safe_fixes(result: ScanResult, options: ScanOptions, base: Path) -> int:
    """Run the safe portable fixes in memory (nothing is written) and mark, on each finding with an
    attached safe fix, whether the rescan shows it gone (`extra["fix_removed"]`): what the migration
    report counts as removed by the fixes. Returns how many findings the fixes remove."""
    flavour = flavour_for("portable", result.context, result.db)
    report = fix_files(result, options, flavour, False, False, base)
    gone = {id(f) for item in report.files for f in item.removed}
    for finding in result.findings:
        if finding.fix is not None and finding.fix.automatic and finding.fix.applicability == SAFE:
            finding.extra["fix_removed"] = id(finding) in gone
    return len(gone)


def fix_notebook(
    path: str, text: str, flavour: Flavour, unsafe: bool, rescan: Rescanner, scan_findings: list[Finding] = ()
) -> FileFix:
    """Fix a notebook's code cells (neuronlint.fix.notebook): the fixers see the cells joined as
    one module, as the scan does; the edits go back into the cells' JSON strings."""
    from neuronlint.fix.notebook import NotebookDocument

    try:
        document = NotebookDocument.parse(text)
    except ValueError as exc:
        return FileFix(path=path, before=text, after=text, error=f"not fixed: {exc}")
    guards: list[Finding] = []
    findings = rescan.findings(path, document.module, guards)  # in the joined module's lines
    item, _ = fix_file(path, document.module, findings, flavour, unsafe, rescan, document, guards)
    # the findings removed, as the scan located them (cell, line in the cell, column)
    scanned = {
        (f.rule, f.extra["cell"]["cell"], f.extra["cell"]["line"], f.extra["cell"]["column"]): f
        for f in scan_findings
        if f.extra.get("cell")
    }
    item.removed = [
        scanned.get((f.rule, *document.mapping.locate(f.line)[:2], f.column), f) for f in item.removed
    ]
    return item


def safe_share(result: ScanResult) -> tuple[int, int]:
    """(findings with a safe fix, active findings): how much of a scan the safe fixes remove."""
    active = [f for f in result.findings if f.suppressed is None]
    safe = sum(1 for f in active if f.fix is not None and f.fix.automatic and f.fix.applicability == SAFE)
    return safe, len(active)
