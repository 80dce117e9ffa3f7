"""In-memory form of the rule database and the verdict query the checkers ask."""

from __future__ import annotations

import operator
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from neuronlint.findings import Severity
from neuronlint.ruledb.cases import RuleCase
from neuronlint.ruledb.versions import parse_version, release_key

BACKENDS = ("xla", "native")
STATUSES = ("supported", "partial", "unsupported", "unknown")
UNKNOWN = "unknown"  # value of a platform fact no entry covers: never guessed
NOT_APPLICABLE = "n/a"  # a platform fact that only concerns another backend


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
        """Parse '>=2.27,<2.30'; ValueError names the bad clause, and an empty range is an error."""
        clauses = []
        for raw in text.split(","):
            raw = raw.strip()
            for op in (">=", "<=", "==", ">", "<"):
                if raw.startswith(op):
                    clauses.append((op, parse_version(raw[len(op) :])))
                    break
            else:
                raise ValueError(f"bad SDK range clause {raw!r} (expected e.g. '>=2.30' or '<2.33')")
        parsed = cls(tuple(clauses), text)
        if parsed._empty():
            raise ValueError(f"SDK range {text!r} matches no release")
        return parsed

    def _empty(self) -> bool:
        lows = [(b, op == ">") for op, b in self.clauses if op in (">=", ">", "==")]
        highs = [(b, op == "<") for op, b in self.clauses if op in ("<=", "<", "==")]
        if not lows or not highs:
            return False
        low, low_strict = max(lows)
        high, high_strict = min(highs, key=lambda item: (item[0], not item[1]))
        return low > high or (low == high and (low_strict or high_strict))

    def contains(self, version: tuple[int, ...]) -> bool:
        return all(_OPS[op](version[: len(bound)], bound) for op, bound in self.clauses)


def _value_matches(expected: Any, actual: Any) -> bool:
    if isinstance(expected, list):
        return actual in expected
    return actual == expected


@dataclass(frozen=True, slots=True)
class Condition:
    """Where a verdict or platform fact applies. Every key given must match; none given = always."""

    sdk: SdkRange | None = None
    targets: tuple[str, ...] = ()
    backend: str | None = None
    platform: Mapping[str, Any] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)

    def matches_platform(self, sdk: tuple[int, ...], target: str, backend: str) -> bool:
        if self.sdk is not None and not self.sdk.contains(sdk):
            return False
        if self.targets and target not in self.targets:
            return False
        return self.backend is None or backend == self.backend

    def matches(self, ctx: Context, facts: Mapping[str, Any]) -> bool:
        if not self.matches_platform(ctx.sdk_tuple, ctx.target, ctx.backend):
            return False
        if any(not _value_matches(v, ctx.platform.get(k, UNKNOWN)) for k, v in self.platform.items()):
            return False
        return all(_value_matches(v, facts.get(k)) for k, v in self.facts.items())

    def describe(self) -> str:
        parts = []
        if self.sdk is not None:
            parts.append(f"SDK {self.sdk.text}")
        if self.targets:
            parts.append("/".join(self.targets))
        if self.backend:
            parts.append(f"{self.backend} backend")
        parts.extend(f"{k}={v}" for k, v in self.platform.items())
        parts.extend(f"{k}={v}" for k, v in self.facts.items())
        return ", ".join(parts) or "always"

    @property
    def depends_on_platform(self) -> bool:
        return bool(self.sdk or self.targets or self.backend or self.platform)


@dataclass(frozen=True, slots=True)
class VerdictRule:
    """One `[[rule.verdict]]`: when its condition holds, the verdict it gives."""

    when: Condition
    severity: Severity | None
    status: str | None
    note: str
    sources: tuple[str, ...]
    enabled: bool = True
    evidence: str = (
        "documented"  # "reported": the note rests on a field report, not on Neuron's documentation
    )


REPORTED_PREFIX = "Reported in a field report, not documented by Neuron:"


