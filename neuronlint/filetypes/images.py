"""Container image references: CUDA images (NL030) and serving images (NL080), wherever they appear
(Dockerfile `FROM`/`ARG`, compose and Kubernetes `image:`, launch scripts)."""

from __future__ import annotations

import re
from typing import Any

from neuronlint.filetypes import dependencies
from neuronlint.filetypes.common import detection

_IMAGE = re.compile(
    r"(?<![\w./-])((?:[\w.-]+(?::\d+)?/)?[\w.-]+(?:/[\w.-]+)*(?::[\w.${}-]+)?(?:@sha256:[0-9a-f]+)?)"
)
_CUDA_IMAGES = (
    (re.compile(r"^(?:docker\.io/)?nvidia/cuda(?::|$)"), "NVIDIA CUDA base image"),
    (re.compile(r"^nvcr\.io/nvidia/pytorch(?::|$)"), "NGC PyTorch image"),
    (re.compile(r"^nvcr\.io/nvidia/"), "NGC image"),
    (re.compile(r"^(?:docker\.io/)?pytorch/pytorch:\S*cuda"), "PyTorch CUDA image"),
    (re.compile(r"^(?:docker\.io/)?nvidia/"), "NVIDIA image"),
    (re.compile(r":(?:[\w.-]*[_.-])?(?:cu\d{2,3}|cuda[\d.]*)(?:[_.-]|$)"), "CUDA-tagged image"),
)


def cuda_image_kind(image: str) -> str | None:
    for pattern, kind in _CUDA_IMAGES:
        if pattern.search(image):
            return kind
    return None


def serving_image(image: str, data: Any) -> dict[str, Any] | None:
    for entry in getattr(data, "serving", ()) or ():
        for prefix in entry.get("images", ()):
            if image == prefix or image.startswith((prefix + ":", prefix + "@")):
                return entry
    return None


def image_detections(image: str, line: int, column: int, raw: str, data: Any) -> list[dict[str, Any]]:
    image = image.strip("'\"")
    entry = serving_image(image, data)
    if entry is not None:
        det = dependencies._serving_det(entry, line, column, image, use=f"image `{image}`")
        det["snippet"] = raw.strip()[:200]
        return [det]
    kind = cuda_image_kind(image)
    if kind is not None:
        return [detection("NL030", line, column, column + len(image), raw, image=image, kind=kind)]
    return []
