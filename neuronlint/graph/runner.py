"""Run the tracing child (neuronlint/graph/child/) with a timeout and a memory cap; never let it take us down.

Tracing imports and runs user code. The child caps its own address space with
resource.setrlimit(RLIMIT_AS) before importing anything heavy; this side enforces the wall-clock
limit by killing the child's whole process group. Whatever happens - exception, crash, hang,
allocation failure - the caller gets a ChildOutcome with the reason and the stage it happened in.

Containment (`_Contained`): the child runs in its own process group and session, and this
process is a child subreaper (PR_SET_CHILD_SUBREAPER), so anything the child starts - in its
group, in a new session, forked - stays a descendant of ours. When a batch ends, however it ends
(result, crash, timeout, Ctrl-C, SIGTERM), the group and every remaining descendant are killed.
When this process is SIGKILLed and runs nothing, the child tears itself down (child/keeper.py: a
keeper process sees the end of a pipe only we hold open, a thread sees its parent pid change), and
the keeper also ends the batch after its whole time budget whatever happens here. The timeout runs on this side's
clock: the child's progress lines only say which target it is on, and a target only counts as
started when its number grows. The child's output is captured to a file capped at
`OUTPUT_CAP` bytes; a child that writes more is stopped.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuronlint.graph.child.keeper import descendants as _descendants

DEFAULT_TIMEOUT = 300.0  # seconds
DEFAULT_MEMORY_LIMIT = 6 * 1024**3  # bytes of address space; torch maps 0.5 (CPU build) to 3 GiB (CUDA)
OUTPUT_CAP = 64 * 1024**2  # bytes of stdout + stderr a traced model may write
KEEPER_MARGIN = 60.0  # seconds the child's own deadline allows beyond ours
_PR_SET_CHILD_SUBREAPER = 36

STAGE_TEXT = {
    "startup": "starting (importing torch)",
    "import": "importing the entrypoint",
    "build": "building the model",
    "export": "running torch.export",
    "symbolic_trace": "running torch.fx.symbolic_trace",
    "decompose": "decomposing to core ATen",
    "partial": "running forward on fake tensors",
    "collect": "collecting ops",
}


@dataclass
class ChildOutcome:
    status: str  # "ok" (result written), "timeout", "crashed", "memory"
    result: dict[str, Any] | None
    reason: str = ""  # for anything but "ok"
    stage: str | None = None  # last stage the child reported
    stderr_tail: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    frame: dict[str, Any] | None = None  # innermost user frame of a crash or hang (from faulthandler)


def parse_memory(text: str) -> int:
    """'4GiB', '512MiB', '2G', '1500M' or a byte count -> bytes. Raises ValueError."""
    units = {
        "": 1,
        "K": 1024,
        "KB": 1024,
        "KIB": 1024,
        "M": 1024**2,
        "MB": 1024**2,
        "MIB": 1024**2,
        "G": 1024**3,
        "GB": 1024**3,
        "GIB": 1024**3,
    }
    raw = text.strip().upper().replace(" ", "")
    number = raw.rstrip("KMGIB")
    unit = raw[len(number) :]
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"memory limit {text!r}: expected a size such as 4GiB or 512MiB") from None
    if unit not in units or value <= 0:
        raise ValueError(f"memory limit {text!r}: expected a size such as 4GiB or 512MiB")
    return int(value * units[unit])


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent.parent)


def run_children(
    targets: list[dict[str, Any]],
    root: Path,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> list[ChildOutcome]:
    """Trace each target ({entrypoint, inputs, kwargs}) and return one outcome per target, in order.

    Targets share a child process while it lives; a target that crashes, hangs past `timeout`
    seconds or runs out of memory gets that outcome, and the targets after it continue in a fresh
    child. Start-up (importing torch) has its own `timeout` budget.
    """
    outcomes: list[ChildOutcome | None] = [None] * len(targets)
    next_index = 0
    while next_index < len(targets):
        next_index = _run_batch(targets, next_index, root, timeout, memory_limit, outcomes)
    return [o for o in outcomes if o is not None]


def _run_batch(
    targets: list[dict[str, Any]],
    first: int,
    root: Path,
    timeout: float,
    memory_limit: int | None,
    outcomes: list[ChildOutcome | None],
) -> int:
    """Run targets[first:] in one child; fill `outcomes`; return the index to continue from."""
    with tempfile.TemporaryDirectory(prefix="neuronlint-trace-") as workdir:
        work = Path(workdir)
        request_path, stderr_path = work / "request.json", work / "stderr.txt"
        progress_path = work / "progress.jsonl"
        keeper_read, keeper_write = os.pipe()  # only we hold the write end: its end means we died
        request = {
            "root": str(root),
            "memory_limit": memory_limit,
            "first_index": first,
            "targets": targets[first:],
            "parent": os.getpid(),
            "keeper_fd": keeper_read,
            # start-up and each target have `timeout` each (see the loop below), plus a margin
            "budget": timeout * (len(targets) - first + 1) + KEEPER_MARGIN,
        }
        request_path.write_text(json.dumps(request), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_package_root(), env.get("PYTHONPATH", "")) if p)
        env.setdefault("OMP_NUM_THREADS", "1")  # tracing does no math; fewer threads, less memory
        env["PYTHONFAULTHANDLER"] = "1"  # a crash leaves a Python stack in stderr
        started = time.time()
        remaining = len(targets) - first
        with open(stderr_path, "wb") as stderr, _Contained(keeper_write) as contained:
            try:
                process = subprocess.Popen(
                    [sys.executable, "-m", "neuronlint.graph.child", str(request_path), str(work)],
                    stdin=subprocess.DEVNULL,
                    stdout=stderr,
                    stderr=stderr,
                    cwd=str(root),
                    env=env,
                    start_new_session=True,  # its own process group: a timeout kills all it started
                    pass_fds=(keeper_read,),
                )
            finally:
                os.close(keeper_read)
            contained.process = process
            timed_out = False
            overflow = False
            seen_target, seen_at = -1, started  # this side's clock, never the child's
            while True:
                try:
                    returncode = process.wait(timeout=0.1)
                    break
                except subprocess.TimeoutExpired:
                    current, _, _ = _progress(progress_path)
                    now = time.time()
                    # A target's clock restarts only when the target number grows and names a real
                    # target, so the whole batch is bounded by (targets + start-up) x timeout.
                    if current is not None and seen_target < current < first + remaining:
                        seen_target, seen_at = current, now
                    if now - seen_at > timeout:
                        _dump_stack(process)
                        contained.kill()
                        returncode = process.wait()
                        timed_out = True
                        break
                    if _size(stderr_path) > OUTPUT_CAP:
                        contained.kill()
                        returncode = process.wait()
                        overflow = True
                        break
        current, stage, since = _progress(progress_path)
        done = first
        for index in range(first, len(targets)):
            result_path = work / f"result-{index}.json"
            if not result_path.is_file():
                break
            try:
                result = json.loads(result_path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                outcomes[index] = ChildOutcome("crashed", None, f"unreadable result ({exc})", None, [], 0.0)
            else:
                outcomes[index] = ChildOutcome("ok", result, "", None, [], result.get("wall_seconds", 0.0))
            done = index + 1
        if done == len(targets):
            return done
        # The child stopped before finishing target `done` (it may never have started it).
        failed = current if current is not None and current >= done else done
        lines = _tail(stderr_path, 400)
        wall = round(time.time() - (since if current == failed and since else started), 3)
        if overflow:
            outcome = ChildOutcome(
                "crashed",
                None,
                f"the tracing process wrote more than {OUTPUT_CAP // 1024**2} MiB of output and was stopped",
                stage if current == failed else "startup",
                lines[-30:],
                wall,
            )
            outcomes[failed] = outcome
            return failed + 1
        outcome = _failure_outcome(
            returncode,
            timed_out,
            timeout,
            memory_limit,
            stage if current == failed else "startup",
            lines[-30:],
            wall,
        )
        outcome.frame = _dumped_user_frame(lines, root)
        outcomes[failed] = outcome
        return failed + 1


def _failure_outcome(
    returncode: int,
    timed_out: bool,
    timeout: float,
    memory_limit: int | None,
    stage: str | None,
    tail: list[str],
    wall: float,
) -> ChildOutcome:
    where = f" while {STAGE_TEXT.get(stage, stage)}" if stage and stage != "start" else ""
    if timed_out:
        return ChildOutcome("timeout", None, f"timed out after {timeout:g} s{where}", stage, tail, wall)
    if any(m in line for line in tail for m in ("MemoryError", "bad_alloc", "can't allocate memory")):
        limit = f" (memory cap {memory_limit / 1024**3:.1f} GiB)" if memory_limit else ""
        return ChildOutcome("memory", None, f"ran out of memory{where}{limit}", stage, tail, wall)
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        reason = f"the tracing process was killed by {name}{where}"
    else:
        reason = f"the tracing process exited with status {returncode}{where}"
    if returncode > 0:  # a Python-level exit: its last line says why; a signal's dump does not
        last = next((line.strip() for line in reversed(tail) if line.strip()), "")
        if last:
            reason += f": {last[:200]}"
    return ChildOutcome("crashed", None, reason, stage, tail, wall)


def _dump_stack(process: subprocess.Popen) -> None:
    """Ask a hung child for its Python stack (faulthandler on SIGUSR1) before killing it."""
    try:
        process.send_signal(signal.SIGUSR1)
        process.wait(timeout=1.0)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass


_DUMP_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<function>.+)$')


def _dumped_user_frame(lines: list[str], root: Path) -> dict[str, Any] | None:
    """The innermost user frame of the last faulthandler dump in stderr (most recent call first)."""
    from neuronlint.graph.sourcemap import UserCode

    user = UserCode(root)
    start = max((i for i, line in enumerate(lines) if "most recent call first" in line), default=None)
    if start is None:
        return None
    for line in lines[start + 1 :]:
        match = _DUMP_FRAME.match(line)
        if not match:
            if line.strip() and not line.startswith(" "):
                break  # end of this thread's frames
            continue
        if match["path"] in user:
            return {"path": match["path"], "line": int(match["line"]), "function": match["function"].strip()}
    return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _libc():
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


class _Contained:
    """Kill the tracing child's group and every process it left behind, on any exit from the block."""

    def __init__(self, keeper_write: int | None = None) -> None:
        self.keeper_write = keeper_write  # closed last: the child's keeper tears down on its end
        self.process: subprocess.Popen | None = None
        self._before: set[int] = set()
        self._previous_term: Any = None
        self._orphans: set[int] = set()  # killed descendants that may have been reparented to us
        self._subreaper = False

    def __enter__(self) -> _Contained:
        if sys.platform.startswith("linux"):
            try:
                libc = _libc()
                if libc is not None:
                    self._subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except OSError:
                pass
        self._before = set(_descendants(os.getpid()))
        try:  # SIGTERM runs the teardown too (the default action would skip it)
            self._previous_term = signal.signal(signal.SIGTERM, _terminate)
        except ValueError:  # not the main thread
            self._previous_term = None
        return self

    def kill(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in set(_descendants(os.getpid())) - self._before:
            if pid == self.process.pid:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            self._orphans.add(pid)
        try:
            self.process.kill()
        except ProcessLookupError:
            pass

    def __exit__(self, *exc: object) -> None:
        self.kill()
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._reap()
        if self.keeper_write is not None:
            os.close(self.keeper_write)
            self.keeper_write = None
        if self._subreaper:
            try:
                _libc().prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
            except (OSError, AttributeError):
                pass

    def _reap(self) -> None:
        """Collect the exit status of killed descendants that became our children (no zombies)."""
        deadline = time.time() + 2.0
        while self._orphans and time.time() < deadline:
            for pid in list(self._orphans):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:  # not our child (its parent reaps it) or already gone
                    self._orphans.discard(pid)
                    continue
                if done:
                    self._orphans.discard(pid)
            if self._orphans:
                time.sleep(0.02)
        if self._previous_term is not None:
            signal.signal(signal.SIGTERM, self._previous_term)


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _progress(path: Path) -> tuple[int | None, str | None, float | None]:
    """(target index, stage, time the target started) from the child's last progress lines."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, _size(path) - 65536))  # a child may write without end: read the tail
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None, None, None
    target, stage, since = None, None, None
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written
        if not isinstance(entry, dict) or type(entry.get("target")) is not int:
            continue  # the child writes this file: anything else is ignored
        if entry["target"] != target or since is None:
            since = entry.get("time") if isinstance(entry.get("time"), (int, float)) else None
        target = entry["target"]
        stage = entry.get("stage") if isinstance(entry.get("stage"), str) else None
    return target, stage, since


def _tail(path: Path, lines: int) -> list[str]:
    try:
        text = path.read_bytes()[-65536:].decode("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]
