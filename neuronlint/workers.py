"""A process pool that survives its workers: a worker that dies or hangs costs one file, not the scan.

`concurrent.futures.ProcessPoolExecutor` turns one dead worker into BrokenProcessPool for every
pending task and does not say which task killed it. Here each worker has its own pipe and is sent a
few tasks at a time, so the parent always knows which task a worker is on. When a worker dies (a
native crash, the kernel's OOM killer) or spends more than `task_timeout` seconds on one task, that
task gets `lost(task, reason)` as its result, the worker's other tasks go back in the queue, and a
fresh worker takes its place.

Workers exit when the parent dies: they get SIGKILL from the kernel (PR_SET_PDEATHSIG, Linux) and,
everywhere, notice a closed pipe or a changed parent pid within a second.

Memory stays bounded however many tasks a worker runs (Linux, glibc): after a task, a worker whose
resident size grew more than `TRIM_SLACK` past what it had when it started gives the freed heap
back to the kernel (`malloc_trim`; a parse of a large file leaves tens of MiB free but mapped), and a
worker still more than `max_growth` bytes over its start after that retires: it sends `_RETIRE`
after its last answer and exits, the parent puts its unanswered tasks back at the front of the queue
(none of them is lost or blamed) and starts a fresh worker in its place.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_PR_SET_PDEATHSIG = 1
_RETIRE = -1  # sent instead of a task index: "I answered what I could and exit; give my tasks to another"
_WAITING = -2  # sent instead of a task index: "still on my task, waiting for the pool's gate, not hung"
# This process's pipe to the parent, in a pool's worker (None elsewhere): `waiting` writes on it.
_CONN: Any = None
_CONN_PID = 0
TRIM_SLACK = 16 * 1024 * 1024  # bytes of growth over a worker's start before it trims its heap


def _resident() -> int | None:
    """This process's resident set in bytes (Linux /proc), or None where that is not known."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _heap_trimmer() -> Callable[[], Any] | None:
    """glibc's malloc_trim(0), which returns the free pages inside the heap to the kernel (free()
    alone gives back only the top of the heap); None on other C libraries and platforms."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    return lambda: trim(0)


class _Footprint:
    """A worker's resident size against what it had when it started: trims, and says when to retire."""

    def __init__(self, max_growth: int | None) -> None:
        self.start = _resident()
        self.trim = _heap_trimmer()
        self.max_growth = max_growth

    def over(self) -> bool:
        """After a task: trim if grown past TRIM_SLACK; True if still grown past max_growth."""
        if self.start is None:
            return False
        now = _resident()
        if now is not None and now - self.start > TRIM_SLACK and self.trim is not None:
            self.trim()
            now = _resident()
        return self.max_growth is not None and now is not None and now - self.start > self.max_growth


def waiting() -> None:
    """Tell the parent that this worker is waiting for the pool's gate (parse_guard.Gate), not hung:
    the parent starts the task's `task_timeout` again, so waiting for another worker's heavy moment
    never costs a file. Nothing outside a pool's worker (also nothing in a worker's forked child,
    which must never write on its worker's pipe)."""
    if _CONN is not None and os.getpid() == _CONN_PID:
        try:
            _CONN.send((_WAITING, None))
        except (BrokenPipeError, OSError):
            pass


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            if name:
                ctypes.CDLL(name).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except OSError:
            pass


def _worker_main(
    conn: Any,
    parent: int,
    fn: Callable[[Any], Any],
    initializer: Callable[..., None] | None,
    initargs: tuple,
    inherited: Sequence[Any] = (),
    max_growth: int | None = None,
) -> None:  # pragma: no cover - runs in the worker process
    _die_with_parent()
    for other in inherited:  # forked copies of the parent's ends of other workers' pipes: with them
        other.close()  # open, those workers would not see end of file when the parent dies
    faulthandler.disable()  # a crash is reported by the parent, as a finding on the file
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if os.getppid() != parent:
        return
    global _CONN, _CONN_PID
    _CONN, _CONN_PID = conn, os.getpid()
    if initializer is not None:
        initializer(*initargs)
    footprint = _Footprint(max_growth)
    for batch in _messages(conn, parent):
        for index, task in batch:
            value = fn(task)
            try:
                conn.send((index, value))
                del value
                if footprint.over():
                    conn.send((_RETIRE, None))
                    _drain(conn, parent)
                    return
            except (BrokenPipeError, OSError):
                return


def _messages(conn: Any, parent: int) -> Iterator[Any]:  # pragma: no cover - runs in the worker process
    """What the parent sends, until it says stop (None), closes the pipe or dies."""
    while True:
        try:
            if not conn.poll(1.0):
                if os.getppid() != parent:
                    return
                continue
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        yield message


