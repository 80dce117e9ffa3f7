"""The Neuron packages, by module name: which rule an import or use of each one falls under.

Name resolution (bindings: Neuron imports below the functions that use them) and the neuron-lockin
checker both ask; it lives below both so that neither imports the other.
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
    # torch-neuron, the Inf1 (NeuronCore-v1) package (`torch_neuron.trace`), archived: "torch-neuron
    # (Inf1) is no longer officially supported by the AWS Neuron SDK"
    # (rules/catalogue/neuron-lockin.toml, NL903 sources)
    ("torch_neuron", "NL903", "torch-neuron (Inf1, archived)"),
)

# The first components of those packages: a qualified name outside them is never a Neuron use.
NEURON_ROOTS = frozenset(prefix.partition(".")[0] for prefix, _, _ in NEURON_MODULES)


def neuron_module(module: str) -> tuple[str, str] | None:
    """(rule, what) of the Neuron package a dotted module name lies in, or None."""
    for prefix, rule, what in NEURON_MODULES:
        if module == prefix or module.startswith(prefix + "."):
            return rule, what
    return None
