"""Parse a file once with LibCST and run every checker in a single traversal.

The traversal is our own recursive walk over each node's syntactic fields rather than
`CSTNode.visit`: LibCST's visitor rebuilds every node on the way back up, which measured about one
full parse-time extra on fairseq, while this walk costs about 5% of the parse.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from neuronlint.static import ast_to_cst, parse_guard
from neuronlint.static.context import FileContext, snippet_of
from neuronlint.static.cstparse import parse_module
from neuronlint.static.import_sites import defined_names, import_sites
from neuronlint.static.nodes import node_fields, node_types
from neuronlint.static.positions import locate
from neuronlint.static.realize import Realizer, Unrealizable
from neuronlint.static.registry import Checker

Handler = Callable[[Any, FileContext], None]

# The engine's own rules: files it cannot parse (NL001) and its internal errors (NL002).
TOOL_EMITS: dict[str, tuple[str, ...]] = {"NL001": ("detail",), "NL002": ("detail",)}


def select_checkers(
    checkers: Sequence[type[Checker]], selected: Collection[str] | None, tables: Mapping[str, Any]
) -> tuple[type[Checker], ...]:
    """The checkers that can emit (or feed) a selected rule, in their given order; all when `selected` is None.

    A checker that emits nothing (name resolution) always runs: the others read its bindings. When
    a rule of the engine itself is selected (NL001: a file that cannot be parsed), every checker
    runs, so that the files parsed, and so reported as unparsable, are the same as in a full scan.
    """
    wanted = set(selected) if selected is not None else set()
    if selected is None or wanted & set(TOOL_EMITS):
        return tuple(checkers)
    return tuple(c for c in checkers if not c.declared(tables) or c.rules(tables) & wanted)


class Engine:
    """Dispatch tables and the prefilter of an ordered list of checkers (one instance each)."""

    def __init__(self, checkers: Sequence[type[Checker]], data: Any = None):
        self.checkers = tuple(checkers)
        self.enter: dict[type, list[Handler]] = {}
        self.leave: dict[type, list[Handler]] = {}
        words: set[bytes] = set()
        for cls in self.checkers:
            instance = cls()
            words.update(w.encode() for w in cls.trigger_words(data))
            for name, types, on_leave in cls.handlers():
                table = self.leave if on_leave else self.enter
                for tp in types:
                    table.setdefault(tp, []).append(getattr(instance, name))
        self.triggers = tuple(sorted(words))
        # What the walk does at a node of each type, in one lookup: its enter handlers, the fields
        # to walk (none for a leaf such as `Name`, or for an import: _OPAQUE), its leave handlers.
        self.plan: dict[type, tuple[tuple[Handler, ...], tuple[str, ...], tuple[Handler, ...]]] = {
            tp: (
                tuple(self.enter.get(tp, ())),
                () if tp in _OPAQUE else node_fields(tp),
                tuple(self.leave.get(tp, ())),
            )
            for tp in _NODE_TYPES
        }

    def wanted(self, data: bytes) -> bool:
        """Whether a file contains a trigger word of one of the checkers (else it is not parsed)."""
        return any(word in data for word in self.triggers)


# `type(x) in set` instead of isinstance(x, CSTNode): CSTNode is an ABC and its isinstance is slow.
_NODE_TYPES = node_types()
# Checkers look at import statements as a whole; their dotted names are not uses of anything.
_OPAQUE = (cst.Import, cst.ImportFrom)


def walk(module: cst.Module, ctx: FileContext, engine: Engine) -> None:
    """Visit every syntactic node in document order, calling enter handlers, then children, then leave.

    A node is on `ctx.parents` while its children are visited; a node without fields to walk (a
    leaf, an import) is not pushed at all, which is the same for every handler: enter handlers run
    before the push and leave handlers after the pop."""
    parents = ctx.parents
    push, pop = parents.append, parents.pop
    plan = engine.plan.__getitem__
    node_types = _NODE_TYPES

    # Recursion measured 2x faster than an explicit stack of (node, leaving) tuples here.
    def visit(node: cst.CSTNode) -> None:
        before, names, after = plan(type(node))
        if before:
            for fn in before:
                fn(node, ctx)
        if names:
            push(node)
            for name in names:
                value = getattr(node, name)
                vt = type(value)
                if vt in node_types:
                    visit(value)
                elif vt is tuple or vt is list:
                    for item in value:
                        if type(item) in node_types:
                            visit(item)
            pop()
        if after:
            for fn in after:
                fn(node, ctx)

    try:
        visit(module)
    finally:
        # `visit` refers to itself through its closure cell: a reference cycle that would keep
        # the FileContext (and what it holds) alive until the cycle collector runs. Clearing the
        # cell lets reference counting free them when the file is done.
        visit = None  # type: ignore[assignment]


@dataclass
class FileResult:
    """Everything the scan keeps about one file; plain data so it can be cached and sent between processes."""

    path: str
    detections: list[dict[str, Any]] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    defines_kernels: list[str] = field(default_factory=list)
    extension_modules: list[str] = field(default_factory=list)
    lines: int = 0
    parsed: bool = False
    suppressions: list[dict[str, Any]] = field(default_factory=list)
    import_sites: list[list] = field(default_factory=list)
    python_names: list[str] = field(default_factory=list)  # top-level defs named like extensions
    # Of a module that defines kernels: its entry points (static.kernel_calls), for NL308 elsewhere.
    kernel_entries: dict[str, str] = field(default_factory=dict)
    # Modules imported in a module-level `try` whose handlers bind no fallback: the module needs
    # them as much as its column-1 imports (static.link's _wraps_built_extension).
    imports_without_fallback: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict; the lists are this result's own (dataclasses.asdict would deep-copy
        every detection again, which measured about 2% of a scan)."""
        return {
            "path": self.path,
            "detections": self.detections,
            "imports": self.imports,
            "defines_kernels": self.defines_kernels,
            "extension_modules": self.extension_modules,
            "lines": self.lines,
            "parsed": self.parsed,
            "suppressions": self.suppressions,
            "import_sites": self.import_sites,
            "python_names": self.python_names,
            "kernel_entries": self.kernel_entries,
            "imports_without_fallback": self.imports_without_fallback,
        }


