"""Per-file analysis state: scopes with import aliases and constants, ancestors, detections.

Name resolution is our own, not LibCST's QualifiedNameProvider: that provider multiplies parse
cost by about seven, while the questions we ask ("does this name mean torch.cuda?") need only the
import table and simple assignments of the enclosing scopes.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from neuronlint.static import cuda_paths
from neuronlint.static.calls import CPU_DEVICE_NAMES, arg_value, kwarg, name_of
from neuronlint.static.host_callers import HostCallers
from neuronlint.static.host_returns import HostReturns
from neuronlint.static.module_names import names_module
from neuronlint.static.nodes import children_of, node_types
from neuronlint.static.tensor_returns import WHOLE, TensorReturns, pending_key

# A binding: what a local name stands for.
#   ("module", "torch.cuda")   import alias or alias assignment (qualified name)
#   ("str", ("cuda", "cpu"))   a name assigned string constants
#   ("numpy", "")              a value produced by numpy/pandas/scipy (.item() etc. are host-side already)
#   ("host", "")               a tensor already on the host (`x.cpu()`, tokenizer outputs)
#   ("tensor", "")             a value known to be a torch tensor (annotated `Tensor`, or made by torch.*)
#   ("read", "<tensor>.item()")  a host number read from a tensor value (`n = lengths.max().item()`)
#   ("python", "")             a configuration value (`beta = self.args.beta`): Python data, which
#                              decides no tensor's location in an operation
#   ("mask", op)               a boolean mask (`m = x > 0`, `~pad`, `x.eq(y)`, `.bool()`); op: what
#                              sized the tensor it compares, if the data did ("" otherwise)
#   ("index", "")              an element of an index tensor a loop runs over (`for i in keep_by_nms`)
#   ("size", (text, key))      a Python number that is the size of a tensor whose size depends on
#                              its data (`n = len(keep)`); key names the finding kept for a branch on it
#   ("kernel", "triton")       a function decorated as a GPU kernel in this module ("nki": a Neuron kernel)
#   ("drawn", "")              one random number drawn on the CPU as a tensor (`torch.randint(0, 2,
#                              (1,))[0]`, draws_one_number): reading it syncs nothing, a shape it
#                              gives varies per step
#   ("other", None)            anything else that shadows an outer binding
Binding = tuple[str, Any]
SIZE = "size"
DRAWN = "drawn"
EMPTY_LIST: Binding = ("other", "[]")  # a name assigned `[]`, for the appends that fill it (bindings.py)

# Attribute names that hold a tensor wherever torch is used: a model output's `logits`, and the
# `tensor` of detectron2's Boxes and ImageList (and the many projects built on them).
_TENSOR_FIELDS = frozenset({"logits", "tensor"})
# Libraries whose values live on the host (or on a device that is not torch's): their
# .item()/.tolist()/.numpy()/.unique()/x[mask] are not device work of the code being ported.
HOST_LIBRARIES = frozenset(
    {"numpy", "pandas", "scipy", "sklearn", "cv2", "PIL", "tensorflow", "tensorflow_datasets"}
)

# Where code in a scope runs, as far as the scope's name tells:
#   "step"  forward() and *_step() functions: run once per training or decoding step
#   "host"  data-pipeline code (Dataset/Sampler classes, collate functions): runs on the CPU in loader workers
#   "test"  test code (by path: tests/, test_*.py, *_test.py, conftest.py)
#   "device-layer"  a class that implements a device abstraction for one vendor or several (an
#           `NpuAccelerator(BaseAccelerator)`, a platform class with methods per device type)
SITE_STEP, SITE_HOST, SITE_TEST, SITE_DEVICE_LAYER = "step", "host", "test", "device-layer"


def owner_names(node: cst.BaseExpression) -> Iterator[str]:
    """The names of an attribute chain from the outside in: `a.b.c` gives 'c', 'b', 'a' (the last
    only when the chain starts at a name; `f().b` gives 'b')."""
    while type(node) is cst.Attribute:
        yield node.attr.value
        node = node.value
    if type(node) is cst.Name:
        yield node.value


@dataclass(slots=True)
class Detection:
    """A construct found in source, before the database turns it into a Finding for an SDK and chip."""

    rule: str
    node: cst.CSTNode
    facts: dict[str, Any]
    anchor: cst.CSTNode  # node whose source is the fingerprint snippet
    end_node: cst.CSTNode | None = None  # when the span runs past `node` (e.g. `.cuda()` up to its ')')
    top: cst.CSTNode | None = None  # the module-level statement containing the node (positions.locate)
    stmt: cst.CSTNode | None = None  # the innermost statement containing the node
    indents: tuple[str, ...] = ()  # indentation of the blocks enclosing `stmt`, outermost first
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    snippet: str = ""


@dataclass(slots=True)
class Scope:
    """One scope of the walk: its bindings, loop depth and site."""

    kind: str  # module | function | class | lambda | comprehension
    bindings: dict[str, Binding] = field(default_factory=dict)
    loop_depth: int = 0
    site: str = ""  # SITE_STEP, SITE_HOST, SITE_TEST, SITE_DEVICE_LAYER or "" (inherited by nested scopes)
    global_names: frozenset[str] = frozenset()  # names declared `global` in this function
    visible: tuple[dict[str, Binding], ...] = ()  # binding tables a lookup searches, innermost first
    by_path: bool = False  # `site` is SITE_HOST only because the file sits in a data-pipeline path
    tensor_attrs: set[str] | None = None  # class scopes: `self.<name>` attributes holding tensors
    module_class: bool = False  # class scopes: a subclass of `nn.Module` (or a `*Module`/`*Model` base)
    # One flag per loop being visited in this scope, outermost first: whether it is an epoch loop
    # (`for epoch in range(cfg.num_epochs)`), whose body runs once per epoch, not once per step.
    epoch_loops: list[bool] = field(default_factory=list)
    instance: dict[str, Binding] | None = None  # class scopes: `self.<name>` attributes bound to modules
    # class scopes: `self.<name>` attributes assigned so far in the class, and whether every one of
    # those assignments was a host value (`self.sigmas = torch.from_numpy(s)`; False once any was not)
    host_attrs: dict[str, bool] | None = None
    kernel_body: bool = False  # function scopes: the body of a CUDA kernel (`@numba.cuda.jit`, `@triton.jit`)


_WS = re.compile(r"\s+")


def snippet_of(code: str) -> str:
    """A node's code as a snippet: whitespace runs as one space (so indentation does not count),
    at most 200 characters. A statement's code begins with the comments above it (LibCST's
    `leading_lines`); they are not the statement, and would make its fingerprint change with them."""
    return _WS.sub(" ", _LEADING_COMMENTS.sub("", code)).strip()[:200]


# Blank and comment lines at the start of a statement's code (no statement begins with `#`).
_LEADING_COMMENTS = re.compile(r"\A(?:[ \t\f]*(?:#[^\n]*)?\n)+")


def _plain_string_value(raw: str) -> str | None:
    """Value of a string literal without prefix or backslashes ('cuda', "nccl"); None otherwise."""
    quote = raw[:3] if raw[:3] in ('"""', "'''") else raw[:1]
    if quote not in ('"', "'", '"""', "'''") or "\\" in raw:
        return None
    return raw[len(quote) : len(raw) - len(quote)]


def _evaluated_string(raw: str) -> str | bytes | None:
    """A string literal's value, as `SimpleString.evaluated_value` (`ast.literal_eval`) gives it;
    None when it cannot be evaluated. literal_eval's nested helper functions refer to each other, a
    reference cycle per call that only the cycle collector frees; the literal's own parse is all it
    does for a string."""
    try:
        body = ast.parse(raw.lstrip(" \t"), mode="eval").body
    except Exception:  # noqa: BLE001 - malformed escapes are the parser's problem, not ours
        return None
    return body.value if type(body) is ast.Constant else None


