"""Module-level functions of a script that its own code calls only with host data.

`def compute_bev_metrics(pred, gt): ... (pred == c).sum().item()`, called once per batch as
`compute_bev_metrics(out.detach().cpu(), target.cpu())`: every value the function reads is a host
value, so its `.item()` and `if union > 0` copy nothing from a device. The walk records each call
of such a function with whether every argument is a host value or a literal, and whether the
function moves anything to a device itself (`.to(...)`, `.cuda()`, a `device=` argument); after the
walk, the host-sync and dynamic-shape detections inside a function called only with host data are
dropped.

Only where every caller is in view: a function of a script (a module with an
`if __name__ == "__main__":` block, which nothing imports) or a private one (`_helper`), whose name
the file spells nowhere but in its definition and in the calls recorded (a function passed as a
callback, `map(f, xs)`, or named in a string may be called with anything).
"""

from __future__ import annotations

import re


class HostCallers:
    def __init__(self) -> None:
        self._calls: dict[str, list[bool]] = {}  # function -> for each call: every argument on the host
        self._moves: set[str] = set()  # functions that move a value to a device themselves

    def note_call(self, function: str, host_arguments: bool) -> None:
        self._calls.setdefault(function, []).append(host_arguments)

    def note_move(self, function: str) -> None:
        self._moves.add(function)

    def host_only(self, source: bytes | None, script: bool) -> set[str]:
        """The functions every caller of which, in this file, passes only host data."""
        if source is None:
            return set()
        found = set()
        for function, calls in self._calls.items():
            if not calls or not all(calls) or function in self._moves:
                continue
            if not (script or function.startswith("_")):
                continue
            spelled = len(re.findall(rb"(?<![\w.])" + re.escape(function.encode()) + rb"(?!\w)", source))
            if spelled == len(calls) + 1:  # the definition and the calls: no other use
                found.add(function)
        return found
