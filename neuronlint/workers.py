"""A process pool that survives its workers: a worker that dies or hangs costs one file, not the scan.

`concurrent.futures.ProcessPoolExecutor` turns one dead worker into BrokenProcessPool for every
pending task and does not say which task killed it. Here each worker has its own pipe and is sent a
few tasks at a time, so the parent always knows which task a worker is on. When a worker dies (a
native crash, the kernel's OOM killer) or spends more than `task_timeout` seconds on one task, that
task gets `lost(task, reason)` as its result, the worker's other tasks go back in the queue, and a
fresh worker takes its place.

Workers exit when the parent dies: they get SIGKILL from the kernel (PR_SET_PDEATHSIG, Linux) and,
everywhere, notice a closed pipe or a changed parent pid within a second.
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
from collections.abc import Callable, Sequence
from typing import Any

_PR_SET_PDEATHSIG = 1


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
) -> None:  # pragma: no cover - runs in the worker process
    _die_with_parent()
    for other in inherited:  # forked copies of the parent's ends of other workers' pipes: with them
        other.close()  # open, those workers would not see end of file when the parent dies
    faulthandler.disable()  # a crash is reported by the parent, as a finding on the file
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if os.getppid() != parent:
        return
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            if not conn.poll(1.0):
                if os.getppid() != parent:
                    return
                continue
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for index, task in batch:
            value = fn(task)
            try:
                conn.send((index, value))
            except (BrokenPipeError, OSError):
                return


class _Worker:
    def __init__(
        self,
        context: Any,
        fn: Callable,
        initializer: Callable | None,
        initargs: tuple,
        others: Sequence[_Worker] = (),
    ) -> None:
        self.conn, child = context.Pipe(duplex=True)
        inherited = [w.conn for w in others] if context.get_start_method() == "fork" else []
        self.process = context.Process(
            target=_worker_main,
            args=(child, os.getpid(), fn, initializer, initargs, inherited),
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
    keep: Callable[[Any], Any] | None = None,
) -> list[Any]:
    """[fn(task) for task in tasks] across `workers` processes; a lost task's value is lost(task, why).

    `keep(value)`, when given, is what the parent holds of each value, applied as it arrives (so the
    parent never holds all the full values at once).
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
            results[index] = keep(value) if keep is not None else value
            remaining -= 1
            if progress:
                progress(1)

    def replace(worker: _Worker, reason: str) -> None:
        worker.stop(kill=True)
        if worker.pending:
            culprit = worker.pending.popleft()
            finish(culprit, lost(tasks[culprit], reason))
            queue.extendleft(reversed(worker.pending))  # the rest are innocent: run them again
        pool.remove(worker)
        if queue or any(w.pending for w in pool):
            pool.append(_Worker(context, fn, initializer, initargs, pool))

    try:
        for _ in range(max(1, min(workers, len(tasks)))):
            pool.append(_Worker(context, fn, initializer, initargs, pool))
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
