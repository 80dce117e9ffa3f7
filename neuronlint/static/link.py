"""Cross-file linking, after every file is analysed: imports of in-repo modules that define GPU
kernels (NL306) and the calls of their kernel entry points (NL308, static.kernel_calls), imports
of compiled extensions built by this project and the calls of their functions (NL303), and imports
of in-repo modules written with NKI (NL905)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from neuronlint.neuron_packages import NKI_DEVICE_LANGUAGE, neuron_module
from neuronlint.static.extension_names import extension_component
from neuronlint.static.registry import Checker, Emitter


class CrossFileLink(Emitter):
    """Reads the per-file results (import sites, kernels defined, extensions built), never a tree."""

    emits = {"NL306": ("module", "kernels"), "NL308": ("name", "module", "reaches")}
    # homes: the custom-kernel checker (NL303) and the neuron-lockin checker (NL905), in-file sites
    also_emits = {
        "NL303": ("module", "kind"),
        "NL905": ("module", "what", "legacy_namespace", "kernel"),
    }


def module_names(
    module_path: str, packages: AbstractSet[str], path_dirs: AbstractSet[str] = frozenset()
) -> tuple[str, set[str]]:
    """Dotted names under which a scanned file can be imported.

    The full path from the scan root always counts (relative imports resolve against it). So does
    the name from the top of its package chain (directories with `__init__.py`), which is how it is
    imported when the scan root sits above a source root such as `src/`; and its bare name when
    its directory is one a package puts on `sys.path` (`path_dirs`).
    """
    parts = module_path.removesuffix(".py").split("/")
    package = parts[-1] == "__init__"
    if package:
        parts = parts[:-1]
    full = ".".join(parts)
    names = {full}
    start = len(parts) - 1
    directory_parts = module_path.split("/")[:-1]
    while start > 0 and "/".join(directory_parts[:start]) in packages:
        start -= 1
    names.add(".".join(parts[start:]))
    if not package and module_path.rpartition("/")[0] in path_dirs:
        names.add(parts[-1])  # MinkowskiEngine's `from MinkowskiConvolution import ...`
    return full, {n for n in names if n}


def _import_rules(checkers: Sequence[type[Checker]]) -> frozenset[str]:
    """Rules whose detection on a line already describes its import: linking adds nothing there."""
    own = frozenset(CrossFileLink.declared())
    return own.union(*(c.import_findings for c in checkers))


@dataclass(frozen=True)
class LinkIndex:
    """What linking reads of the whole scan: the package directories, the in-repo modules that
    define GPU kernels (importable name -> (full name, kernel kinds)), the compiled extensions the
    project builds, the extension-like names modules define in Python (importable name -> names;
    only modules that define some), and the kernel entry points of each kernel module (full name ->
    static.kernel_calls.kernel_entries). Kept on the scan's result, so that a file analysed again
    alone (a fix's rescan) is linked as the scan linked it; small (a few names per such module)."""

    packages: frozenset[str] = frozenset()
    kernel_modules: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    extensions: frozenset[str] = frozenset()
    import_rules: frozenset[str] = frozenset()
    python_names: Mapping[str, frozenset[str]] = field(default_factory=dict)
    kernel_entries: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # Modules that define no kernel but reach one through another module's entry points (full
    # names): importing them is NL306 only where the import names one of their entry points.
    wrappers: frozenset[str] = frozenset()
    # In-repo modules that import NKI at their top level (importable name -> (full name, whether
    # they write NKI kernels or kernel code)): importing one needs NKI (NL905).
    nki_modules: Mapping[str, tuple[str, bool]] = field(default_factory=dict)
    # Package directories that put themselves on `sys.path`: their modules import by bare name too.
    path_dirs: frozenset[str] = frozenset()

    def modules(self, module_paths: Iterable[str]) -> dict[str, frozenset[str]]:
        """Every importable name of the scan's Python files -> the extension-like names it defines."""
        table: dict[str, frozenset[str]] = {}
        for path in module_paths:
            if path.endswith(".py"):
                for name in module_names(path, self.packages, self.path_dirs)[1]:
                    table[name] = self.python_names.get(name, _NONE)
        return table


_NONE: frozenset[str] = frozenset()


def _defined_names(
    python: list[dict[str, Any]], packages: frozenset[str], path_dirs: frozenset[str]
) -> dict[str, frozenset[str]]:
    """Importable module name -> the extension-like names it defines in Python."""
    modules: dict[str, frozenset[str]] = {}
    for result in python:
        _, names = module_names(result["module_path"], packages, path_dirs)
        defined = frozenset(result.get("python_names") or ())
        for name in names:
            modules[name] = modules.get(name, _NONE) | defined
    return modules


def link_index(
    results: list[dict[str, Any]],
    checkers: Sequence[type[Checker]] | None = None,
    path_dirs: frozenset[str] = frozenset(),
) -> tuple[LinkIndex, dict[str, frozenset[str]]]:
    """The index of every file's kernels and extensions (results: dicts with `module_path`), and
    the table of every importable module name (LinkIndex.modules). `path_dirs`: _path_dirs."""
    if checkers is None:
        from neuronlint.static.checkers import CHECKERS

        checkers = CHECKERS
    python = [r for r in results if r["module_path"].endswith(".py")]
    packages = frozenset(
        r["module_path"].removesuffix("/__init__.py")
        for r in python
        if r["module_path"].endswith("/__init__.py")
    )
    modules = _defined_names(python, packages, path_dirs)
    extensions = frozenset(name for r in results for name in r.get("extension_modules", ()))
    kernel_modules: dict[str, tuple[str, tuple[str, ...]]] = {}
    entries: dict[str, dict[str, str]] = {}
    own_namespaces = frozenset(package.rpartition("/")[2] for package in packages)
    for result in python:
        kinds = tuple(result["defines_kernels"]) if _defines_kernels(result, modules) else ()
        kinds = kinds or _wraps_built_extension(result, extensions, modules)
        kinds = kinds or _calls_own_operators(result, own_namespaces)
        if kinds:
            full, names = module_names(result["module_path"], packages, path_dirs)
            for name in names:
                kernel_modules[name] = (full, kinds)
            if result.get("kernel_entries"):
                entries[full] = dict(result["kernel_entries"])
    defined = {name: names for name, names in modules.items() if names}
    nki_modules: dict[str, tuple[str, bool]] = {}
    for result in python:
        writes_kernels = _nki_module(result)
        if writes_kernels is not None:
            full, names = module_names(result["module_path"], packages, path_dirs)
            nki_modules.update((name, (full, writes_kernels)) for name in names)
    index = LinkIndex(
        packages,
        kernel_modules,
        extensions,
        _import_rules(checkers),
        defined,
        entries,
        nki_modules=nki_modules,
        path_dirs=path_dirs,
    )
    return index, modules


def _nki_module(result: dict[str, Any]) -> bool | None:
    """None when a module does not import NKI at its top level (column 1: not in a `try`, an `if`
    or a function); else whether it writes NKI kernels or kernel code (imports the device language,
    or defines an `@nki.jit` kernel) rather than only using NKI's host-side names."""
    top_level = [
        module
        for module, _line, column, _end in result.get("import_sites", ())
        if column == 1 and (found := neuron_module(module)) is not None and found[0] == "NL905"
    ]
    if not top_level:
        return None
    return any(m.startswith(NKI_DEVICE_LANGUAGE) for m in top_level) or any(
        d["rule"] == "NL905" and d["facts"].get("kernel") for d in result["detections"]
    )


def link_result(
    result: dict[str, Any],
    index: LinkIndex,
    modules: Mapping[str, frozenset[str]],
    source: Callable[[], bytes | None] | None = None,
) -> None:
    """Link one Python file (its `detections` and `import_sites`): drop the NL303 of names the tree
    defines in Python, add the NL306 / NL303 of its imports of in-repo kernels and built extensions,
    and the NL308 of its calls of their kernel entry points, read from the file's text (`source`,
    asked for only when the file imports a kernel module that has some; None or no text: no NL308).
    `modules` is LinkIndex.modules of the scan's files."""
    if not result["module_path"].endswith(".py"):
        return
    _drop_python_extensions(result, modules)
    if not index.kernel_modules and not index.extensions and not index.nki_modules:
        return
    own, _ = module_names(result["module_path"], index.packages, index.path_dirs)
    if index.nki_modules:
        _link_nki_imports(result, index, own)
    _drop_in_tree_library_imports(result, index, own)
    flagged_lines = {d["line"] for d in result["detections"] if d["rule"] in index.import_rules}
    imported: dict[int, list[tuple[str, str]]] = {}  # import line -> (name, kernel module with entries)
    extensions: dict[int, list[tuple[str, str]]] = {}  # import line -> (name, extension built here)
    # import line -> the import site and its NL306, if the line names an entry point of a wrapper
    wrapper_sites: dict[int, tuple[str, dict[str, Any]]] = {}
    # each import site, and whether it names an extension this project builds
    sites = [
        (*site, bool(index.extensions) and _is_extension(site[0], index.extensions))
        for site in result.get("import_sites", ())
    ]
    # `from .jit_compiler import tutel_custom_kernel`: the line imports the extension itself, through
    # a kernel module that loads it; it is the extension's import (NL303), and its uses are its calls
    through = {line for _module, line, _column, _end, is_extension in sites if is_extension}
    for module, line, column, end, is_extension in sites:
        found = index.kernel_modules.get(module)
        if found and line in through and not is_extension:
            found = None
        if found and found[0] != own and found[0] in index.kernel_entries:
            imported.setdefault(line, []).append((module, found[0]))
        if found and found[0] != own and found[0] in index.wrappers:
            site = _site("NL306", line, column, end, module=found[0], kernels=", ".join(found[1]))
            wrapper_sites.setdefault(line, (module, site))
            continue
        if line in flagged_lines:
            continue
        if found and found[0] != own:
            result["detections"].append(
                _site("NL306", line, column, end, module=found[0], kernels=", ".join(found[1]))
            )
            flagged_lines.add(line)
        elif is_extension:
            extensions.setdefault(line, []).append((module, module))
            result["detections"].append(
                _site(
                    "NL303",
                    line,
                    column,
                    end,
                    module=module,
                    kind="compiled extension built by this project",
                )
            )
            flagged_lines.add(line)
    text = source() if (imported or extensions) and source is not None else None
    if text:
        from neuronlint.static.kernel_calls import entry_import_lines, extension_calls, kernel_calls

        # NL308 lines too: a later round of wrapper linking adds no second finding to a line
        kernel_lines = {
            d["line"] for d in result["detections"] if d["rule"] in _KERNEL_SITE_RULES or d["rule"] == "NL308"
        }
        if extensions:
            found = extension_calls(text, extensions, kernel_lines)
            result["detections"].extend(found)
            kernel_lines.update(d["line"] for d in found)
        linked = kernel_calls(text, imported, index.kernel_entries, kernel_lines) if imported else []
        result["detections"].extend(linked)
        if wrapper_sites:
            # an import also names an entry point where this file reaches a kernel through the name
            # it binds (nunchaku's test imports `NunchakuFluxTransformer2dModel` and calls its
            # `from_pretrained`, an entry point of a class whose other methods alone would not
            # make the import one)
            reached = {(d["facts"]["module"], str(d["facts"]["name"]).partition(".")[0]) for d in linked}
            named = entry_import_lines(text, imported, index.kernel_entries, reached)
            _link_wrapper_imports(result, wrapper_sites, named, index)


def _link_nki_imports(result: dict[str, Any], index: LinkIndex, own: str) -> None:
    """NL905 at each import of an in-repo NKI module (`from .components.attention import attn`),
    unless the line already holds an import finding (it also imports `nki` itself). Not inside a
    Neuron package's own repository (`neuronx_distributed_inference.models.llama` imported by its
    Qwen2 model): elsewhere the import of such a package is its own rule's finding."""
    flagged = {
        d["line"] for d in result["detections"] if d["rule"] in index.import_rules or d["rule"] == "NL905"
    }
    for module, line, column, end in result.get("import_sites", ()):
        found = index.nki_modules.get(module)
        if found is None or found[0] == own or line in flagged or neuron_module(module) is not None:
            continue
        full, writes_kernels = found
        result["detections"].append(
            _site(
                "NL905",
                line,
                column,
                end,
                module=full,
                what="in-repo module written with NKI",
                legacy_namespace=False,
                kernel=writes_kernels,
            )
        )
        flagged.add(line)


def _is_extension(module: str, extensions: frozenset[str]) -> bool:
    """`ext` or `pkg.ext` for an extension the project builds as `ext`."""
    return any(module == ext or module.endswith("." + ext) for ext in extensions)


def _link_wrapper_imports(
    result: dict[str, Any], sites: Mapping[int, tuple[str, dict[str, Any]]], named: set[int], index: LinkIndex
) -> None:
    """NL306 at the imports of wrapper modules that name one of their entry points (`named`), in
    place of a library-import finding about the same module (the scanned tree is that library,
    as _drop_in_tree_library_imports says of kernel modules); an import line that already holds
    another import finding keeps it."""
    chosen = {line: entry for line, entry in sites.items() if line in named}
    _drop_import_findings(result, {(line, module) for line, (module, _site) in chosen.items()}, index)
    flagged = {d["line"] for d in result["detections"] if d["rule"] in index.import_rules}
    result["detections"].extend(site for line, (_module, site) in chosen.items() if line not in flagged)


# A line that already reports a kernel launch, a build or an extension use gets no NL308 as well.
_KERNEL_SITE_RULES = frozenset({"NL301", "NL302", "NL303", "NL305", "NL307"})


def link_across_files(
    results: list[dict[str, Any]],
    checkers: Sequence[type[Checker]] | None = None,
    files: Sequence[Path] | None = None,
) -> LinkIndex:
    """Link every Python file's result (dicts with `module_path`); returns the index they were
    linked against, for files analysed again alone (LinkIndex.modules rebuilds the table).
    `files`: the results' files, in order, read again for NL308 (only those that import a kernel
    module with entry points); without them no NL308 is linked."""
    index, modules = link_index(
        results, checkers, _path_dirs(results, files) if files is not None else frozenset()
    )
    for i, result in enumerate(results):
        link_result(result, index, modules, _reader(files[i]) if files is not None else None)
    if files is not None:
        index = _link_wrappers(results, files, index, modules)
    return index


# Rounds of wrapper linking: Deformable-DETR's MSDeformAttn takes four (the functions package
# re-exports the autograd Function over the extension, the module's forward applies it, the modules
# package re-exports the module, and the transformer builds it).
_WRAPPER_ROUNDS = 4


def _link_wrappers(
    results: list[dict[str, Any]],
    files: Sequence[Path],
    index: LinkIndex,
    modules: Mapping[str, frozenset[str]],
) -> LinkIndex:
    """Modules that reach a kernel module's entry points without defining kernels (a package's
    `__init__.py` re-exporting them, a module whose `forward` calls one) become kernel modules too,
    round by round from the modules found in the last: their importers are linked against them.
    Returns the index with all of them, which links a file analysed again alone in one pass."""
    from neuronlint.static.kernel_calls import kernel_entries, parse_source, wrapper_entries

    frontier, first = set(index.kernel_entries), True
    names_of = [
        module_names(r["module_path"], index.packages, index.path_dirs) for r in results
    ]  # once, not per round
    for _ in range(_WRAPPER_ROUNDS):
        added: dict[str, tuple[str, tuple[str, ...]]] = {}
        entries: dict[str, dict[str, str]] = {}
        wrappers: set[str] = set()
        for i, result in enumerate(results):
            if not result["module_path"].endswith(".py"):
                continue
            full, names = names_of[i]
            record = index.kernel_modules.get(full)
            wrapper = full in index.wrappers
            # a record under its name that is another file's (a `src/` layout's short name) is not
            # its own
            own = record is not None and not wrapper and record[0] == full
            if record is not None and not wrapper and not own:
                continue
            # A module with entry points grows when a module it imports gains entry points later: a
            # wrapper found in an earlier round (transformer_engine.pytorch re-exports `Linear` from
            # its `module` package), or after the first round a kernel module that also re-exports
            # its submodules' (pytorch_scatter's `__init__.py` loads the operator library at import
            # and re-exports `scatter` from `.scatter`); the latter stays a kernel module, whose
            # every import is the finding, not a wrapper.
            known = index.kernel_entries.get(full)
            if known is not None and not (wrapper or (own and not first)):
                continue
            # A kernel module known only by linking (a wrapper of an extension the project builds,
            # whose calls of it linking found): its own entry points, once, in the first round.
            own_entries = own and first and known is None
            imported: dict[int, list[tuple[str, str]]] = {}
            kinds: list[str] = []
            for module, line, _column, _end in result.get("import_sites", ()):
                found = index.kernel_modules.get(module)
                if found and found[0] != full and found[0] in index.kernel_entries:
                    imported.setdefault(line, []).append((module, found[0]))
                    kinds.extend(k for k in found[1] if k not in kinds)
            if not own_entries and not any(m in frontier for sites in imported.values() for _, m in sites):
                continue
            tree = parse_source(_reader(files[i])())
            if tree is None:
                continue
            if own_entries:
                reached = kernel_entries(tree, result["detections"])
            else:
                package = result["module_path"].endswith("__init__.py")
                reached = wrapper_entries(tree, result["detections"], imported, index.kernel_entries, package)
            if known is not None:
                reached = {**known, **reached} if reached.keys() - known.keys() else {}
            if reached:
                entries[full] = reached
                if not own:
                    wrappers.add(full)
                for name in names:
                    added[name] = record if own and record is not None else (full, tuple(kinds))
        first = False
        if not entries:
            break
        index = replace(
            index,
            kernel_modules={**index.kernel_modules, **added},
            kernel_entries={**index.kernel_entries, **entries},
            wrappers=index.wrappers | wrappers,
        )
        frontier = set(entries)
        only_new = replace(index, kernel_modules=added, extensions=frozenset(), nki_modules={})
        for i, result in enumerate(results):
            if any(site[0] in added for site in result.get("import_sites", ())):
                link_result(result, only_new, modules, _reader(files[i]))
    return index


def _path_dirs(results: list[dict[str, Any]], files: Sequence[Path]) -> frozenset[str]:
    """Package directories whose `__init__.py` puts the directory itself on `sys.path` and imports
    its own modules by their bare names (MinkowskiEngine: `sys.path.append(os.path.dirname(
    __file__))`, then `from MinkowskiConvolution import MinkowskiConvolution`): each module there is
    importable under its bare name as well. Read only for an `__init__.py` that imports a sibling so."""
    stems: dict[str, set[str]] = {}
    for result in results:
        directory, _, name = result["module_path"].rpartition("/")
        if name.endswith(".py") and name != "__init__.py":
            stems.setdefault(directory, set()).add(name.removesuffix(".py"))
    found: set[str] = set()
    for i, result in enumerate(results):
        directory, _, name = result["module_path"].rpartition("/")
        siblings = stems.get(directory)
        if name != "__init__.py" or not siblings:
            continue
        if any(site[0] in siblings for site in result.get("import_sites", ())):
            text = _reader(files[i])()
            if text and b"sys.path" in text and b"__file__" in text:
                found.add(directory)
    return frozenset(found)


def _reader(file: Path) -> Callable[[], bytes | None]:
    def read() -> bytes | None:
        try:
            return file.read_bytes()
        except OSError:
            return None

    return read


def _drop_in_tree_library_imports(result: dict[str, Any], index: LinkIndex, own: str) -> None:
    """An import finding about a module the scanned tree holds and links as a kernel module (`from
    causal_conv1d.cpp_functions import f` scanning causal-conv1d itself, when its package is not
    recognised as first-party) is about the code being ported, not about a dependency: NL306 takes
    its place."""
    sites = {
        (line, module)
        for module, line, _column, _end in result.get("import_sites", ())
        if (found := index.kernel_modules.get(module)) and found[0] != own and found[0] not in index.wrappers
    }
    _drop_import_findings(result, sites, index)


def _drop_import_findings(result: dict[str, Any], sites: set[tuple[int, str]], index: LinkIndex) -> None:
    """Drop the import findings (index.import_rules) about the (line, module) `sites`, or about a
    package of one (`from transformer_engine import pytorch`: the finding names the package)."""
    if not sites:
        return
    covered = {
        (line, ".".join(module.split(".")[:end]))
        for line, module in sites
        for end in range(1, module.count(".") + 2)
    }
    kept = [
        d
        for d in result["detections"]
        if not (d["rule"] in index.import_rules and (d["line"], d["facts"].get("module")) in covered)
    ]
    if len(kept) != len(result["detections"]):
        result["detections"] = kept


def _defines_kernels(result: dict[str, Any], modules: Mapping[str, frozenset[str]]) -> bool:
    """Whether a module defines or wraps GPU kernels. A module that only runs a compiled extension
    in its functions (custom_kernel.WRAPS_EXTENSION) does when one of those extensions is really
    one, not a name the scanned tree defines in Python (`_python_defined`)."""
    from neuronlint.static.checkers.custom_kernel import WRAPS_EXTENSION

    kinds = result.get("defines_kernels")
    if not kinds or not all(kind.startswith(WRAPS_EXTENSION) for kind in kinds):
        return bool(kinds)
    return any(
        d["rule"] == "NL303"
        and d["facts"].get("kind") == "compiled extension"
        and not _python_defined(str(d["facts"].get("module") or ""), modules)
        for d in result["detections"]
    )


def _wraps_built_extension(
    result: dict[str, Any], extensions: frozenset[str], modules: Mapping[str, frozenset[str]]
) -> tuple[str, ...]:
    """The kernel kind of a module that imports an extension this project builds at its top level
    (column 1: not in a `try`, an `if` or a function; or in a `try` whose handlers bind no fallback,
    `imports_without_fallback`, tutel's `jit_compiler.py`): it cannot be used where the extension
    was not built, so its importers reach the kernel (llm-awq's `qmodule` over
    `awq_inference_engine`). Extensions the file itself recognises are in `defines_kernels`. A
    module of the scanned tree is Python, whatever the build calls its extension (Megatron's
    `megatron/core/nccl_allocator.py`, which JIT-builds one named `nccl_allocator` in a function)."""
    if not extensions:
        return ()
    from neuronlint.static.checkers.custom_kernel import WRAPS_EXTENSION

    without_fallback = result.get("imports_without_fallback", ())
    for module, _line, column, _end in result.get("import_sites", ()):
        if (
            (column != 1 and module not in without_fallback)
            or module.startswith("torch.")
            or module in modules
        ):
            continue
        for ext in extensions:
            # `import ext`, `from ext import f`, and `from . import ext` in the package the build
            # names (BEVDet's `mmdet3d.ops.bev_pool.bev_pool_ext`, built as `bev_pool_ext`)
            if module == ext or module.startswith(ext + ".") or module.endswith("." + ext):
                return (f"{WRAPS_EXTENSION} `{ext}`",)
    return ()


def _calls_own_operators(result: dict[str, Any], own_namespaces: frozenset[str]) -> tuple[str, ...]:
    """The kernel kind of a module that calls operators of a namespace named as one of the scanned
    tree's packages (`torch.ops.torch_scatter.segment_sum_coo(...)` in pytorch_scatter's
    `segment_coo.py`): the project's own compiled operator library registers them, so its importers
    reach that library's kernels. Operators of other namespaces stay NL303 where they are called."""
    from neuronlint.static.extension_names import OPERATOR_NAMESPACE

    for d in result["detections"]:
        if d["rule"] != "NL303" or d["facts"].get("kind") != OPERATOR_NAMESPACE:
            continue
        namespace = str(d["facts"].get("module", "")).removeprefix("torch.ops.")
        if namespace in own_namespaces:
            return (f"the compiled operators `torch.ops.{namespace}` this project builds",)
    return ()


def _python_defined(module: str, modules: Mapping[str, frozenset[str]]) -> bool:
    """Whether the extension-like name of a compiled-extension finding is one the scanned tree
    defines in Python: a module `x_cuda.py`, or a top-level `_C = CN()` / `def dtw_cuda(...)`."""
    end = extension_component(module)
    if not end:
        return False
    parts = module.split(".")
    owner, name = ".".join(parts[: end - 1]), parts[end - 1]
    return ".".join(parts[:end]) in modules or name in modules.get(owner, ())


def _drop_python_extensions(result: dict[str, Any], modules: Mapping[str, frozenset[str]]) -> None:
    """Compiled-extension findings (NL303) on names the scanned tree defines in Python: a module
    `x_cuda.py`, or a top-level `_C = CN()` / `def dtw_cuda(...)` of a scanned module, imported
    (`from detectron2.config.defaults import _C`) and used (`_C.clone()`) elsewhere. They are a
    config object and a Python function, not extension modules."""
    kept = [
        d
        for d in result["detections"]
        if not (
            d["rule"] == "NL303"
            and d["facts"].get("kind") == "compiled extension"
            and d["facts"].get("module")
            and _python_defined(d["facts"]["module"], modules)
        )
    ]
    if len(kept) != len(result["detections"]):
        result["detections"] = kept


def _site(rule: str, line: int, column: int, end: int, **facts: Any) -> dict[str, Any]:
    return {
        "rule": rule,
        "line": line,
        "column": column,
        "end_line": line,
        "end_column": end,
        "facts": {"in_loop": False, **facts},
        "snippet": f"import {facts.get('module', '')}",
    }
