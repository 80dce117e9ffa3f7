"""What changes for one chip between two Neuron SDK releases: the data behind `neuronlint rules diff`.

Everything here is computed from the database; nothing about a release is written in Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from neuronlint.ruledb.model import UNKNOWN, Context, Rule, RuleDB, SdkRange, Verdict, render
from neuronlint.ruledb.schema import FILE_TABLES
from neuronlint.ruledb.versions import parse_version

AVAILABLE_OP_STATUSES = ("supported", "partial")


@dataclass(frozen=True)
class VerdictState:
    severity: str
    status: str
    enabled: bool
    advice: str = ""  # what to write instead (a release can change the advice and not the severity)

    def label(self) -> str:
        return f"{self.severity}/{self.status}" + ("" if self.enabled else " (not reported)")


@dataclass(frozen=True)
class RuleChange:
    """A rule whose verdict differs between the two frames, for one kind of construct."""

    rule: str
    name: str
    title: str
    case: str  # "" for the construct without extra facts, else e.g. "dtype=complex128"
    old: VerdictState
    new: VerdictState
    reason: str  # the note of the verdict that now applies, or else of the one that no longer does
    reason_is_old: bool  # True when `reason` explains the old verdict (the new one is the rule's default)
    sources: tuple[str, ...]

    @property
    def advice_changed(self) -> bool:
        return self.old.advice != self.new.advice

    @property
    def advice_only(self) -> bool:
        """True when only what to write instead changes (same severity, status and reporting)."""
        return self.advice_changed and self.old.label() == self.new.label()

    @property
    def relaxed(self) -> bool:
        """True when the new verdict is milder (lower severity, or no longer reported)."""
        rank = {"info": 1, "warning": 2, "blocker": 3}
        old = rank[self.old.severity] if self.old.enabled else 0
        new = rank[self.new.severity] if self.new.enabled else 0
        return new < old or (new == old and _status_rank(self.new.status) > _status_rank(self.old.status))


def _status_rank(status: str) -> int:
    return {"unsupported": 0, "unknown": 1, "partial": 2, "supported": 3}[status]


@dataclass(frozen=True)
class FactChange:
    fact: str
    old: Any
    new: Any
    note: str
    source: str


@dataclass(frozen=True)
class ReplacementChange:
    """What the database tells users to write instead, when the backend changes."""

    subject: str  # a rule ID or an API name
    old: str
    new: str


@dataclass(frozen=True)
class ReleaseNote:
    version: str
    text: str
    source: str


@dataclass
class OpsDiff:
    table: str
    old_basis: str  # what the table is read at, e.g. "torch-xla 2.5"
    new_basis: str
    comparable: bool  # False when the table does not describe one of the frames (e.g. the native backend)
    gained: list[str]
    lost: list[str]


@dataclass
class ReleaseDiff:
    old: Context
    new: Context
    backends_old: list[str]
    backends_new: list[str]
    torch_old: list[str]
    torch_new: list[str]
    chips_gained: list[str]
    chips_lost: list[str]
    facts: list[FactChange]
    rules: list[RuleChange]
    replacements: list[ReplacementChange]
    notes: list[ReleaseNote]
    ops: OpsDiff | None = None
    caveats: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (used by `rules diff --format json`)."""

        def frame(ctx: Context, backends: list[str], torch: list[str]) -> dict[str, Any]:
            return {
                "sdk": ctx.sdk,
                "target": ctx.target,
                "backend": ctx.backend,
                "training": ctx.training,
                "backends_available": backends,
                "torch": torch,
                "compiler_flags": sorted(ctx.flags),
            }

        return {
            "old": frame(self.old, self.backends_old, self.torch_old),
            "new": frame(self.new, self.backends_new, self.torch_new),
            "chips_gained": self.chips_gained,
            "chips_lost": self.chips_lost,
            "platform_changes": [asdict(f) for f in self.facts],
            "rule_changes": [
                {**asdict(c), "old": asdict(c.old), "new": asdict(c.new), "relaxed": c.relaxed}
                for c in self.rules
            ],
            "replacement_changes": [asdict(r) for r in self.replacements],
            "release_notes": [asdict(n) for n in self.notes],
            "ops": None if self.ops is None else asdict(self.ops),
            "caveats": self.caveats,
        }


