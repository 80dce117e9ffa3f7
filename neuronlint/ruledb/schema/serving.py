"""Schema of rules/serving.toml (`[[serving]]`): serving tools and what Neuron says about each."""

from __future__ import annotations

from neuronlint.ruledb.schema.spec import SOURCE, STATUSES, F, Table

SERVING = Table(
    {
        "name": F(str, required=True, doc="stable key, e.g. 'vllm'"),
        "title": F(str, required=True, doc="how messages and the report name the tool"),
        "status": F(str, required=True, choices=STATUSES, doc="what Neuron documents for the tool"),
        "verdict": F(str, required=True, doc="one sentence: the Neuron verdict, true to the source"),
        "gpu_only": F(bool, doc="the tool itself runs only on NVIDIA GPUs (its own documentation)"),
        "modules": F(list, items=str, doc="Python import prefixes"),
        "packages": F(list, items=str, doc="normalised package names in dependency files"),
        "images": F(list, items=str, doc="container image names (without tag)"),
        "commands": F(list, items=str, doc="launcher commands in scripts, Dockerfiles, notebooks"),
        "providers": F(list, items=str, doc="ONNX Runtime execution provider names"),
        "source": SOURCE,
    }
)
