"""What the migration has to replace: custom kernels (with NKI Library kernels that fit), CUDA-only
libraries (with their Neuron alternatives), and the dtype and op verdicts for the chosen chip.

Every row is built from weighted findings, so its counts and hours add up with the score and the
effort estimate; the replacement facts come from rules/nki-library.toml, rules/libraries.toml and
rules/chips.toml, each with its source.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from neuronlint.lockin.results import LockinResult, WeightedFinding
from neuronlint.ruledb.model import Context, RuleDB


def _site(item: WeightedFinding) -> dict[str, Any]:
    f = item.finding
    return {"path": f.path, "line": f.line, "rule": f.rule, "severity": f.severity.value}


_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)")


class _Sources:
    """Reads scanned files on demand, to name the function a kernel decorator sits on."""

    def __init__(self, base: Path):
        self.base = base
        self.lines: dict[str, list[str]] = {}

    def decorated(self, path: str, line: int) -> str | None:
        if path not in self.lines:
            file = Path(path) if Path(path).is_absolute() else self.base / path
            try:
                self.lines[path] = file.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self.lines[path] = []
        for text in self.lines[path][line - 1 : line + 40]:
            match = _DEF.match(text)
            if match:
                return match.group(1)
        return None


def kernel_rows(lockin: LockinResult, base: Path | None = None) -> list[dict[str, Any]]:
    """One row per custom kernel that needs a port, with the NKI Library kernels that fit.

    A row gathers the findings whose effort class is kernel-port: one Triton kernel (its
    decorators, and its launches wherever they are), one CUDA source or inline extension per file,
    one compiled module per module name. Kernel functions are named from the source when readable.
    """
    params = lockin.params
    sources = _Sources(base or Path.cwd())
    items = [i for i in lockin.findings if i.direction == "cuda" and i.effort == "kernel-port"]
    defined: dict[str, str] = {}  # Triton kernel name -> its group key
    keys: dict[int, str] = {}
    for item in items:
        if item.unit_kind == "triton-kernel" and not item.facts.get("launch"):
            name = sources.decorated(item.path, item.finding.line) or f"line {item.finding.line}"
            keys[id(item)] = f"triton:{item.path}:{name}"
            defined.setdefault(name, keys[id(item)])
    groups: dict[str, list[WeightedFinding]] = defaultdict(list)
    for item in items:
        key = keys.get(id(item))
        if key is None:
            module = item.facts.get("module") if item.unit_kind == "compiled-module" else None
            kernel = str(item.facts.get("kernel", ""))
            if item.unit_kind == "triton-kernel" and item.facts.get("launch"):
                key = defined.get(kernel) or f"triton::{kernel}"
            elif module:
                key = f"module:{module}"
            else:
                key = f"file:{item.path}"
        groups[key].append(item)
    rows = []
    for key, members in groups.items():
        kind_of, subject = key.split(":", 1)
        name = ""
        if kind_of == "triton":
            path, name = subject.rsplit(":", 1)
            subject = name if not path else f"{path}:{name}"
        kernels = 1
        cuda_kernels = sum(
            i.facts["kernels"]
            for i in members
            if i.unit_kind == "cuda-source" and isinstance(i.facts.get("kernels"), int)
        )
        if cuda_kernels:
            kernels = cuda_kernels
        first = min(members, key=lambda i: i.finding.sort_key())
        definition = next(
            (i for i in sorted(members, key=lambda i: i.finding.sort_key()) if not i.facts.get("launch")),
            first,
        )
        path = PurePosixPath(definition.path)
        texts = [
            name,
            str(first.facts.get("module", "")) if kind_of == "module" else "",
            path.name,
            str(path.parent),
        ]
        kind = params.kernel_kind(*texts)
        rows.append(
            {
                "subject": name or subject,
                "subject_kind": "kernel" if kind_of == "triton" else kind_of,
                "rules": sorted({i.rule for i in members}),
                "kernels": kernels,
                "files": sorted({i.path for i in members}),
                "findings": len(members),
                "launches": sum(1 for i in members if i.facts.get("launch")),
                "blockers": sum(1 for i in members if i.finding.severity.value == "blocker"),
                "points": round(sum(i.points for i in members), 4),
                "hours": round(sum(i.hours for i in members), 2),
                "kind": kind.kind if kind else None,
                "kind_title": kind.title if kind else "Not recognised",
                "nki_kernels": list(kind.kernels) if kind else [],
                "note": kind.note
                if kind
                else "No NKI Library kernel matched its names: port it to NKI or fall back to eager PyTorch.",
                "source": kind.source
                if kind
                else "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/nki/library/about/index.html",
                "first": _site(definition),
            }
        )
    rows.sort(key=lambda r: (-r["points"], -r["hours"], r["subject"]))
    return rows


def library_rows(lockin: LockinResult, db: RuleDB) -> list[dict[str, Any]]:
    """One row per CUDA-only library the code uses, with Neuron's documented alternative."""
    table = {entry["name"]: entry for entry in db.tables.get("library", [])}
    groups: dict[str, list[WeightedFinding]] = defaultdict(list)
    for item in lockin.findings:
        if item.finding.category != "cuda-only-lib":
            continue
        rule = db.rules.get(item.rule)
        name = item.facts.get("library") or (rule.library if rule else "")
        if not name:
            name = _library_from_modules(item, table) or "(unrecognised)"
        groups[str(name)].append(item)
    rows = []
    for name, items in groups.items():
        entry = table.get(name, {})
        rows.append(
            {
                "library": name,
                "kind": entry.get("kind", ""),
                "neuron_status": entry.get("status", "unknown"),
                "alternative": entry.get("alternative", "") or str(items[0].facts.get("alternative", "")),
                "source": entry.get("source", ""),
                "findings": len(items),
                "blockers": sum(1 for i in items if i.finding.severity.value == "blocker"),
                "guarded": sum(1 for i in items if i.facts.get("guarded")),
                "files": len({i.path for i in items}),
                "top_files": _top_files(items),
                "points": round(sum(i.points for i in items), 4),
                "hours": round(sum(i.hours for i in items), 2),
            }
        )
    rows.sort(key=lambda r: (-r["points"], -r["findings"], r["library"]))
    return rows


