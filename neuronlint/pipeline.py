"""The scan pipeline, in the order it runs (docs/architecture.md draws it):

    discover (discover.py: which files)
      -> analyse (static/: one parse per file, in worker processes, through the cache)
      -> link across files (imports of in-repo kernels and compiled extensions)
      -> judge against the database for one SDK release x chip x backend (Finding)
      -> filter (filters/: selection, per-file ignores, suppressions; then, for `scan`, NL003,
         baseline, changed lines, severity)
      -> render (formats/, chosen by the CLI)

`run_scan` runs everything up to the in-scan filters and returns a ScanResult; `filter_scan`
runs the rest over it; `make_report` gathers what a format renders. Everything that filters
lives in neuronlint/filters/.
"""

from __future__ import annotations

import gc
import os
import stat
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuronlint.cache import CACHE_DIR_NAME, Cache, entry_key
from neuronlint.discover import discover, relative_posix
from neuronlint.filters import first_party, triage
from neuronlint.filters.chain import FilterOutcome, FilterRequest, apply_filters, scope
from neuronlint.filters.selection import Selection, check_selectors
from neuronlint.findings import Finding, Fix, Severity
from neuronlint.formats import LOCKIN_FORMATS, RenderOptions, Report
from neuronlint.ruledb import Context, RuleDB, RuleDBError, load_ruledb
from neuronlint.scope import ScopeRules
from neuronlint.static.data import StaticData, build_static_data
from neuronlint.static.link import LinkIndex, link_across_files

MAX_FILE_BYTES = 5 * 1024 * 1024  # larger .py files are generated code or data; report and skip
CONFIG_MAX_BYTES = 1024 * 1024  # YAML/JSON/TOML larger than this inside a directory are data, skipped
NOTEBOOK_MAX_BYTES = 50 * 1024 * 1024  # notebooks carry their outputs (images): a larger limit
TASK_TIMEOUT = 300.0  # seconds one file may take in a worker (the parse guard isolates deep files sooner)
# A pool's workers analyse files larger than this one at a time (parse_guard.Gate): a worker's
# peak during a file grows by 0.3 to 0.6 KiB per byte of source (measured: 25 MiB for a 63 KB
# file, 73 MiB for 259 KB); 1.7% of the benchmark corpora's files, 18% of their bytes, are larger.
HEAVY_BYTES = 64 * 1024
_IN_PROCESS_BELOW = 24  # starting worker processes costs more than analysing a few files
# A worker whose resident size is still this much over its start after trimming its heap is
# replaced by a fresh one (neuronlint/workers.py): what one worker holds stays bounded however
# many files it analyses.
WORKER_MAX_GROWTH = 64 * 1024 * 1024


@dataclass
class ScanOptions:
    """What to scan and how: paths, frame, rule selection, cache and workers."""

    paths: list[Path]
    sdk: str | None = None
    target: str = "trn2"
    backend: str | None = None
    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    rules_dirs: list[Path] = field(default_factory=list)
    compiler_flags: list[str] = field(default_factory=list)  # neuronx-cc flags the user compiles with
    jobs: int = 0  # 0 = one per CPU
    cache_dir: Path | None = None  # None = no cache
    base: Path = field(default_factory=Path.cwd)  # reported paths are relative to this
    config_root: Path | None = None  # exclude / per-file-ignores globs are relative to this
    scope_paths: dict[str, list[str]] = field(default_factory=dict)  # scope -> globs ([tool.neuronlint])
    test_cap: Severity | None = Severity.WARNING  # test findings are at most this severe (None: no cap)
    show_ok: bool = False  # keep notes about supported, device-generic code (--show-ok)
    triage: bool = True  # False: every detection as judged (scopes set, no cap, no noise filters)
    # Called with the rule database and the frame, returns the planner the pool's workers call on
    # each Python file they analyse (neuronlint.fix.run.worker_planner): the fixes `scan` shows are
    # then planned on the worker's tree, not parsed again in this process. None: no planning there.
    fix_planner: Callable[[RuleDB, Context], Any] | None = None
    # (where, selectors) of every --select/--ignore/config selector, checked against the database
    selector_sources: list[tuple[str, list[str]]] = field(default_factory=list)

    def check_selectors(self, db: RuleDB) -> None:
        """Raise SelectorError (a RuleDBError: exit 2) for a selector that matches no rule."""
        for where, selectors in self.selector_sources:
            check_selectors(db, selectors, where)

    @property
    def selection(self) -> Selection:
        """The rules this run reports (--select, --extend-select, --ignore, per-file-ignores)."""
        return Selection(
            self.select, self.extend_select, self.ignore, self.per_file_ignores, self.config_root
        )


