"""Trace entrypoints and turn what the child saw into Findings and an analyze-style summary.

Graph findings use the same Finding model, rule IDs, rule selection and suppression comments as
static ones: an op verdict becomes NL010/NL011/NL012 at the user's line, a data-dependent op
NL601 (a host read NL701), a capture failure NL013, a crashed/hung/out-of-memory child NL014, an
entrypoint that cannot be built NL015, and weights larger than one chip's HBM NL016.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuronlint.discover import relative_posix
from neuronlint.filters import suppressions as suppression_filter
from neuronlint.findings import Finding
from neuronlint.graph.entrypoints import Entrypoint, locate, parse_entrypoint
from neuronlint.graph.ops import LOWERED, NOT_LOWERED, REJECTED, UNKNOWN, VERDICTS, OpDatabase, OpVerdict
from neuronlint.graph.runner import DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT, ChildOutcome, run_children
from neuronlint.pipeline import ScanOptions
from neuronlint.ruledb import Context, RuleDB

RULE_FOR_VERDICT = {NOT_LOWERED: "NL010", REJECTED: "NL011", UNKNOWN: "NL012"}
TRACE_STAGES = ("export", "symbolic_trace", "partial")


@dataclass
class TraceTarget:
    """One model to trace: from the command line or a [[tool.neuronlint.trace]] entry."""

    entrypoint: str
    inputs: list[str] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    origin: str = ""  # the pyproject.toml that configured it: where findings go that have no better place

    @property
    def label(self) -> str:
        return self.name or self.entrypoint


@dataclass
class TraceResult:
    target: TraceTarget
    status: str  # "traced", "partial" (graph capture failed; ops before the failure), "failed", "aborted"
    findings: list[Finding]
    summary: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "entrypoint": self.target.entrypoint,
            "name": self.target.name,
            "inputs": self.target.inputs,
            "kwargs": self.target.kwargs,
            "status": self.status,
            **self.summary,
        }


@dataclass
class _Location:
    path: str  # as reports show it (relative to the base when below it)
    line: int
    column: int = 1
    end_column: int = 1
    snippet: str = ""


class _Locator:
    """Turns absolute frames into report locations, reading each source line once."""

    def __init__(self, base: Path):
        self.base = base
        self.lines: dict[str, list[str]] = {}

    def source(self, path: str) -> list[str]:
        if path not in self.lines:
            try:
                self.lines[path] = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self.lines[path] = []
        return self.lines[path]

    def at(self, path: str, line: int, column: int = 0, end_column: int = 0) -> _Location:
        text = self.source(path)[line - 1] if 0 < line <= len(self.source(path)) else ""
        start = column or (len(text) - len(text.lstrip()) + 1)
        end = end_column if end_column > start else len(text.rstrip()) + 1
        return _Location(
            relative_posix(Path(path), self.base), line, start, max(end, start + 1), text.strip()
        )


def capture(
    targets: list[TraceTarget],
    root: Path,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> list[ChildOutcome]:
    """Trace every target in child processes (the expensive part, independent of SDK and chip)."""
    requests = [{"entrypoint": t.entrypoint, "inputs": t.inputs, "kwargs": t.kwargs} for t in targets]
    return run_children(requests, root, timeout=timeout, memory_limit=memory_limit)


def judge_all(
    targets: list[TraceTarget],
    outcomes: list[ChildOutcome],
    db: RuleDB,
    ctx: Context,
    options: ScanOptions,
    root: Path,
) -> list[TraceResult]:
    """Findings and summaries for captured targets in one frame (SDK, chip, backend)."""
    ops_db = OpDatabase(db, ctx)
    locator = _Locator(options.base.resolve())
    return [
        judge_outcome(
            target, parse_entrypoint(target.entrypoint), outcome, ops_db, db, ctx, options, root, locator
        )
        for target, outcome in zip(targets, outcomes, strict=True)
    ]


def trace_targets(
    targets: list[TraceTarget],
    db: RuleDB,
    ctx: Context,
    options: ScanOptions,
    root: Path,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> list[TraceResult]:
    """Capture, then judge: the whole of `neuronlint trace` minus the output."""
    return judge_all(targets, capture(targets, root, timeout, memory_limit), db, ctx, options, root)


def judge_outcome(
    target: TraceTarget,
    entry: Entrypoint,
    outcome: ChildOutcome,
    ops_db: OpDatabase,
    db: RuleDB,
    ctx: Context,
    options: ScanOptions,
    root: Path,
    locator: _Locator,
) -> TraceResult:
    """Findings and summary for one traced entrypoint."""
    found = locate(entry, root)
    if found:
        home = locator.at(*found)
    elif target.origin:
        home = locator.at(target.origin, _config_line(target), 1)
    else:
        home = _Location(target.entrypoint, 1)
    emitted: _Emitted = []
    summary: dict[str, Any] = {
        "sdk": ctx.sdk,
        "target": ctx.target,
        "backend": ctx.backend,
        "torch_xla": ops_db.torch_xla,
        "wall_seconds": outcome.wall_seconds,
    }
    if outcome.status != "ok" or outcome.result is None:
        where = locator.at(outcome.frame["path"], outcome.frame["line"]) if outcome.frame else home
        emitted.append(
            (
                "NL014",
                where,
                {"entrypoint": target.entrypoint, "reason": outcome.reason},
                {"stage": outcome.stage, "stderr": outcome.stderr_tail[-10:]},
            )
        )
        summary.update(_empty_summary())
        return TraceResult(target, "aborted", _findings(emitted, db, ctx, options, locator), summary)

    result = outcome.result
    summary.update(
        {
            "capture": result.get("capture"),
            "build_mode": result.get("build_mode"),
            "timing": result.get("timing", {}),
            "startup_seconds": result.get("startup_seconds"),
            "cpu_seconds": result.get("cpu_seconds"),
            "peak_rss_mib": result.get("peak_rss_mib"),
        }
    )
    status = _failure_facts(target, result, home, locator, emitted)
    judged = _op_facts(result, ops_db, home, locator, emitted)
    params = result.get("params")
    if params:
        sizing = _sizing(params, db, ctx)
        summary["parameters"] = {**params, **sizing}
        if sizing["chips_for_weights"] > 1:
            emitted.append(
                (
                    "NL016",
                    home,
                    {
                        "weights_gib": f"{params['bytes'] / 1024**3:.1f}",
                        "params": _count_text(params["count"]),
                        "dtypes": ", ".join(sorted(params["bytes_by_dtype"])) or "no parameters",
                        "target": ctx.target,
                        "hbm_gib": sizing["hbm_gib_per_chip"],
                        "chips": sizing["chips_for_weights"],
                    },
                    {},
                )
            )
    summary.update(_op_summary(judged))
    summary["other_backend"] = _other_backend_table(result, db, ctx)
    return TraceResult(target, status, _findings(emitted, db, ctx, options, locator), summary)


def _other_backend_table(result: dict[str, Any], db: RuleDB, ctx: Context) -> dict[str, Any] | None:
    """On TorchNeuron, what the XLA backend's op table says of the same op calls (for comparison only).

    TorchNeuron's per-operator table is not public, so its ops are unknown; the torch-xla lowering
    table of the same release and chip is the nearest documented reference, and is labelled as the
    other backend's. None on the XLA backend, or where the release offers no XLA backend on the chip.
    """
    if ctx.backend == "xla" or "xla" not in db.releases[ctx.sdk].backends_for(ctx.target):
        return None
    xla = db.context(ctx.sdk, ctx.target, "xla", ctx.flags)
    table = OpDatabase(db, xla)
    counts = dict.fromkeys(VERDICTS, 0)
    facts_by_op = result.get("op_facts", {})
    for record in result.get("ops", []):
        counts[table.judge(record["op"], record["inputs"], record["outputs"], facts_by_op).verdict] += record[
            "count"
        ]
    return {"backend": "xla", "torch_xla": table.torch_xla, "counts": counts}


_Emitted = list[tuple[str, _Location, dict[str, Any], dict[str, Any]]]  # (rule, where, facts, extra)


def _failure_facts(
    target: TraceTarget, result: dict[str, Any], home: _Location, locator: _Locator, emitted: _Emitted
) -> str:
    """NL015/NL014 for build failures, NL013 for the first capture failure; returns the status."""
    failures = result.get("failures", [])
    status = "traced" if result.get("ok") else ("partial" if result.get("capture") == "partial" else "failed")
    for failure in failures:
        where = locator.at(**_frame_args(failure["frame"])) if failure.get("frame") else home
        if failure["stage"] in ("import", "build", "startup"):
            rule = "NL014" if failure["kind"] == "out of memory" else "NL015"
            reason = f"ran out of memory ({failure['reason']})" if rule == "NL014" else failure["reason"]
            if rule == "NL014" and failure["stage"] == "startup":
                # Before any user code: the cap is below what torch itself maps (a CUDA build of
                # torch 2.14 maps about 3 GiB of address space at import, a CPU build about 0.5 GiB).
                reason = (
                    f"the memory limit leaves too little address space to import torch ({failure['reason']}); "
                    "a CUDA build of torch maps about 3 GiB at import, before any model code runs"
                )
            emitted.append(
                (
                    rule,
                    where,
                    {"entrypoint": target.entrypoint, "reason": reason, "kind": failure["kind"]},
                    {"stage": failure["stage"]},
                )
            )
            return "failed" if rule == "NL015" else "aborted"
        if failure["kind"] == "out of memory":
            emitted.append(
                (
                    "NL014",
                    where,
                    {"entrypoint": target.entrypoint, "reason": f"ran out of memory: {failure['reason']}"},
                    {"stage": failure["stage"]},
                )
            )
            return "aborted"
    trace_failures = [f for f in failures if f["stage"] in TRACE_STAGES]
    if trace_failures:
        first = trace_failures[0]
        where = locator.at(**_frame_args(first["frame"])) if first.get("frame") else home
        recovered = {
            "symbolic_trace": "the torch.fx fallback captured the graph, so its ops are judged",
            "partial": "ops dispatched before this point were recorded and judged",
        }.get(result.get("capture") or "", "no ops were recorded")
        facts = {
            "kind": first["kind"],
            "reason": f"{first['reason']} ({recovered})",
            "recovered": result.get("capture") or "none",
        }
        emitted.append(("NL013", where, facts, {"stage": first["stage"], "failures": trace_failures}))
    return status


def _op_facts(
    result: dict[str, Any], ops_db: OpDatabase, home: _Location, locator: _Locator, emitted: _Emitted
) -> list[tuple[dict[str, Any], OpVerdict, _Location]]:
    """Judge every recorded op: NL010/NL011/NL012 by verdict, NL601/NL701 for dynamic ops."""
    facts_by_op = result.get("op_facts", {})
    judged = []
    for record in result.get("ops", []):
        verdict = ops_db.judge(record["op"], record["inputs"], record["outputs"], facts_by_op)
        where = locator.at(**_frame_args(record["frame"])) if record.get("frame") else home
        judged.append((record, verdict, where))
        counted = {"op": record["op"], "count": record["count"]}
        if verdict.verdict != LOWERED:
            facts = {
                "op": record["op"],
                "dtypes": _dtypes_text(record),
                "reason": verdict.reason,
                "torch_xla": ops_db.torch_xla or "n/a",
                "code": verdict.code,
                "code_text": f" [{verdict.code}]" if verdict.code else "",
                "dtype": verdict.dtype,
            }
            extra = {**counted, "verdict": verdict.verdict, "fact_source": verdict.source}
            emitted.append((RULE_FOR_VERDICT[verdict.verdict], where, facts, extra))
        if record.get("dynamic") == "data-dependent-shape":
            emitted.append(("NL601", where, {"op": record["op"]}, dict(counted)))
        elif record.get("dynamic") == "host-read":
            emitted.append(("NL701", where, {"op": record["op"], "in_loop": False}, dict(counted)))
    return judged


def _config_line(target: TraceTarget) -> int:
    """The line of the pyproject.toml entry that names this entrypoint (1 if not found)."""
    try:
        lines = Path(target.origin).read_text(encoding="utf-8").splitlines()
    except OSError:
        return 1
    return next((n for n, line in enumerate(lines, start=1) if target.entrypoint in line), 1)


def _frame_args(frame: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": frame["path"],
        "line": frame["line"],
        "column": frame.get("column", 0),
        "end_column": frame.get("end_column", 0),
    }


def _dtypes_text(record: dict[str, Any]) -> str:
    ins = ", ".join(record["inputs"]) or "no tensor inputs"
    outs = ", ".join(record["outputs"]) or "none"
    return f"{ins} -> {outs}"


def _count_text(count: int) -> str:
    for unit, size in (("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if count >= size:
            return f"{count / size:.1f}{unit}"
    return str(count)


def _sizing(params: dict[str, Any], db: RuleDB, ctx: Context) -> dict[str, Any]:
    chip = db.chips[ctx.target]
    capacity = chip.hbm_gib * 1024**3
    return {
        "hbm_gib_per_chip": chip.hbm_gib,
        "chips_for_weights": max(1, math.ceil(params["bytes"] / capacity)),
        "hbm_source": chip.source,
    }


def _empty_summary() -> dict[str, Any]:
    return {
        "capture": None,
        "total_ops": 0,
        "supported_percentage": None,
        "known_ops": 0,
        "counts": dict.fromkeys(VERDICTS, 0),
        "supported_operators": {},
        "unsupported_operators": [],
        "unknown_operators": [],
        "ops": [],
    }


def _op_summary(judged: list[tuple[dict[str, Any], OpVerdict, _Location]]) -> dict[str, Any]:
    """torch_neuronx.analyze-style totals: op calls per verdict, supported share, problem ops with call sites."""
    counts = dict.fromkeys(VERDICTS, 0)
    supported: dict[str, int] = defaultdict(int)
    problems: dict[tuple[str, str], dict[str, Any]] = {}
    ops = []
    for record, verdict, where in judged:
        counts[verdict.verdict] += record["count"]
        site = f"{where.path}:{where.line}"
        ops.append(
            {
                "op": record["op"],
                "inputs": record["inputs"],
                "outputs": record["outputs"],
                "count": record["count"],
                "verdict": verdict.verdict,
                "reason": verdict.reason,
                "code": verdict.code,
                "call_site": site,
                "dynamic": record.get("dynamic", ""),
                "shapes": record.get("shapes", ""),
            }
        )
        if verdict.verdict == LOWERED:
            supported[record["op"]] += record["count"]
            continue
        key = (record["op"], verdict.verdict)
        entry = problems.setdefault(
            key,
            {
                "op": record["op"],
                "verdict": verdict.verdict,
                "count": 0,
                "dtypes": [],
                "reason": verdict.reason,
                "code": verdict.code,
                "source": verdict.source,
                "call_sites": [],
            },
        )
        entry["count"] += record["count"]
        dtypes = _dtypes_text(record)
        if dtypes not in entry["dtypes"]:
            entry["dtypes"].append(dtypes)
        if site not in entry["call_sites"]:
            entry["call_sites"].append(site)
    total = sum(counts.values())
    # Unknown is not unsupported: the share counts only op calls with a documented verdict.
    known = total - counts[UNKNOWN]
    order = {REJECTED: 0, NOT_LOWERED: 1, UNKNOWN: 2}
    listed = sorted(problems.values(), key=lambda e: (order[e["verdict"]], -e["count"], e["op"]))
    return {
        "total_ops": total,
        "known_ops": known,
        "supported_percentage": round(100.0 * counts[LOWERED] / known, 2) if known else None,
        "counts": counts,
        "supported_operators": dict(sorted(supported.items())),
        "unsupported_operators": [e for e in listed if e["verdict"] != UNKNOWN],
        "unknown_operators": [e for e in listed if e["verdict"] == UNKNOWN],
        "ops": ops,
    }


def _findings(
    emitted: list[tuple[str, _Location, dict[str, Any], dict[str, Any]]],
    db: RuleDB,
    ctx: Context,
    options: ScanOptions,
    locator: _Locator,
) -> list[Finding]:
    """Judge each emitted fact with the rule database, merge repeats at one line, apply selection and suppressions."""
    merged: dict[tuple, tuple[str, _Location, dict[str, Any], dict[str, Any]]] = {}
    for rule, where, facts, extra in emitted:
        key = (rule, where.path, where.line, facts.get("op", ""), facts.get("code", ""))
        if key in merged:
            previous = merged[key]
            previous[3]["count"] = previous[3].get("count", 0) + extra.get("count", 0)
            if "dtypes" in facts and facts["dtypes"] not in previous[2]["dtypes"]:
                previous[2]["dtypes"] += f"; {facts['dtypes']}"
            continue
        merged[key] = (rule, where, dict(facts), dict(extra))
    findings: list[Finding] = []
    for rule_id, where, facts, extra in merged.values():
        if rule_id not in db.rules:
            continue
        if not options.selection.allows(db, rule_id, where.path):
            continue
        verdict = db.judge(rule_id, {**facts, "target": ctx.target}, ctx)
        if not verdict.enabled:
            continue
        sources = list(verdict.sources)
        if extra.get("fact_source") and extra["fact_source"] not in sources:
            sources.insert(0, extra.pop("fact_source"))
        extra.pop("fact_source", None)
        findings.append(
            Finding(
                rule=rule_id,
                category=verdict.rule.category,
                severity=verdict.severity,
                path=where.path,
                line=where.line,
                column=where.column,
                end_line=where.line,
                end_column=where.end_column,
                message=verdict.message,
                name=verdict.rule.name,
                status=verdict.status,
                snippet=where.snippet,
                origin="graph",
                extra={"sources": sources, **{k: v for k, v in extra.items() if v not in (None, "", [])}},
            )
        )
    suppression_filter.apply_in_source(findings, options.base.resolve())
    findings.sort(key=Finding.sort_key)
    return findings