_SUPPRESSION_MARK = b"neuronlint:"

# The trees of the last few Python files this process parsed, by their bytes, so that the fix
# planner (neuronlint.fix, which shows each fixable finding's fix) works on the scan's own tree
# instead of parsing the file a second time. Bounded, so memory stays flat however many files one
# process analyses; worker processes of a pool keep one only while they plan that file's fixes
# (pipeline._analyze), since their trees never leave them.
_TREES: dict[bytes, cst.Module] = {}
KEEP_TREES = 8
keep_trees = True
# Rules whose detections the fix planner plans on this process's kept tree (pipeline._init_worker):
# a file analysed on a built tree with such a detection is parsed by LibCST as well, and kept.
tree_rules: frozenset[str] = frozenset()
# Whether files are analysed on trees built from the stdlib parser's (_analyze_built); the tests
# turn it off to compare with LibCST's own parse of the same files.
use_built_trees = True


def parsed_tree(data: bytes) -> cst.Module | None:
    """The tree this process parsed from exactly these bytes, if it still has it: the tree that
    `libcst.parse_module(data.decode("utf-8"))` gives (only UTF-8 text without a BOM is kept, so
    that parsing the bytes and parsing their text are the same parse)."""
    return _TREES.get(data)


def forget_trees() -> None:
    """Drop the trees kept for the fix planner (a pool worker, once it planned a file's fixes)."""
    _TREES.clear()
    _ISOLATED_PLANS.clear()


# A pool worker's fix planner (set by pipeline._init_worker; None elsewhere). A file the parse
# guard analyses in a disposable child has its fixes planned in that child too, on the child's
# tree, which the worker never has: otherwise the scan's parent would parse the file again to plan
# them (a risky file is a large one: 120 MiB of the parent's heap for three such files, kept after).
# The worker takes the child's plans with `isolated_plans`.
isolated_planner: Callable[[bytes, list[dict[str, Any]]], Any] | None = None
_ISOLATED_PLANS: dict[bytes, Any] = {}


def isolated_plans(data: bytes) -> Any:
    """The plans the disposable child made for these bytes (`isolated_planner`), once; else None."""
    return _ISOLATED_PLANS.pop(data, None)


