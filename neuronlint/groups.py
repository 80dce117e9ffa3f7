"""Root causes: the findings that one change removes, grouped, with a stable id.

A migration engineer asks *what must change before this runs on Trainium*. Forty findings in
twelve files that all come from importing flash_attn are one answer ("replace flash_attn"), not
forty. A root cause is one of:

- `library`: one CUDA-only library, its imports and every call site (cuda-only-lib);
- `dependency`: one CUDA-only package declared as a dependency (NL404), wherever declared;
- `kernel-module`: one module of GPU kernels (Triton, numba, jiterator): definitions, launches
  and the in-repo imports of it;
- `extension`: one compiled extension or custom-op namespace, its imports and uses (the uses of
  `ext.fwd` and `ext.bwd` belong to `ext` when `ext` itself is reported);
- `extension-build`: the C++/CUDA extension build in one build file;
- `cuda-sources`: the .cu/.cuh files of one directory;
- `compile-setting`: one torch.compile or Inductor setting, wherever it is set;
- `construct`: one line on which several rules fire for one construct;
- `api`: every other finding, grouped by rule and the API, device string or source construct it
  flags (`torch.cuda.synchronize` in 40 places is one change made 40 times).

Ids are `RC` plus 8 hex digits of a hash of the group's kind and subject: they stay the same
between runs while the code that causes them does (a `construct` names its file and line; in a
notebook the line of the notebook's JSON, while its headline names the cell and line, `place`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from neuronlint.digests import sha1_hex
from neuronlint.findings import Finding, Severity
from neuronlint.ruledb import Context, RuleDB
from neuronlint.ruledb.model import render

KERNEL_DEFINITION_RULES = frozenset({"NL301", "NL305", "NL307"})
COMPILE_SETTING_RULES = frozenset({"NL801", "NL802", "NL803", "NL804"})
_SUBJECT_FACTS = ("api", "symbol", "option", "mode", "kernel")


def place(f: Finding) -> str:
    """Where a finding is, as a reader finds it: `path:line`, or `path:cell N:line` in a notebook
    (its code cell and the line in the cell, as the per-file detail of the text output shows it;
    `f.line` is the notebook's JSON line, for annotations)."""
    cell = f.extra.get("cell") if f.extra else None
    if cell:
        return f"{f.path}:cell {cell['cell']}:{cell['line']}"
    return f"{f.path}:{f.line}"


@dataclass
class RootCause:
    """Findings that one change removes, with that change."""

    id: str
    kind: str
    subject: str
    headline: str
    change: str  # the one change that removes every finding of the group
    findings: list[Finding] = field(default_factory=list)

    @property
    def severity(self) -> Severity:
        return max((f.severity for f in self.findings), key=lambda s: s.rank)

    @property
    def files(self) -> list[str]:
        return sorted({f.path for f in self.findings})

    @property
    def count(self) -> int:
        return len(self.findings)

    def scope_counts(self) -> dict[str, int]:
        return dict(Counter(f.scope for f in self.findings))

    def rank_key(self) -> tuple:
        """Severity first, then reach: files and findings outside tests, then all."""
        outside = [f for f in self.findings if f.scope != "test"]
        return (
            -self.severity.rank,
            -len({f.path for f in outside}),
            -len(outside),
            -len(self.files),
            -self.count,
            self.id,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "subject": self.subject,
            "headline": self.headline,
            "change": self.change,
            "severity": self.severity.value,
            "count": self.count,
            "files": self.files,
            "scopes": self.scope_counts(),
            "rules": sorted({f.rule for f in self.findings}),
        }


def group_id(kind: str, subject: str) -> str:
    digest = sha1_hex(f"{kind}\0{subject}".encode())
    return f"RC{digest[:8]}"


def module_name(path: str) -> str:
    """`pkg/ops/kernels.py` -> `pkg.ops.kernels` (the name in-repo imports of it resolve to)."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p and p != ".")


def _matches_module(full: str, imported: str) -> bool:
    return full == imported or full.endswith("." + imported) or imported.endswith("." + full)


def _subject_key(f: Finding) -> tuple[str, str] | None:
    """(kind, subject) of the groups that follow one library, kernel module, extension or setting."""
    facts = f.facts
    if f.rule == "NL404":
        return "dependency", str(facts.get("library") or facts.get("package") or f.snippet)
    if f.category == "cuda-only-lib":
        return "library", str(facts.get("library") or f.rule)
    if f.rule in ("NL306", "NL308"):
        return "kernel-module", str(facts.get("module", ""))
    if f.rule in KERNEL_DEFINITION_RULES:
        return "kernel-module", module_name(str(f.facts.get("module_path", f.path)))
    if f.rule == "NL303":
        return "extension", str(facts.get("module", f.snippet))
    if f.rule == "NL302":
        return "extension-build", f.path
    if f.rule == "NL304":
        directory = f.path.rpartition("/")[0]
        return "cuda-sources", directory or "."
    if f.rule in COMPILE_SETTING_RULES:
        if f.rule == "NL801":
            return "compile-setting", f"{facts.get('api', 'torch.compile')} with {facts.get('backend', '')}"
        return "compile-setting", str(
            facts.get("option") or facts.get("mode") or facts.get("symbol") or f.snippet
        )
    return None


_PLACEHOLDER = re.compile(r"{(\w+)}")


def _api_subject(f: Finding, db: RuleDB) -> str:
    """The rule plus what its message names first (`{api}`, `{symbol}`...), else the source."""
    rule = db.rules.get(f.rule)
    for key in _PLACEHOLDER.findall(rule.message if rule else ""):
        value = f.facts.get(key)
        if value and isinstance(value, str):
            return f"{f.rule}:{value}"
    for key in _SUBJECT_FACTS:
        value = f.facts.get(key)
        if value:
            return f"{f.rule}:{value}"
    return f"{f.rule}:{f.snippet or f.message}"


def _kernel_module_of_launcher(findings: list[Finding], kernel_modules: set[str]) -> dict[str, str]:
    """File -> the one in-repo kernel module it imports, for files that launch but define nothing."""
    imported: dict[str, set[str]] = defaultdict(set)
    defines: set[str] = set()
    for f in findings:
        if f.rule == "NL306":
            imported[f.path].add(str(f.facts.get("module", "")))
        elif f.rule in KERNEL_DEFINITION_RULES and not f.facts.get("launch"):
            defines.add(f.path)
    return {
        path: next(iter(modules))
        for path, modules in imported.items()
        if len(modules) == 1 and path not in defines and next(iter(modules)) in kernel_modules
    }


def build_groups(findings: Iterable[Finding], db: RuleDB, ctx: Context) -> list[RootCause]:
    """Give every unsuppressed finding its root cause (`finding.group`); the causes, ranked."""
    active = [f for f in findings if f.suppressed is None]
    keys: dict[int, tuple[str, str]] = {}
    kernel_modules: set[str] = set()
    for f in active:
        key = _subject_key(f)
        if key is not None:
            keys[id(f)] = key
            if key[0] == "kernel-module":
                kernel_modules.add(key[1])
    launchers = _kernel_module_of_launcher(active, kernel_modules)
    for f in active:
        if f.rule in KERNEL_DEFINITION_RULES and f.facts.get("launch") and f.path in launchers:
            keys[id(f)] = ("kernel-module", launchers[f.path])
    # The same kernel module under its full path and under its package-relative import name.
    for f in active:
        key = keys.get(id(f))
        if key and key[0] == "kernel-module":
            for name in kernel_modules:
                if name != key[1] and _matches_module(name, key[1]) and len(name) < len(key[1]):
                    keys[id(f)] = ("kernel-module", name)
    # One compiled extension, its import and the uses of its functions (`ext` and `ext.fwd`).
    extensions = {key[1] for key in keys.values() if key[0] == "extension"}
    for f in active:
        key = keys.get(id(f))
        if key and key[0] == "extension":
            prefixes = [name for name in extensions if key[1].startswith(name + ".")]
            if prefixes:
                keys[id(f)] = ("extension", min(prefixes, key=len))
    by_line: dict[tuple[str, int], list[Finding]] = defaultdict(list)
    for f in active:
        if id(f) not in keys:
            by_line[(f.path, f.line)].append(f)
    for (path, line), same_line in by_line.items():
        if len(same_line) > 1 and len({f.rule for f in same_line}) > 1:
            for f in same_line:
                keys[id(f)] = ("construct", f"{path}:{line}")
    members: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for f in active:
        key = keys.get(id(f)) or ("api", _api_subject(f, db))
        members[key].append(f)
    causes = []
    for (kind, subject), group in members.items():
        cause = RootCause(group_id(kind, subject), kind, subject, "", "", group)
        cause.headline = _headline(cause, db)
        cause.change = _change(cause, db, ctx)
        for f in group:
            f.group = cause.id
        causes.append(cause)
    causes.sort(key=RootCause.rank_key)
    return causes


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _where(cause: RootCause) -> str:
    files = cause.files
    return files[0] if len(files) == 1 else f"{len(files)} files"


def _headline(cause: RootCause, db: RuleDB) -> str:
    group = cause.findings
    rules = Counter(f.rule for f in group)
    if cause.kind == "library":
        imports = rules["NL401"]
        uses = cause.count - imports
        parts = ([_plural(imports, "import")] if imports else []) + ([_plural(uses, "use")] if uses else [])
        return f"{cause.subject} (no Neuron backend): {' and '.join(parts)} in {_where(cause)}"
    if cause.kind == "dependency":
        return f"{cause.subject} declared as a dependency in {', '.join(cause.files)}"
    if cause.kind == "kernel-module":
        defined = sum(1 for f in group if f.rule not in ("NL306", "NL308") and not f.facts.get("launch"))
        launches = sum(1 for f in group if f.facts.get("launch"))
        importers = len({f.path for f in group if f.rule == "NL306"})
        calls = sum(1 for f in group if f.rule == "NL308")
        parts = [_plural(defined, "kernel")] if defined else []
        if launches:
            parts.append(_plural(launches, "launch") if launches == 1 else f"{launches} launches")
        if importers:
            parts.append(f"imported by {_plural(importers, 'file')}")
        if calls:
            parts.append(_plural(calls, "call") + " from other files")
        return f"GPU kernels in {cause.subject}: {', '.join(parts) or _plural(cause.count, 'site')}"
    if cause.kind == "extension":
        return f"compiled extension {cause.subject}: {_plural(cause.count, 'use')} in {_where(cause)}"
    if cause.kind == "extension-build":
        return f"C++/CUDA extension build in {cause.subject}"
    if cause.kind == "cuda-sources":
        return f"CUDA sources in {cause.subject}/ ({_plural(len(cause.files), 'file')})"
    if cause.kind == "compile-setting":
        return f"{cause.subject} (torch.compile setting): {_plural(cause.count, 'site')} in {_where(cause)}"
    if cause.kind == "construct":
        first = min(group, key=lambda f: f.column)
        names = ", ".join(sorted(rules))
        return f"{place(first)}: {names} on one construct (`{_code(first.snippet)}`)"
    first = group[0]
    rule = db.rules.get(first.rule)
    subject = cause.subject.partition(":")[2]
    name = f"{first.rule} {rule.name}" if rule else first.rule
    return f"`{_code(subject)}` ({name}): {_plural(cause.count, 'site')} in {_where(cause)}"


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _code(snippet: str, width: int = 60) -> str:
    """A construct's source as a headline shows it: without its trailing comments (a comment is
    not part of what to change), shortened."""
    return _short(" ".join(_without_comment(line) for line in snippet.split("\n")), width)


def _without_comment(line: str) -> str:
    """The line up to a `#` comment that follows code (outside quotes); a line that starts with `#`
    (`#SBATCH`, a directive) is kept whole."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and index > 0 and line[index - 1] in " \t" and line[:index].strip():
            return line[:index].rstrip()
    return line


