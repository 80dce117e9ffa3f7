"""The progress bar of long scans: rich on stderr, only for interactive terminals."""

from __future__ import annotations

import sys
from collections.abc import Callable

ProgressFactory = Callable[[int], Callable[[int], None] | None]

_WORTH_A_BAR = 200  # files; smaller scans finish before a bar helps


def progress_factory(enabled: bool) -> ProgressFactory | None:
    """A factory of `advance(n)` callbacks for `run_scan`, or None when no bar should show."""
    if not enabled or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    def factory(total: int) -> Callable[[int], None] | None:
        if total < _WORTH_A_BAR:
            return None
        progress = Progress(
            TextColumn("scanning"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        progress.start()
        task = progress.add_task("scan", total=total)

        def advance(n: int) -> None:
            progress.advance(task, n)
            if progress.tasks[0].completed >= total:
                progress.stop()

        return advance

    return factory
