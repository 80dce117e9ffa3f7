"""Keep one hostile file from crashing, hanging or exhausting the scan.

LibCST's native parser recurses on the C stack (a 10,000-deep expression is a SIGSEGV on the main
thread's 8 MiB stack), backtracks badly on nested brackets (a dict literal nested 200 deep did not
finish in 30 s) and uses 2 to 3 KiB of memory per token (10 GiB for a 4.9 MB list literal). So before
a file reaches LibCST:

1. `problem()` rejects what cannot be analysed in bounded time and memory, cheaply: more than
   `MAX_TOKENS` tokens ("too large to analyse"), or an expression the stdlib parser refuses for its
   depth, or one deeper than `MAX_DEPTH` nodes or `MAX_BRACKETS` nested brackets ("too deeply
   nested to analyse"). The stdlib parser answers in about 0.1 s for the files that break LibCST.
2. `run()` executes the analysis on a thread with a `STACK_BYTES` stack, so the depth the limits
   allow never overflows a native stack.
3. A file that passes the limits but is still large or deep (`risky`) is analysed in a disposable
   forked process with a wall-clock limit (`ISOLATED_TIMEOUT`) and an address-space cap
   (`ISOLATED_MEMORY`); if that process dies, hangs or runs out of memory the file gets one NL001
   finding and the scan goes on. In a pool's worker, a file that is risky only for its size
   (`large_only`: shallow, valid, under MAX_TOKENS, so LibCST's time and memory grow with its
   length, about 2 KiB a token) is analysed in the worker itself: the worker is a disposable
   process already (workers.py: the pool survives its death and times its task out), and a fork
   would count the worker's pages once more at the scan's heaviest moment.
4. In a worker pool, the disposable process is one of a worker's heavy moments (a fork counts the
   worker's pages once more), as is a large file's parse: the workers take turns for them through
   `Gate`, so that two never add up at once.
"""

from __future__ import annotations

import ast
import faulthandler
import math
import os
import pickle
import re
import select
import signal
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

MAX_TOKENS = 200_000  # about 20,000 lines of ordinary code; LibCST needs about 0.5 GiB for this many
MAX_DEPTH = 500  # nested expression and statement nodes (a chain a.b.c... or 1+1+... counts each link)
MAX_BRACKETS = 100  # nested calls, subscripts, displays, comprehensions, conditional expressions, lambdas
STACK_BYTES = 512 * 1024 * 1024  # reserved, not committed: only the depth actually used costs memory
RISKY_TOKENS = 50_000
RISKY_DEPTH = 100
RISKY_BRACKETS = 40
ISOLATED_TIMEOUT = 60.0  # CPU seconds for one file
SYNTAX_ERROR_TIMEOUT = 5.0  # CPU seconds for LibCST on a file the stdlib parser rejects
WALL_FACTOR = 4  # the wall-clock backstop, for a child that stops without using CPU
ISOLATED_MEMORY = 2 * 1024**3  # bytes of address space on top of what the process already maps

TOO_LARGE = "too large to analyse"
TOO_DEEP = "too deeply nested to analyse"

_IDENTITY = bytes.maketrans(b"", b"")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"()[]{}")
_BRACKET_NODES = (
    ast.Call,
    ast.Subscript,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.Tuple,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.IfExp,  # LibCST backtracks on these as on brackets
    ast.Lambda,
)


# Each byte as a class: "a" a word byte, " " whitespace (`\s` of a bytes regex), "." anything else.
_CLASSES = bytes(
    ord("a")
    if chr(b).isascii() and (chr(b).isalnum() or b == ord("_"))
    else ord(" ")
    if b in b" \t\n\r\f\v"
    else ord(".")
    for b in range(256)
)


def count_tokens(data: bytes) -> int:
    r"""An upper bound on the number of Python tokens (words and punctuation; strings count per word):
    the matches of `rb"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]"` (a run of word bytes, or one other byte that
    is not whitespace), counted without a match object each: a run of word bytes is a word byte
    that follows no word byte."""
    classes = data.translate(_CLASSES)
    return classes.count(b".") + classes.count(b" a") + classes.count(b".a") + classes.startswith(b"a")