@dataclass(frozen=True, slots=True)
class Advice:
    """What to write instead where a condition holds (e.g. no NKI on Inf2/Trn1 from 2.29).

    Independent of the verdict: the first advice whose `when` matches replaces the rule's
    `instead`, whichever verdict decided the severity.
    """

    when: Condition
    instead: Mapping[str, str]
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule's record: texts, verdicts per frame, sources and cases."""

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
    example: str  # the first firing case's code as a page shows it (annotations removed)
    example_fixed: str  # the first quiet case's code: what to write instead ("" if none)
    sources: tuple[str, ...]
    verdicts: tuple[VerdictRule, ...] = ()
    replacement: Mapping[str, str] = field(default_factory=dict)
    effort: str = "mechanical"
    origin: str = "static"
    default_enabled: bool = True
    cases: tuple[RuleCase, ...] = ()
    unit: str = ""  # what one lock-in effort unit is: triton-kernel, compiled-module, cuda-source
    library: str = ""  # the CUDA-only library the rule is about, when its findings name none
    fix: Mapping[str, str] = field(default_factory=dict)  # [rule.fix]: safety and what each flavour writes
    file: str = ""
    # Set when a policy pack overrides `severity`: the team's choice wins over every verdict.
    policy_severity: Severity | None = None
    advice: tuple[Advice, ...] = ()

    def all_sources(self) -> list[str]:
        """The rule's sources followed by those its verdicts and advice add, without repeats."""
        extra = [s for v in self.verdicts for s in v.sources] + [s for a in self.advice for s in a.sources]
        return list(dict.fromkeys([*self.sources, *extra]))


@dataclass(frozen=True, slots=True)
class Release:
    """One Neuron SDK release: its date, backends and what changed."""

    version: str
    date: str
    backends: Mapping[str, Mapping[str, Any]]
    changes: tuple[Mapping[str, Any], ...]
    source: str
    note: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict)

    def chips(self) -> set[str]:
        """Every chip any PyTorch backend of this release runs on."""
        out: set[str] = set()
        for info in self.backends.values():
            out.update(info.get("chips", ()))
        return out

    def backends_for(self, target: str) -> list[str]:
        """The PyTorch backends this release offers on a chip, in BACKENDS order."""
        return [b for b in BACKENDS if target in self.backends.get(b, {}).get("chips", ())]

    def status_for(self, backend: str, target: str) -> str:
        """The backend's lifecycle status on one chip (a notice may name only some chips)."""
        info = self.backends[backend]
        return info.get("status_by_chip", {}).get(target, info["status"])

    def torch_for(self, backend: str, target: str) -> list[str]:
        """The PyTorch versions the backend ships for one chip (the manifest may differ per chip)."""
        info = self.backends[backend]
        return list(info.get("torch_by_chip", {}).get(target, info["torch"]))

    def known_versions(self) -> list[str]:
        """Every full version of this release family: 'X.Y.0' and the listed patch releases."""
        patches = [p.split()[0] for p in self.raw.get("patches", ())]
        return [f"{self.version}.0", *patches]


@dataclass(frozen=True, slots=True)
class Chip:
    """One chip (trn1, trn2, inf2...): cores, memory and its defaults."""

    name: str
    title: str
    neuroncore: str
    cores: int
    hbm_gib: int
    int64_mode: str
    dtypes: Mapping[str, Any]
    source: str
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PlatformFact:
    """One value of a platform fact (compiler default, capability) where its condition holds."""

    fact: str
    value: Any
    when: Condition
    flag: str | None
    note: str
    source: str
    file: str = ""
    evidence: str = "documented"


