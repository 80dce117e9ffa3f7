"""What a checker is: a class that declares the rules it emits, the facts each needs, and its triggers.

A checker's handlers are methods marked `@on(NodeType)` (or `@on(NodeType, leave=True)` to run
after the node's children). The engine (neuronlint.static.engine.Engine) takes an explicit,
ordered list of checker classes (neuronlint.static.checkers.CHECKERS) and builds its dispatch
tables and prefilter from the ones that emit a selected rule. Nothing registers itself on import.

Declarations are checked by tests/test_catalogue.py against the rule catalogue: every rule has
one home emitter, every `{placeholder}` of a message and every `when.facts` key of a verdict is a
declared fact of its emitter, and every firing case of a rule contains a trigger word of its checker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

_MARK = "_neuronlint_on"


def on(*types: type, leave: bool = False) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Mark a checker method as the handler of LibCST node types (on entering, or on leaving the node)."""

    def mark(fn: Callable[..., None]) -> Callable[..., None]:
        marks = getattr(fn, _MARK, ())
        setattr(fn, _MARK, (*marks, (types, leave)))
        return fn

    return mark


class Emitter:
    """Anything that produces detections: it declares the rules it is the home of, with their facts.

    `emits` maps each rule ID to the fact names its detections carry (the fields a message, an
    `instead`/`replacement` text or a verdict's `when.facts` may use). `also_emits` lists rules whose
    home is another emitter but which this one adds detections of (cross-file linking adds NL303
    sites to the custom-kernel checker's own); every rule has exactly one home.
    """

    emits: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    also_emits: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    @classmethod
    def declared(cls, tables: Mapping[str, Any] | None = None) -> dict[str, tuple[str, ...]]:
        """Every rule this emitter may report, with its facts (`tables`: the database's data tables)."""
        out = dict(cls.also_emits)
        out.update(cls.emits)
        return out


class Checker(Emitter):
    """One concern of the static walk. Subclasses set `emits`, `triggers` and mark handlers with `@on`.

    `triggers`: substrings without which the checker cannot fire; a file containing none of the
    selected checkers' triggers is not parsed at all. `feeds`: rules of a later pass (cross-file
    linking) that read what this checker records on the FileContext, so it runs whenever one of
    them is selected. `import_findings`: emitted rules whose detection is an import statement
    itself (cross-file linking adds no second finding on such a line). A checker that emits
    nothing (name resolution) always runs.
    """

    triggers: ClassVar[tuple[str, ...]] = ()
    feeds: ClassVar[tuple[str, ...]] = ()
    import_findings: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def handlers(cls) -> Iterator[tuple[str, tuple[type, ...], bool]]:
        """(method name, node types, on leave) for every `@on` method, in definition order."""
        methods: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            methods.update(vars(klass))  # an override keeps the position of the method it replaces
        for name, value in methods.items():
            for types, leave in getattr(value, _MARK, ()):
                yield name, types, leave

    @classmethod
    def trigger_words(cls, data: Any = None) -> tuple[str, ...]:
        """`triggers`, plus words a table-driven checker derives from the lookup tables (`data`)."""
        return cls.triggers

    @classmethod
    def rules(cls, tables: Mapping[str, Any] | None = None) -> frozenset[str]:
        """The rules whose selection makes this checker run."""
        return frozenset(cls.declared(tables)) | frozenset(cls.feeds)