def _raw_bracket_depth(data: bytes) -> int:
    """Deepest bracket nesting in the raw bytes (strings and comments included: an upper bound)."""
    depth = deepest = 0
    for byte in data.translate(_IDENTITY, _NOT_BRACKETS):
        if byte in b"([{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def _line_starts(data: bytes) -> list[int]:
    """Byte offset of the start of each line (index 0 is line 1)."""
    starts = [0]
    pos = data.find(b"\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = data.find(b"\n", pos + 1)
    return starts


# Nodes whose position does not cover all of their children: a definition's decorators come
# before its `def`/`class` line. They are always walked.
_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# A subtree spanning `n` bytes of source nests at most n + _SLACK nodes and n/2 + _SLACK brackets
# below its root (see _depths).
_SLACK = 4


def _depths(tree: ast.AST, data: bytes | None = None) -> tuple[int, int]:
    """(deepest node nesting, deepest bracket nesting) in the tree, walked without recursion,
    as far as they can exceed the RISKY_* limits.

    A chain `a and b and c` is one node in the stdlib tree but a nest in LibCST's, so each extra
    operand counts as one level.

    With the source (`data`), a subtree too small to reach RISKY_DEPTH or RISKY_BRACKETS is not
    walked: every level of nesting owns at least one byte of source that no node below it owns
    (an operator, a bracket, a dot, a keyword, a name; the nodes that own none, such as a load
    context, a generator's shared parentheses or a lambda's argument list, sit next to one that
    owns two or more), and two nested bracket nodes own at least four bytes (`[]` and `[]`,
    `x[` `,]`, `()` and `for in`). So a subtree of n bytes adds at most n + 2 levels and n/2 + 1
    brackets below its root; the test allows _SLACK more. The deepest values returned are exact
    wherever either exceeds its RISKY_* limit, and therefore so is every decision and message of
    measure(). Positions inside f-strings
    (unreliable before Python 3.12) are never used: an f-string that is not skipped as a whole is
    walked in full.
    """
    deepest = deepest_brackets = 0
    starts = _line_starts(data) if data is not None else None
    stack: list[tuple[ast.AST, int, int, bool]] = [(tree, 0, 0, starts is None)]
    bracket_nodes, decorated, joined, node_type = _BRACKET_NODES, _DECORATED, ast.JoinedStr, ast.AST
    while stack:
        node, depth, brackets, exact = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        if isinstance(node, bracket_nodes):
            brackets += 1
        if depth > deepest:
            deepest = depth
        if brackets > deepest_brackets:
            deepest_brackets = brackets
        exact = exact or isinstance(node, joined)
        depth += 1
        for name in node._fields:
            value = getattr(node, name, None)
            for child in value if isinstance(value, list) else (value,):
                if not isinstance(child, node_type):
                    continue
                if not exact:
                    end = getattr(child, "end_lineno", None)
                    if end is not None and not isinstance(child, decorated):
                        size = (
                            starts[end - 1]
                            + child.end_col_offset
                            - starts[child.lineno - 1]
                            - child.col_offset
                        )
                        if (
                            depth + size + _SLACK <= RISKY_DEPTH
                            and brackets + size // 2 + _SLACK <= RISKY_BRACKETS
                        ):
                            continue  # cannot reach a RISKY_* limit: nothing below changes the answer
                stack.append((child, depth, brackets, exact))
    return deepest, deepest_brackets


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)


def coding_cookie(data: bytes) -> bytes | None:
    """The encoding a PEP 263 declaration in the first two lines names, or None."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first != -1 else -1
    found = _CODING.search(data if second == -1 else data[:second])
    return None if found is None else found.group(1)


def _utf8(data: bytes) -> bool:
    """Whether the stdlib parser's column offsets are byte offsets into `data` (UTF-8 source)."""
    cookie = coding_cookie(data)
    return cookie is None or cookie.lower().replace(b"_", b"-") in (b"utf-8", b"utf8", b"utf-8-sig")


@dataclass
class Measure:
    """Whether a file may reach LibCST, and how."""

    problem: str | None  # why the file must not reach LibCST; None if it may
    risky: bool = False  # analyse it in a disposable process
    large_only: bool = False  # risky for its size alone (see the module docstring, point 3)
    syntax_error: SyntaxError | None = None  # the stdlib parser's complaint, when it has one
    # The stdlib parser's tree of a file that may reach LibCST: positions.locate reuses it where a
    # statement's text occurs twice instead of parsing the file again.
    tree: ast.Module | None = field(default=None, repr=False, compare=False)