def _cases(rule: Rule) -> list[dict[str, Any]]:
    """Construct facts worth judging: none, plus each set a verdict conditions on (first of each list)."""
    cases: list[dict[str, Any]] = [{}]
    for verdict in (*rule.verdicts, *rule.advice):
        if verdict.when.facts:
            case = {k: (v[0] if isinstance(v, list) else v) for k, v in verdict.when.facts.items()}
            if case not in cases:
                cases.append(case)
    return cases


def _state(verdict: Verdict) -> VerdictState:
    return VerdictState(verdict.severity.value, verdict.status, verdict.enabled, plain_text(verdict.advice))


def rule_changes(db: RuleDB, old: Context, new: Context) -> list[RuleChange]:
    """Every (rule, construct case) whose severity, status, reporting or advice differs between the frames.

    Advice is compared within one backend only: across backends it always differs, and
    `replacement_changes` reports that.
    """
    changes = []
    same_backend = old.backend == new.backend
    for rule in sorted(db.rules.values(), key=lambda r: r.id):
        for case in _cases(rule):
            before, after = db.judge(rule.id, case, old), db.judge(rule.id, case, new)
            state_old, state_new = _state(before), _state(after)
            if not same_backend:
                state_old = VerdictState(state_old.severity, state_old.status, state_old.enabled)
                state_new = VerdictState(state_new.severity, state_new.status, state_new.enabled)
            if state_old == state_new:
                continue
            advice_only = (state_old.severity, state_old.status, state_old.enabled) == (
                state_new.severity,
                state_new.status,
                state_new.enabled,
            )
            if advice_only and any(c.rule == rule.id for c in changes):
                continue  # the advice is the rule's, not the case's: report it once
            use_old = after.condition == "default" or not after.note
            reason = before.note if use_old else after.note
            sources = tuple(dict.fromkeys([*before.sources, *after.sources]))
            label = ", ".join(f"{k}={v}" for k, v in case.items())
            changes.append(
                RuleChange(
                    rule.id,
                    rule.name,
                    rule.title,
                    label,
                    state_old,
                    state_new,
                    plain_text(reason),
                    use_old and bool(reason),
                    sources,
                )
            )
    return changes


def plain_text(note: str) -> str:
    """A note rendered without construct facts: '{api}' reads as 'this construct', '{x}' as '<x>'."""
    if "{" not in note:
        return note
    return re.sub(r"\{(\w+)\}", r"<\1>", note.replace("{api}", "this construct"))


def fact_changes(db: RuleDB, old: Context, new: Context) -> list[FactChange]:
    changes = []
    for name in db.platform_fact_names():
        before, after = old.platform.get(name), new.platform.get(name)
        if before == after:
            continue
        entry = db.platform_entry(new, name) or db.platform_entry(old, name)
        note = entry.note if entry else ""
        if after == UNKNOWN and (entry is None or entry.value != UNKNOWN):
            before_note = f" Before: {entry.note}" if entry else ""
            note = f"No source in the database confirms this fact for Neuron {new.sdk}.{before_note}"
        # The page the new value rests on; an unknown value cites the page that leaves it open, or none.
        source = db.platform_source(new, name) if after != before else ""
        if not source and after != UNKNOWN:
            source = db.platform_source(old, name)
        changes.append(FactChange(name, before, after, note, source))
    return changes


def replacement_changes(db: RuleDB, old: Context, new: Context) -> list[ReplacementChange]:
    """Rule advice and API replacements that read differently on the new backend."""
    if old.backend == new.backend:
        return []
    out = []
    for rule in sorted(db.rules.values(), key=lambda r: r.id):
        before = rule.instead.get(old.backend) or rule.instead.get("any", "")
        after = rule.instead.get(new.backend) or rule.instead.get("any", "")
        if before != after:
            out.append(ReplacementChange(rule.id, render(before, {}), render(after, {})))
    for api in db.tables.get("api", ()):
        before, after = api.get(old.backend), api.get(new.backend)
        if (before or after) and before != after:
            none = "no direct equivalent" + (f" ({api['note']})" if api.get("note") else "")
            out.append(ReplacementChange(api["name"], before or none, after or none))
    return out


def release_notes(db: RuleDB, old: str, new: str) -> list[ReleaseNote]:
    """The portability changes of every release after the older one, up to the newer one."""
    low, high = sorted((parse_version(old), parse_version(new)))
    notes = []
    for version in db.versions():
        if low < parse_version(version) <= high:
            notes.extend(ReleaseNote(version, c["text"], c["source"]) for c in db.releases[version].changes)
    return notes