def _one_line(code: str) -> str:
    """A replacement as a one-line headline shows it: a guarded call written on two lines
    (`if torch.accelerator.is_available():` and its indented body) reads as the one-line
    statement it equals, not as an escaped newline and a run of spaces."""
    return " ".join(line.strip() for line in code.splitlines() if line.strip())


def _instead(f: Finding, db: RuleDB, ctx: Context) -> str:
    rule = db.rules.get(f.rule)
    if rule is None:
        return ""
    text = rule.instead.get(ctx.backend) or rule.instead.get("any", "")
    return render(text, f.facts).strip() if text else ""


def _change(cause: RootCause, db: RuleDB, ctx: Context) -> str:
    worst = max(cause.findings, key=lambda f: (f.severity.rank, -f.line))
    if cause.kind == "library":
        alternative = next((f.facts["alternative"] for f in cause.findings if f.facts.get("alternative")), "")
        text = f"Replace {cause.subject}"
        return f"{text}: {alternative}" if alternative else _instead(worst, db, ctx) or text + "."
    if cause.kind == "dependency":
        if all(f.facts.get("optional") for f in cause.findings):
            return f"Leave the extra that pulls in {cause.subject} out of the Neuron install."
        return (
            f"Remove {cause.subject} from the required dependencies (an optional extra that the "
            "Neuron install leaves out)."
        )
    if cause.kind == "kernel-module":
        return (
            f"Port the kernels of {cause.subject} to NKI (or give them a PyTorch fallback) "
            "and route its importers to it."
        )
    if cause.kind == "extension":
        return f"Give {cause.subject} a Neuron implementation (NKI or PyTorch) and import that instead."
    if cause.kind == "extension-build":
        return "Build the extension only where CUDA exists and ship a Neuron (NKI or PyTorch) implementation."
    if cause.kind == "cuda-sources":
        return "Port these kernels to NKI or keep them out of the Neuron build."
    if worst.fix is not None and worst.fix.replacement.strip():
        return f"Replace with `{_one_line(worst.fix.replacement)}`."
    if worst.fix is not None and worst.fix.description:
        return f"{worst.fix.description}."  # a deletion (`device_ids=` dropped): nothing replaces it
    return _instead(worst, db, ctx) or (db.rules[worst.rule].title if worst.rule in db.rules else "")
