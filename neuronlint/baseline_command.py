"""`neuronlint baseline create`: record today's findings so that `scan --baseline` reports only new ones."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neuronlint.cli import (
    BackendOpt,
    CacheDirOpt,
    ConfigOpt,
    ExcludeOpt,
    ExtendSelectOpt,
    IgnoreOpt,
    JobsOpt,
    NoCacheOpt,
    PathsArg,
    RulesDirOpt,
    SdkOpt,
    SelectOpt,
    TargetOpt,
    _resolve,
    app,
    fail,
    rule_dirs_or_none,
)
from neuronlint.config import ConfigError
from neuronlint.ruledb import RuleDBError

DEFAULT_BASELINE = Path("neuronlint-baseline.json")

baseline_app = typer.Typer(
    name="baseline",
    help="Adopt neuronlint on an existing code base: accept today's findings, fail only on new ones.",
    no_args_is_help=True,
)
app.add_typer(baseline_app, name="baseline")


@baseline_app.command("create")
def create(
    paths: PathsArg = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Baseline file to write.")
    ] = DEFAULT_BASELINE,
    target: TargetOpt = None,
    sdk: SdkOpt = None,
    backend: BackendOpt = None,
    select: SelectOpt = None,
    extend_select: ExtendSelectOpt = None,
    ignore: IgnoreOpt = None,
    exclude: ExcludeOpt = None,
    jobs: JobsOpt = 0,
    no_cache: NoCacheOpt = False,
    cache_dir: CacheDirOpt = None,
    config: ConfigOpt = None,
    rules_dir: RulesDirOpt = None,
) -> None:
    """Scan and write the fingerprints of every current finding (path, rule, normalised statement).

    Then run `neuronlint scan --baseline FILE` in CI. Re-run this command when the scan says
    baselined findings were fixed, to tighten the baseline.
    """
    from neuronlint.filters import baseline as baseline_filter
    from neuronlint.pipeline import run_scan

    settings = _resolve(
        paths,
        config_path=config,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        exclude=exclude,
        target=target,
        sdk=sdk,
        backend=backend,
        jobs=jobs,
        no_cache=no_cache,
        cache_dir=cache_dir,
        rules_dirs=rule_dirs_or_none(rules_dir),
    )
    try:
        result = run_scan(settings.options)
    except (RuleDBError, ConfigError) as exc:
        raise fail(str(exc)) from None
    try:
        document = baseline_filter.write(result.findings, output, Path.cwd())
    except OSError as exc:
        raise fail(f"{output}: cannot write the baseline: {exc.strerror or exc}") from None
    typer.echo(
        f"neuronlint: wrote {output}: {document['findings']} finding(s) as {len(document['entries'])} fingerprint(s) "
        f"from {len(result.files)} file(s) (Neuron SDK {result.context.sdk}, {result.context.target})"
    )