def measure(data: bytes) -> Measure:
    """Whether and how the file may reach LibCST.

    A file the stdlib parser rejects is still given to LibCST (it may use syntax newer than this
    Python), but always in a disposable process with `SYNTAX_ERROR_TIMEOUT`: LibCST's error recovery
    on broken input backtracks (a 55 kB mutated file took 76 s).
    """
    tokens = count_tokens(data) if len(data) > RISKY_TOKENS else 0  # a token is at least one byte
    if tokens > MAX_TOKENS:
        return Measure(f"{TOO_LARGE}: about {tokens:,} tokens, over the {MAX_TOKENS:,} limit")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            tree = ast.parse(data)
    except (RecursionError, MemoryError):
        return Measure(f"{TOO_DEEP}: the Python parser gives up on its nesting")
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg) or "too complex" in str(exc.msg):
            return Measure(f"{TOO_DEEP}: {exc.msg}")
        brackets = _raw_bracket_depth(data)  # without a tree, only brackets can be measured
        if brackets > MAX_BRACKETS:
            return Measure(f"{TOO_DEEP}: brackets nest {brackets} deep, over the {MAX_BRACKETS} limit")
        return Measure(None, True, exc)
    except ValueError:
        return Measure(None, tokens > RISKY_TOKENS)  # a decoding problem: LibCST reports it
    depth, brackets = _depths(tree, data if _utf8(data) else None)
    if depth > MAX_DEPTH:
        return Measure(f"{TOO_DEEP}: expressions nest {depth} deep, over the {MAX_DEPTH} limit")
    if brackets > MAX_BRACKETS:
        return Measure(f"{TOO_DEEP}: brackets nest {brackets} deep, over the {MAX_BRACKETS} limit")
    shallow = depth <= RISKY_DEPTH and brackets <= RISKY_BRACKETS
    risky = tokens > RISKY_TOKENS or not shallow
    return Measure(None, risky, large_only=risky and shallow, tree=tree)


# ---- a large stack -----------------------------------------------------------------------------
class _StackThread:
    """One daemon thread with a STACK_BYTES stack that runs one call at a time for the process.

    (A plain thread rather than a ThreadPoolExecutor: concurrent.futures imports logging and queue,
    a few milliseconds of a one-file scan's start-up, for a pool of one thread.)"""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one caller at a time
        self._start = threading.Semaphore(0)
        self._finished = threading.Semaphore(0)
        self._call: tuple[Callable[..., Any], tuple[Any, ...]] | None = None
        self._outcome: tuple[bool, Any] = (True, None)
        self.thread = threading.Thread(target=self._serve, name="neuronlint-parse", daemon=True)

    def _serve(self) -> None:
        while True:
            self._start.acquire()
            fn, args = self._call  # type: ignore[misc]
            try:
                self._outcome = (True, fn(*args))
            except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
                self._outcome = (False, exc)
            self._finished.release()

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        with self._lock:
            self._call = (fn, args)
            self._start.release()
            self._finished.acquire()
            ok, value = self._outcome
            self._call, self._outcome = None, (True, None)
        if not ok:
            raise value
        return value


_STACK_THREAD: tuple[int, _StackThread] | None = None
_STACK_THREAD_LOCK = threading.Lock()


def _large_stack_thread() -> _StackThread | None:
    """The process's thread with a STACK_BYTES stack (recreated after a fork)."""
    global _STACK_THREAD
    with _STACK_THREAD_LOCK:
        if _STACK_THREAD is not None and _STACK_THREAD[0] == os.getpid():
            return _STACK_THREAD[1]
        previous = threading.stack_size()
        try:
            threading.stack_size(STACK_BYTES)
            worker = _StackThread()
            worker.thread.start()  # started while the size is set
        except (ValueError, RuntimeError, MemoryError):
            return None  # a platform or ulimit that refuses the stack: run on the caller's thread
        finally:
            threading.stack_size(previous)
        _STACK_THREAD = (os.getpid(), worker)
        return worker