@dataclass
class ScanResult:
    """A scan's judged findings with the frame and the per-file results."""

    findings: list[Finding]  # selected, including suppressed ones (formats decide what to show)
    files: list[str]
    lines: int
    context: Context
    db: RuleDB
    unused_suppressions: list[tuple[str, dict[str, Any]]]
    # per-file analysis results, as held after linking (path, module_path, lines, parsed, detections,
    # suppressions; not the imports, import sites and kernel lists): input to reports and re-judging
    results: list[dict[str, Any]]
    # files named on the command line that an exclude pattern skipped: (path as reported, pattern)
    excluded_named: list[tuple[str, str]] = field(default_factory=list)
    # findings the triage left out as code that runs only with CUDA (by scope; "guard": folded guards)
    left_out: dict[str, int] = field(default_factory=dict)
    # CUDA guards folded into the findings they guard (findings again once those are fixed)
    folded_guards: list[Finding] = field(default_factory=list)
    # what cross-file linking read (kernel modules, extensions): a file analysed again alone (the
    # fix's rescans) is linked against it, as the scan linked it
    links: LinkIndex = field(default_factory=LinkIndex)
    # fixes the pool's workers planned (ScanOptions.fix_planner), by reported path: (rule, line,
    # column, end line, end column) of a detection -> its Plan or None; for the flavour below
    fix_plans: dict[str, dict[tuple, Any]] = field(default_factory=dict)
    fix_plans_flavour: Any = None

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]


def _size_limit(module_path: str) -> int:
    if module_path.endswith((".json", ".yaml", ".yml")) or (
        module_path.endswith(".toml") and not module_path.endswith("pyproject.toml")
    ):
        return CONFIG_MAX_BYTES
    if module_path.endswith(".ipynb"):
        return NOTEBOOK_MAX_BYTES
    return MAX_FILE_BYTES


# ---- worker side -----------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}

# Files analysed between two runs of the cycle collector while a loop over files holds it paused.
COLLECT_EVERY = 128


class _PausedCollector:
    """Python's cycle collector, held off a loop over files (the serial scan, each pool worker).

    Each collection traverses every tracked object it may free: with the collector on, one ran
    after nearly every file and traversed that file's LibCST tree (the fix planner keeps the last
    few), and the full ones traversed everything the scan holds. Here what exists when the loop
    starts (modules, the rule database, the lookup tables) is frozen (`gc.freeze`, excluded from
    every collection), the collector is off, and every `COLLECT_EVERY` files one collection frees
    whatever cycles those files left and freezes what survives (results and kept trees, which
    reference counting frees when they are dropped: they hold no cycles). A file's own garbage is
    freed by reference counting: the analysis leaves no reference cycles (tests/test_gc_cycles.py),
    so the collection is a safety net that bounds memory if one ever does. `stop` unfreezes and
    turns the collector back on, so nothing frozen here outlives the loop in the collector's blind
    spot.
    """

    def __init__(self) -> None:
        self.active = False
        self.files = 0

    def start(self) -> None:
        if self.active or not gc.isenabled():
            return  # off already: whoever turned it off decides
        gc.freeze()
        gc.disable()
        self.active, self.files = True, 0

    def after_file(self) -> None:
        if self.active:
            self.files += 1
            if self.files % COLLECT_EVERY == 0:
                gc.collect()
                gc.freeze()

    def stop(self) -> None:
        if self.active:
            self.active = False
            gc.unfreeze()
            gc.enable()


