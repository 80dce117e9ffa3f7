"""Code that runs only where CUDA exists: the `cuda_path` fact of every detection.

A finding's construct may sit where a Neuron host never goes:

- `gated`: inside a test (function or class) that is skipped without CUDA or a CUDA-only library
  (`@pytest.mark.skipif(not torch.cuda.is_available(), ...)`, `@unittest.skipUnless(torch.cuda...)`,
  `@require_torch_gpu`, `@require_bitsandbytes`, `@needs_cuda`, a module-level alias of such a
  mark; selection markers such as `@pytest.mark.gpu` are not gates: those tests are ported), in a module that skips itself without CUDA (`pytestmark = ...`,
  `if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)`), or after an early
  `if not torch.cuda.is_available(): return` / `self.skipTest(...)` in its function;
- `skip`: the skip condition itself (the decorator, the `pytestmark`, the `if` test of the skip);
- `fallback`: the `else` of a test for `torch.accelerator` (`torch.accelerator.current_accelerator()
  if hasattr(torch, "accelerator") else "cuda"`): the CUDA value is for PyTorch without it;
- `branch`: in the body of an `if` whose test asks for CUDA (`if torch.cuda.is_available():`,
  `if x.is_cuda:`, `if device.type == "cuda":`), not in its `else`. Such a detection also gets
  `cuda_guard` (a token naming that `if`), and a detection inside that `if`'s test gets
  `cuda_guard_of` with the same token, so the filters can fold a guard into what it guards.

Accelerator-generic gates (`require_non_cpu`, `require_torch_multi_accelerator`, `torch.accelerator`)
are not CUDA gates: on Neuron those tests run. Whether a gate asks for CUDA is read from its source
text (names and conditions that mention CUDA, GPUs, SM versions, Triton or a CUDA-only library).
"""

from __future__ import annotations

import re

import libcst as cst

GATED, SKIP, BRANCH, FALLBACK = "gated", "skip", "branch", "fallback"
_ACCELERATOR_TEST = re.compile(r"\baccelerator\b")

# Words that make a gate or a condition about CUDA (and CUDA-only libraries).
_CUDA_WORD = re.compile(
    r"(?i)cuda|(?<![a-z])gpus?(?![a-z])|_gpu|gpu_|multigpu|(?<![a-z])sm_?\d|is_sm|sm\d\d|triton|"
    r"bitsandbytes|(?<![a-z])bnb(?![a-z])|flash_?attn|nvidia|transformer_engine|deep_?gemm|cutlass|nccl"
)
# Device-generic gates run on Neuron too.
_GENERIC = re.compile(r"(?i)accelerator|non_cpu|xpu|mps|npu|hpu|neuron|xla")
# Decorator names that require something (the thing is named in the rest of the name).
_REQUIRE_NAME = re.compile(r"(?i)(^|[._])(requires?|needs?|only|skip_?if_?no|skip_?unless|run_?if|run_?on)")
_SKIP_CALLS = re.compile(r"(^|\.)(skip|skipTest|SkipTest|skip_test|xfail)$")
_NOT = re.compile(r"^[\s(]*not\b")
_NEGATIVE = re.compile(r"(?i)no_?cuda|without|\bcpu\b|is False|== *False")


def _code(ctx, node: cst.CSTNode) -> str:
    cache = ctx.cuda_path_cache
    key = id(node)
    text = cache.get(key)
    if text is None:
        text = cache[key] = ctx.code(node)
    return text


def _dotted(node: cst.BaseExpression) -> str:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        inner = _dotted(node.value)
        return f"{inner}.{node.attr.value}" if inner else ""
    return ""


def _missing_cuda(text: str) -> bool:
    """A condition that is true when CUDA is missing: `not torch.cuda.is_available()`,
    `not (HAS_TRITON and is_sm_at_least_90())`, `torch.cuda.device_count() < 2`."""
    if not _CUDA_WORD.search(text) or _GENERIC.search(text):
        return False
    if re.search(r"device_count\(\)\s*(<|==\s*0)", text):
        return True
    return any(_NOT.match(part) and _CUDA_WORD.search(part) for part in re.split(r"\bor\b", text))


