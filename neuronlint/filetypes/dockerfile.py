"""Dockerfiles and Containerfiles.

Rules: NL030 CUDA base images (`nvidia/cuda`, NGC `nvcr.io/nvidia/*`, `pytorch/pytorch:*cuda*`) in
`FROM` lines and in the `ARG`/`ENV` defaults that `FROM ${...}` uses, NL032 NVIDIA container
runtime variables (`NVIDIA_VISIBLE_DEVICES`, `NVIDIA_DRIVER_CAPABILITIES`, `NVIDIA_REQUIRE_CUDA`),
NL080 serving images (rules/serving.toml `images`), and every shell rule for `RUN`/`ENV` lines.
"""

from __future__ import annotations

import re
from typing import Any

from neuronlint.filetypes import shell
from neuronlint.filetypes.common import dedupe, detection
from neuronlint.filetypes.images import image_detections

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\b")
_NVIDIA_RUNTIME_VAR = re.compile(
    r"\bNVIDIA_(?:VISIBLE_DEVICES|DRIVER_CAPABILITIES|REQUIRE_CUDA|DISABLE_REQUIRE)\b"
)


# Instructions whose text is no command: metadata and file copies.
_NOT_COMMANDS = frozenset(
    {"LABEL", "MAINTAINER", "EXPOSE", "WORKDIR", "USER", "COPY", "VOLUME", "STOPSIGNAL"}
)


def scan_dockerfile(text: str, data: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    instruction = ""
    for number, raw, context in shell.logical_lines(text.splitlines(), comments_continue=True):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue  # comments (and parser directives) never continue an instruction
        match = _INSTRUCTION.match(raw)
        if not context and match:
            instruction = match.group(1).upper()
        if instruction == "FROM" and not context and match:
            out += _from_line(raw, match.end(), number, data)
            continue
        if instruction in ("ARG", "ENV"):  # LABEL values are metadata, not images the build uses
            for value in re.finditer(r"=\s*(\"[^\"]*\"|'[^']*'|\S+)", raw):
                image = value.group(1).strip("'\"")
                if "/" in image or ":" in image:
                    out += image_detections(
                        image, number, value.start(1) + 1 + (value.group(1) != image), raw, data
                    )
        for var in _NVIDIA_RUNTIME_VAR.finditer(raw):
            out.append(detection("NL032", number, var.start() + 1, var.end() + 1, raw, variable=var.group(0)))
        if instruction in _NOT_COMMANDS:
            continue
        body = raw
        if not context and match:  # `RUN apt-get ...`: the instruction word is not part of the command
            body = " " * match.end() + raw[match.end() :]
        out += shell.scan_command(body, number, data, context)
    return dedupe(out)


def _from_line(raw: str, start: int, number: int, data: Any) -> list[dict[str, Any]]:
    for token in re.finditer(r"\S+", raw[start:]):
        word = token.group(0)
        if word.startswith("--"):
            continue  # --platform=...
        column = start + token.start() + 1
        return image_detections(word, number, column, raw, data)
    return []