def on_large_stack(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) on a thread with a large native stack (inline if that thread is the caller)."""
    if threading.current_thread().name.startswith("neuronlint-parse"):
        return fn(*args)
    worker = _large_stack_thread()
    if worker is None:
        return fn(*args)
    return worker.run(fn, *args)


# ---- one heavy moment at a time across a pool ------------------------------------------------------
GATE_WAIT = 30.0  # seconds a worker waits for the gate before it goes on without it
# ... when it tells its pool it is waiting (Gate.on_wait, every WAIT_BEAT seconds: the pool then
# does not count the wait towards the file's timeout). Longer than any heavy moment can last (the
# holder's file is lost after pipeline.TASK_TIMEOUT, 300 s, and the lock goes with its process).
GATE_WAIT_TOLD = 330.0
WAIT_BEAT = 1.0


class Gate:
    """A lock that the processes of one worker pool share through a file (a POSIX record lock,
    `fcntl.lockf`): a worker holds it for its heavy moments, the parse of a large file
    (pipeline.HEAVY_BYTES) and a disposable child (`isolated`, a fork that counts the worker's
    pages once more), so that two of them never add up at once. Reentrant within a process; a
    forked child does not inherit it, and a worker that dies releases it. A worker that waited
    GATE_WAIT seconds goes on without it, or GATE_WAIT_TOLD seconds when it tells its pool that it
    waits (`on_wait`: the wait then does not count towards the file's timeout). Where `fcntl` is
    missing, it never locks."""

    def __init__(self, path: str, on_wait: Callable[[], object] | None = None) -> None:
        self.path = path
        self.fd = -1
        self.depth = 0
        self.held = False
        # Called every WAIT_BEAT seconds while waiting (a pool's worker tells its parent, workers.
        # waiting): the worker then waits up to GATE_WAIT_TOLD instead of GATE_WAIT.
        self.on_wait = on_wait

    def __enter__(self) -> Gate:
        self.depth += 1
        if self.depth == 1:
            self.held = self._acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if self.depth == 0 and self.held:
            import fcntl

            self.held = False
            fcntl.lockf(self.fd, fcntl.LOCK_UN)

    def _acquire(self) -> bool:
        try:
            import fcntl
        except ImportError:
            return False
        try:
            if self.fd < 0:
                self.fd = os.open(self.path, os.O_RDWR)
            started = beat = time.monotonic()
            deadline = started + (GATE_WAIT_TOLD if self.on_wait is not None else GATE_WAIT)
            while True:
                try:
                    fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return True
                except (BlockingIOError, PermissionError):
                    now = time.monotonic()
                    if now >= deadline:
                        return False
                    if self.on_wait is not None and now - beat >= WAIT_BEAT:
                        beat = now
                        self.on_wait()
                    time.sleep(0.02)
        except OSError:
            return False


class _NoGate:
    """The gate of a process that is not a pool's worker: nothing to take turns with."""

    def __enter__(self) -> _NoGate:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


NO_GATE = _NoGate()
gate: Gate | _NoGate = NO_GATE  # set by a pool's worker (pipeline._init_worker)
pool_worker = False  # this process is a pool's worker (set by pipeline._init_worker)


# ---- a disposable process ------------------------------------------------------------------------
class Isolated(Exception):
    """The isolated analysis did not return a result; the message says why, for a finding."""


def _address_space() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def isolated(fn: Callable[..., T], *args: Any, timeout: float = ISOLATED_TIMEOUT) -> T:
    """fn(*args) in a forked child with a time and memory limit; Isolated if it does not return.

    `timeout` is CPU seconds of the child (RLIMIT_CPU: SIGXCPU at the limit, SIGKILL a second
    later); the parent also kills it after `WALL_FACTOR` times as many seconds of wall time.
    """
    if not hasattr(os, "fork"):
        return on_large_stack(fn, *args)
    with gate:  # a pool's workers have one disposable child at a time
        return _isolated(fn, *args, timeout=timeout)


def _isolated(fn: Callable[..., T], *args: Any, timeout: float) -> T:
    read_end, write_end = os.pipe()
    limit = _address_space() + ISOLATED_MEMORY
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; coverage does not follow os.fork
        status = 0
        try:
            os.close(read_end)
            faulthandler.disable()  # the parent reports a crash; no stack dump into its stderr
            try:
                import resource

                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                seconds = max(1, math.ceil(timeout))  # a forked child's CPU time starts at zero
                resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
            except (ImportError, ValueError, OSError):
                pass
            try:
                payload = pickle.dumps(("ok", on_large_stack(fn, *args)))
            except MemoryError:
                payload = pickle.dumps(("memory", ""))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
            view = memoryview(payload)
            while view:
                view = view[os.write(write_end, view) :]
        except BaseException:  # noqa: BLE001
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout * WALL_FACTOR
    timed_out = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_end], [], [], min(remaining, 1.0))
            if ready:
                chunk = os.read(read_end, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_end)
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status, usage = os.wait4(pid, 0)
    if timed_out:
        raise Isolated(f"the parser did not finish within {timeout * WALL_FACTOR:g} s")
    try:
        kind, value = pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - no or partial result: the child died
        # SIGXCPU at the soft limit; SIGKILL at the hard one (a second later) if the child ignored
        # it. The kernel's accounting can report a hair under the limit, hence the half second.
        cpu = usage.ru_utime + usage.ru_stime
        signalled = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        if signalled == signal.SIGXCPU or (signalled == signal.SIGKILL and cpu >= math.ceil(timeout) - 0.5):
            raise Isolated(f"the parser did not finish within {timeout:g} s of CPU time") from None
        if os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            raise Isolated(f"the parser was killed by {name}") from None
        raise Isolated("the parser process exited without a result") from None
    if kind == "ok":
        return value
    if kind == "memory":
        raise Isolated(f"the parser needed more than {ISOLATED_MEMORY // 1024**3} GiB")
    raise Isolated(f"internal error: {value}")


def run(fn: Callable[..., T], data: bytes, *args: Any, risky: bool, timeout: float = ISOLATED_TIMEOUT) -> T:
    """fn(data, *args) on a large stack; in a disposable process when the file is risky."""
    if risky:
        return isolated(fn, data, *args, timeout=timeout)
    return on_large_stack(fn, data, *args)