@dataclass(frozen=True, slots=True)
class Context:
    """The question's frame: which Neuron SDK release, which chip, which PyTorch backend."""

    sdk: str
    target: str
    backend: str
    training: bool  # whether the backend supports training on this chip at this release
    flags: frozenset[str] = frozenset()  # neuronx-cc flags the user compiles with
    # Derived from the fields above by RuleDB.context; left out of equality and hashing.
    platform: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def sdk_tuple(self) -> tuple[int, ...]:
        return parse_version(self.sdk)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a rule says in one frame: severity, status, message and replacement."""

    rule: Rule
    severity: Severity
    status: str
    message: str
    replacement: str | None
    enabled: bool
    sources: tuple[str, ...]
    note: str = ""  # the matching verdict's note, filled in
    condition: str = "default"  # which [[rule.verdict]] decided (its `when`), or "default"
    advice: str = ""  # what to do instead on this frame's backend, filled in


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def render(template: str, facts: Mapping[str, Any]) -> str:
    """Fill `{name}` fields from facts; unknown fields stay visible rather than raising."""
    try:
        return template.format_map(_Blank({k: v for k, v in facts.items() if v is not None}))
    except (ValueError, IndexError, KeyError, AttributeError, TypeError):
        return template  # the loader rejects such templates; a message is never worth a crash


def render_complete(template: str, facts: Mapping[str, Any]) -> str | None:
    """Like render, but None when a field has no value (a replacement must never contain '{x}')."""
    fields = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    if any(facts.get(name) in (None, "") for name in fields):
        return None
    return render(template, facts)


def normalise_flags(flags: Iterable[str]) -> frozenset[str]:
    """'--native-int64 --auto-cast=none' or a list of flags -> {'--native-int64=enabled', ...}.

    A bare boolean-style flag means its enabling form, the way neuronx-cc reads it.
    """
    out: set[str] = set()
    for chunk in flags:
        for flag in chunk.split():
            if not flag.startswith("--"):
                raise RuleDBError(
                    f"compiler flag {flag!r}: expected a neuronx-cc flag such as --native-int64=enabled"
                )
            out.add(flag if "=" in flag else f"{flag}=enabled")
    return frozenset(out)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set)):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass
class RuleDB:
    """The loaded database: rules, releases, chips, platform facts and tables."""

    rules: dict[str, Rule]
    releases: dict[str, Release]
    chips: dict[str, Chip]
    platform: tuple[PlatformFact, ...]  # in precedence order: policy packs first, then file order
    tables: dict[str, Any]  # other concerns (ops, apis, libraries, lock-in weights), validated raw data
    fingerprint: str  # hash of every file loaded; part of the scan cache key
    _verdicts: dict[tuple, Verdict] = field(default_factory=dict, repr=False)

    # ---- selection -------------------------------------------------------------------------
    def versions(self) -> list[str]:
        """Release versions, oldest first."""
        return sorted(self.releases, key=parse_version)

    def newest_sdk(self) -> str:
        return max(self.releases, key=parse_version)

    def known_versions(self) -> list[str]:
        """Every release the database knows, patch releases included ('2.31.0', '2.31.1', ...)."""
        return [v for key in self.versions() for v in self.releases[key].known_versions()]

    def release(self, sdk: str) -> Release:
        """The release a version string belongs to ('2.31.1' -> 2.31), or a one-line error.

        'X.Y' names the release family; 'X.Y.Z' must be a release that exists ('2.33.7' is refused).
        """
        try:
            key = release_key(sdk)
            parts = parse_version(sdk)
        except ValueError as exc:
            raise RuleDBError(str(exc)) from None
        found = self.releases.get(key)
        full = ".".join(map(str, parts))
        if found is None or (len(parts) == 3 and full not in found.known_versions()):
            raise RuleDBError(
                f"unknown Neuron SDK release {sdk!r}; known releases: {', '.join(self.known_versions())}"
            )
        return found

    def context(
        self, sdk: str | None, target: str, backend: str | None = None, flags: Iterable[str] = ()
    ) -> Context:
        """Validate an (SDK, chip, backend) choice and describe the platform it gives."""
        release = self.release(sdk or self.newest_sdk())
        if target not in self.chips:
            raise RuleDBError(f"unknown target {target!r}; expected one of: {', '.join(self.chips)}")
        usable = release.backends_for(target)
        if not usable:
            supported = ", ".join(sorted(release.chips())) or "none"
            raise RuleDBError(
                f"Neuron SDK {release.version} does not support {target} with PyTorch (it supports: {supported})"
            )
        if backend is None:
            # The native TorchNeuron backend is the forward path wherever it exists.
            backend = "native" if "native" in usable else usable[0]
        elif backend not in BACKENDS:
            raise RuleDBError(f"unknown backend {backend!r}; expected one of: {', '.join(BACKENDS)}")
        elif backend not in usable:
            chips = release.backends.get(backend, {}).get("chips", ())
            where = f"it runs on {', '.join(chips)}" if chips else "the release does not ship it"
            raise RuleDBError(
                f"the {backend} backend is not available for {target} in Neuron SDK {release.version} ({where})"
            )
        training = bool(release.backends[backend]["training"])
        declared = normalise_flags(flags)
        platform = self.platform_facts(release.version, target, backend, declared)
        return Context(
            sdk=release.version,
            target=target,
            backend=backend,
            training=training,
            flags=declared,
            platform=platform,
        )

    def platform_facts(
        self, sdk: str, target: str, backend: str, flags: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
        """Every platform fact for this frame: the first entry that applies, else 'unknown'."""
        release = self.releases[sdk]
        version = parse_version(sdk)
        found: dict[str, Any] = {
            "training": bool(release.backends[backend]["training"]),
            "backend_status": release.status_for(backend, target),
        }
        backends_of: dict[str, set[str | None]] = {}
        for entry in self.platform:
            backends_of.setdefault(entry.fact, set()).add(entry.when.backend)
            if entry.fact in found or (entry.flag is not None and entry.flag not in flags):
                continue
            if entry.when.matches_platform(version, target, backend):
                found[entry.fact] = entry.value
        facts: dict[str, Any] = {}
        for name in self.platform_fact_names():
            if name in found:
                facts[name] = found[name]
            elif None not in backends_of[name] and backend not in backends_of[name]:
                facts[name] = NOT_APPLICABLE  # e.g. a PyTorch/XLA lifecycle fact on the native backend
            else:
                facts[name] = UNKNOWN
        return facts

    def platform_fact_names(self) -> list[str]:
        """Names usable in `when.platform`: the built-in ones and those rules/platform.toml defines."""
        return list(dict.fromkeys(["training", "backend_status", *(e.fact for e in self.platform)]))

    def platform_entry(self, ctx: Context, fact: str) -> PlatformFact | None:
        """The platform.toml entry that gave `fact` its value in this frame (None for built-ins/unknown)."""
        version = ctx.sdk_tuple
        for entry in self.platform:
            if entry.fact != fact or (entry.flag is not None and entry.flag not in ctx.flags):
                continue
            if entry.when.matches_platform(version, ctx.target, ctx.backend):
                return entry
        return None

    # ---- verdicts --------------------------------------------------------------------------
    def rule(self, rule_id: str) -> Rule:
        try:
            return self.rules[rule_id]
        except KeyError:
            raise RuleDBError(f"unknown rule {rule_id!r}") from None

    def judge(self, rule_id: str, facts: Mapping[str, Any], ctx: Context) -> Verdict:
        """What this construct means for this SDK release on this chip (memoised per frame and facts)."""
        key = (rule_id, _freeze(facts), ctx)
        found = self._verdicts.get(key)
        if found is None:
            found = self._verdicts[key] = self._judge(self.rule(rule_id), self.library_facts(facts), ctx)
        return found

    def library_facts(self, facts: Mapping[str, Any]) -> Mapping[str, Any]:
        """A construct's facts plus its library's record (rules/libraries.toml), when it names one.

        The record decides what the message and severity say about the library: `support`,
        `runs_on`, `neuron_path`, `alternative`, `alternative_no_nki`, `helper` (the call or
        module is one of the library's device-free helpers, e.g. its logger) and `pure_helper` (the
        call is into one of its pure-PyTorch utilities, e.g. flash_attn's padding functions).
        """
        name = facts.get("library")
        record = next((lib for lib in self.tables.get("library", ()) if lib["name"] == name), None)
        if record is None:
            return facts
        target = str(facts.get("api") or facts.get("module") or "")
        helper = any(target == h or target.startswith(h + ".") for h in record.get("helpers", ()))
        # a call site (`api`) of a pure-PyTorch utility of the library: info; its import stays
        api = str(facts.get("api") or "")
        pure = bool(api) and any(api == h or api.startswith(h + ".") for h in record.get("pure_helpers", ()))
        merged: dict[str, Any] = {
            "support": record["support"],
            "runs_on": record.get("runs_on", "no documented platform"),
            "neuron_path": record.get("neuron_path"),
            "alternative": record["alternative"],
            "alternative_no_nki": record.get("alternative_no_nki") or record["alternative"],
            "helper": helper,
            "pure_helper": pure,
        }
        merged.update({k: v for k, v in facts.items() if k not in ("support", "helper", "pure_helper")})
        return merged

    def platform_source(self, ctx: Context, fact: str) -> str:
        """The page a platform fact's value rests on in this frame ('' when nothing says: unknown)."""
        entry = self.platform_entry(ctx, fact)
        if entry is not None:
            return entry.source
        if fact in ("training", "backend_status"):
            return self.releases[ctx.sdk].backends[ctx.backend]["source"]
        return ""

    def _judge(self, rule: Rule, facts: Mapping[str, Any], ctx: Context) -> Verdict:
        severity, status, note, enabled, condition = rule.severity, rule.status, "", True, "default"
        sources = list(rule.sources)
        for verdict in rule.verdicts:
            if verdict.when.matches(ctx, facts):
                severity = verdict.severity or severity
                status = verdict.status or status
                enabled = verdict.enabled
                note = render(verdict.note, facts).strip()
                if verdict.evidence == "reported" and note:
                    note = f"{REPORTED_PREFIX} {note}"
                condition = verdict.when.describe()
                sources.extend(s for s in verdict.sources if s not in sources)
                break
        severity = rule.policy_severity or severity
        options = rule.instead
        for advice in rule.advice:
            if advice.when.matches(ctx, facts):
                options = advice.instead
                sources.extend(s for s in advice.sources if s not in sources)
                break
        instead = options.get(ctx.backend) or options.get("any", "")
        instead = render(instead, facts).strip() if instead else ""
        parts = [render(rule.message, facts), note, instead]
        replacement = rule.replacement.get(ctx.backend)
        return Verdict(
            rule=rule,
            severity=severity,
            status=status,
            message=" ".join(p.strip() for p in parts if p.strip()),
            replacement=render_complete(replacement, facts) if replacement else None,
            enabled=enabled,
            sources=tuple(sources),
            note=note,
            condition=condition,
            advice=instead,
        )