def _has_cuda(text: str) -> bool:
    """A condition that is true only where CUDA is: mentions it and is not negated."""
    if not _CUDA_WORD.search(text) or _GENERIC.search(text) or _NEGATIVE.search(text):
        return False
    return not _NOT.match(text)


def gate_expression(ctx, expr: cst.BaseExpression, aliases: bool = True) -> bool:
    """A decorator (or `pytestmark` value) that skips the test without CUDA."""
    if type(expr) in (cst.List, cst.Tuple):
        return any(gate_expression(ctx, e.value, aliases) for e in expr.elements)
    func = expr.func if type(expr) is cst.Call else expr
    name = _dotted(func)
    if not name:
        return False
    last = name.rsplit(".", 1)[-1]
    if type(expr) is cst.Call and last.lower() in ("skipif", "skip_if"):
        return bool(expr.args) and _missing_cuda(_code(ctx, expr.args[0].value))
    if type(expr) is cst.Call and last.lower() in ("skipunless", "skip_unless"):
        return bool(expr.args) and _has_cuda(_code(ctx, expr.args[0].value))
    if name.startswith(("pytest.mark.", "mark.")):
        return False  # a selection marker (`@pytest.mark.gpu`): the test is ported, not skipped
    if _REQUIRE_NAME.search(last) and _CUDA_WORD.search(last) and not _GENERIC.search(last):
        return True
    if aliases and type(func) is cst.Name:
        value = _module_aliases(ctx).get(func.value)
        return value is not None and gate_expression(ctx, value, aliases=False)
    return False


def _module_aliases(ctx) -> dict[str, cst.BaseExpression]:
    """Module-level `name = pytest.mark.skipif(...)` assignments (used as `@name`)."""
    found = ctx.cuda_path_cache.get("aliases")
    if found is None:
        found = {}
        for stmt in ctx.module.body:
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    if (
                        type(small) is cst.Assign
                        and len(small.targets) == 1
                        and type(small.targets[0].target) is cst.Name
                        and type(small.value) is cst.Call
                    ):
                        found[small.targets[0].target.value] = small.value
        ctx.cuda_path_cache["aliases"] = found
    return found


def _is_skip_body(block: cst.BaseSuite) -> bool:
    """The body of an `if` that skips or leaves: `pytest.skip(...)`, `raise SkipTest`, `return`."""
    statements = block.body if type(block) is cst.IndentedBlock else (block,)
    for stmt in statements:
        smalls = stmt.body if type(stmt) is cst.SimpleStatementLine else ()
        if type(stmt) is cst.SimpleStatementSuite:
            smalls = stmt.body
        for small in smalls:
            if type(small) is cst.Return:
                return True
            if type(small) is cst.Raise and small.exc is not None:
                target = small.exc.func if type(small.exc) is cst.Call else small.exc
                if _SKIP_CALLS.search(_dotted(target)):
                    return True
            if type(small) is cst.Expr and type(small.value) is cst.Call:
                if _SKIP_CALLS.search(_dotted(small.value.func)):
                    return True
    return False


def _skip_if(ctx, stmt: cst.CSTNode, any_polarity: bool = False) -> bool:
    """`if not torch.cuda.is_available(): pytest.skip(...)` (or return / raise SkipTest); with
    `any_polarity`, also a skip *when* CUDA is there (a skip condition all the same)."""
    if not (type(stmt) is cst.If and stmt.orelse is None and _is_skip_body(stmt.body)):
        return False
    test = _code(ctx, stmt.test)
    return _missing_cuda(test) or (any_polarity and bool(_CUDA_WORD.search(test)))