_COLLECTOR = _PausedCollector()


def _init_worker(
    static_data: StaticData,
    cache_dir: str | None,
    fingerprint: str,
    checkers: tuple[type, ...] | None = None,
    in_pool: bool = False,
    fix_planner: Callable[[bytes, list[dict[str, Any]]], Any] | None = None,
    gate: str | None = None,
) -> None:
    from neuronlint.static import engine, parse_guard
    from neuronlint.static.engine import Engine, default_engine

    # A pool worker's trees never reach the parent's fix planner: it keeps one only while it plans
    # that file's fixes itself (`fix_planner`, after which _analyze forgets it).
    engine.keep_trees = not in_pool or fix_planner is not None
    # The rules the fix planner plans (none without one): a file analysed on a built tree
    # (engine._analyze_built) is parsed by LibCST too when it has a detection of one of them.
    engine.tree_rules = frozenset(getattr(fix_planner, "rules", ()))
    _WORKER["planner"] = fix_planner if in_pool else None
    engine.isolated_planner = _WORKER["planner"]  # a disposable child plans its file's fixes
    _WORKER["engine"] = Engine(checkers, static_data) if checkers is not None else default_engine(static_data)
    _WORKER["data"] = static_data
    _WORKER["cache"] = Cache(Path(cache_dir)) if cache_dir else None
    _WORKER["fingerprint"] = fingerprint
    # The pool's workers take turns for their heavy moments (a file over HEAVY_BYTES, a disposable
    # parse): parse_guard.Gate on the file `gate`, shared by the pool.
    _WORKER["gated"] = bool(gate)
    parse_guard.gate = parse_guard.NO_GATE
    parse_guard.pool_worker = in_pool
    if gate:
        from neuronlint.workers import _heap_trimmer, waiting

        # waiting for another worker's heavy moment is not a hung file: the pool is told so
        parse_guard.gate = parse_guard.Gate(gate, on_wait=waiting)

        _WORKER["trim"] = _heap_trimmer()
    if in_pool:  # a worker process analyses files until it exits: the collector stays paused
        _COLLECTOR.start()


def _analyze(task: tuple[str, str] | tuple[str, str, bool]) -> dict[str, Any]:
    """Analyse one file (path to read, module path within its scan root, named on the command
    line); never raises."""
    try:
        return _analyze_file(task)
    finally:
        _COLLECTOR.after_file()


def _analyze_file(task: tuple[str, str] | tuple[str, str, bool]) -> dict[str, Any]:
    from neuronlint.static.engine import FileResult, _tool_detection

    path, module_path = task[0], task[1]
    named = len(task) > 2 and bool(task[2])
    limit = _size_limit(module_path)
    cap = max(limit, MAX_FILE_BYTES)
    try:
        data = _read_regular_file(path, cap)
    except _NotRegular as exc:
        result = FileResult(path=module_path)
        result.detections.append(_tool_detection("NL001", 1, str(exc)))
        return result.to_dict()
    except OSError as exc:
        result = FileResult(path=module_path)
        result.detections.append(_tool_detection("NL001", 1, f"cannot read the file: {exc.strerror or exc}"))
        return result.to_dict()
    size = len(data) if data is not None else os.path.getsize(path)
    if size > limit and not named and limit < MAX_FILE_BYTES:
        return FileResult(path=module_path).to_dict()  # a large data file in a directory: not a config
    if data is None:  # over the cap: reported, not analysed
        result = FileResult(path=module_path)
        message = f"file is {size // 1024} KiB, over the {cap // 1024 // 1024} MiB limit; not analysed"
        result.detections.append(_tool_detection("NL001", 1, message))
        return result.to_dict()
    cache: Cache | None = _WORKER["cache"]
    key = entry_key(data, module_path + ("\0named" if named else ""), _WORKER["fingerprint"]) if cache else ""
    if cache:
        cached = cache.get(key)
        if cached is not None:
            return cached
    if len(data) <= HEAVY_BYTES or not _WORKER["gated"]:
        return _analysed(path, module_path, named, data, cache, key)
    from neuronlint.static import parse_guard

    # A large file's parse is a worker's peak: the pool's workers have theirs one at a time, and
    # this one gives the parse's memory back before the next worker may start one.
    with parse_guard.gate:
        value = _analysed(path, module_path, named, data, cache, key)
        gc.collect()
        trim = _WORKER["trim"]
        if trim is not None:
            trim()
    return value