def _remember(data: bytes, module: cst.Module) -> None:
    if (
        not keep_trees
        or data.startswith(b"\xef\xbb\xbf")
        or not (data.isascii() or module.encoding == "utf-8")
    ):
        return
    _TREES.pop(data, None)
    _TREES[data] = module
    while len(_TREES) > KEEP_TREES:
        del _TREES[next(iter(_TREES))]


def _module_name(rel_path: str) -> str:
    parts = rel_path.replace("\\", "/").removesuffix(".py").split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p and p != ".")


_LONE_CR = re.compile(rb"\r(?!\n)")
# Nodes whose code depends on their parent's (LibCST cannot generate them alone): their snippet is
# what code_for_node makes of them, never the text generated in place.
_ALONE_ONLY = (cst.Annotation, cst.Param)


def analyze_python(rel_path: str, data: bytes, static_data: Any, engine: Engine | None = None) -> FileResult:
    """Analyse one Python file's bytes. Never raises: problems become NL001/NL002 detections.

    `engine`: the checkers to run (default: every checker in neuronlint.static.checkers.CHECKERS).
    A file that would parse, but not in bounded time, memory or stack (parse_guard), becomes one
    NL001 finding instead.
    """
    with warnings.catch_warnings():  # a scanned file's SyntaxWarnings (invalid escapes, `is 1`) are
        warnings.simplefilter("ignore", SyntaxWarning)  # not ours to print: parsing and literal
        warnings.filterwarnings("ignore", "invalid escape sequence", DeprecationWarning)  # evaluation
        return _analyze_guarded(rel_path, data, static_data, engine)


def _analyze_guarded(rel_path: str, data: bytes, static_data: Any, engine: Engine | None) -> FileResult:
    if engine is None:
        engine = default_engine(static_data)
    original = data
    if b"\r" in data:  # CR-only line endings (old Mac files) are newlines for Python, and for positions
        data = _LONE_CR.sub(b"\n", data)
    if b"\0" in data or not engine.wanted(data):
        return _analyze_python(rel_path, data, static_data, engine)  # not parsed: cheap and safe
    measured = parse_guard.measure(data)
    problem, line, column = measured.problem, 1, 1
    if problem is None:
        error = measured.syntax_error
        # parse_guard's docstring, point 3: a pool's worker analyses a file risky only for its size
        # itself, holding the pool's gate (its parse is the worker's heavy moment)
        in_worker = measured.large_only and parse_guard.pool_worker
        isolate = measured.risky and not in_worker
        planner = isolated_planner if isolate and error is None else None
        try:
            if planner is None:
                with parse_guard.gate if in_worker else parse_guard.NO_GATE:
                    return parse_guard.run(
                        lambda d: _analyze_python(rel_path, d, static_data, engine, measured.tree),
                        data,
                        risky=isolate,
                        timeout=parse_guard.SYNTAX_ERROR_TIMEOUT if error else parse_guard.ISOLATED_TIMEOUT,
                    )

            def analyse_and_plan(d: bytes) -> tuple[FileResult, Any]:
                found = _analyze_python(rel_path, d, static_data, engine, measured.tree)
                # the worker's planner, on the bytes the worker would plan (a tree of CR-converted
                # bytes is not theirs: then it returns None and the plans are made as before)
                return found, planner(original, found.to_dict()["detections"])

            result, plans = parse_guard.run(
                analyse_and_plan, data, risky=True, timeout=parse_guard.ISOLATED_TIMEOUT
            )
            if plans is not None:
                _ISOLATED_PLANS[original] = plans
            return result
        except parse_guard.Isolated as exc:
            if error is not None:  # invalid for this Python, and LibCST could not say more in time
                problem, line, column = (
                    f"syntax error: {error.msg}",
                    error.lineno or 1,
                    max(1, error.offset or 1),
                )
            else:
                problem = f"{parse_guard.TOO_LARGE} or {parse_guard.TOO_DEEP}: {exc}"
    result = _analyze_python(rel_path, b"", static_data, engine)
    result.lines = _count_lines(data)
    if _SUPPRESSION_MARK in data:
        from neuronlint.filters.suppressions import parse_suppressions

        result.suppressions = parse_suppressions(data)
    result.detections.append(_tool_detection("NL001", line, problem, column=column))
    return result


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _analyze_python(
    rel_path: str, data: bytes, static_data: Any, engine: Engine, tree: ast.Module | None = None
) -> FileResult:
    """`tree`: the stdlib parser's tree of `data` when the parse guard made one (positions reuse it)."""
    from neuronlint.filters.suppressions import parse_suppressions

    result = FileResult(path=rel_path, lines=_count_lines(data))
    if _SUPPRESSION_MARK in data:
        result.suppressions = parse_suppressions(data)
    if b"\0" in data:
        result.detections.append(
            _tool_detection("NL001", 1, "the file contains NUL bytes (binary data, not Python source)")
        )
        return result
    if not engine.wanted(data):
        # Not parsed, but its imports still count: importing an in-repo kernel module is a finding.
        result.import_sites = import_sites(data, _module_name(rel_path), rel_path.endswith("__init__.py"))
        result.python_names = defined_names(data)
        return result
    if tree is not None and use_built_trees:
        built = _analyze_built(result, rel_path, data, tree, static_data, engine)
        if built is not None:
            return built
    try:
        module = parse_module(data)  # LibCST's parse without re-validating its own nodes
    except cst.ParserSyntaxError as exc:
        line, column, message = _syntax_error_location(data, exc)
        result.detections.append(_tool_detection("NL001", line, message, column=column))
        return result
    except (UnicodeDecodeError, LookupError, SyntaxError, ValueError) as exc:
        result.detections.append(_tool_detection("NL001", 1, f"cannot decode the file: {exc}"))
        return result
    except RecursionError:
        result.detections.append(_tool_detection("NL001", 1, "the file nests too deeply to parse"))
        return result
    result.parsed = True
    _remember(data, module)
    ctx = FileContext(rel_path, module, _module_name(rel_path), static_data, data)
    try:
        return _report(result, ctx, module, data, tree, engine, rel_path)
    finally:
        ctx.close()  # nothing reads it again; no reference cycle through it outlives the file


