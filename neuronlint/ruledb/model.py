"""In-memory form of the rule database and the verdict query the checkers ask."""

from __future__ import annotations

import operator
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neuronlint.findings import Severity
from neuronlint.ruledb.versions import parse_version, release_key

BACKENDS = ("xla", "native")
STATUSES = ("supported", "partial", "unsupported", "unknown")
TARGETS = ("inf2", "trn1", "trn2", "trn3")


class RuleDBError(Exception):
    """A rule file is malformed, or a query names something the database does not know."""


_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}


@dataclass(frozen=True, slots=True)
class SdkRange:
    """A conjunction of comparisons such as '>=2.27,<2.30'."""

    clauses: tuple[tuple[str, tuple[int, ...]], ...]
    text: str

    @classmethod
    def parse(cls, text: str) -> SdkRange:
        clauses = []
        for raw in text.split(","):
            raw = raw.strip()
            for op in (">=", "<=", "==", ">", "<"):
                if raw.startswith(op):
                    clauses.append((op, parse_version(raw[len(op) :])))
                    break
            else:
                raise ValueError(f"bad SDK range clause {raw!r} (expected e.g. '>=2.30' or '<2.33')")
        return cls(tuple(clauses), text)

    def contains(self, version: tuple[int, ...]) -> bool:
        return all(_OPS[op](version[: len(bound)], bound) for op, bound in self.clauses)


@dataclass(frozen=True, slots=True)
class Condition:
    sdk: SdkRange | None = None
    targets: tuple[str, ...] = ()
    backend: str | None = None
    facts: Mapping[str, Any] = field(default_factory=dict)

    def matches(self, ctx: Context, facts: Mapping[str, Any]) -> bool:
        if self.sdk is not None and not self.sdk.contains(ctx.sdk_tuple):
            return False
        if self.targets and ctx.target not in self.targets:
            return False
        if self.backend is not None and ctx.backend != self.backend:
            return False
        for key, expected in self.facts.items():
            actual = facts.get(key)
            if isinstance(expected, list):
                if actual not in expected:
                    return False
            elif actual != expected:
                return False
        return True

    def describe(self) -> str:
        parts = []
        if self.sdk is not None:
            parts.append(f"SDK {self.sdk.text}")
        if self.targets:
            parts.append("/".join(self.targets))
        if self.backend:
            parts.append(f"{self.backend} backend")
        parts.extend(f"{k}={v}" for k, v in self.facts.items())
        return ", ".join(parts) or "always"


@dataclass(frozen=True, slots=True)
class VerdictRule:
    when: Condition
    severity: Severity | None
    status: str | None
    note: str
    sources: tuple[str, ...]
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    name: str
    title: str
    category: str
    severity: Severity
    status: str
    message: str
    summary: str
    why: str
    instead: Mapping[str, str]
    example: str
    example_fixed: str
    sources: tuple[str, ...]
    verdicts: tuple[VerdictRule, ...] = ()
    replacement: Mapping[str, str] = field(default_factory=dict)
    effort: str = "mechanical"
    origin: str = "static"
    default_enabled: bool = True
    file: str = ""


@dataclass(frozen=True, slots=True)
class Release:
    version: str
    date: str
    backends: Mapping[str, Mapping[str, Any]]
    changes: tuple[Mapping[str, Any], ...]
    source: str
    raw: Mapping[str, Any] = field(default_factory=dict)

    def chips(self) -> set[str]:
        out: set[str] = set()
        for info in self.backends.values():
            out.update(info.get("chips", ()))
        return out


@dataclass(frozen=True, slots=True)
class Chip:
    name: str
    title: str
    neuroncore: str
    cores: int
    hbm_gib: int
    dtypes: Mapping[str, Any]
    source: str
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Context:
    """The question's frame: which Neuron SDK release, which chip, which PyTorch backend."""

    sdk: str
    target: str
    backend: str
    training: bool  # whether the backend supports training on this chip at this release

    @property
    def sdk_tuple(self) -> tuple[int, ...]:
        return parse_version(self.sdk)


