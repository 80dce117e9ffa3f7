"""aten op -> verdict for one Neuron SDK release, chip and PyTorch backend, from rules/ops/*.toml.

Two layers decide (reference §1.3): (a) on the XLA backend, does the torch-xla version of the
release lower the op (else it runs on the CPU and splits the graph); (b) does neuronx-cc accept it
for these dtypes (both backends compile with neuronx-cc). Layer (b) wins: a rejected op fails the
compile whatever lowered it. Verdicts:

  lowered      torch-xla lowers it (directly, as the *_copy form of a view, through its out=
               kernel, through the ops its composite kernel calls) or Neuron lists it as supported
  not-lowered  torch-xla has no lowering and PyTorch does not decompose it: CPU fallback
  rejected     neuronx-cc rejects it for this dtype / chip / release ([[op_rejection]])
  unknown      not documented either way (composite ops PyTorch decomposes before torch-xla, the
               native backend whose op table is not public, open dtype cases)

Pure Python: the facts about each op that need torch (view, composite kernels, out= variants,
what a composite kernel calls) come from the tracing child.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from neuronlint.ruledb import Context, RuleDB, RuleDBError
from neuronlint.ruledb.model import SdkRange
from neuronlint.ruledb.versions import parse_version

LOWERED, NOT_LOWERED, REJECTED, UNKNOWN = "lowered", "not-lowered", "rejected", "unknown"
VERDICTS = (LOWERED, NOT_LOWERED, REJECTED, UNKNOWN)


@dataclass(frozen=True)
class OpVerdict:
    verdict: str
    reason: str  # one clause, e.g. "torch-xla 2.9 lowers it as aten::view_copy"
    code: str = ""  # neuronx-cc error code for rejections
    dtype: str = ""  # the dtype that triggered a rejection
    source: str = ""  # URL of the fact


@dataclass(frozen=True)
class Rejection:
    id: str
    code: str
    ops: tuple[str, ...]
    dtypes: tuple[str, ...]
    operands: str
    sdk: SdkRange | None
    targets: tuple[str, ...]
    backend: str | None
    platform: Mapping[str, Any]
    status: str
    note: str
    source: str

    def applies(self, op: str, inputs: list[str], outputs: list[str], ctx: Context) -> str | None:
        """The triggering dtype ('' when no dtype is involved) if this entry applies, else None."""
        if self.ops and op not in self.ops and op.split(".", 1)[0] not in self.ops:
            return None
        if self.sdk is not None and not self.sdk.contains(ctx.sdk_tuple):
            return None
        if self.targets and ctx.target not in self.targets:
            return None
        if self.backend is not None and ctx.backend != self.backend:
            return None
        if any(ctx.platform.get(k) != v for k, v in self.platform.items()):
            return None
        if not self.dtypes:
            return ""
        present = {"inputs": inputs, "outputs": outputs}.get(self.operands, inputs + outputs)
        return next((d for d in present if d in self.dtypes), None)


class OpDatabase:
    """The op tables of a RuleDB, ready to answer verdicts for one frame (SDK, chip, backend)."""

    def __init__(self, db: RuleDB, ctx: Context):
        self.db, self.ctx = db, ctx
        tables = db.tables
        self.torch_xla_sources = {t["version"]: t["source"] for t in tables.get("torch_xla", ())}
        self.lowered_by: dict[str, frozenset[str]] = {
            op["name"]: frozenset(op["torch_xla"]) for op in tables.get("op", ())
        }
        for name, versions in self.lowered_by.items():
            unknown = sorted(v for v in versions if v not in self.torch_xla_sources)
            if unknown:
                raise RuleDBError(
                    f"[[op]] {name!r}: key 'torch_xla': version {unknown[0]!r} has no [[torch_xla]] entry"
                )
        self.confirmed = {
            op["name"]: (SdkRange.parse(op["sdk"]), op["source"]) for op in tables.get("op_confirmed", ())
        }
        self.rejections = [
            Rejection(
                id=r["id"],
                code=r.get("code", ""),
                ops=tuple(r.get("ops", ())),
                dtypes=tuple(r.get("dtypes", ())),
                operands=r.get("operands", "any"),
                sdk=SdkRange.parse(r["sdk"]) if "sdk" in r else None,
                targets=tuple(r.get("targets", ())),
                backend=r.get("backend"),
                platform=dict(r.get("platform", {})),
                status=r["status"],
                note=r["note"],
                source=r["source"],
            )
            for r in tables.get("op_rejection", ())
        ]
        self.torch_xla = self._torch_xla_version() if ctx.backend == "xla" else None

    def _torch_xla_version(self) -> str:
        """The newest torch-xla the release ships for the XLA backend (what a new install gets)."""
        release = self.db.releases[self.ctx.sdk]
        versions = list(release.backends.get("xla", {}).get("torch_xla", []))
        known = [v for v in versions if v in self.torch_xla_sources]
        if not known:
            raise RuleDBError(
                f"Neuron SDK {self.ctx.sdk}: no torch-xla version with an op table "
                f"(release lists {versions or 'none'}; rules/ops has {sorted(self.torch_xla_sources)})"
            )
        return max(known, key=parse_version)

    # ---- layer (a): lowering ---------------------------------------------------------------
    def is_lowered(self, name: str) -> bool:
        return self.torch_xla in self.lowered_by.get(name, ())

    def _confirmed(self, name: str) -> str | None:
        base = name.split(".", 1)[0]
        for key in (name, base):
            found = self.confirmed.get(key)
            if found and found[0].contains(self.ctx.sdk_tuple):
                return found[1]
        return None

    def lowering(self, name: str, facts: Mapping[str, Mapping[str, Any]], depth: int = 0) -> OpVerdict:
        """Layer (a) on the XLA backend for one op, using the child's torch facts about it."""
        version = self.torch_xla
        source = self.torch_xla_sources.get(version or "", "")
        info = facts.get(name, {})
        if self.is_lowered(name):
            return OpVerdict(LOWERED, f"torch-xla {version} lowers it", source=source)
        if info.get("view"):
            base, _, overload = name.partition(".")
            copy = f"{base}_copy" + (f".{overload}" if overload else "")
            if self.is_lowered(copy):
                return OpVerdict(LOWERED, f"torch-xla {version} lowers the view as {copy}", source=source)
        confirmed = self._confirmed(name)
        if confirmed:
            return OpVerdict(LOWERED, "Neuron's Supported Operators page lists it", source=confirmed)
        if info.get("wraps_out"):  # the functional kernel only calls the out= kernel: that one decides
            lowered_out = next((o for o in info.get("out_variants", ()) if self.is_lowered(o)), None)
            if lowered_out:
                return OpVerdict(
                    LOWERED, f"torch-xla {version} lowers its out= form {lowered_out}", source=source
                )
        expands = info.get("expands_to")
        if expands and depth < 4:
            parts = {sub: self.lowering(sub, facts, depth + 1) for sub in expands}
            missing = [sub for sub, v in parts.items() if v.verdict == NOT_LOWERED]
            if missing:
                return OpVerdict(
                    NOT_LOWERED,
                    f"its composite kernel calls {', '.join(missing)}, which torch-xla {version} does not lower",
                    source=source,
                )
            if all(v.verdict == LOWERED for v in parts.values()):
                return OpVerdict(
                    LOWERED,
                    f"its composite kernel calls only ops torch-xla {version} lowers ({', '.join(expands)})",
                    source=source,
                )
            return OpVerdict(
                UNKNOWN,
                f"its composite kernel calls ops of unknown status ({', '.join(expands)})",
                source=source,
            )
        if info.get("composite"):
            return OpVerdict(
                UNKNOWN,
                f"PyTorch decomposes it ({'/'.join(info['composite'])} kernel) before torch-xla sees it; "
                "its support is that of the ops it becomes",
                source=source,
            )
        if info.get("wraps_out"):
            outs = ", ".join(info.get("out_variants", ())) or "its out= form"
            return OpVerdict(NOT_LOWERED, f"torch-xla {version} lowers neither it nor {outs}", source=source)
        return OpVerdict(NOT_LOWERED, f"torch-xla {version} has no lowering for it", source=source)

    # ---- both layers -------------------------------------------------------------------------
    def judge(
        self, name: str, inputs: list[str], outputs: list[str], facts: Mapping[str, Mapping[str, Any]]
    ) -> OpVerdict:
        """The verdict for one traced op with its input and output dtypes."""
        for rejection in self.rejections:
            dtype = rejection.applies(name, inputs, outputs, self.ctx)
            if dtype is None:
                continue
            verdict = REJECTED if rejection.status == "unsupported" else UNKNOWN
            return OpVerdict(
                verdict, rejection.note, code=rejection.code, dtype=dtype, source=rejection.source
            )
        if not name.startswith("aten::"):
            return OpVerdict(UNKNOWN, "a custom op outside aten: no Neuron table covers it")
        if self.ctx.backend != "xla":
            return OpVerdict(UNKNOWN, "TorchNeuron's per-operator table is not public")
        return self.lowering(name, facts)