def _analyze_built(
    result: FileResult, rel_path: str, data: bytes, tree: ast.Module, static_data: Any, engine: Engine
) -> FileResult | None:
    """The fast path: the checkers walk a tree built from the stdlib parser's (ast_to_cst), and the
    few statements that findings need are parsed by LibCST alone (realize). None when the file
    must go LibCST's way: text that is not plain UTF-8 with `\\n` line ends, a construct the
    converter does not build, a statement that does not line up with the source."""
    # a coding declaration (PEP 263): LibCST decodes by it, so the fast path, which reads UTF-8,
    # leaves such files to LibCST
    if b"\r" in data or data.startswith(b"\xef\xbb\xbf") or parse_guard.coding_cookie(data) is not None:
        return None
    try:
        text = data.decode("utf-8")
        module, statements = ast_to_cst.convert(tree, text)
    except (UnicodeDecodeError, ast_to_cst.Unsupported, RecursionError):
        return None
    ctx = FileContext(rel_path, module, _module_name(rel_path), static_data, data)
    ctx.realizer = Realizer(module, text, statements)
    # a result of its own: `result` stays as it was for LibCST's way, should this one give up
    result = dataclasses.replace(result, detections=list(result.detections), parsed=True)
    try:
        result = _report(result, ctx, module, data, tree, engine, rel_path)
    except Unrealizable:
        return None
    finally:
        ctx.close()
    if any(d["rule"] == "NL002" for d in result.detections):
        return None  # an internal error: LibCST's own tree decides whether it is one there too
    if keep_trees and tree_rules and any(d["rule"] in tree_rules for d in result.detections):
        try:  # the fix planner's tree (still on the parse guard's thread, under its gate)
            _remember(data, parse_module(data))
        except Exception:  # noqa: BLE001 - LibCST refusing a file Python accepts: the planner parses it and says so
            pass
    return result


