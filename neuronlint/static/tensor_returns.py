"""Functions of a module that return device tensors, learnt as the walk reads their `return`s.

`eval_ppl, eval_loss = evaluation(model, loader)` where `evaluation` ends with
`return torch.exp(loss), loss`: both names hold device tensors, and `float(eval_loss)` or
`print(f"{eval_ppl}")` after the call reads one. A training script often calls a helper defined
further down the file, whose returns the walk has not read yet: the name is then bound as a
*pending* result, and a read of it is kept (FileContext.defer) until the walk has read the whole
module; it is reported then if the helper turned out to return a tensor there.

Only module-level functions and methods of module-level classes count (`helper(...)`,
`self.helper(...)`), as in host_returns.py. A position of the returned value (a tuple's element, or
the whole value) is a tensor when every `return` of a value gives one there that is not a host
value; `return` and `return None` say nothing; returns of different tuple lengths, a generator or a
helper in data-pipeline code (its tensors are built on the host) make nothing a tensor.
"""

from __future__ import annotations

import libcst as cst

Key = tuple[str | None, str]  # (class name or None, function name)
WHOLE = -1  # the position of a value returned as one (not a tuple)


def pending_key(key: Key, position: int) -> str:
    """The FileContext.defer key of reads of a pending result's `position`."""
    return f"returns:{key[0] or ''}.{key[1]}:{position}"


class TensorReturns:
    """Per function of the module: which positions of its returned value are device tensors."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._defined: set[Key] | None = None  # the module's functions and methods, read on first use
        self._bases: dict[str, list[str]] = {}  # module-level class -> the names of its bases
        # function -> one flag per position (a tuple's length, or one for WHOLE); None once its
        # returns disagree in shape or it is a generator
        self._positions: dict[Key, list[bool] | None] = {}
        self._arity: dict[Key, int] = {}  # function -> tuple length of its returns (WHOLE: not a tuple)
        self._finished: set[Key] = set()

    def resolve(self, key: Key) -> Key | None:
        """The function a call of `key` runs, when the module defines it: at its top level, or as a
        method of a class defined there or of one of that class's bases defined there
        (`self.prepare(...)` in a subclass); None for `float(...)` or an imported helper."""
        if self._defined is None:
            self._read_definitions()
        assert self._defined is not None
        cls, name = key
        seen: set[str] = set()
        pending = [cls]
        while pending:
            owner = pending.pop(0)
            if (owner, name) in self._defined:
                return (owner, name)
            if owner is not None and owner not in seen:
                seen.add(owner)
                pending.extend(self._bases.get(owner, ()))
        return None

    def _read_definitions(self) -> None:
        self._defined = set()
        for statement in self._module.body:
            if type(statement) is cst.FunctionDef:
                self._defined.add((None, statement.name.value))
            elif type(statement) is cst.ClassDef and type(statement.body) is cst.IndentedBlock:
                cls = statement.name.value
                self._bases[cls] = [b.value.value for b in statement.bases if type(b.value) is cst.Name]
                self._defined.update(
                    (cls, s.name.value) for s in statement.body.body if type(s) is cst.FunctionDef
                )

    def note_return(self, key: Key, flags: list[bool], arity: int) -> None:
        """A `return` of a value: its tensor flags per position (`arity` WHOLE for a single value)."""
        if key in self._positions and self._positions[key] is None:
            return
        previous = self._positions.get(key)
        if previous is None:
            self._positions[key] = flags
            self._arity[key] = arity
        elif self._arity[key] != arity:
            self._positions[key] = None
        else:
            self._positions[key] = [a and b for a, b in zip(previous, flags, strict=True)]

    def exclude(self, key: Key) -> None:
        """A generator, or a helper of the data pipeline: its results are not device tensors."""
        self._positions[key] = None

    def finish(self, key: Key) -> None:
        """The walk has read the whole function."""
        self._finished.add(key)

    def known(self, key: Key) -> bool:
        return key in self._finished

    def tensor_at(self, key: Key, position: int) -> bool:
        """Whether the function's returned value holds a device tensor at `position` (WHOLE, or a
        tuple element unpacked by the caller)."""
        flags = self._positions.get(key)
        if not flags:
            return False
        arity = self._arity[key]
        if arity == WHOLE:
            return position == WHOLE and flags[0]
        return 0 <= position < arity and flags[position]

    def tensor_keys(self) -> list[str]:
        """The pending keys whose reads are reads of device tensors (after the walk)."""
        keys = []
        for key, flags in self._positions.items():
            if not flags or key not in self._finished:
                continue
            positions = [WHOLE] if self._arity[key] == WHOLE else range(len(flags))
            keys.extend(pending_key(key, p) for p in positions if self.tensor_at(key, p))
        return keys
