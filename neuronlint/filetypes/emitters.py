"""The rules the file-type scanners are the home of, with the facts each detection carries.

Declared like a static checker's `emits` (neuronlint.static.registry.Emitter), so that the rule
catalogue and the code can be checked against each other: NL001 (the notebook/TOML parse errors),
NL404 (dependencies, home: build inputs) and NL080 (serving, home: the Serving checker) are rules
of other emitters that these scanners also produce.
"""

from __future__ import annotations

from neuronlint.static.registry import Emitter

_CONFIG = ("key", "value")
_SERVING = ("tool", "serving", "use", "neuron_status", "verdict", "gpu_only")


class FileTypes(Emitter):
    """Notebooks, Dockerfiles, shell/Makefiles, manifests, dependency files and configs."""

    emits = {
        "NL004": ("detail",),
        "NL030": ("image", "kind"),
        "NL031": ("flag",),
        "NL032": ("variable",),
        "NL033": ("package",),
        "NL040": ("variable",),
        "NL041": ("variable",),
        "NL042": (),
        "NL043": ("value",),
        "NL044": ("resource",),
        "NL045": ("request",),
        "NL050": ("package", "build"),
        "NL051": ("url",),
        "NL052": ("package",),
        "NL060": _CONFIG,
        "NL061": _CONFIG,
        "NL062": _CONFIG,
        "NL063": (*_CONFIG, "what"),
        "NL064": _CONFIG,
        "NL065": (*_CONFIG, "optimizer"),
    }
    also_emits = {
        "NL001": ("detail",),
        "NL404": (
            "package",
            "library",
            "support",
            "runs_on",
            "neuron_path",
            "alternative",
            "alternative_no_nki",
        ),
        "NL080": _SERVING,
    }
