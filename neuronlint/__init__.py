"""neuronlint: a PyTorch-to-Neuron portability linter."""

__version__ = "0.1.0"
