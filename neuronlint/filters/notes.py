"""Notes are not findings: a construct that the target supports as it is ("keep DDP, TorchNeuron
supports it") needs no change, so it is left out unless `--show-ok` asks for it. The same rules
stay findings where the frame does not support them (NL115 on the XLA backend is a blocker).

The info findings of the finding conventions (pin_memory, cuDNN flags, a plain torch.compile, light
Neuron glue) are findings, not notes: the code names CUDA or ties itself to Neuron.
"""

from __future__ import annotations

from neuronlint.findings import Finding, Severity

# Rules that describe device-generic code: activation checkpointing, DDP/FSDP wrappers,
# torch.compile with a Neuron backend chosen by the device.
NOTE_RULES = frozenset({"NL115", "NL205", "NL909"})


def is_note(finding: Finding) -> bool:
    return finding.rule in NOTE_RULES and finding.status == "supported" and finding.severity is Severity.INFO


def drop_notes(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if not is_note(f)]


def mark_notes(findings: list[Finding]) -> None:
    """With --show-ok the notes stay, marked `extra.note` so a consumer can tell them from findings."""
    for f in findings:
        if is_note(f):
            f.extra["note"] = True