def _report(
    result: FileResult,
    ctx: FileContext,
    module: cst.Module,
    data: bytes,
    tree: ast.Module | None,
    engine: Engine,
    rel_path: str,
) -> FileResult:
    """Walk the parsed file with every checker, place its detections and fill in `result`.
    Raises Unrealizable (a built tree's statement that does not line up: the caller goes LibCST's way)."""
    realizer = ctx.realizer
    try:
        walk(module, ctx, engine)
        # The snippets' code, where generating the flagged statements for positions generated it.
        anchors = {id(d.anchor) for d in ctx.detections if type(d.anchor) not in _ALONE_ONLY}
        texts: dict[int, str] = {}
        if realizer is not None:
            triples = [
                (d.node, d.stmt, d.anchor if type(d.anchor) not in _ALONE_ONLY else None)
                for d in ctx.detections
            ]
            triples += [(d.end_node, d.stmt, None) for d in ctx.detections if d.end_node is not None]
            spans = realizer.locate(triples, texts) if triples else {}
        else:
            targets = [(d.node, d.top, d.stmt, d.indents) for d in ctx.detections]
            targets += [
                (d.end_node, d.top, d.stmt, d.indents) for d in ctx.detections if d.end_node is not None
            ]
            spans = locate(module, data, targets, tree, anchors, texts) if targets else {}
    except Unrealizable:
        raise
    except RecursionError:
        result.detections.append(_tool_detection("NL002", 1, "the file nests too deeply to analyse"))
        return result
    except Exception as exc:  # noqa: BLE001 - one file's internal error must not abort the scan
        result.detections.append(_tool_detection("NL002", 1, f"internal error: {type(exc).__name__}: {exc}"))
        return result
    on_line: set[tuple[str, int]] = set()
    for det in ctx.detections:
        line, col, end_line, end_col = spans.get(id(det.node), (1, 1, 1, 1))
        if det.end_node is not None and id(det.end_node) in spans:
            end_line, end_col = spans[id(det.end_node)][2:]
        if (det.rule, line) in on_line:
            continue  # several occurrences of one rule on one line are one finding (the first)
        on_line.add((det.rule, line))
        result.detections.append(
            {
                "rule": det.rule,
                "line": line,
                "column": col,
                "end_line": end_line,
                "end_column": end_col,
                "facts": det.facts,
                "snippet": snippet_of(text)
                if (text := texts.get(id(det.anchor))) is not None
                else ctx.snippet(det.anchor, det.stmt),
            }
        )
    result.import_sites = import_sites(data, ctx.module_name, rel_path.endswith("__init__.py"))
    result.python_names = defined_names(data)
    result.imports = sorted(ctx.imports)
    kinds = set(ctx.defines_kernels)
    if any(d["rule"] == "NL307" for d in result.detections):
        kinds.add("jiterator")  # CUDA code strings compiled at run time (flash-attention's swiglu)
    result.defines_kernels = sorted(kinds)
    result.extension_modules = sorted(ctx.extension_modules)
    result.imports_without_fallback = sorted(ctx.imports_without_fallback)
    if result.defines_kernels:
        from neuronlint.static.kernel_calls import file_kernel_entries

        result.kernel_entries = file_kernel_entries(tree, data, result.detections)
    return result


def _syntax_error_location(data: bytes, exc: cst.ParserSyntaxError) -> tuple[int, int, str]:
    """CPython's own message and position when it also rejects the file (they are more precise)."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a scanned file's SyntaxWarnings are not ours to print
            ast.parse(data)
    except SyntaxError as err:
        if err.lineno:
            return err.lineno, max(1, err.offset or 1), f"syntax error: {err.msg}"
    except (ValueError, MemoryError, RecursionError):
        pass
    message = str(exc).splitlines()[0] if str(exc) else "syntax error"
    return exc.raw_line or 1, exc.raw_column + 1, message


def _tool_detection(rule: str, line: int, message: str, column: int = 1) -> dict[str, Any]:
    return {
        "rule": rule,
        "line": line,
        "column": column,
        "end_line": line,
        "end_column": column,
        "facts": {"detail": message},
        "snippet": "",
    }


_DEFAULT: dict[int, tuple[Any, Engine]] = {}


def default_engine(data: Any = None) -> Engine:
    """An engine over every checker for these lookup tables, built once per process."""
    cached = _DEFAULT.get(id(data))
    if cached is None or cached[0] is not data:
        from neuronlint.static.checkers import CHECKERS

        _DEFAULT.clear()
        cached = _DEFAULT[id(data)] = (data, Engine(CHECKERS, data))
    return cached[1]


sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