_LIBRARY_KINDS = frozenset({"numpy"})
_LIBRARY_COPIES = frozenset({"numpy", "to_numpy"})
_HOST_KINDS = frozenset({"numpy", "read", "host", "python"})
# Methods whose result is on the host: a tensor read after one of them syncs nothing more.
_HOST_COPIES = frozenset({"numpy", "to_numpy", "cpu", "tolist", "item"})
_DEVICE_MOVES = frozenset({"to", "cuda", "xla", "neuron"})
# torch functions whose result is a CPU tensor wrapping host data (until it is moved).
_HOST_CONSTRUCTORS = frozenset(
    {
        "torch.from_numpy",
        "torch.LongTensor",
        "torch.FloatTensor",
        "torch.IntTensor",
        "torch.BoolTensor",
        "torch.ByteTensor",
        "torch.DoubleTensor",
    }
)
# Neuron's tracing APIs, whose compiled models take and return CPU tensors, and the packages whose
# code runs on the XLA device instead (torch-neuronx training, NxD).
_TRACED_NEURON = frozenset({"torch_neuron", "torch_neuronx"})
_XLA_DEVICE_PACKAGES = frozenset(
    {"torch_xla", "neuronx_distributed", "neuronx_distributed_inference", "optimum"}
)
# A file that imports one of these (data-frame, dashboard and TensorFlow code) and none of
# TENSOR_LIBRARIES holds no torch tensors. numpy, PIL or scikit-learn alone do not say so: utility
# modules that import them are handed tensors (`def show(img): img.cpu().numpy()`).
_HOST_ONLY_LIBRARIES = frozenset(
    {"pandas", "gradio", "plotly", "streamlit", "tensorflow", "tensorflow_datasets"}
)
TENSOR_LIBRARIES = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "torchtext",
        "torchdata",
        "torchmetrics",
        "transformers",
        "accelerate",
        "peft",
        "trl",
        "diffusers",
        "timm",
        "lightning",
        "pytorch_lightning",
        "deepspeed",
        "megatron",
        "apex",
        "fairscale",
        "torch_xla",
        "torch_neuronx",
        "neuronx_distributed",
        "nemo",
        "colossalai",
        "vllm",
        "bitsandbytes",
        "triton",
        "flash_attn",
        "xformers",
        "composer",
        "safetensors",
        "einops",
        "open_clip",
        "kornia",
        "jax",
        "flax",
    }
)
# torch functions that wrap data in a tensor: on the CPU unless given a device.
_WRAPPERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray", "torch.Tensor"})
# torch functions that make a new tensor from sizes or numbers, not from a tensor argument.
_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "range",
        "linspace",
        "logspace",
        "eye",
        "rand",
        "randn",
        "randint",
        "randperm",
        "empty_strided",
        "tensor",
        "as_tensor",
        "asarray",
        "scalar_tensor",
    )
)
# Factories that tabulate numbers (`torch.linspace(0, rate, depth)`): with Python numbers and no
# device, a CPU tensor of constants. Not `torch.arange`: model code makes positions with it under
# `with torch.device(...)` or a default device, and moves them.
_RANGES = frozenset({"torch.linspace", "torch.logspace"})
# Fills of a size with a number: without a device, and unless the file sets a default device
# (`torch.set_default_device`, `with torch.device(...)`), a CPU tensor (apex's sparsity patterns,
# peft's RandLoRA bases, a test's expected values). Not `torch.arange` (see above).
_FILLS = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.full"})
_SETS_DEFAULT_DEVICE = re.compile(rb"set_default_(?:device|tensor_type)|with\s+torch\.device\(")
# Random factories: without a device (or generator), one drawn element (`torch.rand(1).item()`,
# `torch.randint(0, n, (1,)).item()`) is a CPU random number, the idiom of `random.random()`.
# A draw of a shape (`torch.randn(b, c)`, noise for a model) is left alone: model code makes it
# under a default device, or moves it.
_RANDOM_FACTORIES = frozenset({"torch.rand", "torch.randn", "torch.randint"})
# Random factories that take a generator; with a CPU generator, what they draw is on the CPU.
_DRAWS = frozenset({"torch.rand", "torch.randn", "torch.randint", "torch.randperm"})
# Of those wrappers, the ones that copy their data into a new tensor: without a device, a CPU tensor
# (`torch.as_tensor(t)` and `torch.asarray(t)` of a tensor keep it where it is).
_COPY_CONSTRUCTORS = frozenset({"torch.tensor", "torch.Tensor"})
# Indexers that only pandas objects have (subscripted: `df.iloc[rows]`; a bare `.loc` may be a
# distribution's location tensor).
_PANDAS_ACCESSORS = frozenset({"iloc", "loc", "iat", "at"})
# Objects that hold configuration (Python values, never tensors).
_CONFIG_NAME = re.compile(r"\w*(config|cfg)|args|hparams|opts")
# Builtins whose result is a Python value.
_PYTHON_VALUES = frozenset({"len", "int", "float", "str", "bool", "round", "abs", "sum", "min", "max"})
# Builtins that make a Python list or tuple.
_PYTHON_LISTS = frozenset({"list", "tuple", "sorted"})
# torch functions that join tensors, which must all be on one device: host inputs give a host result.
_JOINS = frozenset(
    {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"}
)
# Variable names that say where the value lives (a dataset's items are read on the host; `df`,
# `results_df`: a pandas DataFrame).
_HOST_NAME = re.compile(
    r"^(cpu|host)_|_(cpu|np|numpy|host)$|(^|_)(datasets?|df|dataframe)($|_)"
    # pycocotools' objects (`coco_evaluator.coco_eval["bbox"].stats`, `coco_gt`, `cocoDt`) hold numpy
    r"|(^|_)coco(_|eval|gt|dt|Eval|Gt|Dt|$)"
)


# Literal arguments, which say nothing about where a call computes.
_CONSTANTS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_BUILTIN_FUNCTIONS = frozenset(dir(builtins))


def host_by_name(name: str) -> bool:
    """`ids_cpu`, `cpu_tokens`, `mask_np`: a name that says its value lives on the host."""
    return bool(_HOST_NAME.search(name))


# Test code reads tensor values on purpose (assertions, reference checks).
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")
# Input-pipeline modules (data/, datasets/, preprocessing/ and tokenizer packages; dataset, loader,
# collate, preprocessing, tokenization and data-utility modules) run on the CPU.
_DATA_PATH = re.compile(
    r"(^|/)(data|datasets?|data_?loaders?|data_?prep|preprocessing|dataset_processing|tokenizers?)/"
    r"|(^|/)[^/]*(dataset|dataloader|data_loader|collat|preprocess|tokeniz|data_pipeline|datamodule|data_module)"
    r"[^/]*\.py$|(^|/)data_utils?\.py$"
)


# Functions that prepare examples for a model (`preprocess_image_with_resize`, `tokenize_fn`): their
# bodies are data-pipeline code (static/bindings.py), and what they return is host data.
PREPARE_FUNCTION = re.compile(r"^_?(\w+_)?(preprocess(ing)?|tokenize)(_\w+)?$")


def _prepares_examples(call: cst.Call) -> bool:
    """`preprocess_image_with_resize(image, h, w)`: a plain call of a data-preparation function that
    is given no device (`preprocess(img, device)` may return a moved tensor)."""
    func = call.func
    if type(func) is not cst.Name or not PREPARE_FUNCTION.match(func.value):
        return False
    for arg in call.args:
        if arg.keyword is not None and "device" in arg.keyword.value:
            return False
        value = arg.value
        if type(value) is cst.Attribute:
            value = value.attr
        if type(value) is cst.Name and "device" in value.value:
            return False
    return True


_DTYPE_VARIABLE = re.compile(r"(^|_)dtype$")


def _names_dtype_variable(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """`dtype`, `torch_dtype`, `self.weight_dtype`: a name that holds a dtype (not an import)."""
    if type(node) is cst.Attribute:
        return ctx.qualname(node) is None and bool(_DTYPE_VARIABLE.search(node.attr.value))
    if type(node) is cst.Name:
        binding = ctx.lookup(node.value)
        return (binding is None or binding[0] != "str") and bool(_DTYPE_VARIABLE.search(node.value))
    return False


# A docstring line that says a parameter is a numpy array: `tp:  True positives (nparray, nx1)`,
# `boxes (np.ndarray): ...`, `scores: numpy array of shape (N,)`; not one that also allows a
# tensor (`src : torch.Tensor or numpy.ndarray`).
_DOCUMENTED_ARRAY = re.compile(
    r"^\s*(\w+)\s*(?:\(|:)[^\n]*?\b(?:nparray|np\.ndarray|numpy\.ndarray|ndarray|numpy arrays?)\b",
    re.IGNORECASE,
)


def _docstring_source(function: cst.FunctionDef) -> str:
    """The source text of the function's docstring, quotes included, or "". Not LibCST's
    `get_docstring`: it evaluates the literal with `ast.literal_eval`, whose nested helper functions
    leave reference cycles behind on every call."""
    body = function.body
    if type(body) is not cst.IndentedBlock or not body.body:
        return ""
    first = body.body[0]
    if type(first) is not cst.SimpleStatementLine or type(first.body[0]) is not cst.Expr:
        return ""
    value = first.body[0].value
    return value.value if type(value) is cst.SimpleString else ""


def _documented_arrays(function: cst.FunctionDef) -> Iterator[str]:
    """The parameters the function's docstring says are numpy arrays (yolov5's `ap_per_class`)."""
    docstring = _docstring_source(function)
    if "array" not in docstring:
        return
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)}
    for line in docstring.splitlines():
        match = _DOCUMENTED_ARRAY.match(line)
        if match and match.group(1) in params and "tensor" not in line.lower():
            yield match.group(1)


def _root_name(node: cst.BaseExpression) -> str | None:
    """The name an attribute, subscript or method chain starts from (`out["boxes"].tensor` -> out)."""
    while type(node) in (cst.Attribute, cst.Subscript, cst.Call):
        node = node.func if type(node) is cst.Call else node.value
    return node.value if type(node) is cst.Name else None


def _file_site(path: str) -> str:
    posix = path.replace("\\", "/")
    if _TEST_PATH.search(posix):
        return SITE_TEST
    return SITE_HOST if _DATA_PATH.search(posix) else ""


# Concrete LibCST node classes that are subclasses of a tuple of types (FileContext.enclosing).
_CONCRETE: dict[tuple[type, ...], frozenset[type]] = {}


