"""The tracing child tears itself down when the process that started it goes away.

The parent (runner.py) kills the child's group and every descendant on each exit it gets to run
code for: a result, a crash, a timeout, Ctrl-C, SIGTERM. A SIGKILLed parent runs nothing, so the
child watches for that itself, twice over:

- a keeper process, forked before torch or user code is imported, blocks on a pipe whose only
  write end the parent holds. The kernel closes it when the parent dies, however it dies; the keeper
  then kills every descendant of the child, the child and the child's process group (itself last).
  Being a separate process, it works while the traced code holds the GIL in native code. It also
  enforces a hard deadline (the batch's whole budget plus a margin) whatever the parent does.
- a daemon thread in the child polls `os.getppid()` (portable, and it covers a keeper that the
  traced code killed) and does the same teardown.

The child is a child subreaper on Linux, so a grandchild whose own parent exits (a double fork, a
new session) is re-parented to the child and is still found as its descendant.
Torch-free: imported before the memory cap and before torch.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time

_PR_SET_CHILD_SUBREAPER = 36
POLL_SECONDS = 0.5


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, from /proc (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def teardown(child: int) -> None:
    """SIGKILL every descendant of `child` (except this process), then `child`, then the group.

    Called in the keeper (a member of the child's group) or in the child itself: either way the
    caller's own group is the child's, and killing it ends the caller last.
    """
    me = os.getpid()
    group = os.getpgid(0)
    for _ in range(20):  # a process may fork while we kill: repeat until nothing is left
        found = [pid for pid in descendants(child) if pid != me]
        if not found:
            break
        for pid in found:
            _kill(pid)
    if child != me:
        _kill(child)
    if group == child:  # the child leads its own group (runner.py starts it in a new session)
        os.killpg(group, signal.SIGKILL)
    elif child == me:
        os._exit(1)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def _keep(child: int, parent: int, fd: int, deadline: float) -> None:  # pragma: no cover - forked
    """The keeper's loop: return when the parent is gone or the deadline has passed."""
    while True:
        now = time.monotonic()
        if now >= deadline:
            return
        try:
            readable, _, _ = select.select([fd], [], [], min(POLL_SECONDS, deadline - now))
        except InterruptedError:
            continue
        if readable:
            try:
                if not os.read(fd, 64):
                    return  # end of file: the parent's write end is closed, the parent is gone
            except OSError:
                return
        if os.getppid() != child:
            os._exit(0)  # the child has ended; the parent (alive: the pipe is open) tears down the rest
        ppid = _parent_of(child)
        if ppid is not None and ppid != parent:
            return


def start(parent: int, fd: int | None, budget: float | None) -> None:
    """In the tracing child, before anything heavy: start the keeper and the watchdog thread."""
    child = os.getpid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            if name:
                ctypes.CDLL(name).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except OSError:
            pass
    deadline = time.monotonic() + budget if budget else float("inf")
    if fd is not None and hasattr(os, "fork"):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the keeper process
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _keep(child, parent, fd, deadline)
                teardown(child)
            finally:
                os._exit(0)
        os.close(fd)  # the keeper has it; user code must not be able to read from it
    thread = threading.Thread(target=_watch, args=(parent, deadline), name="neuronlint-keeper", daemon=True)
    thread.start()


def _watch(parent: int, deadline: float) -> None:
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    teardown(os.getpid())
