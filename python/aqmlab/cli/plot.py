"""``aqmlab plot DIR KIND -o FILE``: one figure of a run, runs or a sweep, as Flent's ``-p``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail


def _bounds(key: str, text: str | None):
    """Flent's bounds: ``HIGH``, ``LOW,HIGH`` or ``LOW,``."""
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) > 2:
        _fail(f"{key} = {text}: give HIGH, LOW,HIGH or LOW,")
    try:
        vals = [float(p) if p.strip() else None for p in parts]
    except ValueError:
        _fail(f"{key} = {text}: not a number")
    if len(vals) == 1:
        return (None, vals[0])
    return (vals[0], vals[1])


def register(app: typer.Typer) -> None:
    """Attach the ``plot`` command to the top-level app.

    Parameters
    ----------
    app : typer.Typer
        The top-level ``aqmlab`` app.
    """

    @app.command("plot")
    def plot(
        source: Annotated[
            Path,
            typer.Argument(
                metavar="DIR",
                help="A run folder, a folder of run folders, or a sweep folder.",
                show_default=False,
            ),
        ],
        kind: Annotated[
            str,
            typer.Argument(
                metavar="KIND",
                help="timeseries, cdf, ellipse, box, bar or param.",
                show_default=False,
            ),
        ],
        output: Annotated[
            Path,
            typer.Option(
                "-o",
                "--output",
                help="The figure file; its extension is the format unless --formats is given "
                "(then one file per format: OUTPUT with each extension).",
            ),
        ],
        formats: Annotated[
            str | None,
            typer.Option("--formats", help="Comma-separated: png, svg, pdf (e.g. png,svg,pdf)."),
        ] = None,
        size: Annotated[
            str, typer.Option("--size", help="one (3.5 in) or two (7.16 in) columns wide.")
        ] = "two",
        title_extra: Annotated[
            str, typer.Option("-t", "--title-extra", help="Text added to the title.")
        ] = "",
        override_title: Annotated[
            str | None, typer.Option("--override-title", help="The title to use instead.")
        ] = None,
        no_title: Annotated[bool, typer.Option("--no-title", help="No title.")] = False,
        no_legend: Annotated[bool, typer.Option("--no-legend", help="No legend.")] = False,
        log_scale: Annotated[bool, typer.Option("--log-scale", help="Logarithmic y axis.")] = False,
        zero_y: Annotated[
            bool, typer.Option("-z", "--zero-y", help="Start the y axis at zero.")
        ] = False,
        bounds_x: Annotated[
            str | None, typer.Option("--bounds-x", help="x axis: HIGH, LOW,HIGH or LOW,.")
        ] = None,
        bounds_y: Annotated[
            str | None, typer.Option("--bounds-y", help="y axis: HIGH, LOW,HIGH or LOW,.")
        ] = None,
        label_x: Annotated[str | None, typer.Option("--label-x", help="x axis label.")] = None,
        label_y: Annotated[str | None, typer.Option("--label-y", help="y axis label.")] = None,
        figure_width: Annotated[
            float | None, typer.Option("--figure-width", help="Width in inches.")
        ] = None,
        figure_height: Annotated[
            float | None, typer.Option("--figure-height", help="Height in inches.")
        ] = None,
        metric: Annotated[
            str,
            typer.Option(
                "--metric",
                help="The bar plot's metric: delay_mean, delay_p50, delay_p99, utilization, "
                "loss, goodput, goodput_fair, jain.",
            ),
        ] = "delay_mean",
        scale_data: Annotated[
            list[Path] | None,
            typer.Option(
                "--scale-data",
                help="Another input whose data the axes also cover (repeatable), so that "
                "figures of several inputs share their axes.",
            ),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Replace existing files.", show_default=False)
        ] = False,
    ) -> None:
        """One figure of a run, a folder of runs or a sweep, like Flent's -p PLOT
        (docs/report.md)."""
        from aqmlab.output import OutputError, check_output_file, output_file
        from aqmlab.report.export import FORMATS, parse_formats, save_figure
        from aqmlab.report.figures import WIDTHS
        from aqmlab.report.plot import KINDS, PlotOptions, load_runs, plot_figure

        if kind not in KINDS:
            _fail(f"KIND = {kind!r}: must be one of {', '.join(KINDS)}")
        if size not in WIDTHS:
            _fail(f"--size = {size!r}: must be one of {', '.join(WIDTHS)}")
        for key, v in (("--figure-width", figure_width), ("--figure-height", figure_height)):
            if v is not None and not 0.5 <= v <= 50:
                _fail(f"{key} = {v:g}: must be in [0.5, 50] inches")
        if formats is not None:
            try:
                fmts = parse_formats(formats)
            except ValueError as e:
                _fail(str(e))
            stem = output.with_suffix("") if output.suffix.lower()[1:] in FORMATS else output
            targets = [(stem.with_name(f"{stem.name}.{f}"), f) for f in fmts]
        else:
            fmt = output.suffix.lower()[1:]
            if fmt not in FORMATS:
                _fail(f"--output = '{output}': end it in .png, .svg or .pdf (or give --formats)")
            targets = [(output, fmt)]
        try:
            for path, f in targets:
                check_output_file(path, force, suffixes=(f".{f}",), what="--output")
        except OutputError as e:
            _fail(str(e))
        opts = PlotOptions(
            title=override_title,
            title_extra=title_extra,
            no_title=no_title,
            no_legend=no_legend,
            log_scale=log_scale,
            zero_y=zero_y,
            bounds_x=_bounds("--bounds-x", bounds_x),
            bounds_y=_bounds("--bounds-y", bounds_y),
            label_x=label_x,
            label_y=label_y,
            size=size,
            width=figure_width,
            height=figure_height,
            metric=metric,
        )
        try:
            rs = load_runs(source)
            opts.scale_data = [load_runs(p) for p in scale_data or []]
            fig = plot_figure(rs, kind, opts)
        except ValueError as e:
            _fail(str(e))
        import matplotlib.pyplot as plt

        try:
            for path, f in targets:
                with output_file(path, force, suffixes=(f".{f}",), what="--output") as tmp:
                    save_figure(fig, tmp, f)
        except OutputError as e:
            _fail(str(e))
        finally:
            plt.close(fig)
        typer.echo(f"plot written to {', '.join(str(p) for p, _ in targets)}")
