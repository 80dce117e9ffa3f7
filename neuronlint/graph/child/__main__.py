"""`python -m neuronlint.graph.child REQUEST.json RESULT_DIR`: the child's entry point.

Starts the keeper (keeper.py: the child's group dies with the parent), caps the address space,
then imports torch and the modules that need it (inside the same
guard, so that a torch that does not fit under the cap is a recorded failure), then traces each
target of the request into RESULT_DIR/result-<i>.json.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import signal
import sys
import time
from pathlib import Path
from typing import Any

from neuronlint.graph.child import keeper
from neuronlint.graph.child.failures import failure, is_memory_error
from neuronlint.graph.child.progress import Progress
from neuronlint.graph.sourcemap import UserCode


def _cap_memory(limit_bytes: int | None) -> None:
    if limit_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


def main(argv: list[str]) -> int:
    """`child REQUEST.json RESULT_DIR`: trace request["targets"][i] into RESULT_DIR/result-<i>.json."""
    request_path, result_dir = Path(argv[0]), Path(argv[1])
    request = json.loads(request_path.read_text(encoding="utf-8"))
    if request.get("parent"):  # started by runner.py: die with it, even when it is SIGKILLed
        keeper.start(request["parent"], request.get("keeper_fd"), request.get("budget"))
    _cap_memory(request.get("memory_limit"))
    faulthandler.enable()  # a crash prints the Python stack: the parent maps it to the user's line
    faulthandler.register(signal.SIGUSR1, all_threads=False)  # the parent asks for it before a timeout kill
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    root = Path(request["root"])
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    progress = Progress(result_dir / "progress.jsonl")
    progress.stage("startup")
    started = time.perf_counter()
    try:
        import torch

        # The modules that import torch at their top, imported only now: after the memory cap.
        from neuronlint.graph.child.strategies import keep_user_frames, run

        with torch.device("meta"):  # first use of the meta device loads its kernels: once per process
            torch.nn.Linear(2, 2)
        keep_user_frames(UserCode(root))
    except BaseException as exc:  # noqa: BLE001 - e.g. torch missing or the memory cap too low for it
        kind = "out of memory" if is_memory_error(exc) else "import error"
        failed = {"ok": False, "failures": [failure("startup", exc, UserCode(root), kind)]}
        for index, _ in enumerate(request["targets"]):
            _write(result_dir / f"result-{request.get('first_index', 0) + index}.json", failed)
        return 0
    startup = round(time.perf_counter() - started, 3)
    for offset, target in enumerate(request["targets"]):
        index = request.get("first_index", 0) + offset
        progress.start(index)
        began, cpu_began = time.perf_counter(), _cpu_seconds()
        result = run(target, root, progress)
        result["wall_seconds"] = round(time.perf_counter() - began, 3)
        result["cpu_seconds"] = round(_cpu_seconds() - cpu_began, 3)
        result["startup_seconds"] = startup
        result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        _write(result_dir / f"result-{index}.json", result)
    return 0


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _write(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temporary, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
