"""Kernel entry points of a module that defines GPU kernels, and their call sites in other files
(NL308).

A kernel module (one that defines Triton kernels or builds CUDA extensions) also holds plain Python
helpers: RNG trackers, shape utilities, `@triton.jit` device functions that only other kernels call.
Only its *entry points* make a call site elsewhere worth a finding, because only there does the
calling code reach a GPU kernel and need a Neuron path:

- a function whose body launches a Triton kernel, builds or loads a C++/CUDA extension, uses a
  compiled extension module, or runs another GPU kernel (the custom-kernel detections the scan
  already made in that module);
- a function or method that calls one of those in the same module (`def rms_norm(x): return
  _RMSNorm.apply(x)`, `self._launch(x)`), and a module-level alias of one (`fused = _Fn.apply`);
- a kernel itself (`@triton.jit`), when launched from another file (`kernel[grid](...)`).

Both halves read Python's own parser's tree: the entry points in the worker that analysed the kernel
module (from its detections), the call sites after the scan, from the few files that import a kernel
module.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from neuronlint.static.extension_names import OPERATOR_NAMESPACE

# The custom-kernel detections that make the function holding them reach a GPU kernel (NL304 is a
# CUDA source file, never inside a function).
_REACHING = frozenset({"NL301", "NL302", "NL303", "NL305", "NL307", "NL308"})
KERNEL = "kernel"  # the entry kind of a kernel itself: its call sites are launches
KERNEL_LAUNCH = "is a GPU kernel, launched here"  # what NL308 says at such a launch
_KERNEL_DECORATOR_ENDS = frozenset({"jit", "autotune", "heuristics", "kernel", "rawkernel"})
_NEURON_DECORATOR_STARTS = ("nki", "neuronxcc", "nkilib")


def _reach(detection: dict[str, Any]) -> str | None:
    """What a custom-kernel detection inside a function says that function does."""
    rule, facts = detection["rule"], detection["facts"]
    if rule == "NL301":
        return f"launches the Triton kernel `{facts.get('kernel')}`" if facts.get("launch") else None
    if rule == "NL302":
        if facts.get("builder") == "import":
            return None  # `from torch.utils import cpp_extension` inside a function: its calls count
        return f"builds a C++/CUDA extension (`{facts.get('api')}`)"
    if rule == "NL303":
        if facts.get("kind") == OPERATOR_NAMESPACE:
            return f"calls the custom operators of `{facts.get('module')}`"
        return f"uses the compiled extension `{facts.get('module')}`"
    if rule == "NL305":
        return f"runs the GPU kernel `{facts.get('kernel')}`"
    if rule == "NL307":
        return f"compiles a CUDA kernel at run time (`{facts.get('api')}`)"
    if rule == "NL308":  # a call of another kernel module's entry point (static.link's wrappers)
        reach = str(facts.get("reaches"))
        if reach == KERNEL_LAUNCH:
            return f"launches the kernel `{facts.get('module')}.{facts.get('name')}`"
        return _through(reach, f"{facts.get('module')}.{facts.get('name')}")
    return None


def _dotted(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _is_kernel_def(node: ast.AST) -> bool:
    """A function decorated as a GPU kernel (`@triton.jit`, `@triton.autotune(...)`, `@helion.kernel`,
    `@numba.cuda.jit`, `@jit` imported from triton): its body is device code, never a host call site."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for decorator in node.decorator_list:
        name = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
        if name and name.rsplit(".", 1)[-1] in _KERNEL_DECORATOR_ENDS:
            if not name.startswith(_NEURON_DECORATOR_STARTS):
                return True
    return False


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])


class _Unit:
    """A module-level function, a method (`Cls.m`) or a module-level alias: what it calls, and
    whether its own lines hold a custom-kernel detection."""

    def __init__(self, name: str, node: ast.AST, owner: str | None) -> None:
        self.name, self.node, self.owner = name, node, owner
        self.reach: str | None = None
        self.calls: list[str] = []


