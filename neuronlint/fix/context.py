"""What fixers share for one file and flavour: imports added once, the module's device variable,
and whether a line already sits under a CUDA or accelerator check."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.flavours import Flavour
from neuronlint.fix.model import Edit, Plan
from neuronlint.fix.source import ORDER_DEVICE, ORDER_IMPORT, SourceFile, normalise


class NoFix(Exception):
    """Raised by a fixer's helper when the finding cannot be fixed here; the finding gets no fix."""


# A fixer: the finding, the nodes at its span (innermost first), the file's context -> a Plan or None.
Fixer = Callable[[Finding, list[cst.CSTNode], "FixContext"], Plan | None]

_GUARD_TESTS = ("cuda.is_available()", "accelerator.is_available()")
# `device == "cuda"`, `x.device.type == "cuda"`, `"cuda" in device`: true only where CUDA runs.
_CUDA_COMPARISON = re.compile(r'^([\w.]+==["]cuda["]|["]cuda["]in[\w.]+)$')


@dataclass
class FixContext:
    """Per file and flavour: what fixers share, so an import or the device variable is added once."""

    source: SourceFile
    flavour: Flavour
    _device: tuple[str, tuple[Edit, ...]] | None = field(default=None, init=False)

    # ---- imports ---------------------------------------------------------------------------------
    def module(self, dotted: str, alias: str | None = None) -> tuple[str, tuple[Edit, ...]]:
        """An expression for `dotted` (a module), and the import edit when the file lacks one."""
        found = self.source.module_alias(dotted)
        if found is not None:
            return found, ()
        statement = f"import {dotted} as {alias}\n" if alias else f"import {dotted}\n"
        line, column = self.source.import_point()
        return (alias or dotted), (Edit(line, column, line, column, statement, ORDER_IMPORT),)

    def torch(self) -> tuple[str, tuple[Edit, ...]]:
        return self.module("torch")

    # ---- the device ------------------------------------------------------------------------------
    def device_expression(self, torch: str) -> str:
        """The device expression of the flavour: the accelerator, else the CPU."""
        if self.flavour.name == "xla":
            return self.flavour.xla_device(torch)
        return f'{torch}.accelerator.current_accelerator(check_available=True) or {torch}.device("cpu")'

    def device(self, at: cst.CSTNode | None = None) -> tuple[str, tuple[Edit, ...]]:
        """The module-level device variable: one the file has, or one introduced once per module."""
        if self._device is not None and at is None:
            return self._device
        existing = self._existing_device(at)
        if existing is not None:
            return existing, ()
        if self._device is None:
            self._device = self._introduce_device()
        if at is not None and not self.source.in_function(at):
            defined = self._device[1][-1].line
            if self.source.span(at).line < defined:
                raise NoFix("a module-level use above the line where the device variable can be defined")
        return self._device

    def _known_device_values(self) -> set[str]:
        torch = self.source.module_alias("torch") or "torch"
        values = {normalise(self.device_expression(torch))}
        if self.flavour.name != "xla":
            for quote in ('"', "'"):
                c, p = f"{quote}cuda{quote}", f"{quote}cpu{quote}"
                values.add(normalise(f"{torch}.device({c} if {torch}.cuda.is_available() else {p})"))
                values.add(
                    normalise(f"{torch}.device({c}) if {torch}.cuda.is_available() else {torch}.device({p})")
                )
        return values

    def _existing_device(self, at: cst.CSTNode | None) -> str | None:
        known = self._known_device_values()
        for statement in self.source.module.body:
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
                continue
            assign = statement.body[0]
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                continue
            target = assign.targets[0].target
            if not isinstance(target, cst.Name) or self.source.bound_names.get(target.value, 0) != 1:
                continue
            if normalise(self.source.text(assign.value)) not in known:
                continue
            if at is not None and not self.source.in_function(at):
                if self.source.span(statement).line >= self.source.span(at).line:
                    continue  # module-level use above the definition
            return target.value
        return None

    def _introduce_device(self) -> tuple[str, tuple[Edit, ...]]:
        edits: list[Edit] = []
        if self.flavour.name == "xla":
            base, more = self.module(*self.flavour.xla_module())
        else:
            base, more = self.torch()
        edits.extend(more)
        name = self.source.free_name()
        line, column = self.source.import_point()
        binding = self.source.module_statement_binding(base.split(".")[0])
        if binding is not None and (self.source.span(binding).line, 1) >= (line, column):
            line, column = self.source.after_statement(binding)  # the import comes after the leading block
        value = self.flavour.xla_device(base) if self.flavour.name == "xla" else self.device_expression(base)
        edits.append(Edit(line, column, line, column, f"{name} = {value}\n", ORDER_DEVICE))
        return name, tuple(edits)

    # ---- guards ----------------------------------------------------------------------------------
    def guarded(self, node: cst.CSTNode) -> bool:
        """Inside the body of `if torch.cuda.is_available():` / `if torch.accelerator.is_available():`
        (or the true branch of such a conditional expression), where the accelerator is known to exist."""
        child = node
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is ancestor.body:
                if self.availability_check(ancestor.test) or _CUDA_COMPARISON.match(
                    normalise(self.source.text(ancestor.test))
                ):
                    return True
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return False
            child = ancestor
        return False

    def availability_check(self, test: cst.BaseExpression) -> bool:
        code = normalise(self.source.text(test))
        return any(code.endswith(g) and code.count("(") == 1 for g in _GUARD_TESTS)

    def needs_guard(self, node: cst.CSTNode) -> bool:
        """Whether an accelerator-only call needs `if torch.accelerator.is_available()` around it:
        on the portable flavour, unless it already sits under a CUDA or accelerator check."""
        return self.flavour.name == "portable" and not self.guarded(node)