@dataclass(frozen=True, slots=True)
class Verdict:
    rule: Rule
    severity: Severity
    status: str
    message: str
    replacement: str | None
    enabled: bool
    sources: tuple[str, ...]


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render(template: str, facts: Mapping[str, Any]) -> str:
    """Fill `{name}` fields from facts; unknown fields stay visible rather than raising."""
    return template.format_map(_Blank({k: v for k, v in facts.items() if v is not None}))


def render_complete(template: str, facts: Mapping[str, Any]) -> str | None:
    """Like render, but None when a field has no value (a replacement must never contain '{x}')."""
    fields = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    if any(facts.get(name) in (None, "") for name in fields):
        return None
    return render(template, facts)


@dataclass
class RuleDB:
    rules: dict[str, Rule]
    releases: dict[str, Release]
    chips: dict[str, Chip]
    tables: dict[str, Any]  # other concerns (ops, apis, libraries, lock-in weights), validated raw data
    fingerprint: str  # hash of every file loaded; part of the scan cache key

    # ---- selection -------------------------------------------------------------------------
    def newest_sdk(self) -> str:
        return max(self.releases, key=parse_version)

    def context(self, sdk: str | None, target: str, backend: str | None = None) -> Context:
        """Validate an (SDK, chip) choice and pick the PyTorch backend for it."""
        sdk = sdk or self.newest_sdk()
        try:
            key = release_key(sdk)
        except ValueError as exc:
            raise RuleDBError(str(exc)) from None
        release = self.releases.get(key)
        if release is None:
            known = ", ".join(sorted(self.releases, key=parse_version))
            raise RuleDBError(f"unknown Neuron SDK release {sdk!r}; the database has: {known}")
        if target not in self.chips:
            raise RuleDBError(f"unknown target {target!r}; expected one of: {', '.join(self.chips)}")
        usable = [b for b in BACKENDS if target in release.backends.get(b, {}).get("chips", ())]
        if not usable:
            supported = ", ".join(sorted(release.chips())) or "none"
            raise RuleDBError(
                f"Neuron SDK {key} does not support {target} with PyTorch (it supports: {supported})"
            )
        if backend is None:
            # The native TorchNeuron backend is the forward path wherever it exists.
            backend = "native" if "native" in usable else usable[0]
        elif backend not in usable:
            raise RuleDBError(f"the {backend} backend is not available for {target} in Neuron SDK {key}")
        training = bool(release.backends[backend].get("training", True))
        return Context(sdk=key, target=target, backend=backend, training=training)

    # ---- verdicts --------------------------------------------------------------------------
    def rule(self, rule_id: str) -> Rule:
        try:
            return self.rules[rule_id]
        except KeyError:
            raise RuleDBError(f"unknown rule {rule_id!r}") from None

    def judge(self, rule_id: str, facts: Mapping[str, Any], ctx: Context) -> Verdict:
        """What this construct means for this SDK release on this chip."""
        rule = self.rule(rule_id)
        severity, status, notes, enabled = rule.severity, rule.status, [], True
        sources = list(rule.sources)
        for verdict in rule.verdicts:
            if verdict.when.matches(ctx, facts):
                severity = verdict.severity or severity
                status = verdict.status or status
                enabled = verdict.enabled
                if verdict.note:
                    notes.append(render(verdict.note, facts))
                sources.extend(s for s in verdict.sources if s not in sources)
                break
        instead = rule.instead.get(ctx.backend) or rule.instead.get("any", "")
        parts = [render(rule.message, facts)]
        parts.extend(notes)
        if instead:
            parts.append(render(instead, facts))
        replacement = rule.replacement.get(ctx.backend)
        return Verdict(
            rule=rule,
            severity=severity,
            status=status,
            message=" ".join(p.strip() for p in parts if p.strip()),
            replacement=render_complete(replacement, facts) if replacement else None,
            enabled=enabled,
            sources=tuple(sources),
        )