def _analysed(
    path: str, module_path: str, named: bool, data: bytes, cache: Cache | None, key: str
) -> dict[str, Any]:
    """The analysis of a file's bytes (and its fixes, planned in a pool's worker), cached."""
    from neuronlint.filetypes.analyze import analyze_file, file_kind
    from neuronlint.static.engine import FileResult, _tool_detection, analyze_python

    kind: str | None = None
    # The cycle collector is off while one file is analysed (if a loop over files has not paused
    # it already, _PausedCollector): its garbage (LibCST trees have no parent pointers) is freed by
    # reference counting, and each full collection during the analysis would traverse everything
    # the scan holds (measured 0.1-0.2x of LibCST's parse time on a repository,
    # benchmarks/README.md). Cycles it leaves are collected after the file.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        kind = file_kind(module_path, data, named)
        if kind == "python":
            result = analyze_python(module_path, data, _WORKER["data"], _WORKER["engine"])
        elif kind == "cuda":
            from neuronlint.static import build_inputs

            result = build_inputs.analyze_cuda_source(module_path, data)
        elif kind is None:  # only named files get here: directories skip unknown kinds silently
            result = FileResult(path=module_path, lines=0)
            result.detections.append(_tool_detection("NL004", 1, os.path.basename(path)))
        else:
            result = analyze_file(kind, module_path, data, _WORKER["data"], _WORKER["engine"])
    except Exception as exc:  # noqa: BLE001 - a bug on one file must not abort the scan
        result = FileResult(path=module_path)
        result.detections.append(_tool_detection("NL002", 1, f"internal error: {type(exc).__name__}: {exc}"))
    finally:
        if collecting:
            gc.enable()
    value = result.to_dict()
    if cache:
        cache.put(key, value)  # without the plans: a cached result is planned by the parent
    planner = _WORKER["planner"]
    if planner is not None:
        from neuronlint.static.engine import forget_trees, isolated_plans

        if kind == "python":
            plans = isolated_plans(data)  # planned in the parse guard's disposable child
            if plans is None:
                plans = planner(data, value["detections"])
            if plans is not None:
                value["fix_plans"] = plans
        forget_trees()
    return value


class _NotRegular(Exception):
    """The path names a FIFO, a device or a socket: never read (it could block or never end)."""