def _callee_units(node: ast.AST, owner: str | None, skip_lines: AbstractSet[int] = frozenset()) -> list[str]:
    """Names of same-module units a function body refers to: `f(...)` or `f` passed on, `Cls.apply`,
    `Cls.m(...)`, and `self.m(...)` / `cls.m(...)` inside class `owner`; none on `skip_lines`."""
    found = []
    for sub in ast.walk(node):
        if skip_lines and getattr(sub, "lineno", None) in skip_lines:
            continue
        if isinstance(sub, ast.Name):
            found.append(owner if sub.id == "cls" and owner else sub.id)  # `cls(...)`: the constructor
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
            base = sub.value.id
            if base in ("self", "cls") and owner:
                found.append(f"{owner}.{sub.attr}")
            else:
                found.append(f"{base}.{sub.attr}")
    return found


def kernel_entries(
    tree: ast.Module, detections: Iterable[dict[str, Any]], conditional: AbstractSet[int] = frozenset()
) -> dict[str, str]:
    """Entry point name (`f`, `Cls.apply`, `Cls.m`, `Cls` for its constructor) -> what it does (a
    phrase for the message, or KERNEL for a kernel launched by subscript), for a module that defines
    GPU kernels. References to other units on `conditional` lines do not carry their reach (a
    wrapper module's: wrapper_entries)."""
    reaching = sorted(
        (d["line"], d.get("end_line", d["line"]), text)
        for d in detections
        if d["rule"] in _REACHING and (text := _reach(d))
    )
    units: dict[str, _Unit] = {}
    kernels: dict[str, str] = {}
    aliases: list[tuple[str, ast.expr]] = []
    classes: list[str] = []
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for stmt in tree.body:
        if isinstance(stmt, functions):
            if _is_kernel_def(stmt):
                kernels[stmt.name] = KERNEL
            else:
                units[stmt.name] = _Unit(stmt.name, stmt, None)
        elif isinstance(stmt, ast.ClassDef):
            classes.append(stmt.name)
            for item in stmt.body:
                if isinstance(item, functions) and not _is_kernel_def(item):
                    units[f"{stmt.name}.{item.name}"] = _Unit(f"{stmt.name}.{item.name}", item, stmt.name)
            if any(_dotted(b).rsplit(".", 1)[-1] == "Function" for b in stmt.bases):
                # `_Fn.apply(x)` runs `forward`, and in training `backward` (flash-attention's
                # FusedDenseFunc runs its compiled kernel only there)
                for method in ("forward", "backward"):
                    aliases.append((f"{stmt.name}.apply", ast.Attribute(ast.Name(stmt.name), method)))
        else:
            aliases.extend(_module_assignments(stmt))
    for unit in units.values():
        first, last = _first_line(unit.node), unit.node.end_lineno or unit.node.lineno
        unit.reach = next((text for start, _end, text in reaching if first <= start <= last), None)
        unit.calls = _callee_units(unit.node, unit.owner, conditional)
    entries: dict[str, str] = dict(kernels)
    for name, unit in units.items():
        if unit.reach:
            entries[name] = unit.reach
    for name, value in aliases:  # `swiglu_fwd = torch.cuda.jiterator._create_jit_fn(code)`
        first = getattr(value, "lineno", None)
        if first is not None and name not in entries:
            last = value.end_lineno or first
            reach = next((text for start, _end, text in reaching if first <= start <= last), None)
            if reach is not None:
                entries[name] = reach
    changed = True
    while changed:  # a function that calls an entry point is one (the kernel it reaches, and through what)
        changed = False
        for name, unit in units.items():
            if name in entries:
                continue
            callee = next(
                (c for c in unit.calls if c in entries and entries[c] != KERNEL and c != name), None
            )
            if callee is not None:
                entries[name] = _through(entries[callee], callee)
                changed = True
        for name in classes:
            # A module whose forward pass runs a kernel (`self.kernel(x)`, `_Fn.apply(x)`) reaches
            # it from where it is built: `ColumnParallelLinear(...)`, `cls(...)` in `from_linear`.
            run = next((f"{name}.{m}" for m in _RUN_METHODS if f"{name}.{m}" in entries), None)
            if name not in entries and run is not None and entries[run] != KERNEL:
                entries[name] = entries[run] if run.endswith(".__init__") else _through(entries[run], run)
                changed = True
        for name, value in aliases:
            if name in entries:
                continue
            target = _dotted(value)  # `fused = _Fn.apply`; `_Fn.apply` itself runs `_Fn.forward`
            if target in entries and entries[target] != KERNEL:
                forward = name.endswith(".apply") and target == name.removesuffix(".apply") + ".forward"
                entries[name] = entries[target] if forward else _through(entries[target], target)
                changed = True
    return entries


