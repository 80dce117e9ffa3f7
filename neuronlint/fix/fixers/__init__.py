"""One fixer module per rule family, and the explicit table of which function fixes which rule.

Nothing registers itself on import: a rule is fixable when it is in FIXERS (and its record's
[rule.fix] says how; tests/test_fix_catalogue.py checks both agree).
"""

from __future__ import annotations

from neuronlint.fix.context import Fixer
from neuronlint.fix.fixers import amp, compile, cudnn, device, distributed, runtime

FIXERS: dict[str, Fixer] = {
    "NL101": device.cuda_device,
    "NL102": runtime.synchronize,
    "NL103": runtime.streams,
    "NL105": runtime.memory,
    "NL106": runtime.device_query,
    "NL107": amp.amp,
    "NL108": runtime.seeds,
    "NL109": cudnn.cudnn_flag,
    "NL201": distributed.nccl,
    "NL202": distributed.ddp_device_ids,
    "NL802": compile.compile_mode,
}