def _skip_condition(ctx, expr: cst.BaseExpression) -> bool:
    """A skip decorator whose condition asks about CUDA, whichever way (`skipif(torch.cuda...)`)."""
    if type(expr) is not cst.Call or not expr.args:
        return False
    last = _dotted(expr.func).rsplit(".", 1)[-1].lower()
    return last in ("skipif", "skip_if", "skipunless", "skip_unless", "xfail") and bool(
        _CUDA_WORD.search(_code(ctx, expr.args[0].value))
    )


def _module_gated(ctx) -> bool:
    found = ctx.cuda_path_cache.get("module")
    if found is None:
        found = False
        for stmt in ctx.module.body:
            if _skip_if(ctx, stmt):
                found = True
            elif type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    if (
                        type(small) is cst.Assign
                        and any(
                            type(t.target) is cst.Name and t.target.value == "pytestmark"
                            for t in small.targets
                        )
                        and gate_expression(ctx, small.value)
                    ):
                        found = True
        ctx.cuda_path_cache["module"] = found
    return found


def classify(ctx, node: cst.CSTNode) -> dict[str, str]:
    """The `cuda_path` facts of a detection at `node` ({} when it runs everywhere)."""
    chain = list(ctx.parents)
    if not chain or chain[-1] is not node:
        chain.append(node)
    facts: dict[str, str] = {}
    in_function = False
    for index in range(len(chain) - 2, -1, -1):
        ancestor, child = chain[index], chain[index + 1]
        if type(ancestor) is cst.Decorator:
            if gate_expression(ctx, ancestor.decorator) or _skip_condition(ctx, ancestor.decorator):
                return {"cuda_path": SKIP}
        elif type(ancestor) in (cst.FunctionDef, cst.ClassDef):
            if child is ancestor.body:
                if any(gate_expression(ctx, d.decorator) for d in ancestor.decorators):
                    return {**facts, "cuda_path": GATED}
                if type(ancestor) is cst.FunctionDef and _early_exit(ctx, ancestor, chain, index):
                    return {**facts, "cuda_path": GATED}
            in_function = True
        elif type(ancestor) is cst.Lambda:
            in_function = True
        elif type(ancestor) in (cst.If, cst.IfExp) and child is ancestor.orelse:
            if "cuda_path" not in facts and _accelerator_test(ctx, ancestor.test):
                facts["cuda_path"] = FALLBACK
            if type(ancestor) is cst.If:
                continue
        elif type(ancestor) is cst.If:
            if child is ancestor.test or child is ancestor.body:
                if _skip_if(ctx, ancestor, any_polarity=True):
                    return {"cuda_path": SKIP}
            if child is ancestor.test:
                if "cuda_guard_of" not in facts and _has_cuda(_code(ctx, ancestor.test)):
                    facts["cuda_guard_of"] = str(id(ancestor))
            elif child is ancestor.body and not in_function and "cuda_path" not in facts:
                if _has_cuda(_code(ctx, ancestor.test)):
                    facts["cuda_path"] = BRANCH
                    facts["cuda_guard"] = str(id(ancestor))
        elif type(ancestor) is cst.Assign and index == 2 and type(chain[0]) is cst.Module:
            # `pytestmark = pytest.mark.skipif(...)`, `requires_cuda = pytest.mark.skipif(...)`
            if child is ancestor.value and gate_expression(ctx, ancestor.value, aliases=False):
                return {"cuda_path": SKIP}
    if _module_gated(ctx):
        facts.setdefault("cuda_path", GATED)
    return facts


def _accelerator_test(ctx, test: cst.BaseExpression) -> bool:
    text = _code(ctx, test)
    return bool(_ACCELERATOR_TEST.search(text)) and not _NOT.match(text)


def _early_exit(ctx, function: cst.FunctionDef, chain: list[cst.CSTNode], index: int) -> bool:
    """An `if not <cuda>: return/skip` statement of the function's body before the node's statement."""
    body = function.body
    if type(body) is not cst.IndentedBlock or index + 2 >= len(chain):
        return False
    current = chain[index + 2]
    for stmt in body.body:
        if stmt is current:
            return False
        if _skip_if(ctx, stmt):
            return True
    return False
