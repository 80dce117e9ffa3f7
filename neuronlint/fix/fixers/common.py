"""Small building blocks the fixers share: finding the call, rewriting one call, removing a statement."""

from __future__ import annotations

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.model import Edit


def called(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> cst.Call | None:
    """The call whose callee is exactly the finding's span (`torch.cuda.synchronize` in `...()`)."""
    for node in nodes:
        span = fx.source.span(node)
        if (span.line, span.column, span.end_line, span.end_column) != (
            finding.line,
            finding.column,
            finding.end_line,
            finding.end_column,
        ):
            continue
        parent = fx.source.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return parent
    return None


def last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return ""


def args_text(call: cst.Call, fx: FixContext, keywords_to_positional: tuple[str, ...] = ()) -> str | None:
    """The call's arguments as written; `None` when one cannot be carried over."""
    parts = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value in keywords_to_positional:
                parts.append(fx.source.text(arg.value))
                continue
            parts.append(f"{arg.keyword.value}={fx.source.text(arg.value)}")
        else:
            parts.append(fx.source.text(arg.value))
    return ", ".join(parts)


def accelerator_call(call: cst.Call, fx: FixContext, text: str, default: str, torch: str) -> list[Edit]:
    """Replace a call with an accelerator call (`text`), guarded on the portable flavour when nothing
    already checks for the accelerator: as an `if` around a statement, else as a conditional
    expression giving `default` on a machine without one."""
    if not fx.needs_guard(call):
        return [fx.source.replace(call, text)]
    check = f"{torch}.accelerator.is_available()"
    line = fx.source.statement_line(call)
    if line is not None:
        indent = fx.source.indent_of(line)
        inner = indent + fx.source.module.default_indent
        return [fx.source.replace(line.body[0], f"if {check}:\n{inner}{text}")]
    return [fx.source.replace(call, f"({text} if {check} else {default})")]


def remove_statement(node: cst.CSTNode, fx: FixContext) -> list[Edit] | None:
    """Delete the statement line holding `node` (a `pass` when it was a block's only statement)."""
    line = node
    while line is not None and not isinstance(line, cst.SimpleStatementLine):
        line = fx.source.parent(line)
    if line is None or len(line.body) != 1:
        return None
    block = fx.source.parent(line)
    span = fx.source.span(line)
    if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
        return [fx.source.replace(line.body[0], "pass")]
    if isinstance(block, cst.SimpleStatementSuite):
        return None
    end_line = span.end_line
    return [Edit(span.line, 1, end_line + 1, 1, "")]