def _module_assignments(stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
    """(name, value) of a module-level assignment; one level inside a module-level `if` or `try`,
    of what a call made there (`if torch.cuda.is_available(): gpu = load("psamask_gpu", [...])`),
    not of a name chosen there (`layer_norm = FusedLayerNorm` beside `else: layer_norm =
    nn.LayerNorm` picks one of two; calling it runs the kernel on one path only)."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        if stmt.value is None:
            return []
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [(t.id, stmt.value) for t in targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.If):
        inner = [*stmt.body, *stmt.orelse]
    elif isinstance(stmt, ast.Try):
        inner = [*stmt.body, *stmt.orelse, *(s for h in stmt.handlers for s in h.body)]
    else:
        return []
    return [
        pair
        for s in inner
        if isinstance(s, (ast.Assign, ast.AnnAssign)) and isinstance(s.value, ast.Call)
        for pair in _module_assignments(s)
    ]


# The methods through which building an object runs it: its constructor (`__new__` of a tensor
# subclass, nanotron's FP8Tensor casting with TE's kernel), the forward pass or call
# of a module, and the entry and exit of a context manager (`with te.autocast(...)`).
_RUN_METHODS = ("__init__", "__new__", "forward", "__call__", "__enter__", "__exit__")


def _through(reach: str, callee: str) -> str:
    return reach if " (through `" in reach else f"{reach} (through `{callee}`)"


def parse_source(source: bytes | None) -> ast.Module | None:
    r"""Python's own tree of a file's bytes; None without bytes, or when the parser rejects them
    (changed since the file's analysis, or too deep for this process). The scanned code's
    SyntaxWarnings (`"\s"` in a plain string) are not ours to print."""
    if not source:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def file_kernel_entries(
    tree: ast.Module | None, data: bytes, detections: list[dict[str, Any]]
) -> dict[str, str]:
    """kernel_entries of a file's bytes (its stdlib tree when the parse guard already made one)."""
    if tree is None:
        tree = parse_source(data)
        if tree is None:
            return {}
    try:
        return kernel_entries(tree, detections)
    except RecursionError:
        return {}


def kernel_calls(
    source: bytes,
    imported: Mapping[int, list[tuple[str, str]]],
    entries: Mapping[str, Mapping[str, str]],
    kernel_lines: Iterable[int] = (),
) -> list[dict[str, Any]]:
    """NL308 detections at each host call, in a file's `source`, of a kernel entry point imported
    from a kernel module. `imported`: import line -> [(importable name, kernel module's full
    name)] of that line's import sites that are kernel modules; `entries`: kernel module full name
    -> kernel_entries. Calls inside kernel bodies and on `kernel_lines` (lines already holding a
    custom-kernel detection of this file) are left out. A file Python's parser rejects (changed
    since its analysis, or too deep for this process) adds nothing."""
    found = _imported_calls(source, imported, entries)
    if found is None:
        return []
    tree, calls, bound, lines = found
    skip = set(kernel_lines)
    sites: list[dict[str, Any]] = []
    built: dict[str, str] = {}  # a name assigned the extension an entry point builds and returns
    assigned: dict[int, str] | None = None  # call id -> the name `x = call(...)` binds, when asked
    for call in calls:
        func, launch = call.func, False
        if isinstance(func, ast.Subscript):
            func, launch = func.value, True
        target = _resolve(_dotted(func), bound)
        if target is None:
            continue
        module, name = target
        reach = entries.get(module, {}).get(name)
        if reach is None and "." in name:
            # `src.cpu.psamask_forward(...)`: a function of an extension the module loaded and bound
            # at its top level (`cpu = load("psamask_cpu", [...])`)
            head = name.partition(".")[0]
            built_here = entries.get(module, {}).get(head)
            if built_here is not None and built_here.startswith(_BUILDS):
                name, reach = head, built_here
        if reach is None or (reach == KERNEL) != launch:
            continue
        if reach.startswith(_BUILDS) and " (through `" not in reach:
            if assigned is None:
                assigned = _assigned_calls(tree)
            if id(call) in assigned:
                built[assigned[id(call)]] = f"{module}.{name}"
        if call.lineno in skip:
            continue
        skip.add(call.lineno)  # one finding per line
        facts = {
            "name": name,
            "module": module,
            "reaches": KERNEL_LAUNCH if launch else reach,
        }
        sites.append(_detection("NL308", call, lines, facts))
    # Entry points named without a call: handed to a caller as its first argument, which calls them
    # (`gradcheck(dcn_v2_conv, inputs)`, `partial(DCN, ...)`), and, through a kernel module bound
    # whole, handed on as a value to be built or run where it goes (`{"linear": te.Linear}`,
    # `default=te.TransformerLayer`)
    named: list[ast.expr] = [
        c.args[0] for c in calls if c.args and isinstance(c.args[0], (ast.Name, ast.Attribute))
    ]
    if any(not name for _module, name in bound.values()):
        named.extend(_references(tree, bound))
    for node in named:
        target = _resolve(_dotted(node), bound)
        if target is None or node.lineno in skip:
            continue
        reach = entries.get(target[0], {}).get(target[1])
        if reach is None or reach == KERNEL:
            continue
        skip.add(node.lineno)
        sites.append(
            _detection("NL308", node, lines, {"name": target[1], "module": target[0], "reaches": reach})
        )
    for call in calls if built else ():
        # `_plugin = custom_ops.get_plugin(...)`, then `_plugin.bias_act(x, ...)`: StyleGAN's ops
        # call functions of the extension that the build helper of another module returned
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            continue
        builder = built.get(func.value.id)
        if builder is None or call.lineno in skip:
            continue
        skip.add(call.lineno)
        facts = {"module": f"{func.value.id}.{func.attr}", "kind": f"compiled extension built by `{builder}`"}
        sites.append(_detection("NL303", call, lines, facts))
    sites.sort(key=lambda d: (d["line"], d["column"]))
    return sites


# The reach of an entry point that builds an extension itself (_reach): what it returns is taken
# for the loaded extension; a function that builds one on the way (`through` a helper) returns
# something else (Megatron-LM's data iterators).
_BUILDS = "builds a C++/CUDA extension"


def wrapper_entries(
    tree: ast.Module,
    detections: Iterable[dict[str, Any]],
    imported: Mapping[int, list[tuple[str, str]]],
    entries: Mapping[str, Mapping[str, str]],
    package: bool,
) -> dict[str, str]:
    """Entry points of a module that defines no kernel but reaches one through a kernel module's
    entry points: the names a package's `__init__.py` (`package`) re-exports at its top level
    (`from .ms_deform_attn_func import MSDeformAttnFunction`), and its functions, methods and classes
    that always call entry points or the extension one returned (its NL308 and NL303 detections,
    which linking added, outside `_conditional_lines`). `imported`: import line ->
    [(importable name, kernel module's full name)]; `entries`: kernel module -> its entry points."""
    linked = [d for d in detections if _linked_call(d)]
    conditional = _conditional_lines(tree, {d["line"] for d in linked})
    calls = [d for d in linked if d["line"] not in conditional]
    found = {
        name: reach for name, reach in kernel_entries(tree, calls, conditional).items() if reach != KERNEL
    }
    if not package:
        return found  # a plain module's imports are its own uses, not an interface it offers
    top = ast.Module(body=[s for s in tree.body if isinstance(s, ast.ImportFrom)], type_ignores=[])
    for local, (module, name) in _bound(top, imported, entries).items():
        for key, reach in entries.get(module, {}).items():
            if not name:
                # `from . import cascade`: the package offers the submodule's entry points under its
                # name (`import flashinfer.triton`, then `flashinfer.triton.cascade.merge_state(...)`)
                found.setdefault(f"{local}.{key}", reach)
            elif key == name or key.startswith(name + "."):
                found.setdefault(local + key[len(name) :], reach)
    for node in top.body:
        if node.names[0].name == "*" and node.lineno in imported:
            # `from .bev_pool import *` (bevfusion's `mmdet3d/ops/__init__.py`): the package offers
            # the submodule's public entry points under their own names
            for _name, module in imported[node.lineno]:
                for key, reach in entries.get(module, {}).items():
                    if not key.startswith("_"):
                        found.setdefault(key, reach)
    return found


def _linked_call(detection: dict[str, Any]) -> bool:
    """A call linking found in a module without kernels of its own: of another module's entry
    point (NL308), a launch of a Triton kernel imported from one (NL301), or of an extension the
    project builds or a build helper returned (NL303). The module's own uses of an extension it
    imports where it runs it, beside a fallback (gpt-neox's fused softmax), did not make it a
    kernel module and do not make it a wrapper."""
    if detection["rule"] == "NL308":
        return True
    if detection["rule"] == "NL301":
        # `merge_kernel[grid](...)` of a Triton kernel it imports (a module defining one is a kernel
        # module already): flashinfer's `triton/cascade.py` launchers over `triton/kernels/`
        return bool(detection["facts"].get("launch"))
    return detection["rule"] == "NL303" and str(detection["facts"].get("kind", "")).startswith(
        "compiled extension built by"
    )


def _conditional_lines(tree: ast.Module, reaching: AbstractSet[int] = frozenset()) -> set[int]:
    """Lines of statements that run only on some paths: under `if`, in a loop's body, in an
    exception handler, after an `if` that returns early. A function that calls a kernel entry
    point only there (a model builder's `if model_type == "swin":`, whisper's `if
    word_timestamps:`, a fused softmax beside its PyTorch fallback) chooses the kernel case by
    case; a thin wrapper (`MSDeformAttn.forward` applying the autograd Function) always runs it.
    An early return that itself reaches a kernel (a line of `reaching`: tutel's `if not is_cuda:
    return JitCompiler.generate_cpu_kernel(...)`, the extension's CPU kernel) leaves no path
    without one, so the rest of its block is not conditional."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            # after `if not enabled: return`, the rest of the block runs on one path only (an
            # error path, `raise`, is no alternative to the kernel and does not count)
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, statement in enumerate(block):
                if (
                    isinstance(statement, ast.If)
                    and (_returns(statement.body) or _returns(statement.orelse))
                    and not _cpu_only_fallback(statement)
                    and not _reaches(statement, reaching)
                ):
                    for rest in block[i + 1 :]:
                        lines.update(range(rest.lineno, (rest.end_lineno or rest.lineno) + 1))
                    break
        if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            blocks = [node.body, node.orelse]
        elif isinstance(node, ast.Try):
            blocks = [handler.body for handler in node.handlers] + [node.orelse]
        elif isinstance(node, ast.Match):
            blocks = [case.body for case in node.cases]
        else:
            continue
        for block in blocks:
            for statement in block:
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def _reaches(statement: ast.If, lines: AbstractSet[int]) -> bool:
    """Whether the block an early-return `if` leaves by holds a line of `lines`: a kernel is reached
    on that path too (what follows the `if` is judged on its own)."""
    block = statement.body if _returns(statement.body) else statement.orelse
    return any(line in lines for s in block for line in range(s.lineno, (s.end_lineno or s.lineno) + 1))


def _cpu_only_fallback(statement: ast.If) -> bool:
    """`if x.device == torch.device("cpu"): return F.linear(...)` (nanotron's FP8Linear): the early
    return is the CPU's path; on any accelerator, Neuron's included, the kernel after it runs."""
    test = statement.test
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    return all(_tests_cpu_device(part) for part in parts) and _returns(statement.body)


def _tests_cpu_device(test: ast.expr) -> bool:
    """`x.device == torch.device("cpu")`, `x.device.type == "cpu"`, `x.is_cpu`."""
    if isinstance(test, ast.Attribute):
        return test.attr == "is_cpu"
    if (
        not isinstance(test, ast.Compare)
        or len(test.ops) != 1
        or not isinstance(test.ops[0], (ast.Eq, ast.Is))
    ):
        return False
    sides = (test.left, test.comparators[0])
    names_device = any("device" in _dotted(s) for s in sides if isinstance(s, ast.Attribute))
    return names_device and any(_cpu_literal(s) for s in sides)


def _cpu_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value == "cpu"
    return (
        isinstance(node, ast.Call)
        and _dotted(node.func) in ("torch.device", "device")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "cpu"
    )


def _returns(block: list[ast.stmt]) -> bool:
    """Whether a block ends by leaving for another path: `return`, `continue`, `break`."""
    return bool(block) and isinstance(block[-1], (ast.Return, ast.Continue, ast.Break))


def entry_import_lines(
    source: bytes,
    imported: Mapping[int, list[tuple[str, str]]],
    entries: Mapping[str, Mapping[str, str]],
    reached: AbstractSet[tuple[str, str]] = frozenset(),
) -> set[int]:
    """The lines of `imported` whose `from ... import` binds an entry point of the module it
    imports from, itself or as an autograd Function (`from models.ops.modules import MSDeformAttn`),
    not only its plain helpers or a class whose methods alone reach a kernel; and those that bind
    the module itself when the file reaches an entry point through it (`import nvdiffrast.torch as
    dr`, then `dr.rasterize(...)`; `from transformer_engine import pytorch as te`)."""
    tree = parse_source(source)
    if tree is None:
        return set()
    lines = set()
    whole: dict[str, tuple[str, int]] = {}  # `import pkg as p`: p -> (pkg's kernel module, import line)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno in imported:
            one = ast.Module(body=[node], type_ignores=[])
            for local, (module, name) in _bound(one, imported, entries).items():
                table = entries.get(module, {})
                if name and (name in table or f"{name}.apply" in table or (module, name) in reached):
                    lines.add(node.lineno)
                elif not name:  # `import pkg.torch as m`, `from pkg import torch as m`
                    whole[local] = (module, node.lineno)
    if whole:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                target = _resolve_whole(_dotted(node), whole)
                if target is not None and _offers(entries.get(target[0], {}), target[1]):
                    lines.add(target[2])
    return lines


def _offers(table: Mapping[str, str], name: str) -> bool:
    """An entry point named `name`, or a submodule's under it (`cascade.merge_state`: a package that
    imports its kernel submodule whole)."""
    return name in table or any(key.startswith(name + ".") for key in table)


def _resolve_whole(dotted: str, whole: Mapping[str, tuple[str, int]]) -> tuple[str, str, int] | None:
    """(kernel module, first name used in it, import line) of `p.name...` for a module bound whole."""
    parts = dotted.split(".") if dotted else []
    for end in range(len(parts) - 1, 0, -1):
        found = whole.get(".".join(parts[:end]))
        if found is not None:
            return found[0], parts[end], found[1]
    return None


def extension_calls(
    source: bytes, imported: Mapping[int, list[tuple[str, str]]], kernel_lines: Iterable[int] = ()
) -> list[dict[str, Any]]:
    """NL303 detections at each call, in a file's `source`, of a function of a compiled extension
    the scanned project builds (`import swin_window_process`, then
    `swin_window_process.roll_and_window_partition_forward(x, ...)`): a name without `_C` or `_cuda`
    in it, which only the build file (`CUDAExtension("swin_window_process", ...)`) shows to be one.
    `imported`: import line -> [(importable name, extension module)]; lines in `kernel_lines`
    already hold a custom-kernel detection."""
    found = _imported_calls(source, imported)
    if found is None:
        return []
    _tree, calls, bound, lines = found
    skip = set(kernel_lines)
    sites: list[dict[str, Any]] = []
    for call in calls:
        target = _resolve(_dotted(call.func), bound)
        if target is None or call.lineno in skip:
            continue
        module, name = target
        skip.add(call.lineno)
        facts = {"module": f"{module}.{name}", "kind": "compiled extension built by this project"}
        sites.append(_detection("NL303", call, lines, facts))
    return sites


def _imported_calls(
    source: bytes,
    imported: Mapping[int, list[tuple[str, str]]],
    entries: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[ast.Module, list[ast.Call], dict[str, tuple[str, str]], list[str]] | None:
    """A file's tree, its host calls, the names its imports on the lines of `imported` bind
    (`_bound`) and its lines; None when none is bound, or when Python's parser rejects the file
    (changed since its analysis, or too deep for this process)."""
    tree = parse_source(source)
    if tree is None:
        return None
    bound = _bound(tree, imported, entries)
    if not bound:
        return None
    return tree, _host_calls(tree), bound, source.decode("utf-8", "replace").splitlines()


def _assigned_calls(tree: ast.Module) -> dict[int, str]:
    """The name each call's result is assigned to (`x = f(...)`), by the call's id."""
    return {
        id(node.value): node.targets[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
    }


def _bound(
    tree: ast.Module,
    imported: Mapping[int, list[tuple[str, str]]],
    entries: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, tuple[str, str]]:
    """Local name -> (module, dotted name in it; "" for the module itself) of the imports on the
    lines of `imported` (import line -> [(importable name, module's full name)]). As in Python, a
    name the from-module offers (an entry point in `entries`) is that attribute, not a submodule
    of the same name: `from .bev_pool import bev_pool` in the package `ops/bev_pool/` binds the
    function, and so does `from ops import bev_pool` where `ops/__init__.py` star-imports it."""
    bound: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno not in imported:
            continue
        found = dict(imported[node.lineno])
        for alias in node.names:
            if isinstance(node, ast.Import):
                if alias.name in found:
                    if alias.asname:
                        bound[alias.asname] = (found[alias.name], "")
                    else:  # `import pkg.kernels`: `pkg.kernels.f(...)` is read whole
                        bound[alias.name] = (found[alias.name], "")
                continue
            local = alias.asname or alias.name
            tail, written = "." + alias.name, node.module or ""
            as_module = next(  # `from pkg import kernels`: the name is the module (pkg.kernels)
                (
                    m
                    for name, m in found.items()
                    if name.endswith(tail) and name[: -len(tail)].endswith(written)
                ),
                None,
            )
            if as_module is not None and entries is not None:
                # the from-module, where the line names it (`from ops import bev_pool`), or, where
                # the from-module's last name is the imported name (`from .bev_pool import
                # bev_pool` in the package `bev_pool/`), the module that matched as the submodule,
                # which may be the from-module itself
                same_name = written.rpartition(".")[2] == alias.name
                owners = (found.get(written), as_module if same_name else None)
                if any(o is not None and alias.name in entries.get(o, {}) for o in owners):
                    as_module = None
            if as_module is not None:
                bound[local] = (as_module, "")
            elif alias.name != "*" and found:
                bound[local] = (found[min(found, key=len)], alias.name)  # the from-module itself
    return bound


def _resolve(dotted: str, bound: Mapping[str, tuple[str, str]]) -> tuple[str, str] | None:
    """(kernel module, name in it) of a called dotted name, by the longest bound prefix."""
    if not dotted:
        return None
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        found = bound.get(".".join(parts[:end]))
        if found is not None:
            module, name = found
            rest = ".".join(parts[end:])
            full = ".".join(p for p in (name, rest) if p)
            return (module, full) if full else None
    return None


def _references(tree: ast.Module, bound: Mapping[str, tuple[str, str]]) -> list[ast.Attribute]:
    """Attribute reads `m.name` through a module bound whole (`import pkg.torch as m`) handed on as
    a value, to be built or run where it goes: a dict entry's value, a keyword argument, an
    assignment's value, a return value. Not a comparison's operand (`layer_type == m.Linear` picks
    a branch), an annotation or a container of types to match; outside kernel bodies."""
    whole = {local for local, (_module, name) in bound.items() if not name}
    found: list[ast.Attribute] = []
    for node in _host_nodes(tree):
        if isinstance(node, ast.Dict):
            values: list[ast.expr | None] = list(node.values)
        elif isinstance(node, ast.Call):
            values = [k.value for k in node.keywords]
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)):
            values = [node.value]
        else:
            continue
        found.extend(
            v
            for v in values
            if isinstance(v, ast.Attribute)
            and isinstance(v.ctx, ast.Load)
            and _dotted(v).split(".")[0] in whole
        )
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    return found


def _host_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node outside the bodies of kernel definitions."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _is_kernel_def(node):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _host_calls(tree: ast.Module) -> list[ast.Call]:
    """Every call outside the bodies of kernel definitions (`@triton.jit` functions call their device
    helpers; the kernel is reported where it is defined)."""
    calls = [node for node in _host_nodes(tree) if isinstance(node, ast.Call)]
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return calls


def _detection(rule: str, call: ast.expr, lines: list[str], facts: dict[str, Any]) -> dict[str, Any]:
    text = lines[call.lineno - 1].encode("utf-8") if call.lineno <= len(lines) else b""
    column = len(text[: call.col_offset].decode("utf-8", "replace")) + 1  # offsets are in bytes
    end_offset = call.end_col_offset if call.end_lineno == call.lineno and call.end_col_offset else len(text)
    end = len(text[:end_offset].decode("utf-8", "replace")) + 1
    return {
        "rule": rule,
        "line": call.lineno,
        "column": column,
        "end_line": call.lineno,
        "end_column": end,
        "facts": {"in_loop": False, **facts},
        "snippet": text[call.col_offset : end_offset].decode("utf-8", "replace"),
    }
