"""Lock-in scoring: how coupled code is to CUDA (cost of moving to Neuron) and to Neuron (cost of leaving).

Public API (stable; docs/lock-in.md):

    from neuronlint.lockin import score
    result = score(scan.findings, scan.results, scan.db, scan.context)
    result.repository.scores["cuda"].score, .grade, .breakdown
    result.files, result.packages, result.hot_spots["cuda"], result.effort["cuda"].hours

The submodules load lazily: neuronlint.ruledb imports neuronlint.lockin.tables while it is itself
being imported, so this package must not import the rule database at import time.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AreaScore",
    "DirectionScore",
    "Effort",
    "HotSpot",
    "LockinParams",
    "LockinResult",
    "UnitScore",
    "WeightedFinding",
    "load_params",
    "score",
]

_LAZY = {
    "score": "neuronlint.lockin.scoring",
    "AreaScore": "neuronlint.lockin.scoring",
    "DirectionScore": "neuronlint.lockin.scoring",
    "Effort": "neuronlint.lockin.scoring",
    "HotSpot": "neuronlint.lockin.scoring",
    "LockinResult": "neuronlint.lockin.scoring",
    "UnitScore": "neuronlint.lockin.scoring",
    "WeightedFinding": "neuronlint.lockin.scoring",
    "LockinParams": "neuronlint.lockin.params",
    "load_params": "neuronlint.lockin.params",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'neuronlint.lockin' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