def _read_regular_file(path: str, cap: int = MAX_FILE_BYTES) -> bytes | None:
    """The file's bytes, or None when it is over `cap` bytes. Raises _NotRegular or OSError.

    Opened without blocking and checked with fstat before reading, so a FIFO or /dev/zero named
    on the command line is reported instead of hanging or reading without end; reads stop after the
    size limit even if the file grows.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, device or socket)"
            raise _NotRegular(f"cannot read the file: it is {kind}; not analysed")
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            data = handle.read(cap + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    return None if len(data) > cap else data


# ---- parent side -----------------------------------------------------------------------------
def _module_path(file: Path, roots: list[Path]) -> str:
    """Path of the file inside the scan argument that contains it (module names come from it)."""
    absolute = Path(os.path.abspath(file))
    for root in roots:
        try:
            return absolute.relative_to(root).as_posix()
        except ValueError:
            continue
    return absolute.name


def analyse_files(
    files: list[Path],
    roots: list[Path],
    static_data: StaticData,
    fingerprint: str,
    jobs: int,
    cache_dir: Path | None,
    progress: Callable[[int], None] | None = None,
    checkers: tuple[type, ...] | None = None,
    named: set[Path] | None = None,
    fix_planner: Callable[[bytes, list[dict[str, Any]]], Any] | None = None,
) -> list[dict[str, Any]]:
    """Analyse every file; `checkers` (default: all) are the static checkers to run; `named` are
    the files named on the command line (an unknown kind is reported for them, NL004);
    `fix_planner`, when given, plans each Python file's fixes in the pool's worker that analysed
    it (an analysis in this process keeps its trees for the fix planner instead)."""
    named = named or set()
    tasks = [(str(f), _module_path(f, roots), Path(os.path.abspath(f)) in named) for f in files]
    cache_arg = str(cache_dir) if cache_dir else None
    workers = jobs or os.cpu_count() or 1
    results: list[dict[str, Any]] = []
    held = _Held()
    if workers == 1 or len(tasks) < _IN_PROCESS_BELOW:
        # (not in a pool: the planner runs after the scan, on the trees this process kept)
        _init_worker(static_data, cache_arg, fingerprint, checkers, fix_planner=fix_planner)
        _COLLECTOR.start()
        try:
            for task in tasks:
                results.append(held(_analyze(task)))
                if progress:
                    progress(1)
        finally:
            _COLLECTOR.stop()
        return results
    import tempfile

    from neuronlint import workers as workers_module  # multiprocessing: only for a pool

    batch = max(1, min(16, len(tasks) // (workers * 8)))
    # The file the workers lock for their heavy moments (parse_guard.Gate): one at a time.
    handle, gate = tempfile.mkstemp(prefix="neuronlint-gate-")
    os.close(handle)
    try:
        packed = workers_module.run(
            _analyze_packed,
            tasks,
            workers,
            _lost_packed,
            initializer=_init_worker,
            initargs=(static_data, cache_arg, fingerprint, checkers, True, fix_planner, gate),
            batch=batch,
            task_timeout=TASK_TIMEOUT,
            progress=progress,
            max_growth=WORKER_MAX_GROWTH,
        )
    finally:
        try:
            os.unlink(gate)
        except OSError:
            pass
    for index, blob in enumerate(packed):  # one file's full value at a time, then only what is held
        results.append(held(_unpack(blob)))
        packed[index] = None
    return results


# A pool's results travel and wait in the parent packed (pickled, then compressed): while the
# workers run, the parent holds a few hundred bytes a finding instead of the objects (1.3 KiB a
# finding held as _Held values, 52 -> 104 MiB over 20,000 files in benchmarks/README.md), and so
# does every worker forked from it late in the scan, which counts the parent's pages again.
def _pack(value: dict[str, Any]) -> bytes:
    import pickle
    import zlib

    return zlib.compress(pickle.dumps(value, pickle.HIGHEST_PROTOCOL), 1)


def _unpack(blob: bytes) -> dict[str, Any]:
    import pickle
    import zlib

    return pickle.loads(zlib.decompress(blob))


def _analyze_packed(task: tuple[str, str] | tuple[str, str, bool]) -> bytes:
    """_analyze in a pool's worker, packed for the parent."""
    return _pack(_analyze(task))


def _lost_packed(task: tuple[str, str], reason: str) -> bytes:
    return _pack(_lost(task, reason))


