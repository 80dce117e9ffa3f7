"""The Neuron packages, by module name: which rule an import or use of each one falls under.

Name resolution (bindings: Neuron imports below the functions that use them), the neuron-lockin
checker and the first-party filter (a Neuron package's own modules) all ask; it lives below them
so that none imports another.
"""

from __future__ import annotations

# Import prefix -> (rule, what it is). Longest prefix first.
NEURON_MODULES: tuple[tuple[str, str, str], ...] = (
    ("neuronxcc.nki", "NL905", "NKI (legacy neuronxcc.nki namespace)"),
    ("torch_neuronx", "NL903", "torch-neuronx"),
    ("neuronx_distributed_inference", "NL904", "NxD Inference"),
    ("neuronx_distributed_training", "NL904", "NxD Training"),
    ("neuronx_distributed", "NL904", "NeuronX Distributed"),
    ("optimum.neuron", "NL906", "Optimum Neuron"),
    ("libneuronxla", "NL901", "libneuronxla"),
    ("torch_xla", "NL901", "PyTorch/XLA"),
    ("neuronxcc", "NL903", "Neuron compiler (neuronxcc)"),
    ("nkilib", "NL905", "NKI Library"),
    ("nki", "NL905", "NKI"),
    ("transformers_neuronx", "NL904", "transformers-neuronx (end of support)"),
    # NeuronPerf, Neuron's benchmarking library (`neuronperf.torch.benchmark(model_file, inputs)`
    # runs a Neuron-compiled model), archived (rules/catalogue/neuron-lockin.toml, NL903 sources)
    ("neuronperf", "NL903", "NeuronPerf, Neuron's archived benchmarking library"),
    # torch-neuron, the Inf1 (NeuronCore-v1) package (`torch_neuron.trace`), archived: "torch-neuron
    # (Inf1) is no longer officially supported by the AWS Neuron SDK"
    # (rules/catalogue/neuron-lockin.toml, NL903 sources)
    ("torch_neuron", "NL903", "torch-neuron (Inf1, archived)"),
)

# The first components of those packages: a qualified name outside them is never a Neuron use.
NEURON_ROOTS = frozenset(prefix.partition(".")[0] for prefix, _, _ in NEURON_MODULES)

# NKI's device language (`nl.load`, `nisa.dma_copy`): its calls run only while an NKI kernel is
# traced, so a function calling them is kernel code and a module importing them writes kernels.
NKI_DEVICE_LANGUAGE = ("nki.language", "nki.isa", "neuronxcc.nki.language", "neuronxcc.nki.isa")


def neuron_module(module: str) -> tuple[str, str] | None:
    """(rule, what) of the Neuron package a dotted module name lies in, or None."""
    found = _entry(module)
    return None if found is None else (found[1], found[2])


def neuron_package(module: str) -> str | None:
    """The Neuron package a dotted module name lies in (`optimum.neuron` for
    `optimum.neuron.trainers.metrics`), or None."""
    found = _entry(module)
    return None if found is None else found[0]


def _entry(module: str) -> tuple[str, str, str] | None:
    for entry in NEURON_MODULES:
        prefix = entry[0]
        if module == prefix or module.startswith(prefix + "."):
            return entry
    return None
