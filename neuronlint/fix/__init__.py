"""`neuronlint fix`: LibCST-located, text-edit codemods for the mechanical part of a migration.

- model.py: Edit (in neuronlint.findings), Plan, safe/unsafe, applying edits.
- source.py: one parsed file (nodes by position, parents, imports, names).
- engine.py: the shared per-file state (imports added once, the device variable, CUDA guards)
  and planning a fix per finding.
- flavours.py: portable / neuron / xla, checked against the frame.
- fixers/: one module per rule family.
- run.py: attach fixes to a scan's findings; apply them round after round; diffs.
"""

from neuronlint.fix.flavours import FLAVOURS, Flavour, FlavourError, flavour_for

__all__ = ["FLAVOURS", "Flavour", "FlavourError", "flavour_for"]
