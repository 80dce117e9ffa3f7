"""Lock-in scoring: how coupled code is to CUDA (cost of moving to Neuron) and to Neuron (cost of leaving).

Public API (stable; docs/lock-in.md):

    from neuronlint.lockin import score
    result = score(scan.findings, scan.results, scan.db, scan.context)
    result.repository.scores["cuda"].score, .grade, .breakdown
    result.files, result.packages, result.hot_spots["cuda"], result.effort["cuda"].hours
"""

from __future__ import annotations

from neuronlint.lockin.params import LockinParams, load_params
from neuronlint.lockin.results import (
    AreaScore,
    DirectionScore,
    Effort,
    HotSpot,
    LockinResult,
    UnitScore,
    WeightedFinding,
)
from neuronlint.lockin.scoring import score

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
