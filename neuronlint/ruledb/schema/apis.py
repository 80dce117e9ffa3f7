"""Schema of rules/apis.toml (`[[api]]`) and rules/libraries.toml (`[[library]]`)."""

from __future__ import annotations

from neuronlint.ruledb.schema.spec import (
    EVIDENCE,
    LIBRARY_SUPPORT,
    SOURCE,
    STATUSES,
    F,
    Table,
    is_https_url,
    rule_id,
)

API = Table(
    {
        "name": F(str, required=True),
        # name: exactly this name; prefix: this dotted name and everything below it; stem: every
        # name that starts with this text (`torch._C._cuda` covers `torch._C._cuda_getDeviceCount`).
        "kind": F(str, required=True, choices=("name", "prefix", "stem", "method", "attribute")),
        "rule": F(str, required=True, check=rule_id),
        # "device" = only calls on values that may live on the device count (a host tensor's
        # `.unique()` is CPU work): the receiver of a method row, the first argument of a name row
        # (`torch.unique(torch.Tensor(np_labels))`); by default any receiver that is not
        # numpy/pandas does, and any call of a name row.
        "receiver": F(str, choices=("device",)),
        "xla": F(str),
        "native": F(str),
        "note": F(str),
        # the import of this module (`import torch.backends.cudnn as cudnn`, `from torch.cuda.amp
        # import GradScaler`) is a finding of the row's rule on the import line, besides each use
        "import_line": F(bool),
        "facts": F(dict, table=Table({}, open=True)),
        "source": SOURCE,
    }
)

LIBRARY = Table(
    {
        "name": F(str, required=True),
        "modules": F(list, required=True, items=str),
        "packages": F(list, required=True, items=str),
        "status": F(str, required=True, choices=STATUSES, doc="what Neuron documents about the library"),
        "support": F(
            str,
            required=True,
            choices=LIBRARY_SUPPORT,
            doc="what it runs on: nvidia-only, multi-backend (no Neuron backend), neuron-path, unknown",
        ),
        "runs_on": F(str, doc="what its own documentation says it runs on, e.g. 'NVIDIA and AMD GPUs'"),
        "support_source": F(
            str, check=is_https_url, doc="the library's own page for `support` (required unless unknown)"
        ),
        "neuron_path": F(str, doc="the documented way to run it on Neuron (support = neuron-path)"),
        "helpers": F(
            list,
            items=str,
            doc="module prefixes of device-free helpers (logging, config): calls into them are not findings",
        ),
        "pure_helpers": F(
            list,
            items=str,
            doc="module prefixes of pure-PyTorch utilities (padding): their call sites are info; importing them still needs the library",
        ),
        "kind": F(str, required=True),
        "alternative": F(str, required=True, doc="the documented Neuron alternative"),
        "alternative_no_nki": F(str, doc="the alternative where NKI kernels are not supported"),
        "source": SOURCE,
        "evidence": F(str, choices=EVIDENCE),
    }
)