class _Held:
    """What the parent keeps of each file's result until the scan ends (20,000 files are held at
    once, next to the workers): a new dict without the imported module names (nothing after the
    analysis reads them) and without empty link inputs, whose equal strings, line numbers and facts
    are one object for the whole scan, and whose import sites are packed (`_Sites`); run_scan drops
    the sites once linked. The values are the same, so judging and the output are too."""

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}  # keys, rule IDs, snippets, fact values
        self.ints: dict[int, int] = {}  # line numbers and columns (bools are not ints here)
        self.facts: dict[tuple, dict[str, Any]] = {}  # one dict for equal facts (read, never changed)
        self.module_ids: dict[str, int] = {}
        self.modules: list[str] = []  # index -> imported module name, for _Sites

    def __call__(self, result: dict[str, Any]) -> dict[str, Any]:
        held: dict[str, Any] = {}
        for key, value in result.items():
            if key == "imports" or (key in _LINK_INPUTS and not value):
                continue
            if key == "detections":
                value = [self.detection(d) for d in value]
            elif key == "import_sites":
                value = self.sites(value)
            elif key == "path" or key == "lines":
                value = self.value(value)
            held[self.strings.setdefault(key, key)] = value
        return held

    def value(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return self.strings.setdefault(value, value)
        if kind is int:
            return self.ints.setdefault(value, value)
        return value

    def detection(self, detection: dict[str, Any]) -> dict[str, Any]:
        share, value = self.strings.setdefault, self.value
        return {
            share(k, k): self.shared_facts(v) if k == "facts" and type(v) is dict else value(v)
            for k, v in detection.items()
        }

    def shared_facts(self, facts: dict[str, Any]) -> dict[str, Any]:
        try:  # the type is part of the key: True, 1 and 1.0 are equal but print differently
            key = tuple(part for k, v in facts.items() for part in (k, type(v), v))
            found = self.facts.get(key)
        except TypeError:  # a list or dict value: this detection keeps a dict of its own
            return {self.strings.setdefault(k, k): self.value(v) for k, v in facts.items()}
        if found is None:
            found = self.facts[key] = {self.strings.setdefault(k, k): self.value(v) for k, v in facts.items()}
        return found

    def sites(self, sites: list) -> Any:
        if not sites:
            return []
        ids = self.module_ids
        packed = array("i")
        try:
            for module, line, column, end in sites:
                index = ids.get(module)
                if index is None:
                    index = ids[module] = len(self.modules)
                    self.modules.append(sys.intern(module))
                packed.extend((index, line, column, end))
        except (OverflowError, TypeError):  # a position past 2**31: kept as tuples
            return [(sys.intern(m), line, col, end) for m, line, col, end in sites]
        return _Sites(self.modules, packed)


# Link inputs: a held result has each only when it is not empty (static.link reads them with .get).
_LINK_INPUTS = frozenset(
    {"defines_kernels", "extension_modules", "python_names", "kernel_entries", "imports_without_fallback"}
)


class _Sites:
    """A file's import sites, (module, line, column, end) each, packed as four ints a site (the
    module an index into the scan's list of imported names): 16 bytes a site instead of a tuple
    and its ints (about 170). Iterating yields the tuples static.link reads."""

    __slots__ = ("modules", "packed")

    def __init__(self, modules: list[str], packed: array) -> None:
        self.modules = modules
        self.packed = packed

    def __iter__(self) -> Iterator[tuple[str, int, int, int]]:
        modules, packed = self.modules, self.packed
        for at in range(0, len(packed), 4):
            yield modules[packed[at]], packed[at + 1], packed[at + 2], packed[at + 3]

    def __len__(self) -> int:
        return len(self.packed) // 4


def _drop_link_inputs(results: list[dict[str, Any]]) -> None:
    """After linking across files, the import sites and kernel/extension lists have done their work."""
    for result in results:
        for key in ("import_sites", *_LINK_INPUTS):
            result.pop(key, None)


def _lost(task: tuple[str, str], reason: str) -> dict[str, Any]:
    """The result for a file whose worker died or hung on it: one finding, and the scan goes on."""
    from neuronlint.static.engine import FileResult, _tool_detection

    result = FileResult(path=task[1])
    message = f"too large or too deeply nested to analyse: {reason}"
    result.detections.append(_tool_detection("NL001", 1, message))
    return result.to_dict()


def judge(results: list[dict[str, Any]], db: RuleDB, ctx: Context) -> list[list[Finding]]:
    """Each file's detections judged in the frame: one Finding per detection of a rule the frame reports."""
    judged: list[list[Finding]] = []
    for result in results:
        path = result["path"]
        file_findings: list[Finding] = []
        for det in result["detections"]:
            rule_id = det["rule"]
            if rule_id not in db.rules:
                continue
            facts = dict(det["facts"])
            facts.setdefault("target", ctx.target)
            verdict = db.judge(rule_id, facts, ctx)
            if not verdict.enabled:
                continue
            rule = verdict.rule
            fix = None
            # the record's `replacement` in this frame; none in a notebook (it would edit the JSON)
            if verdict.replacement is not None and "cell" not in det:
                fix = Fix(replacement=verdict.replacement, description=f"Replace with {verdict.replacement}")
            file_findings.append(
                Finding(
                    rule=rule_id,
                    category=rule.category,
                    severity=verdict.severity,
                    path=path,
                    line=det["line"],
                    column=det["column"],
                    end_line=det["end_line"],
                    end_column=det["end_column"],
                    message=verdict.message,
                    name=rule.name,
                    status=verdict.status,
                    snippet=det.get("snippet", ""),
                    fix=fix,
                    extra={
                        "sources": list(verdict.sources),
                        **({"cell": det["cell"]} if "cell" in det else {}),
                    },
                    facts={**facts, "module_path": result.get("module_path", path)},
                )
            )
        judged.append(file_findings)
    return judged


def findings_in_frame(
    results: list[dict[str, Any]], db: RuleDB, ctx: Context, options: ScanOptions
) -> tuple[list[Finding], list[tuple[str, dict[str, Any]]]]:
    """Judge the per-file results in a frame, then keep the selected rules and apply suppressions.

    Returns the findings (suppressed ones flagged) and the suppression comments that silenced nothing.
    """
    judged = judge(results, db, ctx)
    return scope(
        ((r["path"], found, r["suppressions"]) for r, found in zip(results, judged, strict=True)),
        db,
        options.selection,
    )


def _selected_checkers(db: RuleDB, options: ScanOptions) -> tuple[tuple[type, ...] | None, str]:
    """The checkers that can emit a selected rule (None: all), and the cache fingerprint for them.

    Per-file ignores only narrow a file's rules, so they do not narrow the checkers.
    """
    from neuronlint.static.checkers import CHECKERS
    from neuronlint.static.engine import select_checkers

    selected = [r for r in db.rules if options.selection.enabled(db, r)]
    checkers = select_checkers(CHECKERS, selected, db.tables)
    if checkers == CHECKERS:
        return None, db.fingerprint
    return checkers, db.fingerprint + ":" + ",".join(c.__name__ for c in checkers)


def default_cache_dir(base: Path) -> Path:
    return Path(os.environ.get("NEURONLINT_CACHE_DIR") or base / CACHE_DIR_NAME)


def run_scan(
    options: ScanOptions, progress_factory: Callable[[int], Callable[[int], None]] | None = None
) -> ScanResult:
    db = load_ruledb(options.rules_dirs)
    options.check_selectors(db)
    ctx = db.context(options.sdk, options.target, options.backend, options.compiler_flags)
    base = options.base.resolve()
    excluded_named: list[tuple[str, str]] = []
    files = discover(
        options.paths,
        options.exclude,
        base,
        options.config_root,
        on_excluded=lambda file, pattern: excluded_named.append((relative_posix(file, base), pattern)),
    )
    roots = sorted(
        {Path(os.path.abspath(p if p.is_dir() else p.parent)) for p in options.paths},
        key=lambda p: -len(p.parts),
    )
    static_data = build_static_data(db)
    progress = progress_factory(len(files)) if progress_factory else None
    checkers, fingerprint = _selected_checkers(db, options)
    named = {Path(os.path.abspath(p)) for p in options.paths if not p.is_dir()}
    planner = options.fix_planner(db, ctx) if options.fix_planner is not None else None
    results = analyse_files(
        files,
        roots,
        static_data,
        fingerprint,
        options.jobs,
        options.cache_dir,
        progress,
        checkers,
        named,
        planner,
    )
    fix_plans: dict[str, dict[tuple, Any]] = {}
    for file, result in zip(files, results, strict=True):
        result["module_path"] = result["path"]  # path inside its scan root: module names come from it
        result["path"] = relative_posix(file, base)
        plans = result.pop("fix_plans", None)
        if plans is not None:
            fix_plans[result["path"]] = plans
    links = link_across_files(results, files=files)
    _drop_link_inputs(results)
    findings, unused = findings_in_frame(results, db, ctx, options)
    left_out: Counter = Counter()
    folded: list[Finding] = []
    findings = triage.prepare(
        findings,
        enabled=options.triage,
        scope_rules=ScopeRules.from_config(options.scope_paths, options.config_root, base),
        # Paths outside the working directory are classified by their path inside the scan root.
        within_root={r["path"]: r["module_path"] for r in results if r["path"].startswith(("../", "/"))},
        test_cap=options.test_cap,
        first_party_names=first_party.project_names(options.paths),
        show_ok=options.show_ok,
        left_out=left_out,
        folded=folded,
    )
    return ScanResult(
        findings=findings,
        files=[r["path"] for r in results],
        lines=sum(r["lines"] for r in results),
        context=ctx,
        db=db,
        unused_suppressions=unused,
        results=results,
        excluded_named=excluded_named,
        left_out=dict(left_out),
        folded_guards=folded,
        links=links,
        fix_plans=fix_plans,
        fix_plans_flavour=getattr(planner, "flavour", None) if fix_plans else None,
    )


def filter_scan(result: ScanResult, options: ScanOptions, request: FilterRequest, cwd: Path) -> FilterOutcome:
    """The filters after the scan (NL003, fingerprints, baseline, changed lines, severity)."""
    return apply_filters(
        result.findings,
        result.unused_suppressions,
        files=result.files,
        db=result.db,
        context=result.context,
        selection=options.selection,
        request=request,
        cwd=cwd,
    )


def lockin_result(findings: list[Finding], results: list[dict[str, Any]] | None, db: RuleDB, ctx: Context):
    """The lock-in score of these findings (None when the database has no usable lock-in tables)."""
    from neuronlint.lockin import score

    try:
        return score(findings, results, db, ctx)
    except RuleDBError:
        return None


def make_report(
    result: ScanResult,
    outcome: FilterOutcome,
    *,
    formats: tuple[str, ...],
    traces: list[dict[str, Any]] | None = None,
    statistics: bool = False,
    show_source: bool = True,
    show_suppressed: bool = False,
    quiet: bool = False,
    full: bool = False,
    color: bool = False,
    width: int | None = None,
    unsafe_fixes: bool = False,
) -> Report:
    """What the `formats` of this run render: the filtered findings and typed render options.

    The lock-in score, for the formats that show it, covers every finding of the scan, also those
    a baseline or --diff-base left out of the report: it describes the code base, not a change.
    """
    lockin = None
    if LOCKIN_FORMATS.intersection(formats):
        lockin = lockin_result(outcome.scanned, result.results, result.db, result.context)
    options = RenderOptions(
        repo_prefix=outcome.repo_prefix,
        show_suppressed=show_suppressed,
        quiet=quiet,
        full=full,
        baseline=outcome.baseline,
        diff_base=outcome.diff_base,
        changed_lines=outcome.changed_lines,
        cwd=outcome.cwd if outcome.changed_lines is not None else None,
        traces=traces,
        lockin=lockin,
        color=color,
        width=width,
        hidden_by_severity=dict(outcome.hidden_by_severity),
        min_severity=outcome.min_severity,
        unsafe_fixes=unsafe_fixes,
        left_out=dict(result.left_out),
    )
    return Report(
        findings=outcome.findings,
        context=result.context,
        db=result.db,
        files=result.files,
        lines=result.lines,
        statistics=statistics,
        show_source=show_source,
        options=options,
    )