_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def filters_own_columns(node: cst.Subscript, code_of: Callable[[cst.CSTNode], str]) -> bool:
    """`df[(df["task"] == t) & (df["model"] == m)]`: the index reads a column of the receiver by a
    string key, which a tensor has not; the receiver is a DataFrame (pandas work on the host)."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return False
    code = None
    stack: list[cst.BaseExpression] = [node.slice[0].slice.value]
    while stack:
        item = stack.pop()
        if type(item) is cst.Subscript:
            key = item.slice[0].slice if len(item.slice) == 1 else None
            if type(key) is cst.Index and type(key.value) in (cst.SimpleString, cst.ConcatenatedString):
                code = code if code is not None else code_of(node.value)
                if code_of(item.value) == code:
                    return True
        elif type(item) in (cst.BinaryOperation, cst.BooleanOperation):
            stack.extend((item.left, item.right))
        elif type(item) is cst.Comparison:
            stack.append(item.left)
            stack.extend(c.comparator for c in item.comparisons)
        elif type(item) is cst.UnaryOperation:
            stack.append(item.expression)
    return False


class FileContext:
    """What checkers see: resolution helpers, the ancestor chain and a way to report."""

    def __init__(
        self, path: str, module: cst.Module, module_name: str, static_data: Any, source: bytes | None = None
    ):
        self.path = path
        self.module = module
        self.source = source  # the bytes `module` was parsed from, when known (mentions())
        # Set when `module` was built from the stdlib parser's tree (engine's fast path): it has
        # no source text of its own, and code() asks the realizer for LibCST's.
        self.realizer: Any = None
        self._mentions: dict[tuple[str, ...] | bytes, bool] = {}
        # module-level imports the walk binds where they stand, seen from functions from the start
        self.late_imports: dict[str, Binding] = {}
        self.module_name = (
            module_name  # dotted module name of this file within the scan, e.g. "pkg.models.gpt"
        )
        self.data = static_data  # StaticData from the rule database (library tables, …)
        site = _file_site(path)
        module_scope = Scope("module", site=site, by_path=site == SITE_HOST)
        module_scope.visible = (module_scope.bindings,)
        self.scopes: list[Scope] = [module_scope]
        self.parents: list[cst.CSTNode] = []  # ancestors of the node being visited, outermost first
        self.detections: list[Detection] = []
        self._seen: set[tuple[str, int]] = set()
        # Cross-file facts gathered while walking (kept in the cache with the detections).
        self.imports: set[str] = set()  # absolute module names imported by this file
        self.defines_kernels: list[str] = []  # kinds of GPU kernels this file defines
        self.extension_modules: set[str] = set()  # names of compiled extensions this file builds
        # module-level functions that import a module and return it (`def _load_xm(): import
        # torch_xla.core.xla_model as xm; return xm`): function name -> the module (bindings.py)
        self.module_factories: dict[str, str] = {}
        # attributes a class of this file declares as tensors (`seqlens: Optional[torch.Tensor] = None`
        # in a dataclass): `params.seqlens[i]` reads a tensor's value
        self.tensor_fields: set[str] = set()
        # compiled extensions this file imports at its top level, outside `try`/`if`: importing the
        # file needs them (custom_kernel: a module that also runs one on data is a kernel module)
        self.required_extensions: set[str] = set()
        # local name -> modules it imports in a module-level `try` whose handlers bind no fallback
        # (bindings.without_fallback), and those of them the file's functions use (static.link)
        self.fallbackless_imports: dict[str, set[str]] = {}
        self.imports_without_fallback: set[str] = set()
        self.op_namespaces: set[str] = set()  # torch.ops namespaces this file defines operators in
        self.optional_imports: set[str] = set()  # library names imported where the library is optional
        # names assigned a value a Neuron API built (`m = LlamaForSampling.from_pretrained(...)`)
        self.neuron_built: set[str] = set()
        self.serving_imports: set[str] = set()  # serving tools whose import this file already reported
        # Detections made where a construct is written but kept until a later use shows what it
        # is (a module-level dict whose keys become Inductor options once it reaches torch.compile).
        self.deferred: dict[str, list[tuple[Detection, int | None, bool]]] = {}
        self.has_training_loop = False
        # A data-pipeline path (data/, *dataset*.py) says the code runs in loader workers, unless
        # the file itself moves values to a device (an evaluation loop kept under data/).
        self.moves_to_device = False
        self.class_sites: dict[str, str] = {}  # classes defined in this file -> their site
        # module-level classes of this file -> their instance attributes and whether each holds host data
        self.class_host_attrs: dict[str, dict[str, bool]] = {}
        self._sited_by_path: list[Detection] = []
        self.evaluated_once: set[int] = set()
        self.cuda_path_cache: dict[Any, Any] = {}  # static/cuda_paths.py: source texts, module gates
        self.nki_functions: dict[int, bool] = {}  # function id -> written in NKI's device language
        self._numpy_args: dict[int, frozenset[str]] = {}  # function id -> names it hands to numpy
        self._host_returns: HostReturns | None = None  # helpers of this module that return host values
        self.tensor_returns = TensorReturns(module)  # functions of this module that return device tensors
        # the same bookkeeping for NKI kernels: functions of this module that return them
        # (`return flash_fwd, flash_attn_bwd, nl` of a kernel getter), position by position
        self.nki_returns = TensorReturns(module)
        self.host_callers = HostCallers()  # functions of this module its code calls with host data only
        # Test files: where a tensor library is imported (None: at module level; else the ids of
        # the functions that import one), and each detection's innermost function (finish()).
        self._tensor_imports: set[int | None] = set()
        self._test_detections: list[tuple[Detection, int | None]] = []
        # qualname()'s answers (node, qualified name) by id(node), kept until a binding or scope
        # changes.
        self._qual: dict[int, tuple[Any, str | None]] = {}
        # The first component of every module binding made so far (`torch` of ("module",
        # "torch.cuda")): every qualified name qualname() gives starts with one of them, so a
        # handler that wants names of some packages can reject a file's nodes before resolving them.
        self.module_roots: set[str] = set()

    def code(self, node: cst.CSTNode) -> str:
        """`module.code_for_node(node)`: the node's code as LibCST prints it from the source."""
        if self.realizer is None:
            return self.module.code_for_node(node)
        return self.realizer.code(node, self.parents)

    def close(self) -> None:
        """After the file's analysis: drop everything the context holds. Helpers it made keep
        its bound methods (HostReturns resolves names with one), reference cycles that only the
        cycle collector would free, which the scan holds off its loop over files
        (pipeline._PausedCollector); dropped, the file's garbage is freed by reference counting."""
        self.__dict__.clear()

    # ---- scopes ---------------------------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def bind(self, name: str, binding: Binding) -> None:
        self._qual.clear()
        if binding[0] == "module":
            self.module_roots.add(binding[1].partition(".")[0])
        scope = self.scopes[-1]
        if name in scope.global_names:
            scope = self.scopes[0]
        scope.bindings[name] = binding

    def unbind(self, name: str) -> None:
        self._qual.clear()
        self.scope.bindings.pop(name, None)

    def push_scope(self, scope: Scope) -> None:
        """Enter a scope. Class bodies are seen only from the class body itself: methods, nested
        functions and comprehensions inside a class do not see class attributes as names."""
        outer = self.scopes[-1]
        enclosing = outer.visible[1:] if outer.kind == "class" else outer.visible
        if (
            scope.kind in ("function", "lambda")
            and self.late_imports
            and enclosing[-1] is not self.late_imports
        ):
            # a function reads the module's globals when it runs: after the module's own table,
            # the module-level imports the walk has not reached yet (Bindings.late_imports)
            enclosing = (*enclosing, self.late_imports)
        scope.visible = (scope.bindings, *enclosing)
        self.scopes.append(scope)
        self._qual.clear()

    def pop_scope(self) -> None:
        self.scopes.pop()
        self._qual.clear()

    def mentions(self, words: tuple[str, ...]) -> bool:
        """Whether one of `words` (ASCII) occurs in the file's bytes or in its dotted module name, which
        between them hold every name the file's code is made of (a relative import adds the names
        of the file's package); True when the bytes are not known. A handler whose every answer
        needs such a word can stop at once in the many files without one."""
        found = self._mentions.get(words)
        if found is None:
            source = self.source
            found = source is None or any(w.encode() in source or w in self.module_name for w in words)
            self._mentions[words] = found
        return found

    def mentions_pattern(self, pattern: re.Pattern[bytes]) -> bool:
        """`mentions` for a compiled bytes pattern: whether it matches in the file's bytes or in its
        dotted module name (True when the bytes are not known), once per file and pattern."""
        key = pattern.pattern  # bytes cache their hash; a compiled pattern hashes itself on every call
        found = self._mentions.get(key)
        if found is None:
            source = self.source
            found = (
                source is None
                or pattern.search(source) is not None
                # a module name made of an undecodable file name holds surrogate escapes
                or pattern.search(self.module_name.encode("utf-8", "surrogateescape")) is not None
            )
            self._mentions[key] = found
        return found

    def lookup(self, name: str) -> Binding | None:
        """What `name` stands for here, by Python's scoping rules (see push_scope). A function reads
        the module's globals when it runs, so it also sees a module-level import the walk has not
        reached yet (AutoGPTQ's setup.py: `def detect_local_sm_architectures():` uses `torch`,
        imported further down under `if BUILD_CUDA_EXT:`); a class body or a comprehension at the
        top level runs at once and does not."""
        for table in self.scopes[-1].visible:
            found = table.get(name)
            if found is not None:
                return found
        return None

    def is_enum(self, classdef: cst.ClassDef) -> bool:
        """`class DeviceSupport(Enum)`, `class QuantDType(enum.IntEnum)`: an enum, whose members are
        a table of choices (by the base's qualified name, or its own name when not imported)."""
        return any((self.qualname(b.value) or name_of(b.value)).endswith("Enum") for b in classdef.bases)

    def class_scope(self) -> Scope | None:
        """The class whose method (or nested function) is being visited, if any."""
        for scope in reversed(self.scopes):
            if scope.kind == "class":
                return scope
        return None

    def is_tensor_attribute(self, node: cst.CSTNode) -> bool:
        """`self.num_updates` after `self.register_buffer("num_updates", torch.tensor(0))` (or an
        assignment of a tensor or `nn.Parameter` to it) in the class being visited."""
        if not (type(node) is cst.Attribute and type(node.value) is cst.Name):
            return False
        if node.value.value != "self":
            return False
        scope = self.class_scope()
        return scope is not None and bool(scope.tensor_attrs) and node.attr.value in scope.tensor_attrs

    def finish(self) -> None:
        """After the walk: a data-path file that moves values to a device is device code after all;
        a file that imports host-data libraries and nothing that makes torch tensors (a pandas or
        Gradio app, a numpy script) has no device values: its code is host code. Reads of results
        of the module's own functions that return device tensors are reported now (static/tensor_returns.py)."""
        for key in self.tensor_returns.tensor_keys():
            self.release(key)
        self._drop_reads_of_host_callers()
        if self.moves_to_device:
            for detection in self._sited_by_path:
                if detection.facts.get("site") == SITE_HOST:
                    del detection.facts["site"]
        roots = self.imports_seen()
        if roots & _TRACED_NEURON and not roots & _XLA_DEVICE_PACKAGES and not self.moves_to_device:
            self._drop_reads_of_traced_outputs()
        if roots & _HOST_ONLY_LIBRARIES and not roots & TENSOR_LIBRARIES:
            for detection in self.detections:
                if detection.facts.get("site", SITE_STEP) == SITE_STEP:
                    detection.facts["site"] = SITE_HOST
        if None not in self._tensor_imports:
            # A test file that imports no tensor library places no tensor: its "cuda" strings are
            # inputs and mocked answers for the code under test (filters/test_checks.py). Nor does
            # a test function of it that imports none, where another one does.
            for detection, function in self._test_detections:
                if function not in self._tensor_imports:
                    detection.facts["tensorless"] = True

    def _drop_reads_of_traced_outputs(self) -> None:
        """A file that runs a model traced for Neuron (`torch_neuronx.trace`, `torch.jit.load` of its
        artifact) and moves nothing to a device: its tensors are CPU tensors, inputs and outputs of
        the traced model alike (the Neuron runtime copies them), so reading them syncs nothing and
        their sizes shape no device graph. Code of its `nn.Module` classes, which may be what gets
        traced, keeps its findings."""
        self.detections = [
            d
            for d in self.detections
            if not (d.rule.startswith(_HOST_DATA_RULES) and type(d.top) is not cst.ClassDef)
        ]

    def _drop_reads_of_host_callers(self) -> None:
        """Host-sync and dynamic-shape detections inside a module-level function that the file's own
        code calls only with host data (static/host_callers.py) are about host values."""
        script = self.mentions(("__main__",))
        host_only = self.host_callers.host_only(self.source, script)
        if not host_only:
            return
        self.detections = [
            d
            for d in self.detections
            if not (
                d.rule.startswith(_HOST_DATA_RULES)
                and type(d.top) is cst.FunctionDef
                and d.top.name.value in host_only
            )
        ]

    def note_import(self, module: str) -> None:
        """Record where a test file imports a tensor library (module level, or which function)."""
        if self.scopes[0].site == SITE_TEST and module.split(".", 1)[0] in TENSOR_LIBRARIES:
            self._tensor_imports.add(self._function_id())

    def _function_id(self) -> int | None:
        function = next((p for p in reversed(self.parents) if type(p) is cst.FunctionDef), None)
        return id(function) if function is not None else None

    @property
    def in_loop(self) -> bool:
        return self.scope.loop_depth > 0

    @property
    def site(self) -> str:
        """SITE_STEP, SITE_HOST or '' for the code being visited."""
        return self.scope.site

    # ---- resolution -----------------------------------------------------------------------
    def qualname(self, node: cst.CSTNode | None) -> str | None:
        """'tc.synchronize' -> 'torch.cuda.synchronize' when tc is an alias of torch.cuda."""
        # Several checkers ask about the same node (a Call's func, an attribute chain and its value):
        # remember the answers until a binding or scope changes. The entry holds the node, so its
        # id is not reused by another node while the answer is kept.
        entry = self._qual.get(id(node))
        if entry is not None and entry[0] is node:
            return entry[1]
        value = self._qualname(node)
        self._qual[id(node)] = (node, value)
        return value

    def _qualname(self, node: cst.CSTNode | None) -> str | None:
        tp = type(node)  # `type() is`: isinstance() on LibCST's ABC-based classes is slow when it fails
        if tp is cst.Name:
            binding = self.lookup(node.value)
            return binding[1] if binding is not None and binding[0] == "module" else None
        if tp is cst.Attribute:
            base = self.qualname(node.value)
            if base:
                return f"{base}.{node.attr.value}"
            value = node.value
            if type(value) is cst.Name and value.value == "self":
                binding = self.instance_binding(node.attr.value)
                return binding[1] if binding is not None else None
        return None

    def instance_binding(self, attr: str) -> Binding | None:
        """What `self.<attr>` stands for: a module or API the class stored on its instances
        (`self.xm = xm`, `self.rms_norm_fn = rms_norm_fn`)."""
        scope = self.class_scope()
        if scope is None or not scope.instance:
            return None
        return scope.instance.get(attr)

    def bind_instance(self, attr: str, binding: Binding) -> None:
        scope = self.class_scope()
        if scope is not None:
            if scope.instance is None:
                scope.instance = {}
            scope.instance[attr] = binding
            if binding[0] == "module":
                self.module_roots.add(binding[1].partition(".")[0])
            self._qual.clear()

    def literal_value(self, node: cst.CSTNode) -> str | None:
        """The single string a literal being visited stands for; None for a part of an implicit
        concatenation (the whole is judged instead) or for anything that is not one constant."""
        if type(self.parent()) is cst.ConcatenatedString:
            return None
        values = self.strings(node)
        return values[0] if values and len(values) == 1 else None

    def strings(self, node: cst.CSTNode | None) -> tuple[str, ...] | None:
        """Constant string values an expression may take; f-string fields become '{}'."""
        tp = type(node)  # `type() is`: a failing isinstance() on LibCST's classes is slow
        if tp is cst.SimpleString:
            value = _plain_string_value(node.value)
            if value is None:
                value = _evaluated_string(node.value)  # only for escapes and prefixes: ~20x slower
            return (value,) if isinstance(value, str) else None
        if tp is cst.FormattedString:
            parts = []
            for part in node.parts:
                parts.append(part.value if type(part) is cst.FormattedStringText else "{}")
            return ("".join(parts),)
        if tp is cst.ConcatenatedString:
            left, right = self.strings(node.left), self.strings(node.right)
            if left and right:
                return tuple(a + b for a in left for b in right)
            return None
        if tp is cst.IfExp:
            body, orelse = self.strings(node.body), self.strings(node.orelse)
            if body or orelse:
                return (body or ()) + (orelse or ())
            return None
        if tp is cst.Name:
            binding = self.lookup(node.value)
            if binding is not None and binding[0] == "str":
                return binding[1]
        return None

    def is_numpy(self, node: cst.CSTNode) -> bool:
        """Whether an expression is a numpy/pandas/scipy value: calls into those libraries, `.numpy()`
        results, names bound to them, and indexing and arithmetic on them."""
        return self._host_side(node, copies=_LIBRARY_COPIES, kinds=_LIBRARY_KINDS, by_name=False)

    def is_host_value(self, node: cst.CSTNode) -> bool:
        """Whether an expression lives on the host, so that reading it syncs nothing: numpy values,
        results of `.cpu()`/`.tolist()`/`.item()`, numbers already read, tokenizer outputs, and
        names that say so (`ids_cpu`, `cpu_tokens`, `mask_np`)."""
        return self._host_side(node, copies=_HOST_COPIES, kinds=_HOST_KINDS, by_name=True)

    def _host_side(
        self, node: cst.CSTNode, copies: frozenset[str], kinds: frozenset[str], by_name: bool
    ) -> bool:
        while True:
            tp = type(node)  # `type() is`: a failing isinstance() on LibCST's classes is slow
            if tp is cst.Subscript:
                if by_name and filters_own_columns(node, self.code):
                    return True
                value = node.value
                if type(value) is cst.Attribute and value.attr.value in _PANDAS_ACCESSORS:
                    return True  # `df.iloc[rows]`, `df.loc[mask, "col"]`: a pandas selection
                node = value
            elif tp is cst.Attribute and not self.qualname(node):
                if by_name and (host_by_name(node.attr.value) or self.is_host_attribute(node)):
                    return True
                node = node.value
            elif tp is cst.BinaryOperation or tp is cst.Comparison:
                # `result_cpu == expected`, `x_np * 2`: the operation runs where its tensor or array
                # operands are. A Python number (`n = t.max().item()`, `0.5`) decides nothing: `t * n`
                # stays on the device, while `n * 2` is a number.
                operands = (
                    (node.left, node.right)
                    if tp is cst.BinaryOperation
                    else (node.left, *(c.comparator for c in node.comparisons))
                )
                elements = [o for o in operands if self._element(o)]
                arrays = [
                    o
                    for o in operands
                    if not (
                        (by_name and self._is_number(o))
                        or o in elements
                        or (elements and type(o) in (cst.Integer, cst.Float))
                    )
                ]
                if not arrays:
                    return True
                return any(self._host_side(o, copies, kinds, by_name) for o in arrays)
            elif tp is cst.UnaryOperation:
                node = node.expression
            else:
                break
        if by_name and (tp is cst.List or tp is cst.Tuple):
            # `[a.cpu(), b.cpu()]`: tensors concatenated with a host tensor must be on the host too
            return any(
                type(e) is cst.Element and self._host_side(e.value, copies, kinds, by_name)
                for e in node.elements
            )
        if by_name and tp is cst.ListComp:
            return self._host_side(node.elt, copies, kinds, by_name)
        if by_name and (tp is cst.Dict or tp is cst.DictComp):
            # `{"boxes": boxes.cpu(), "scores": scores.cpu()}`: a dict of host values
            values = (
                [e.value for e in node.elements if type(e) is cst.DictElement]
                if tp is cst.Dict
                else [node.value]
            )
            return bool(values) and all(self._host_side(v, copies, kinds, by_name) for v in values)
        if tp is cst.Call:
            func = node.func
            name = self.qualname(func) or ""
            if name.split(".", 1)[0] in HOST_LIBRARIES or (by_name and name in _HOST_CONSTRUCTORS):
                return True
            if by_name and name in _WRAPPERS and node.args and self._wraps_host_data(node):
                return True  # torch.as_tensor(indices), torch.tensor([1, 2]): a CPU tensor
            if type(func) is cst.Name and func.value == "abs" and len(node.args) == 1:
                return self._host_side(node.args[0].value, copies, kinds, by_name)  # `abs(a - b)` of arrays
            if by_name and name in ("copy.deepcopy", "copy.copy") and node.args:
                return self._host_side(node.args[0].value, copies, kinds, by_name)  # a copy stays put
            if by_name and name == "torch.load" and self._maps_to_cpu(node):
                return True  # `torch.load(path, map_location="cpu")`: a checkpoint read into host memory
            if by_name and name.startswith("torch.") and name.endswith("_like") and node.args:
                first = node.args[0]
                if first.keyword is None and not any(
                    a.keyword and a.keyword.value == "device" for a in node.args
                ):
                    return self._host_side(first.value, copies, kinds, by_name)  # on its input's device
            if by_name and name in _JOINS and node.args:
                return self._host_side(node.args[0].value, copies, kinds, by_name)  # torch.cat(cpu_list)
            if by_name and name.startswith("torch.") and self._on_cpu_device(node):
                return True  # torch.randint(..., device="cpu")
            if by_name and name == "torch.Generator" and self._cpu_generator(node):
                return True  # `torch.Generator()`: a CPU random generator
            if by_name and name in _DRAWS and self._draws_with_host_generator(node):
                return True  # `torch.randperm(n, generator=cpu_generator)`: drawn on the CPU
            if by_name and name in _RANGES and self._tabulates_numbers(node):
                return True  # `torch.linspace(0, rate, depth)`: a table of Python numbers, on the CPU
            if by_name and name in _FILLS and self._fills_on_cpu(node):
                return True  # `patterns = torch.zeros(m)`: filled with a Python number, on the CPU
            if by_name and self._computes_on_host(node, name):
                return True  # torch.where(host_mask), torch.flip(host_tensor, ...): runs where its input is
            if by_name and self.calls_host_helper(func):
                return True  # `maybe_zero_3(p)` of `def maybe_zero_3(p): return p.detach().cpu()`
            if type(func) is cst.Attribute:
                method = func.attr.value
                if method in copies or (by_name and "tokenizer" in method.lower()):
                    return True
                receiver = func.value
                if type(receiver) is cst.Attribute and receiver.attr.value == "str":
                    return True  # `series.str.lower()`: pandas string methods
                if method == "to" and by_name and self._only_dtype(node):
                    return self._host_side(receiver, copies, kinds, by_name)  # `.to(torch.float32)` stays
                if method in _DEVICE_MOVES:  # x.to(device): on the device now, unless the device is "cpu"
                    return by_name and method == "to" and self._to_cpu(node)
                return self._host_side(func.value, copies, kinds, by_name)
            if by_name and type(func) is cst.Name and self._numpy_in_numpy_out(node, name):
                return True  # `boxes = xywh2xyxy(ti[:, 2:6])` of a numpy array: a numpy array
            return (
                by_name
                and type(func) is cst.Name
                and ("tokenizer" in func.value.lower() or _prepares_examples(node))
            )
        if tp is cst.Name:
            binding = self.lookup(node.value)
            if binding is not None and binding[0] in kinds:
                return True
            return (
                by_name
                and (binding is None or binding[0] == "other")
                and (
                    host_by_name(node.value)
                    # An accumulator (`feats = []`, then `feats.append(f)`; an append of a host value
                    # would have bound it "host") is not numpy because the name, rebound later
                    # (`feats = torch.cat(feats).cpu().numpy()`), reaches numpy.
                    or (binding != EMPTY_LIST and node.value in self.handed_to_numpy())
                )
            )
        name = self.qualname(node) or ""
        return name.split(".", 1)[0] in HOST_LIBRARIES

    def _numpy_in_numpy_out(self, call: cst.Call, qualname: str) -> bool:
        """A plain function of the project or a library (not torch's, not a class) called only with
        numpy arrays (and constants) computes on them and returns host data: making a device tensor
        would take a torch call of its own. (Host data, not numpy: a processor given a PIL image
        returns a CPU tensor, and `.cuda()` on it is a device move.)"""
        func = call.func
        if (
            not call.args
            or not func.value[:1].islower()
            or qualname.split(".", 1)[0] in ("torch", "builtins")
        ):
            return False
        if func.value in _BUILTIN_FUNCTIONS:
            return False  # `len(a)`, `max(a)`: Python's own; what they return is no array
        arrays = [a for a in call.args if type(a.value) not in _CONSTANTS]
        return bool(arrays) and all(not a.star and self.is_numpy(a.value) for a in arrays)

    def is_host_attribute(self, node: cst.Attribute) -> bool:
        """`self.sigmas` in a class whose every assignment of `self.sigmas` seen so far (in the
        walk, so in the methods above and earlier in this one) was a host value."""
        values = self._instance_values(node)
        return bool(values) and values.get(node.attr.value, False)

    def assigned_on_self(self, node: cst.Attribute) -> bool:
        """`self.is_cuda` in a class that assigned `self.is_cuda = ...` above (timm's loader sets it
        from `device.type == "cuda"`): the class's own attribute, not the tensor property."""
        values = self._instance_values(node)
        return bool(values) and node.attr.value in values

    def _instance_values(self, node: cst.Attribute) -> dict[str, bool] | None:
        """For `self.<attr>`: the instance attributes the class has assigned so far, each with
        whether it holds host data (note_instance_value); None for any other receiver."""
        if not (type(node.value) is cst.Name and node.value.value == "self"):
            return None
        scope = self.class_scope()
        return scope.host_attrs if scope is not None else None

    def note_instance_value(self, attr: str, host: bool) -> None:
        """Record an assignment `self.<attr> = value` in the class being visited."""
        scope = self.class_scope()
        if scope is None:
            return
        if scope.host_attrs is None:
            scope.host_attrs = {}
        scope.host_attrs[attr] = host and scope.host_attrs.get(attr, True)

    def own_function(self, func: cst.BaseExpression) -> tuple[str | None, str] | None:
        """`helper` or `self.helper` called here: the (class or None, name) of a function or method
        of this module it may be; None for anything else."""
        if type(func) is cst.Name:
            if self.lookup(func.value) is not None:
                return None  # an import or a local name, not the module's own function
            return (None, func.value)
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            cls = self.enclosing(cst.ClassDef)
            return None if cls is None else (cls.name.value, func.attr.value)
        return None

    def function_key(self, function: cst.FunctionDef | None = None) -> tuple[str | None, str] | None:
        """The (class or None, name) of the function being visited (or `function`, being left),
        when it is a module-level function or a method of a module-level class (not a nested
        function's)."""
        scopes = self.scopes
        if (
            scopes[-1].kind != "function"
            or len(scopes) > 3
            or (len(scopes) == 3 and scopes[1].kind != "class")
        ):
            return None
        function = function or self.enclosing(cst.FunctionDef)
        if function is None:
            return None
        cls = self.enclosing(cst.ClassDef) if len(scopes) == 3 else None
        return (cls.name.value if cls is not None else None, function.name.value)

    def returned(self, call: cst.Call, position: int) -> Binding | None:
        """What a call of the module's own function gives at `position` of its result (WHOLE, or an
        element the caller unpacks): a tensor, a pending result (the function is read later in the
        walk: static/tensor_returns.py), or None."""
        key = self.own_function(call.func)
        if key is None or self._given_host_data(call):
            return None
        key = self.tensor_returns.resolve(key)
        if key is None:
            return None  # a builtin (`float("inf")`), or a function the module does not define
        if self.tensor_returns.known(key):
            return ("tensor", "") if self.tensor_returns.tensor_at(key, position) else None
        return ("other", pending_key(key, position))

    def _given_host_data(self, call: cst.Call) -> bool:
        """`calc_length(lengths=torch.tensor(n))`, `helper(x.cpu())`: a helper given host data, and
        no device tensor beside it, computes on the host; what it returns is no device tensor."""
        host = [self.is_host_value(arg.value) for arg in call.args]
        return any(host) and not any(
            self.is_tensor(arg.value) for arg, on_host in zip(call.args, host, strict=True) if not on_host
        )

    def pending_read(self, node: cst.CSTNode) -> str | None:
        """For a name holding a pending result of the module's own function: the key under which a
        read of it waits (defer) until the walk knows whether the function returns a tensor."""
        if type(node) is not cst.Name:
            return None
        binding = self.lookup(node.value)
        if binding is None or binding[0] != "other" or type(binding[1]) is not str:
            return None
        return binding[1] if binding[1].startswith("returns:") else None

    def calls_host_helper(self, func: cst.BaseExpression) -> bool:
        """`helper(...)` or `self.helper(...)` of a function or method of this module whose every
        return is a host value (static/host_returns.py)."""
        key = self.own_function(func)
        if key is None:
            return False
        if self._host_returns is None:
            self._host_returns = HostReturns(
                self.module,
                self._module_qualname,
                HOST_LIBRARIES,
                _HOST_CONSTRUCTORS,
                generators=self.mentions(("yield",)),
            )
        return self._host_returns.returns_host(key)

    def _module_qualname(self, node: cst.BaseExpression) -> str | None:
        """A dotted name's qualified name by the module's own imports (`np.load` -> `numpy.load`)."""
        if type(node) is cst.Name:
            binding = self.scopes[0].bindings.get(node.value)
            return binding[1] if binding is not None and binding[0] == "module" else None
        if type(node) is cst.Attribute:
            base = self._module_qualname(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def handed_to_numpy(self) -> frozenset[str]:
        """Names the enclosing function passes to numpy (or another host library) or to
        `torch.from_numpy`, whole or indexed (`np.mean(s[s > -1])`, `torch.from_numpy(py[m])`), or
        reads a bare `.numpy()` from (`instances.scores.numpy()`): those raise on a device tensor,
        so the name holds host data in that function.
        Computed once per function, only in files that import a host library."""
        function = next((p for p in reversed(self.parents) if type(p) is cst.FunctionDef), None)
        if function is None:
            return frozenset()
        names = self._numpy_args.get(id(function))
        if names is None:
            uses_host_library = any(name.split(".", 1)[0] in HOST_LIBRARIES for name in self.imports)
            names = frozenset(self._numpy_arguments(function)) if uses_host_library else frozenset()
            self._numpy_args[id(function)] = names
        return names

    def _numpy_arguments(self, function: cst.FunctionDef) -> set[str]:
        """The names; not those the function copies to the host itself (`cost = cost.cpu()`,
        `Image.fromarray(mask.cpu().numpy())`: before that copy they hold device values). None in a
        function that tests types (`isinstance(box, np.ndarray)`): it takes tensors and arrays."""
        found: set[str] = set(_documented_arrays(function))
        copied: set[str] = set()
        stack: list[cst.CSTNode] = [function.body]
        while stack:
            node = stack.pop()
            if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                continue  # their names are their own
            if type(node) is cst.Call and type(node.func) is cst.Name:
                if node.func.value in ("isinstance", "type"):
                    return set()  # `isinstance(box, np.ndarray)`: the function takes tensors or arrays
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                method = node.func.attr.value
                if method == "cpu" or (method == "to" and self._to_cpu(node)):
                    root = _root_name(node.func.value)
                    if root is not None:
                        copied.add(root)
            if (
                type(node) is cst.Call
                and not node.args
                and type(node.func) is cst.Attribute
                and node.func.attr.value == "numpy"
                and not self._copies_to_host(node.func.value)
            ):
                # `instances.pred_boxes.tensor.numpy()`: raises on a device tensor, so the object
                # it is read from holds CPU tensors here
                root = _root_name(node.func.value)
                if root is not None and root != "self":
                    found.add(root)
            if type(node) is cst.Call and node.args:
                name = self.qualname(node.func) or ""
                if name.split(".", 1)[0] in HOST_LIBRARIES or name == "torch.from_numpy":
                    values = [arg.value for arg in node.args]
                    for value in values:
                        if type(value) in (cst.List, cst.Tuple):
                            values += [e.value for e in value.elements]  # `np.array([u[m], v[m]])`
                            continue
                        while type(value) in (cst.Subscript, cst.UnaryOperation):
                            # `np.mean(s[s > -1])`, `np.argsort(-conf)`
                            value = value.value if type(value) is cst.Subscript else value.expression
                        if type(value) is cst.Name:
                            found.add(value.value)
            stack.extend(children_of(node))
        return found - copied

    def _copies_to_host(self, value: cst.BaseExpression) -> bool:
        """`x.cpu()`, `x.detach().numpy()`, `x.to("cpu")[0]`: a chain with a host copy in it."""
        while type(value) in (cst.Call, cst.Subscript, cst.Attribute):
            if type(value) is cst.Call:
                func = value.func
                if type(func) is cst.Attribute and (
                    func.attr.value in _HOST_COPIES or (func.attr.value == "to" and self._to_cpu(value))
                ):
                    return True
                value = func
            else:
                value = value.value
        return False

    def draws_one_number(self, call: cst.BaseExpression) -> bool:
        """`torch.rand(1)`, `torch.randn(())`, `torch.randint(lo, hi, (1,))`, `torch.randint(n, size=[1])`:
        a random factory without `device=` or `generator=` whose size is one element, a CPU random
        number; so are its elements (`[0]`) and a name bound to it (a DRAWN binding). Reading it
        (`.item()`) syncs nothing and a branch on it decides nothing on the device; for the
        dynamic-shape checks it stays a number read from a tensor (a slice bound drawn at random
        varies per step)."""
        while type(call) is cst.Subscript:
            call = call.value  # `torch.randint(0, 2, (1,))[0]`: its element
        if type(call) is cst.Name:
            binding = self.lookup(call.value)
            return binding is not None and binding[0] == DRAWN  # `choice = torch.rand(1)`
        if type(call) is not cst.Call:
            return False
        name = self.qualname(call.func) or ""
        if name not in _RANDOM_FACTORIES:
            return False
        if any(
            a.keyword is not None and a.keyword.value in ("device", "generator", "out") for a in call.args
        ):
            return False
        size = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "size"), None)
        if size is None:
            positional = [a for a in call.args if a.keyword is None]
            if any(a.star for a in positional):
                return False
            if name == "torch.randint":
                # randint(high, size) or randint(low, high, size): the size is the last positional
                size = positional[-1].value if len(positional) in (2, 3) else None
            else:
                values = [a.value for a in positional]
                if len(values) == 1 and type(values[0]) in (cst.Tuple, cst.List):
                    size = values[0]
                elif values:
                    size = cst.Tuple([cst.Element(v) for v in values])
        if type(size) is cst.Integer:
            return size.value == "1"
        if type(size) in (cst.Tuple, cst.List):
            dims = [e.value for e in size.elements if type(e) is cst.Element]
            return all(type(d) is cst.Integer and d.value == "1" for d in dims) and not any(
                type(e) is cst.StarredElement for e in size.elements
            )
        return False

    def _cpu_generator(self, call: cst.Call) -> bool:
        """`torch.Generator()`, `torch.Generator(device="cpu")`: a generator of CPU random numbers."""
        device = arg_value(call, 0, "device")
        return device is None or self.names_cpu(device)

    def _draws_with_host_generator(self, call: cst.Call) -> bool:
        """A random factory given a CPU generator (`generator=g`, `g = torch.Generator()`) and no
        other device: a CPU generator draws only CPU tensors (torch raises for another device)."""
        generator = kwarg(call, "generator")
        if generator is None or not self.is_host_value(generator.value):
            return False
        device = kwarg(call, "device")
        return device is None or self.names_cpu(device.value)

    def cpu_fill(self, node: cst.BaseExpression) -> bool:
        """`torch.zeros(m)`, `torch.full((n,), 0.5)`: a fill of Python sizes and numbers without a
        device, in a file that sets no default device: a CPU tensor."""
        return type(node) is cst.Call and self.qualname(node.func) in _FILLS and self._fills_on_cpu(node)

    def _fills_on_cpu(self, call: cst.Call) -> bool:
        """cpu_fill for a call already known to be one of the fills."""
        return self._tabulates_numbers(call) and not self.mentions_pattern(_SETS_DEFAULT_DEVICE)

    def _tabulates_numbers(self, call: cst.Call) -> bool:
        """A range factory without a device whose bounds are not known tensors: its arguments are
        numbers (`torch.linspace(0, drop_path_rate, depth)`), the result a CPU table of them."""
        if not call.args or any(a.keyword is not None and a.keyword.value == "device" for a in call.args):
            return False
        return not any(
            a.keyword is None and self.is_tensor(a.value) and not self.is_host_value(a.value)
            for a in call.args
        )

    def _computes_on_host(self, call: cst.Call, name: str) -> bool:
        """A torch function of a host tensor (`torch.where(cpu_mask)`, `torch.flip(t_cpu, (0,))`)
        computes on the host: its result is where its first argument is. Not a factory
        (`torch.zeros(n)` of a number read from a tensor makes a tensor the code places), and not
        a call given a device."""
        if not call.args or not name.startswith("torch.") or name in _FACTORIES or not makes_tensor(name):
            return False
        if any(a.keyword is not None and a.keyword.value == "device" for a in call.args):
            return False
        first = call.args[0]
        if first.keyword is not None or first.star or self._is_number(first.value):
            return False
        return self.is_host_value(first.value)

    def _wraps_host_data(self, call: cst.Call) -> bool:
        """`torch.tensor(data)` without a device (or on "cpu") of data that is on the host: numpy
        values, host tensors, Python numbers and lists of them."""
        device = next((a for a in call.args if a.keyword is not None and a.keyword.value == "device"), None)
        if device is not None and not self._on_cpu_device(call):
            return False
        first = call.args[0]
        if first.keyword is not None or first.star:
            return False
        if self.qualname(call.func) in _COPY_CONSTRUCTORS:
            # `torch.tensor(result.tokens)`: the constructor copies Python data into a new CPU
            # tensor (code hands it lists and arrays; a tensor argument is a known tensor here).
            # Not a list of device tensors (`torch.tensor([t.norm() for t in ts])`), which reads
            # each of them from the device.
            return not self._holds_device_tensors(first.value)
        return self.is_python_data(first.value)

    def _holds_device_tensors(self, node: cst.BaseExpression) -> bool:
        """A known device tensor, or a list/tuple display or comprehension of them (nested too)."""
        if type(node) in (cst.ListComp, cst.GeneratorExp):
            return self._holds_device_tensors(node.elt)
        if type(node) in (cst.List, cst.Tuple):
            return any(type(e) is cst.Element and self._holds_device_tensors(e.value) for e in node.elements)
        if type(node) is cst.Name and self.lookup(node.value) == TENSOR_LIST:
            return True  # `shape_list = [t.clone() for _ in range(n)]`, filled by `dist.all_gather`
        return self.is_tensor(node) and not self.is_host_value(node)

    def is_config_value(self, node: cst.CSTNode) -> bool:
        """`self.config.sizes`, `args.lengths`, `cfg.model.ids`: a field of a configuration object,
        which holds Python values (never tensors)."""
        if type(node) is not cst.Attribute:
            return False
        return any(_CONFIG_NAME.fullmatch(name) for name in owner_names(node.value))

    def is_python_data(self, node: cst.CSTNode) -> bool:
        """Host data: numbers, strings and their lists, host values (`is_host_value`), `len(x)`."""
        if type(node) in (cst.Integer, cst.Float, cst.SimpleString) or self._is_number(node):
            return True
        if type(node) is cst.UnaryOperation:
            return self.is_python_data(node.expression)
        if type(node) in (cst.List, cst.Tuple):
            elements = [e.value for e in node.elements if type(e) is cst.Element]
            return bool(elements) and all(self.is_python_data(e) for e in elements)
        if type(node) in (cst.ListComp, cst.GeneratorExp):
            return self.is_python_data(node.elt)
        if self.is_config_value(node):
            return True  # `self.config.token_ids`, `args.sizes`: configuration values are Python data
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Name
            and node.func.value in _PYTHON_VALUES
            and self.lookup(node.func.value) is None
        ):
            return node.func.value == "len" or all(self.is_python_data(a.value) for a in node.args)
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Name
            and node.func.value in _PYTHON_LISTS
            and self.lookup(node.func.value) is None
        ):
            return True  # `list(stats.values())`: a Python list (of numbers, for a tensor to wrap)
        return self.is_host_value(node)

    def is_python_int(self, node: cst.CSTNode) -> bool:
        """A loop counter or enumerate index (bound as Python data), or a literal integer."""
        if type(node) is cst.Integer:
            return True
        if type(node) is cst.Name:
            return self.lookup(node.value) == ("python", "")
        return False

    def _element(self, node: cst.CSTNode) -> bool:
        """A name bound to an element of a numpy array a loop runs over (bindings.NUMPY_ELEMENT),
        and arithmetic of such names with numbers (`i + 1`): a numpy number."""
        if type(node) is cst.BinaryOperation:
            sides = (node.left, node.right)
            return any(map(self._element, sides)) and all(
                self._element(n) or type(n) in (cst.Integer, cst.Float) for n in sides
            )
        return type(node) is cst.Name and self.lookup(node.value) == ("numpy", "element")

    def _is_number(self, node: cst.CSTNode) -> bool:
        """A Python number: a numeric literal, a name holding a value read from a tensor, `.item()`."""
        if type(node) in (cst.Integer, cst.Float):
            return True
        if type(node) is cst.Name:
            binding = self.lookup(node.value)
            return binding is not None and (
                binding[0] in ("read", "python") or binding == ("numpy", "element")
            )
        return (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value == "item"
            and not node.args
        )

    def names_cpu(self, value: cst.BaseExpression | None) -> bool:
        """Whether a device argument is the CPU: every string the value may take is "cpu" (a
        `torch.device(...)` is read through), or a variable named for it (`self.cpu_device`, set
        once to `torch.device("cpu")` in detectron2's predictors and their many copies)."""
        if value is None:
            return False
        if type(value) is cst.Call and self.qualname(value.func) == "torch.device":
            value = arg_value(value, 0, "type")
            if value is None:
                return False
        if type(value) in (cst.Name, cst.Attribute) and name_of(value) in CPU_DEVICE_NAMES:
            return True
        values = self.strings(value)
        return bool(values) and all(v == "cpu" for v in values)

    def _maps_to_cpu(self, call: cst.Call) -> bool:
        for index, arg in enumerate(call.args):
            if (arg.keyword is not None and arg.keyword.value == "map_location") or (
                arg.keyword is None and index == 1
            ):
                return self.names_cpu(arg.value)
        return False

    def _only_dtype(self, call: cst.Call) -> bool:
        """`x.to(torch.float32)`, `x.to(dtype=torch.long)`: a cast that leaves the tensor where it is."""
        if not call.args:
            return False
        for arg in call.args:
            if arg.keyword is not None:
                if arg.keyword.value not in ("dtype", "non_blocking", "copy", "memory_format"):
                    return False
            elif arg is call.args[0] and _names_dtype_variable(arg.value, self):
                continue  # `x.to(dtype)`, `x.to(self.torch_dtype)`: a variable named as a dtype
            elif not (self.qualname(arg.value) or "").startswith("torch.") or arg is not call.args[0]:
                return False
            elif (self.qualname(arg.value) or "") == "torch.device":
                return False
        return True

    def _on_cpu_device(self, call: cst.Call) -> bool:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "device":
                values = self.strings(arg.value)
                return bool(values) and all(v == "cpu" for v in values)
        return False

    def _to_cpu(self, call: cst.Call) -> bool:
        """`x.to("cpu")`, `x.to(device="cpu")`, `x.to(torch.device("cpu"), ...)`."""
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value == "device":
                return self.names_cpu(arg.value)
        return False

    def is_tensor(self, node: cst.CSTNode) -> bool:
        """Whether an expression is known to be a torch tensor: a name bound as one, a tensor-making
        torch function, or indexing, arithmetic and tensor-valued methods on such values."""
        while True:
            tp = type(node)  # `type() is`: a failing isinstance() on LibCST's classes is slow
            if tp is cst.Subscript:
                node = node.value
            elif tp is cst.BinaryOperation:
                if self.is_tensor(node.left):
                    return True
                node = node.right
            elif tp is cst.Comparison:
                # `out.argmax(-1) == labels`: an elementwise comparison with a tensor is a tensor
                # (not `is`/`in`, which give a Python bool)
                if any(type(c.operator) in _IDENTITY_OR_MEMBERSHIP for c in node.comparisons):
                    return False
                if any(self.is_tensor(c.comparator) for c in node.comparisons):
                    return True
                node = node.left
            elif tp is cst.UnaryOperation:
                node = node.expression
            elif tp is cst.Attribute and node.attr.value in _TENSOR_ATTRIBUTES:
                if node.attr.value == "grad":
                    return True  # `p.grad`: a parameter's gradient, whatever `p` is known as
                node = node.value
            elif tp is cst.Attribute and node.attr.value in _TENSOR_FIELDS and "torch" in self.imports_seen():
                # `outputs.logits`: a model output's (or a distribution's) logits, always a tensor;
                # `gt_boxes.tensor`, `images.tensor`: detectron2's Boxes and ImageList hold one
                return not self.is_host_value(node.value)
            else:
                break
        if tp is cst.Name:
            binding = self.lookup(node.value)
            return binding is not None and binding[0] == "tensor"
        if tp is cst.Attribute:
            return self.is_tensor_attribute(node)
        if tp is cst.Call:
            func = node.func
            qualname = self.qualname(func)
            if qualname is not None:
                return makes_tensor(qualname)
            if self._reduces_tensor_list(node):
                return True  # `max(known_num)` over a list of device tensors: one of them (or their sum)
            own = self.own_function(func)
            if (
                own is not None
                and (own := self.tensor_returns.resolve(own))
                and self.tensor_returns.known(own)
            ):
                # `float(evaluate(model))`
                return self.tensor_returns.tensor_at(own, WHOLE) and not self._given_host_data(node)
            if type(func) is cst.Attribute:
                method = func.attr.value
                if method in _MODULE_ONLY_METHODS:
                    return False  # `AutoModel.from_pretrained(p).bfloat16().eval()`: a module
                if method in TENSOR_ONLY_METHODS:
                    if method in _MODULE_CASTS and self._names_module(func.value):
                        return False  # `model.half()` casts a module's weights and returns the module
                    return not self.is_host_value(func.value)
                if method in _MASK_REDUCTIONS and self._elementwise_comparison(func.value):
                    return True  # `(ids == IMAGE_TOKEN).sum()`: a Python bool has no `.sum()`
                if method not in HOST_RESULT_METHODS:
                    return self.is_tensor(func.value)
        return False

    def _reduces_tensor_list(self, call: cst.Call) -> bool:
        """`max(known)`, `sum(known)`: a Python reduction of a name bound to a list of device tensors."""
        func = call.func
        if type(func) is not cst.Name or func.value not in PYTHON_REDUCTIONS or len(call.args) != 1:
            return False
        items = call.args[0].value
        return (
            type(items) is cst.Name
            and self.lookup(func.value) is None
            and self.lookup(items.value) == TENSOR_LIST
        )

    def _names_module(self, node: cst.BaseExpression) -> bool:
        """`model`, `AutoModel.from_pretrained(p)` (module_names.py) or a module made here
        (`torch.nn.Linear(4, 4)`): an `nn.Module`, not a tensor."""
        if names_module(node):
            return True
        if type(node) is not cst.Call:
            return False
        made = self.qualname(node.func) or ""
        return made.startswith("torch.nn.") and made.rpartition(".")[2][:1].isupper()

    def _elementwise_comparison(self, node: cst.BaseExpression) -> bool:
        """`ids == token` compared element by element (not `is`/`in`, not of numpy or host values, in
        a module that imports torch): only an array compares so, and here arrays are tensors."""
        if type(node) is not cst.Comparison or "torch" not in self.imports_seen():
            return False
        if any(type(c.operator) in _IDENTITY_OR_MEMBERSHIP for c in node.comparisons):
            return False
        sides = (node.left, *(c.comparator for c in node.comparisons))
        return not any(self.is_numpy(s) or self.is_host_value(s) for s in sides)

    def parameter(self, name: str) -> cst.Param | None:
        """The parameter `name` of the innermost function around the node being visited (not a
        `*args`/`**kwargs`), or None."""
        function = self.enclosing(cst.FunctionDef)
        if function is None:
            return None
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name:
                return param
        return None

    def is_device_tensor(self, node: cst.CSTNode) -> bool:
        """A tensor that is not a host value, nor one number drawn on the CPU (`torch.rand(1)`):
        reading it copies from the device."""
        return self.is_tensor(node) and not self.is_host_value(node) and not self.draws_one_number(node)

    def imports_seen(self) -> set[str]:
        """Root packages imported so far ('torch', 'numpy', ...)."""
        return {name.split(".")[0] for name in self.imports}

    # ---- ancestors ------------------------------------------------------------------------
    def parent(self, depth: int = 1) -> cst.CSTNode | None:
        return self.parents[-depth] if len(self.parents) >= depth else None

    def enclosing(self, *types: type) -> cst.CSTNode | None:
        wanted = _CONCRETE.get(types)
        if wanted is None:
            wanted = _CONCRETE[types] = frozenset(t for t in node_types() if issubclass(t, types))
        for node in reversed(self.parents):
            if type(node) in wanted:  # isinstance() on LibCST's ABC-based classes is several times slower
                return node
        return None

    def anchor_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement-sized piece of code around a node, used as its fingerprint snippet."""
        best = node
        for ancestor in reversed(self.parents):
            if isinstance(ancestor, (cst.BaseSmallStatement, cst.Decorator)):
                return ancestor
            if isinstance(ancestor, (cst.BaseCompoundStatement, cst.BaseSuite, cst.Module)):
                break
            best = ancestor
        # An Annotation cannot be generated on its own (its ':' or '->' depends on the parent).
        return best.annotation if type(best) is cst.Annotation else best

    # ---- reporting ------------------------------------------------------------------------
    def report(self, rule: str, node: cst.CSTNode, end_node: cst.CSTNode | None = None, **facts: Any) -> None:
        key = (rule, id(node))
        if key in self._seen:  # the same node may be reached through two checkers
            return
        self._record(self._detection(rule, node, end_node, facts))

    def _detection(
        self, rule: str, node: cst.CSTNode, end_node: cst.CSTNode | None, facts: dict[str, Any]
    ) -> tuple[Detection, int | None, bool]:
        """A detection of the node being visited, with the facts of where it is; and what `_record`
        needs of the walk's state then (its innermost function, whether its site came from the path)."""
        scope = self.scopes[-1]
        facts.setdefault("in_loop", self._repeats(node, end_node))
        if scope.site:  # only when known, so that most detections keep their small fact set
            facts.setdefault("site", scope.site)
        for key, value in cuda_paths.classify(self, node).items():
            facts.setdefault(key, value)
        top = self.parents[1] if len(self.parents) > 1 else None
        stmt, indents = self._statement_of(node)
        detection = Detection(rule, node, facts, self.anchor_of(node), end_node, top, stmt, indents)
        function = self._function_id() if self.scopes[0].site == SITE_TEST else None
        return detection, function, scope.by_path

    def _record(self, made: tuple[Detection, int | None, bool]) -> None:
        detection, function, by_path = made
        self._seen.add((detection.rule, id(detection.node)))
        self.detections.append(detection)
        if self.scopes[0].site == SITE_TEST:
            self._test_detections.append((detection, function))
        if by_path:
            self._sited_by_path.append(detection)

    def defer(self, key: str, rule: str, node: cst.CSTNode, **facts: Any) -> None:
        """Make a detection of `node` (being visited) but report it only if `release(key)` is called."""
        self.deferred.setdefault(key, []).append(self._detection(rule, node, None, facts))

    def forget(self, key: str) -> None:
        self.deferred.pop(key, None)

    def release(self, key: str, **facts: Any) -> None:
        """Report the detections kept under `key` (once each), with `facts` added."""
        for made in self.deferred.pop(key, ()):
            detection = made[0]
            if (detection.rule, id(detection.node)) not in self._seen:
                detection.facts.update(facts)
                self._record(made)

    def _statement_of(self, node: cst.CSTNode) -> tuple[cst.CSTNode | None, tuple[str, ...]]:
        """Innermost statement of a statement list around `node`, and the indents of the blocks around it.

        Only statements that sit directly in a module or block body qualify: an `elif` is an If
        nested in another If, and generated on its own it would read `if`, not `elif`.
        """
        chain = [*self.parents, node]
        for i in range(len(chain) - 1, 0, -1):
            if isinstance(chain[i], (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and type(
                chain[i - 1]
            ) in (cst.Module, cst.IndentedBlock):
                indents = tuple(
                    (b.indent if b.indent is not None else self.module.default_indent)
                    for b in chain[:i]
                    if type(b) is cst.IndentedBlock
                )
                return chain[i], indents
        return None, ()

    def in_type_checking(self) -> bool:
        """Whether the node being visited sits under `if TYPE_CHECKING:`: code that never runs (an
        import there is for annotations only, not a dependency)."""
        parents = self.parents
        for index in range(len(parents) - 1, 0, -1):
            ancestor = parents[index - 1]
            if type(ancestor) is cst.If and parents[index] is ancestor.body:
                if name_of(ancestor.test) == "TYPE_CHECKING":
                    return True
        return False

    def in_error_path(self) -> bool:
        """Whether the node being visited is evaluated only when something fails: inside a `raise`
        statement or an assert's message (a tensor read there syncs only on the error path)."""
        parents = self.parents
        for index in range(len(parents) - 1, 0, -1):
            ancestor = parents[index]
            if type(ancestor) is cst.Raise:
                return True
            if type(ancestor) is cst.Assert:
                return index + 1 < len(parents) and parents[index + 1] is ancestor.msg
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return False
        return False

    def _repeats(self, node: cst.CSTNode, end_node: cst.CSTNode | None) -> bool:
        """Whether the node being reported runs on every iteration of a loop. The iterable of a
        `for` (and of a comprehension's first clause) is evaluated once, before the loop starts."""
        depth = self.scopes[-1].loop_depth
        if depth != 1:
            return depth > 1
        once = self.evaluated_once
        if id(node) in once or (end_node is not None and id(end_node) in once):
            return False
        for ancestor in reversed(self.parents):
            if id(ancestor) in once:
                return False
            if isinstance(ancestor, _LOOPS):
                return True
        return True

    def snippet(self, node: cst.CSTNode, stmt: cst.CSTNode | None = None) -> str:
        """Normalised source of a node (fingerprints, baselines); '' if LibCST cannot print it alone.
        `stmt`: the innermost statement holding it, when known (a built tree finds it faster)."""
        try:
            if self.realizer is not None and stmt is not None:
                return snippet_of(self.realizer.code_in(node, stmt))
            return snippet_of(self.code(node))
        except cst.CSTCodegenError:
            return ""


# ---- what torch calls return -------------------------------------------------------------------
# Tensor methods whose result is a host value or not a tensor at all.
HOST_RESULT_METHODS = frozenset(
    {
        "item",
        "tolist",
        "numpy",
        "size",
        "dim",
        "numel",
        "nelement",
        "ndimension",
        "element_size",
        "stride",
        "data_ptr",
        "storage_offset",
        "get_device",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "equal",
        "allclose",
        "type",
        "__len__",
        "register_hook",
        "backward",
        "untyped_storage",
    }
)
# Methods only torch tensors have (numpy arrays and Python numbers do not): their result is a tensor.
TENSOR_ONLY_METHODS = frozenset(
    {
        "detach",
        "contiguous",
        "float",
        "double",
        "half",
        "bfloat16",
        "unsqueeze",
        "softmax",
        "log_softmax",
        "masked_fill",
        "clamp",
        "abs",
        "type_as",
        "view_as",
        "expand_as",
        "new_zeros",
        "new_ones",
        "new_full",
        "new_empty",
        "sigmoid",
        "logsumexp",
        "amax",
        "amin",
        "narrow",
        "permute",
    }
)
# Casts nn.Module has too (on a module they return the module), and methods only a module has.
_MODULE_CASTS = frozenset({"float", "double", "half", "bfloat16"})
_MODULE_ONLY_METHODS = frozenset({"eval", "train"})
# Reductions of a boolean mask that only an array has (a Python bool has none of them).
_MASK_REDUCTIONS = frozenset({"sum", "any", "all", "count_nonzero"})
# Python builtins that reduce an iterable: over a tensor or a list of tensors, a tensor.
PYTHON_REDUCTIONS = frozenset({"sum", "max", "min"})
# The binding of a list of device tensors made one by one (static/bindings.py): each item a loop
# takes from it, and a Python reduction of it, is a tensor.
TENSOR_LIST: Binding = ("tensor-list", "")
_IDENTITY_OR_MEMBERSHIP = (cst.Is, cst.IsNot, cst.In, cst.NotIn)
# The rules of the two categories about where data lives: dynamic-shape (NL60x) and host-sync (NL70x).
_HOST_DATA_RULES = ("NL6", "NL7")
_TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag"})
# torch.<name> functions that do not return a tensor.
_NOT_TENSOR_FUNCTIONS = frozenset(
    {
        "numel",
        "equal",
        "allclose",
        "device",
        "dtype",
        "finfo",
        "iinfo",
        "compile",
        "no_grad",
        "enable_grad",
        "inference_mode",
        "load",
        "save",
        "manual_seed",
        "seed",
        "initial_seed",
        "typename",
        "result_type",
        "can_cast",
        "promote_types",
        "autocast",
        "vmap",
        "cond",
        "while_loop",
        "broadcast_shapes",
        "chunk",
        "split",
        "unbind",
        "tensor_split",
        "meshgrid",
        "sort",
        "topk",
        "max",
        "min",
        "std_mean",
        "var_mean",
        "unique",
        "frexp",
        "lu",
        "qr",
        "svd",
        "eig",
        "kthvalue",
        "mode",
        "median",
        "nanmedian",
        "aminmax",
        "histogram",
        "cummax",
        "cummin",
        "sym_int",
        "sym_float",
        "sym_max",
        "sym_min",
        "from_file",
    }
)
_TENSOR_NAMESPACES = frozenset({"torch.nn.functional", "torch.linalg", "torch.special", "torch.fft"})
# Element kinds of torch's legacy tensor classes (`torch.ByteTensor` ... `torch.BFloat16Tensor`).
LEGACY_TENSOR_KINDS = ("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "Bool", "BFloat16")
# Functions outside torch that return one tensor made from a tensor argument, and torch's legacy
# typed constructors (whose names `makes_tensor` would take for classes).
_TENSOR_FUNCTIONS = frozenset(
    {
        "torch_xla.core.xla_model.all_reduce",
        "torch_xla.core.xla_model.all_gather",
        "torch_xla.core.xla_model.reduce_scatter",
        "torch_xla.core.xla_model.all_to_all",
        "torchvision.ops.nms",
        "torchvision.ops.batched_nms",
        "torchvision.ops.boxes.nms",
        "torchvision.ops.boxes.batched_nms",
        # the legacy typed constructors: `torch.LongTensor([n])`, `torch.ByteTensor(size=(n,))`
        *(f"torch.{kind}Tensor" for kind in LEGACY_TENSOR_KINDS),
    }
)


def makes_tensor(qualname: str) -> bool:
    """Whether calling this torch function returns one tensor (tuples, modules, dtypes and flags do not)."""
    if qualname in _TENSOR_FUNCTIONS:
        return True
    module, _, name = qualname.rpartition(".")
    if not name or not name[0].islower() or name.startswith(("is_", "set_", "get_", "use_", "_")):
        return False
    if module == "torch":
        return name not in _NOT_TENSOR_FUNCTIONS
    return module in _TENSOR_NAMESPACES