def _drain(conn: Any, parent: int) -> None:  # pragma: no cover - runs in the worker process
    """After _RETIRE: read (and drop) what the parent still sends until it says stop, so that its
    sends never meet a closed pipe (which it would take for a death, blaming a task)."""
    for _ in _messages(conn, parent):
        pass


class _Worker:
    def __init__(
        self,
        context: Any,
        fn: Callable,
        initializer: Callable | None,
        initargs: tuple,
        others: Sequence[_Worker] = (),
        max_growth: int | None = None,
    ) -> None:
        self.conn, child = context.Pipe(duplex=True)
        inherited = [w.conn for w in others] if context.get_start_method() == "fork" else []
        self.process = context.Process(
            target=_worker_main,
            args=(child, os.getpid(), fn, initializer, initargs, inherited, max_growth),
            daemon=True,
        )
        self.process.start()
        child.close()
        self.pending: deque[int] = deque()  # task indexes sent and not yet answered, in order
        self.since = time.monotonic()  # when the task at the front of `pending` started

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                self.process.kill()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def run(
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    workers: int,
    lost: Callable[[Any, str], Any],
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
    batch: int = 4,
    task_timeout: float | None = None,
    progress: Callable[[int], None] | None = None,
    max_growth: int | None = None,
) -> list[Any]:
    """[fn(task) for task in tasks] across `workers` processes; a lost task's value is lost(task, why).

    `max_growth`: bytes a worker's resident size
    may grow over its start (after trimming its heap) before it is replaced by a fresh one (None:
    never; only where the resident size is known, Linux).
    """
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    results: list[Any] = [None] * len(tasks)
    done = [False] * len(tasks)
    queue: deque[int] = deque(range(len(tasks)))
    remaining = len(tasks)
    pool: list[_Worker] = []

    def feed(worker: _Worker) -> None:
        if len(worker.pending) >= batch or not queue:
            return
        sent = []
        while queue and len(worker.pending) + len(sent) < batch * 2:
            sent.append(queue.popleft())
        if not worker.pending:
            worker.since = time.monotonic()
        worker.pending.extend(sent)
        worker.conn.send([(index, tasks[index]) for index in sent])

    def finish(index: int, value: Any) -> None:
        nonlocal remaining
        if not done[index]:
            done[index] = True
            results[index] = value
            remaining -= 1
            if progress:
                progress(1)

    def start() -> _Worker:
        return _Worker(context, fn, initializer, initargs, pool, max_growth)

    def replace(worker: _Worker, reason: str | None) -> None:
        """Replace a worker that died or hung (`reason`: its file is lost) or retired (None)."""
        worker.stop(kill=reason is not None)
        if worker.pending and reason is not None:
            culprit = worker.pending.popleft()
            finish(culprit, lost(tasks[culprit], reason))
        queue.extendleft(reversed(worker.pending))  # innocent (or never started): run them again
        worker.pending.clear()
        pool.remove(worker)
        if queue or any(w.pending for w in pool):
            pool.append(start())

    try:
        for _ in range(max(1, min(workers, len(tasks)))):
            pool.append(start())
        while remaining:
            for worker in pool:
                feed(worker)
            waitables = {w.conn: w for w in pool} | {w.process.sentinel: w for w in pool}
            ready = multiprocessing.connection.wait(list(waitables), timeout=1.0)
            for item in ready:
                worker = waitables[item]
                if worker not in pool:
                    continue
                if item is worker.conn:
                    try:
                        while worker.conn.poll():
                            index, value = worker.conn.recv()
                            if index == _RETIRE:
                                replace(worker, None)
                                break
                            if index == _WAITING:  # on its task, waiting for the gate: not hung
                                worker.since = time.monotonic()
                                continue
                            if worker.pending and worker.pending[0] == index:
                                worker.pending.popleft()
                            worker.since = time.monotonic()
                            finish(index, value)
                            feed(worker)
                    except (EOFError, OSError):
                        replace(worker, _death(worker))
                elif not worker.process.is_alive():
                    replace(worker, _death(worker))
            if task_timeout is not None:
                now = time.monotonic()
                for worker in list(pool):
                    if worker.pending and now - worker.since > task_timeout:
                        replace(worker, f"the analysis did not finish within {task_timeout:g} s")
            if not pool and remaining:  # every worker gone and nothing to restart them for
                break
    finally:
        for worker in pool:
            worker.stop(kill=bool(remaining))
    return results


def _death(worker: _Worker) -> str:
    worker.process.join(timeout=1)
    code = worker.process.exitcode
    if code is not None and code < 0:
        try:
            return f"the analyser process was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"the analyser process was killed by signal {-code}"
    return f"the analyser process exited with status {code}"