# ---- operator tables (registered by the graph analysis; optional) ------------------------------
def op_table_name() -> str | None:
    """The registered operator table: `op` if registered, else the first name starting with 'op'."""
    if "op" in FILE_TABLES:
        return "op"
    return next((name for name in FILE_TABLES if name.startswith("op")), None)


def _op_name(entry: Mapping[str, Any]) -> str | None:
    for key in ("op", "name", "aten"):
        if isinstance(entry.get(key), str):
            return entry[key]
    return None


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _op_available(entry: Mapping[str, Any], ctx: Context, torch_xla: str | None) -> bool:
    """Generic reading of an op entry: every condition key it has must hold in this frame."""
    if "status" in entry and entry["status"] not in AVAILABLE_OP_STATUSES:
        return False
    if isinstance(entry.get("sdk"), str):
        try:
            if not SdkRange.parse(entry["sdk"]).contains(ctx.sdk_tuple):
                return False
        except ValueError:
            return False
    targets = _as_list(entry.get("targets"))
    if targets and ctx.target not in targets:
        return False
    backends = _as_list(entry.get("backend"))
    if backends and ctx.backend not in backends:
        return False
    return "torch_xla" not in entry or torch_xla in _as_list(entry["torch_xla"])


def _op_basis(db: RuleDB, ctx: Context, by_torch_xla: bool) -> tuple[bool, str | None, str]:
    """Whether the table covers this frame, the torch-xla version it is read at, and a label."""
    if not by_torch_xla:
        return True, None, f"Neuron {ctx.sdk}"
    versions = _as_list(db.releases[ctx.sdk].backends[ctx.backend].get("torch_xla"))
    if not versions:
        return False, None, f"{ctx.backend} backend (no torch-xla)"
    newest = max(versions, key=parse_version)  # the torch-xla of the newest PyTorch the release ships
    return True, newest, f"torch-xla {newest}"


def ops_diff(db: RuleDB, old: Context, new: Context) -> OpsDiff | None:
    """Ops gained and lost between the frames, read from the registered op table (None: no table)."""
    name = op_table_name()
    entries = db.tables.get(name or "") or []
    if not entries:
        return None
    by_torch_xla = any("torch_xla" in e for e in entries)
    old_ok, old_xla, old_label = _op_basis(db, old, by_torch_xla)
    new_ok, new_xla, new_label = _op_basis(db, new, by_torch_xla)
    result = OpsDiff(
        table=str(name),
        old_basis=old_label,
        new_basis=new_label,
        comparable=old_ok and new_ok,
        gained=[],
        lost=[],
    )
    if not result.comparable:
        return result
    before = {op for e in entries if (op := _op_name(e)) and _op_available(e, old, old_xla)}
    after = {op for e in entries if (op := _op_name(e)) and _op_available(e, new, new_xla)}
    result.gained, result.lost = sorted(after - before), sorted(before - after)
    return result


def _backend_list(db: RuleDB, sdk: str, target: str) -> list[str]:
    return db.releases[sdk].backends_for(target)


def _torch(db: RuleDB, ctx: Context) -> list[str]:
    return db.releases[ctx.sdk].torch_for(ctx.backend, ctx.target)


def diff_releases(
    db: RuleDB, old_sdk: str, new_sdk: str, target: str, backend: str | None = None, flags: Iterable[str] = ()
) -> ReleaseDiff:
    """Compare two releases on one chip; each side uses `backend` or its default backend."""
    old = db.context(old_sdk, target, backend, flags)
    new = db.context(new_sdk, target, backend, flags)
    old_chips, new_chips = db.releases[old.sdk].chips(), db.releases[new.sdk].chips()
    caveats = [
        f"{v}: {db.releases[v].note}" for v in dict.fromkeys([old.sdk, new.sdk]) if db.releases[v].note
    ]
    return ReleaseDiff(
        old=old,
        new=new,
        backends_old=_backend_list(db, old.sdk, target),
        backends_new=_backend_list(db, new.sdk, target),
        torch_old=_torch(db, old),
        torch_new=_torch(db, new),
        chips_gained=sorted(new_chips - old_chips),
        chips_lost=sorted(old_chips - new_chips),
        facts=fact_changes(db, old, new),
        rules=rule_changes(db, old, new),
        replacements=replacement_changes(db, old, new),
        notes=release_notes(db, old.sdk, new.sdk),
        ops=ops_diff(db, old, new),
        caveats=caveats,
    )
