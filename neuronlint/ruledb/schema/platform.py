"""Schema of the platform files: rules/releases.toml, rules/chips.toml, rules/platform.toml.

The chips are data: `[[chip]]` names are the targets every other table may name (`CHIPS`).
"""

from __future__ import annotations

from neuronlint.ruledb.schema.spec import (
    BACKEND_STATES,
    BACKENDS,
    CHIPS,
    EVIDENCE,
    SCALAR,
    SOURCE,
    STATUSES,
    F,
    Table,
    compiler_flag,
    fact_name,
    is_date,
    is_https_url,
    is_sdk_range,
    is_version,
    matches,
)

BACKEND_INFO = Table(
    {
        "chips": F(
            list, required=True, items=str, names=CHIPS, doc="chips this backend runs on in the release"
        ),
        "training": F(bool, required=True, doc="whether Neuron supports training with it"),
        "status": F(
            str, required=True, choices=BACKEND_STATES, doc="supported, beta, maintenance or not-shipped"
        ),
        "status_by_chip": F(
            dict,
            table=Table({}, open=True, extra=str),
            check=lambda v: next(
                (
                    f"{k}: expected one of {', '.join(BACKEND_STATES)}"
                    for k, x in v.items()
                    if x not in BACKEND_STATES
                ),
                None,
            ),
            doc="per-chip status where a notice names only some chips, e.g. { inf2 = 'maintenance' }",
        ),
        "torch_by_chip": F(
            dict,
            table=Table({}, open=True, extra=list),
            doc="per-chip PyTorch versions where the manifest ships a package to some chips only",
        ),
        "package": F(str, required=True, doc="pip package name"),
        "versions": F(list, items=str, doc="exact package versions in the release (manifest)"),
        "torch": F(list, required=True, items=str, doc="PyTorch versions"),
        "torch_xla": F(list, items=str, doc="torch-xla versions (XLA backend only)"),
        "device": F(str, required=True, doc="the torch device string: xla or neuron"),
        "note": F(str),
        "source": SOURCE,
    }
)

RELEASE = Table(
    {
        "version": F(str, required=True, check=is_version, doc="major.minor, e.g. '2.33'"),
        "date": F(str, required=True, check=is_date, doc="release date of the .0 release, YYYY-MM-DD"),
        "patches": F(list, items=str, doc="patch releases with dates, e.g. '2.31.1 (2026-08-12)'"),
        "source": SOURCE,
        "note": F(str, doc="conflicts between sources and other caveats, stated once"),
        "compiler": F(str, doc="neuronx-cc version"),
        "nki": F(str, doc="NKI version"),
        "backends": F(
            dict,
            required=True,
            table=Table({"xla": F(dict, table=BACKEND_INFO), "native": F(dict, table=BACKEND_INFO)}),
        ),
        "changes": F(
            list, items=Table({"text": F(str, required=True), "source": SOURCE, "tags": F(list, items=str)})
        ),
    }
)

DTYPE = Table(
    {
        "status": F(str, required=True, choices=STATUSES),
        "note": F(str),
        "source": SOURCE,
    }
)

CHIP = Table(
    {
        "name": F(
            str,
            required=True,
            check=matches(r"[a-z][a-z0-9]*", "chip names are lower-case letters and digits, e.g. 'trn2'"),
            doc="the name --target takes, e.g. trn2",
        ),
        "title": F(str, required=True),
        "neuroncore": F(str, required=True, doc="NeuronCore generation, e.g. NeuronCore-v3"),
        "cores": F(int, required=True, doc="physical NeuronCores per chip"),
        "hbm_gib": F(int, required=True),
        "hbm_bandwidth": F(str),
        "lnc": F(str, doc="logical NeuronCore configuration"),
        "int64_mode": F(str, required=True, doc="how 64-bit integers are computed"),
        "dtypes": F(dict, required=True, table=Table({}, open=True, extra=DTYPE)),
        "instances": F(list, items=str),
        "source": SOURCE,
    }
)

PLATFORM = Table(
    {
        "fact": F(str, required=True, check=fact_name, doc="fact name used in `when.platform`"),
        "value": F(SCALAR, required=True, doc="value of the fact where this entry applies"),
        "sdk": F(str, check=is_sdk_range, doc="SDK range where the entry applies"),
        "targets": F(list, items=str, names=CHIPS, doc="chips where it applies"),
        "backend": F(str, choices=BACKENDS),
        "flag": F(str, check=compiler_flag, doc="applies only when the user declares this neuronx-cc flag"),
        "note": F(str),
        "source": SOURCE,
        "evidence": F(str, choices=EVIDENCE, doc="documented (default) or reported (a field report)"),
    }
)

# rules/sources.toml: the unversioned pages the database may cite, each with its reason.
LIVING_SOURCE = Table(
    {
        "url": F(str, required=True, check=is_https_url, doc="an unversioned page cited as a source"),
        "why": F(str, required=True, doc="why no versioned page is cited instead"),
        "read": F(str, required=True, check=is_date, doc="when its content was last read, YYYY-MM-DD"),
    }
)