def serving_rows(lockin: LockinResult, db: RuleDB) -> list[dict[str, Any]]:
    """One row per serving tool in rules/serving.toml, with its uses and its Neuron verdict.

    Every tool the database knows is listed, used or not, so the section answers "is the serving
    tool we need supported?" even for a repository that does not use one yet.
    """
    groups: dict[str, list[WeightedFinding]] = defaultdict(list)
    for item in lockin.findings:
        if item.rule == "NL080":
            groups[str(item.facts.get("serving", ""))].append(item)
    rows = []
    for entry in db.tables.get("serving", []):
        items = groups.get(entry["name"], [])
        rows.append(
            {
                "tool": entry["title"],
                "name": entry["name"],
                "neuron_status": entry["status"],
                "gpu_only": bool(entry.get("gpu_only", False)),
                "verdict": entry["verdict"],
                "source": entry["source"],
                "uses": len(items),
                "blockers": sum(1 for i in items if i.finding.severity.value == "blocker"),
                "files": len({i.path for i in items}),
                "top_files": _top_files(items),
                "kinds": sorted(
                    {str(i.facts.get("use", "")).split(" ")[0] for i in items if i.facts.get("use")}
                ),
            }
        )
    rows.sort(key=lambda r: (-r["uses"], r["tool"]))
    return rows


def _library_from_modules(item: WeightedFinding, table: dict[str, dict[str, Any]]) -> str | None:
    text = item.finding.snippet or item.finding.message
    for name, entry in table.items():
        if any(module in text for module in entry.get("modules", ())):
            return name
    return None


