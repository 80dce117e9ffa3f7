"""One entry point per file for the pipeline: the file's kind -> its scanner -> a FileResult."""

from __future__ import annotations

from typing import Any

from neuronlint.filekinds import kind_from_shebang, kind_of
from neuronlint.static.engine import FileResult, _tool_detection, analyze_python

# The scanners are imported for the kinds a scan meets (a one-file scan of a .py file needs none).
_BUILD_INPUTS = {"requirements": "analyze_requirements", "pyproject": "analyze_pyproject"}
_TEXT_SCANNERS = {
    "dockerfile": ("dockerfile", "scan_dockerfile"),
    "shell": ("shell", "scan_shell"),
    "makefile": ("shell", "scan_makefile"),
    "requirements": ("dependencies", "scan_requirements"),
    "pyproject": ("dependencies", "scan_pyproject"),
    "setupcfg": ("dependencies", "scan_setup_cfg"),
    "conda": ("dependencies", "scan_conda"),
}


def _text_scanner(kind: str) -> Any:
    from neuronlint.filetypes import dependencies, dockerfile, shell

    module, name = _TEXT_SCANNERS[kind]
    return getattr({"dockerfile": dockerfile, "shell": shell, "dependencies": dependencies}[module], name)


# Bytes without which a config file cannot yield a detection: most YAML/JSON is never tokenised.
_CONFIG_TRIGGERS = (
    b"cuda",
    b"gpu",
    b"nccl",
    b"NCCL",
    b"CUDA_VISIBLE",
    b"distributed_type",
    b"deepspeed",
    b"zero_optimization",
    b"fp16",
    b"16",
    b"half",
    b"apex",
    b"nvidia",
    b"nvcr.io",
    b"adamw_torch_fused",
    b"image",
)


def file_kind(module_path: str, data: bytes, named: bool) -> str | None:
    """The kind of a file; a file named on the command line may also be told by its shebang."""
    kind = kind_of(module_path)
    if kind is None and named:
        kind = kind_from_shebang(data[:200])
    return kind


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def analyze_file(
    kind: str, module_path: str, data: bytes, static_data: Any, engine: Any = None
) -> FileResult:
    """Analyse a file of a known kind other than python/cuda (`engine`: the Python checkers a
    notebook's cells run through, default all). Never raises."""
    result = FileResult(path=module_path, lines=_lines(data))
    if b"\0" in data:
        result.detections.append(
            _tool_detection("NL001", 1, "the file contains NUL bytes (binary data, not text)")
        )
        return result
    text = data.decode("utf-8", "replace")
    if kind == "notebook":
        return analyze_notebook(module_path, text, static_data, result, engine)
    result.parsed = True
    if kind in ("yaml", "json", "toml"):
        if not any(word in data for word in _CONFIG_TRIGGERS):
            return result
        from neuronlint.filetypes import configs

        result.detections = configs.scan_config(text, kind, static_data)
    elif kind in _BUILD_INPUTS:
        from neuronlint.static import build_inputs

        # NL404 in requirements files and pyproject.toml (with extras, markers and declaring lines)
        # is build_inputs'; the CUDA builds, indexes, runtimes and serving tools are added here.
        result = getattr(build_inputs, _BUILD_INPUTS[kind])(module_path, data, static_data)
        theirs = {(d["rule"], d["line"]) for d in result.detections}
        result.detections += [  # Poetry and dependency groups are read only here
            d
            for d in _text_scanner(kind)(text, static_data)
            if d["rule"] != "NL001" and (d["rule"] != "NL404" or (d["rule"], d["line"]) not in theirs)
        ]
    else:
        result.detections = _text_scanner(kind)(text, static_data)
    if kind != "json":
        from neuronlint.filetypes.common import hash_suppressions

        result.suppressions = hash_suppressions(text)
    return result


def analyze_notebook(
    module_path: str, text: str, static_data: Any, result: FileResult, engine: Any = None
) -> FileResult:
    from neuronlint.filetypes import shell
    from neuronlint.filetypes.notebook import NotebookError, parse_notebook

    try:
        source, mapping = parse_notebook(text)
    except NotebookError as exc:
        result.detections.append(_tool_detection("NL001", exc.line, str(exc)))
        return result
    except (RecursionError, MemoryError):
        result.detections.append(_tool_detection("NL001", 1, "the notebook nests too deeply to read"))
        return result
    python = analyze_python(
        module_path.removesuffix(".ipynb") + ".py", source.encode("utf-8"), static_data, engine
    )
    result.parsed = True
    detections = list(python.detections)
    for line, command in mapping.shell_lines:
        command = command.lstrip()
        offset = len(command) - len(command.lstrip("!%"))
        for det in shell.scan_command(" " * offset + command[offset:], line, static_data):
            detections.append(det)
    for line, cell, error in mapping.bad_cells:
        detections.append(_tool_detection("NL001", line, f"cell {cell} is not valid Python: {error}"))
    for det in detections:
        _relocate(det, mapping)
    result.detections = detections
    result.suppressions = []
    for entry in python.suppressions:
        entry = dict(entry)
        entry["line"] = mapping.locate(entry["line"])[2]
        entry["applies_to"] = mapping.locate(entry["applies_to"])[2]
        result.suppressions.append(entry)
    result.imports = python.imports
    result.defines_kernels = python.defines_kernels
    result.import_sites = []  # a notebook is not importable: it links to nothing
    return result


def _relocate(det: dict[str, Any], mapping: Any) -> None:
    """Module line/column -> notebook JSON line/column, keeping the cell position for text output."""
    cell, cell_line, json_line, json_column = mapping.locate(det["line"])
    end_cell, _, end_json_line, end_json_column = mapping.locate(det["end_line"])
    det["cell"] = {"cell": cell, "line": cell_line, "column": det["column"]}
    det["line"] = json_line
    det["column"] = json_column + det["column"] - 1
    if end_cell == cell and end_json_line == json_line:
        det["end_line"], det["end_column"] = json_line, json_column + det["end_column"] - 1
    else:
        det["end_line"], det["end_column"] = end_json_line, end_json_column + det["end_column"] - 1
