"""One figure of a run, a folder of runs or a sweep, as Flent's ``-p PLOT`` draws one plot:
what ``aqmlab plot DIR KIND`` writes.

``KIND`` is one of :data:`KINDS`; the figures are the report's (:mod:`aqmlab.report.figures`),
with Flent's plot options applied afterwards (:class:`PlotOptions`: title, legend, log scale,
zero-based y axis, axis bounds and labels, figure size, axes scaled to other data sets).

Examples
--------
>>> import tempfile, pathlib
>>> from aqmlab.sim import simulate
>>> d = pathlib.Path(tempfile.mkdtemp()) / "run"
>>> _ = simulate({"duration": "2s", "dumbbell": {"rate": "10Mbps"},
...               "flows": [{"count": 2}]}).save(d)
>>> fig = plot_figure(load_runs(d), "cdf", PlotOptions(title="CoDel"))
>>> fig.axes[0].get_title()
'CoDel'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from aqmlab.report.figures import styled
from aqmlab.report.inputs import RunSet, load_runs

__all__ = ["KINDS", "PlotOptions", "plot_figure", "load_runs"]

#: The plots ``aqmlab plot`` draws, with what each shows.
KINDS = {
    "timeseries": "queue delay and throughput of the link over time (mean over seeds)",
    "cdf": "queue-delay CDF per configuration (merged histograms)",
    "ellipse": "mean delay against total goodput: a dot per run, 1-sigma ellipse per "
    "configuration (RFC 7928 §2.7)",
    "box": "per-flow goodput over the fair share, one box per configuration",
    "bar": "a metric's mean and 95 % CI per configuration (--metric)",
    "param": "metric versus parameter, one figure per sweep axis (the first axis here)",
}


@dataclass
class PlotOptions:
    """Flent-like plot options.

    Attributes
    ----------
    title : str or None
        The figure's title (Flent's ``--override-title``); None: the default title.
    title_extra : str
        Appended to the default title (Flent's ``-t``/``--title-extra``).
    no_title : bool
        No title (``--no-title``).
    no_legend : bool
        No legend (``--no-legend``).
    log_scale : bool
        Logarithmic y axis (``--log-scale``; the CDF's delay axis is logarithmic anyway).
    zero_y : bool
        Start the y axis at zero (``-z``/``--zero-y``).
    bounds_x, bounds_y : tuple of float or None
        ``(low, high)`` of the x or y axis; either may be None (``--bounds-x``/``--bounds-y``).
    label_x, label_y : str or None
        Override the axis labels (``--label-x``/``--label-y``).
    size : str
        ``"one"`` column (3.5 in) or ``"two"`` (7.16 in).
    width, height : float or None
        Figure size in inches, overriding ``size`` (``--figure-width``/``--figure-height``).
    metric : str
        The metric of the ``bar`` plot.
    scale_data : list of RunSet
        Further inputs whose data the axes' limits also cover (``--scale-data``), so figures
        of several inputs share their axes.
    """

    title: str | None = None
    title_extra: str = ""
    no_title: bool = False
    no_legend: bool = False
    log_scale: bool = False
    zero_y: bool = False
    bounds_x: tuple[float | None, float | None] | None = None
    bounds_y: tuple[float | None, float | None] | None = None
    label_x: str | None = None
    label_y: str | None = None
    size: str = "two"
    width: float | None = None
    height: float | None = None
    metric: str = "delay_mean"
    scale_data: list[RunSet] = field(default_factory=list)


def _draw(rs: RunSet, kind: str, opts: PlotOptions):
    from aqmlab.report import figures as F

    if kind == "timeseries":
        figs = F.timeseries_figs(rs, opts.size)
        for extra in figs[1:]:
            _plt().close(extra)
        return figs[0] if figs else None
    if kind == "cdf":
        return F.cdf_fig(rs, opts.size)
    if kind == "ellipse":
        return F.ellipse_fig(rs, opts.size)
    if kind == "box":
        return F.box_fig(rs, opts.size)
    if kind == "bar":
        return F.bar_fig(rs, opts.size, opts.metric)
    if kind == "param":
        figs = F.parameter_figs(rs, opts.size)
        for _k, extra in figs[1:]:
            _plt().close(extra)
        return figs[0][1] if figs else None
    raise ValueError(f"KIND = {kind!r}: must be one of {', '.join(KINDS)}")


def _plt():
    import matplotlib.pyplot as plt

    return plt


def _default_title(rs: RunSet, kind: str) -> str:
    return f"{rs.source.resolve().name}: {kind}"


@styled
def plot_figure(rs: RunSet, kind: str, opts: PlotOptions | None = None):
    """Draw the ``kind`` plot of ``rs`` with ``opts`` applied.

    Parameters
    ----------
    rs : RunSet
        The input (:func:`aqmlab.report.load_runs`: a run, a folder of runs or a sweep).
    kind : str
        One of :data:`KINDS`.
    opts : PlotOptions, optional
        The options (default: none).

    Returns
    -------
    matplotlib Figure

    Raises
    ------
    ValueError
        ``KIND = ...`` for an unknown kind, or one line saying the input has nothing to draw.
    """
    opts = opts or PlotOptions()
    if kind not in KINDS:
        raise ValueError(f"KIND = {kind!r}: must be one of {', '.join(KINDS)}")
    fig = _draw(rs, kind, opts)
    if fig is None:
        what = {
            "timeseries": "no time series (a sweep keeps them only with --timeseries)",
            "cdf": "no queue-delay histogram",
            "ellipse": "no run with both a delay and a goodput",
            "box": "no per-flow goodput with a link rate",
            "bar": f"no run with the metric {opts.metric!r}",
            "param": "no sweep axis with two values or more (only a sweep has axes)",
        }[kind]
        raise ValueError(f"DIR = '{rs.source}': nothing to draw for {kind}: {what}")
    axes = [a for a in fig.axes if a.get_visible()]
    for other in opts.scale_data:
        ofig = _draw(other, kind, opts)
        if ofig is None:
            continue
        for a, b in zip(axes, [a for a in ofig.axes if a.get_visible()], strict=False):
            x0, x1 = a.get_xlim()
            y0, y1 = a.get_ylim()
            bx0, bx1 = b.get_xlim()
            by0, by1 = b.get_ylim()
            a.set_xlim(_union(x0, x1, bx0, bx1))
            a.set_ylim(_union(y0, y1, by0, by1))
        _plt().close(ofig)
    for a in axes:
        if opts.log_scale and kind != "cdf":
            a.set_yscale("log")
        if opts.zero_y and a.get_yscale() == "linear":
            a.set_ylim(bottom=0)
        if opts.bounds_x:
            a.set_xlim(*opts.bounds_x)
        if opts.bounds_y:
            a.set_ylim(*opts.bounds_y)
        if opts.label_y is not None:
            a.set_ylabel(opts.label_y)
        if opts.no_legend and a.get_legend() is not None:
            a.get_legend().remove()
    if opts.label_x is not None:
        axes[-1].set_xlabel(opts.label_x)
    if opts.no_legend:
        for leg in list(fig.legends):
            leg.remove()
    if opts.width or opts.height:
        w, h = fig.get_size_inches()
        fig.set_size_inches(opts.width or w, opts.height or h)
    if not opts.no_title:
        title = opts.title if opts.title is not None else _default_title(rs, kind)
        if opts.title is None and opts.title_extra:
            title = f"{title} {opts.title_extra}"
        if len(axes) == 1:
            axes[0].set_title(title)
        else:
            fig.suptitle(title)
    return fig


def _union(a0: float, a1: float, b0: float, b1: float) -> tuple[float, float]:
    """The union of two axis ranges, keeping an inverted axis inverted."""
    vals = [v for v in (a0, a1, b0, b1) if math.isfinite(v)]
    lo, hi = min(vals), max(vals)
    return (hi, lo) if a0 > a1 else (lo, hi)  # an inverted axis (the ellipse's delay) stays so