def _top_files(items: Sequence[WeightedFinding], limit: int = 3) -> list[str]:
    points: dict[str, float] = defaultdict(float)
    for item in items:
        points[item.path] += item.points + 1e-9  # keep files with uncounted findings, after the others
    return [p for p, _ in sorted(points.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def dtype_rows(lockin: LockinResult, db: RuleDB, ctx: Context) -> list[dict[str, Any]]:
    """Dtype findings grouped by rule and dtype, with the chip's documented status for the dtype."""
    chip = db.chips.get(ctx.target)
    chip_dtypes = dict(chip.dtypes) if chip else {}
    groups: dict[tuple[str, str], list[WeightedFinding]] = defaultdict(list)
    for item in lockin.findings:
        if item.finding.category != "dtype":
            continue
        construct = str(
            item.facts.get("dtype") or item.facts.get("api") or item.facts.get("op") or item.finding.name
        )
        groups[(item.rule, construct)].append(item)
    rows = []
    for (rule_id, construct), items in groups.items():
        dtype = construct.removeprefix("torch.")
        on_chip = chip_dtypes.get(dtype, {})
        worst = max(items, key=lambda i: i.finding.severity.rank)
        rule = db.rules.get(rule_id)
        rows.append(
            {
                "construct": construct,
                "rule": rule_id,
                "title": rule.title if rule else rule_id,
                "severity": worst.finding.severity.value,
                "status": worst.finding.status,
                "findings": len(items),
                "files": len({i.path for i in items}),
                "chip_status": on_chip.get("status", ""),
                "chip_note": on_chip.get("note", ""),
                "chip_source": on_chip.get("source", ""),
                "message": worst.finding.message,
                "first": _site(min(items, key=lambda i: i.finding.sort_key())),
            }
        )
    order = {"blocker": 0, "warning": 1, "info": 2}
    rows.sort(key=lambda r: (order[r["severity"]], -r["findings"], r["construct"]))
    return rows


def op_rows(lockin: LockinResult, db: RuleDB) -> list[dict[str, Any]]:
    """Operator findings from traced models (op-support), grouped by rule and op."""
    groups: dict[tuple[str, str], list[WeightedFinding]] = defaultdict(list)
    for item in lockin.findings:
        if item.finding.category != "op-support":
            continue
        op = str(item.facts.get("op") or item.finding.name)
        groups[(item.rule, op)].append(item)
    rows = []
    for (rule_id, op), items in groups.items():
        worst = max(items, key=lambda i: i.finding.severity.rank)
        rule = db.rules.get(rule_id)
        rows.append(
            {
                "op": op,
                "rule": rule_id,
                "title": rule.title if rule else rule_id,
                "severity": worst.finding.severity.value,
                "status": worst.finding.status,
                "findings": len(items),
                "message": worst.finding.message,
                "first": _site(min(items, key=lambda i: i.finding.sort_key())),
            }
        )
    order = {"blocker": 0, "warning": 1, "info": 2}
    rows.sort(key=lambda r: (order[r["severity"]], -r["findings"], r["op"]))
    return rows


def trace_summary(traces: Sequence[dict[str, Any]] | None) -> dict[str, Any] | None:
    """Op support across traced models: lowered op calls over the op calls with a documented verdict
    (unknown ones are not unsupported and stay out of the share; None when nothing was traced)."""
    if not traces:
        return None
    models = []
    lowered = total = 0
    for trace in traces:
        count = int(trace.get("known_ops", trace.get("total_ops")) or 0)
        share = trace.get("supported_percentage")
        models.append(
            {
                "name": trace.get("name") or trace.get("entrypoint", "?"),
                "status": trace.get("status", ""),
                "total_ops": int(trace.get("total_ops") or 0),
                "known_ops": count,
                "supported_percentage": share,
                "unsupported": len(trace.get("unsupported_operators") or []),
                "unknown": len(trace.get("unknown_operators") or []),
            }
        )
        if count and share is not None:
            total += count
            lowered += round(count * float(share) / 100.0)
    return {
        "models": models,
        "total_ops": sum(m["total_ops"] for m in models),
        "known_ops": total,
        "supported_percentage": round(100.0 * lowered / total, 2) if total else None,
    }
