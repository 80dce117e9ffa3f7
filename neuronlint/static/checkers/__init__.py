"""The static checkers, in the order the engine runs their handlers on each node.

`Bindings` comes first on purpose: its handlers push the scopes, bind imported names and count
loop depth, and the other checkers' handlers for the same node (a `ClassDef`, a `While`, an
`Assign`) read that state. The rest keep the order they always ran in, so that when two checkers
report the same rule on the same node the first one's facts win, as before.
"""

from __future__ import annotations

from neuronlint.static.bindings import Bindings
from neuronlint.static.checkers.api_names import ApiNames
from neuronlint.static.checkers.compile_backend import CompileBackend
from neuronlint.static.checkers.cuda_api import CudaApi
from neuronlint.static.checkers.cuda_only_lib import CudaOnlyLib
from neuronlint.static.checkers.custom_kernel import CustomKernel
from neuronlint.static.checkers.dist_backend import DistBackend
from neuronlint.static.checkers.dtype import Dtype
from neuronlint.static.checkers.dynamic_shape import DynamicShape
from neuronlint.static.checkers.frameworks import Frameworks
from neuronlint.static.checkers.host_sync import HostSync
from neuronlint.static.checkers.neuron_lockin import NeuronLockin
from neuronlint.static.checkers.serving import Serving
from neuronlint.static.registry import Checker

CHECKERS: tuple[type[Checker], ...] = (
    Bindings,
    HostSync,
    ApiNames,
    CompileBackend,
    CustomKernel,
    CudaApi,
    CudaOnlyLib,
    DistBackend,
    Dtype,
    DynamicShape,
    NeuronLockin,
    Frameworks,  # after the others: NL101 on `accelerator="cuda"` keeps its own facts
    Serving,
)
