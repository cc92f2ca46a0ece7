"""The report's figures, drawn with matplotlib (Agg).

Every ``*_figure`` function takes a :class:`~aqmlab.report.inputs.RunSet` and a size (``"one"``
column, 3.5 in, or ``"two"`` columns, 7.16 in wide: the IEEE and ACM two-column formats), skips
failed runs and returns a matplotlib Figure, or None when it has nothing to draw; the page's
functions (:func:`cdf_figure`, ...) return the same figures as PNG bytes. A configuration keeps
one colour in every figure: the ten colours of ``tab10`` up to ten configurations, ``viridis``
sampled at as many points as there are lines beyond that (:func:`line_colors`).
:mod:`aqmlab.report.export` writes them as PNG, SVG and PDF with their fonts embedded.
"""

from __future__ import annotations

import io
import math

import numpy as np

from aqmlab.report.inputs import RunSet, primary_link
from aqmlab.report.metrics import (
    METRIC_RANGE,
    METRICS,
    PARAMETER_METRICS,
    delay_histogram,
    flow_goodputs_fair,
    run_metrics,
)

__all__ = [
    "ELLIPSE_SIGMA",
    "MIN_CDF_MS",
    "WIDTHS",
    "STYLE",
    "styled",
    "all_figures",
    "bar_fig",
    "box_fig",
    "cdf_fig",
    "cdf_figure",
    "delay_goodput_figure",
    "ellipse_fig",
    "goodput_boxplot",
    "line_colors",
    "merged_histogram",
    "parameter_figs",
    "parameter_figures",
    "timeseries_figs",
    "timeseries_figures",
]

#: The delay-vs-goodput ellipses are the 1-sigma contour of a two-dimensional normal fitted to
#: the configuration's per-run points (Winstein and Balakrishnan's Remy plots, which RFC 7928
#: §2.7 takes as its model): about 39 % of a normal's mass lies inside.
ELLIPSE_SIGMA = 1.0
#: CDFs use a log delay axis; delays below this (ms; 0.1 us, e.g. packets that found the
#: queue empty) are drawn at this value.
MIN_CDF_MS = 1e-4
#: Configurations per time-series figure (more get further figures).
PER_FIGURE = 10
#: Figure widths in inches: one column and two columns of a two-column paper (IEEE, ACM).
WIDTHS = {"one": 3.5, "two": 7.16}
#: matplotlib settings of every figure: TrueType fonts embedded in PDF (Type 42, not Type 3),
#: text drawn as outlines in SVG (no font needed to view it), font sizes for print. Figures
#: use the constrained layout and are saved without cropping, so a file is exactly as wide
#: as its size says.
STYLE = {
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "path",
    "svg.hashsalt": "aqmlab",
    "font.size": 8,
    "axes.titlesize": 8,
    "figure.titlesize": 9,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "lines.linewidth": 1.2,
}


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def styled(fn):
    """Run ``fn`` (a function that draws) inside :data:`STYLE`, so that every text it makes
    (labels, legends, titles) takes the style's sizes.

    Parameters
    ----------
    fn : callable
        The drawing function.

    Returns
    -------
    callable
    """
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _plt().rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper


def _new(size: str, height: float, nrows: int = 1, ncols: int = 1, **kw):
    """A new Figure ``WIDTHS[size]`` wide and ``height`` times as high, in :data:`STYLE`."""
    plt = _plt()
    if size not in WIDTHS:
        raise ValueError(f"size = {size!r}: must be one of {', '.join(WIDTHS)}")
    w = WIDTHS[size]
    with plt.rc_context(STYLE):
        return plt.subplots(nrows, ncols, figsize=(w, w * height), layout="constrained", **kw)


def _png(fig) -> bytes:
    plt = _plt()
    buf = io.BytesIO()
    # no "Software" text chunk: the page must not name any web address, even encoded
    with plt.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=130, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def line_colors(n: int) -> list[tuple]:
    """``n`` distinguishable colours: ``tab10``'s for up to 10 lines, else ``viridis`` sampled
    at ``n`` points from dark to light (its last tenth, too light on white, left out).

    Parameters
    ----------
    n : int
        The number of lines.

    Returns
    -------
    list of RGBA tuples

    Examples
    --------
    >>> len(line_colors(3)), len(set(line_colors(25)))
    (3, 25)
    """
    plt = _plt()
    if n <= 10:
        cmap = plt.get_cmap("tab10")
        return [tuple(cmap(i)) for i in range(n)]
    cmap = plt.get_cmap("viridis")
    return [tuple(cmap(x)) for x in np.linspace(0.0, 0.9, n)]


def _colors(rs: RunSet) -> dict[str, object]:
    configs = rs.configs
    return dict(zip(configs, line_colors(len(configs)), strict=True))


def _legend(ax, n: int, size: str = "two") -> None:
    """Up to 6 entries inside the axes; more beside them (two columns wide) or below the
    figure, one per line, the figure growing to hold them (one column wide)."""
    if n <= 6 and size == "two":
        ax.legend()
        return
    fig = ax.figure
    handles, labels = ax.get_legend_handles_labels()
    if size == "two":
        fig.legend(handles, labels, loc="outside right upper", frameon=False)
        return
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + 0.14 * n + 0.1)
    fig.legend(handles, labels, loc="outside lower center", frameon=False, ncol=1)


def merged_histogram(rs: RunSet, config: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bins (lo, hi, count) of the configuration's runs' histograms added up, by lo.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    config : str
        The configuration.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lo, hi, count)`` (ms, ms, packets).
    """
    merged: dict[float, list] = {}
    for r in rs.ok(config):
        h = delay_histogram(r)
        for lo, (hi, c) in (h or {}).items():
            merged.setdefault(lo, [hi, 0])[1] += c
    los = sorted(merged)
    return (
        np.array(los, dtype=float),
        np.array([merged[lo][0] for lo in los], dtype=float),
        np.array([merged[lo][1] for lo in los], dtype=float),
    )


def cdf_points(lo: np.ndarray, hi: np.ndarray, counts: np.ndarray):
    """(x, y) of the CDF through every bin edge: exact at the edges, linear inside a bin.

    Examples
    --------
    >>> x, y = cdf_points(np.array([1.0, 2.0]), np.array([2.0, 3.0]), np.array([1.0, 3.0]))
    >>> x.tolist(), y.tolist()
    ([1.0, 2.0, 2.0, 3.0], [0.0, 0.25, 0.25, 1.0])
    """
    cum = np.cumsum(counts) / counts.sum()
    before = np.concatenate([[0.0], cum[:-1]])
    x = np.column_stack([lo, hi]).ravel()
    y = np.column_stack([before, cum]).ravel()
    return x, y


def _png_or_none(fig) -> bytes | None:
    return None if fig is None else _png(fig)


@styled
def cdf_fig(rs: RunSet, size: str = "two"):
    """Queue-delay CDF of each configuration, from its runs' merged histograms.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    size : {"one", "two"}
        One column (3.5 in) or two columns (7.16 in) wide.

    Returns
    -------
    matplotlib Figure or None
        None when no run has the data.
    """
    plt = _plt()
    colors = _colors(rs)
    fig, ax = _new(size, 0.55)
    drawn = 0
    for cfg in rs.configs:
        lo, hi, counts = merged_histogram(rs, cfg)
        if counts.sum() <= 0:
            continue
        x, y = cdf_points(lo, hi, counts)
        n = len(rs.ok(cfg))
        ax.plot(np.maximum(x, MIN_CDF_MS), y, color=colors[cfg], label=f"{cfg} (n={n})")
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log")
    ax.set_ylim(0, 1.005)
    ax.set_xlabel("queue delay [ms] (log scale)")
    ax.set_ylabel("fraction of packets")
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax, drawn, size)
    return fig


def cdf_figure(rs: RunSet) -> bytes | None:
    """:func:`cdf_fig` as PNG bytes (the page's figure).

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    bytes or None
    """
    return _png_or_none(cdf_fig(rs))


def _ellipse(ax, xs: np.ndarray, ys: np.ndarray, color) -> bool:
    """Draw the ELLIPSE_SIGMA contour of the points' fitted normal; False if degenerate."""
    from matplotlib.patches import Ellipse

    if len(xs) < 3:
        return False
    cov = np.cov(xs, ys)
    if not np.all(np.isfinite(cov)):
        return False
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0.0, None)
    big = vecs[:, 1]
    angle = math.degrees(math.atan2(big[1], big[0]))
    w, h = 2 * ELLIPSE_SIGMA * np.sqrt(vals[1]), 2 * ELLIPSE_SIGMA * np.sqrt(vals[0])
    ax.add_patch(
        Ellipse(
            (xs.mean(), ys.mean()),
            w,
            h,
            angle=angle,
            facecolor=(*color[:3], 0.15),
            edgecolor=color,
            lw=1.2,
        )
    )
    return True


@styled
def ellipse_fig(rs: RunSet, size: str = "two"):
    """RFC 7928 §2.7-style plot: mean queue delay (x, reversed) against total goodput (y), one
    point per run, the mean and a 1-sigma ellipse per configuration (with >= 3 runs).

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    size : {"one", "two"}
        One column (3.5 in) or two columns (7.16 in) wide.

    Returns
    -------
    matplotlib Figure or None
        None when no run has the data.
    """
    plt = _plt()
    colors = _colors(rs)
    fig, ax = _new(size, 0.6)
    drawn = 0
    for cfg in rs.configs:
        pts = [run_metrics(r) for r in rs.ok(cfg)]
        xs = np.array([p["delay_mean"] for p in pts])
        ys = np.array([p["goodput"] for p in pts])
        ok = np.isfinite(xs) & np.isfinite(ys)
        xs, ys = xs[ok], ys[ok]
        if not len(xs):
            continue
        c = colors[cfg]
        ax.scatter(xs, ys, s=8, color=c, alpha=0.6)
        ax.scatter(
            [xs.mean()], [ys.mean()], s=40, color=c, marker="X", label=f"{cfg} (n={len(xs)})"
        )
        _ellipse(ax, xs, ys, c)
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.autoscale_view()
    ax.invert_xaxis()
    ax.set_xlabel("mean queue delay [ms] (reversed)")
    ax.set_ylabel("total goodput [Mb/s]")
    ax.grid(True, alpha=0.3)
    _legend(ax, drawn, size)
    return fig


def delay_goodput_figure(rs: RunSet) -> bytes | None:
    """:func:`ellipse_fig` as PNG bytes (the page's figure).

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    bytes or None
    """
    return _png_or_none(ellipse_fig(rs))


def _mean_series(rs: RunSet, config: str):
    """Queue delay and throughput of the primary link, averaged over the configuration's runs
    at each sample time (time_s, delay_ms, throughput_Mbps), or None without time series."""
    import pandas as pd

    parts = []
    for r in rs.ok(config):
        ts = r.timeseries()
        if ts is None or not len(ts):
            continue
        link = primary_link(r.summary, r.flat)
        if link is not None and "link" in ts:
            ts = ts[ts["link"] == link]
        parts.append(ts[["time_s", "queue_delay_ms_mean", "throughput_bps"]])
    if not parts:
        return None
    df = pd.concat(parts).groupby("time_s", sort=True).mean()
    t = df.index.to_numpy()
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 0.1
    k = max(1, round(0.1 / dt)) if dt > 0 else 1  # 100 ms moving average for the eye
    delay = df["queue_delay_ms_mean"].rolling(k, min_periods=1).mean().to_numpy()
    thr = (df["throughput_bps"].rolling(k, min_periods=1).mean() / 1e6).to_numpy()
    return t, delay, thr


@styled
def timeseries_figs(rs: RunSet, size: str = "two") -> list:
    """Queue delay and throughput over time of the primary link, one line per configuration
    (mean over its runs; 100 ms moving average), at most PER_FIGURE configurations a figure.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    size : {"one", "two"}
        One column (3.5 in) or two columns (7.16 in) wide.

    Returns
    -------
    list of matplotlib Figure
        Empty without time series.
    """
    colors = _colors(rs)
    series = [(c, s) for c in rs.configs if (s := _mean_series(rs, c)) is not None]
    out = []
    for i in range(0, len(series), PER_FIGURE):
        chunk = series[i : i + PER_FIGURE]
        fig, axes = _new(size, 0.62 if size == "two" else 1.0, 2, 1, sharex=True)
        for cfg, (t, delay, thr) in chunk:
            axes[0].plot(t, delay, lw=0.8, color=colors[cfg], label=cfg)
            axes[1].plot(t, thr, lw=0.8, color=colors[cfg], label=cfg)
        axes[0].set_ylabel("queue delay [ms]")
        axes[1].set_ylabel("throughput [Mb/s]")
        axes[1].set_xlabel("time [s]")
        for a in axes:
            a.grid(True, alpha=0.3)
        _legend(axes[0], len(chunk), size)
        out.append(fig)
    return out


def timeseries_figures(rs: RunSet) -> list[bytes]:
    """:func:`timeseries_figs` as PNG bytes (the page's figures).

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    list of bytes
    """
    return [_png(f) for f in timeseries_figs(rs)]


@styled
def box_fig(rs: RunSet, size: str = "two"):
    """Per-flow goodput over the fair share (link rate / flows) of each configuration, its
    runs' flows pooled, one box each; 1 is a fair share, so 10- and 100-flow runs compare.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    size : {"one", "two"}
        One column (3.5 in) or two columns (7.16 in) wide.

    Returns
    -------
    matplotlib Figure or None
        None when no run has the data.
    """
    colors = _colors(rs)
    data, labels, cols = [], [], []
    for cfg in rs.configs:
        vals = [g for r in rs.ok(cfg) for g in flow_goodputs_fair(r)]
        if vals:
            data.append(vals)
            labels.append(cfg)
            cols.append(colors[cfg])
    if not data:
        return None
    w = WIDTHS.get(size, WIDTHS["two"])
    fig, ax = _new(size, (0.5 + 0.2 * len(data)) / w)
    import inspect

    # horizontal boxes: `orientation` since matplotlib 3.10, `vert` before
    horizontal = (
        {"orientation": "horizontal"}
        if "orientation" in inspect.signature(ax.boxplot).parameters
        else {"vert": False}
    )
    box = ax.boxplot(data, patch_artist=True, widths=0.6, **horizontal)
    for patch, c in zip(box["boxes"], cols, strict=True):
        patch.set_facecolor((*c[:3], 0.35))
        patch.set_edgecolor(c)
    ax.set_yticks(range(1, len(labels) + 1), labels)
    ax.invert_yaxis()
    ax.axvline(1.0, color="0.5", lw=0.8, ls="--")
    ax.set_xlabel("per-flow goodput / fair share (link rate / flows)")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def goodput_boxplot(rs: RunSet) -> bytes | None:
    """:func:`box_fig` as PNG bytes (the page's figure).

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    bytes or None
    """
    return _png_or_none(box_fig(rs))


@styled
def bar_fig(rs: RunSet, size: str = "two", metric: str = "delay_mean"):
    """One bar per configuration: a metric's mean over its runs with the 95 % Student-t
    interval as an error bar.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    size : {"one", "two"}
        One column (3.5 in) or two columns (7.16 in) wide.
    metric : str
        A key of :func:`aqmlab.report.metrics.run_metrics` (``delay_mean``, ``delay_p99``,
        ``utilization``, ``loss``, ``goodput``, ``goodput_fair``, ``jain``, ...).

    Returns
    -------
    matplotlib Figure or None
        None when no run has the metric.
    """
    from aqmlab.stats import mean_ci

    titles = {k: f"{t} [{u}]" if u else t for k, t, u in METRICS}
    titles.update(dict(PARAMETER_METRICS))
    if metric not in titles:
        raise ValueError(f"metric = {metric!r}: must be one of {', '.join(titles)}")
    colors = _colors(rs)
    rows = []
    for cfg in rs.configs:
        vals = [run_metrics(r)[metric] for r in rs.ok(cfg)]
        ci = mean_ci(v for v in vals if math.isfinite(v))
        if math.isfinite(ci.mean):
            rows.append((cfg, ci))
    if not rows:
        return None
    w = WIDTHS.get(size, WIDTHS["two"])
    fig, ax = _new(size, (0.5 + 0.2 * len(rows)) / w)
    y = np.arange(len(rows))
    means = np.array([c.mean for _, c in rows])
    lo = np.array([c.mean - c.ci_low if math.isfinite(c.ci_low) else 0.0 for _, c in rows])
    hi = np.array([c.ci_high - c.mean if math.isfinite(c.ci_high) else 0.0 for _, c in rows])
    ax.barh(y, means, xerr=[lo, hi], color=[colors[c] for c, _ in rows], capsize=2, height=0.6)
    ax.set_yticks(y, [c for c, _ in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"{titles[metric]} (mean, 95 % CI over seeds)")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _band_points(rs: RunSet, axis, others, metric: str):
    """{line (values of the other axes): [(x value, mean, ci_low, ci_high, n)]} of one metric."""
    from aqmlab.stats import mean_ci

    cells: dict[tuple, dict] = {}
    for r in rs.ok():
        line = tuple(r.flat.get(o.key) for o in others)
        cells.setdefault(line, {}).setdefault(r.flat.get(axis.key), []).append(
            run_metrics(r)[metric]
        )
    out = {}
    for line in sorted(
        cells, key=lambda ln: tuple(o.position(v) for o, v in zip(others, ln, strict=True))
    ):
        pts = []
        for v in sorted(cells[line], key=axis.position):
            ci = mean_ci(x for x in cells[line][v] if math.isfinite(x))  # 95 % Student-t
            pts.append((v, ci.mean, ci.ci_low, ci.ci_high, ci.n))
        out[line] = pts
    return out


#: Up to this many values an axis gets a tick at each; beyond, at every k-th value.
MAX_TICKS = 6


def _x_ticks(ax, axis) -> None:
    """The x ticks of a parameter panel: at each value (written as the axis writes it) up to
    MAX_TICKS values, beyond that at every k-th value (the first and the last always); many
    categories are written at a slant."""
    vals = list(axis.values)
    k = math.ceil(len(vals) / MAX_TICKS)
    shown = vals[::k] if vals[-1] in vals[::k] else [*vals[::k], vals[-1]]
    if axis.numeric:
        nums = [axis.number(v) for v in vals]
        if min(nums) > 0 and max(nums) / min(nums) >= 10:
            ax.set_xscale("log")
        ax.set_xticks([axis.number(v) for v in shown], [axis.text(v) for v in shown])
        ax.minorticks_off()
    else:
        many = len(vals) > MAX_TICKS
        ax.set_xticks(
            range(len(vals)),
            [axis.text(v) for v in vals],
            rotation=45 if many else 0,
            ha="right" if many else "center",
        )


@styled
def parameter_figs(rs: RunSet, size: str = "two") -> list[tuple[str, object]]:
    """Metric versus parameter, one figure per axis of a sweep with at least two values.

    Six panels (median and p99 queue delay, utilization, loss, Jain's index, goodput over the
    fair share); x is the axis (numbers in their unit, numerically ordered, a log scale when
    they span a factor of 10 or more; categories in the spec's order), one line per combination
    of the other axes' values: the mean over the seeds and a band of the two-sided 95 %
    Student-t confidence interval of the mean (no band where a point has one run).

    Parameters
    ----------
    rs : RunSet
        A sweep's runs (:func:`aqmlab.report.load_runs`); other inputs have no axes.
    size : {"one", "two"}
        One column (3.5 in, panels 2 wide) or two columns (7.16 in, panels 3 wide).

    Returns
    -------
    list of (str, matplotlib Figure)
        The axis key and its figure.
    """
    out = []
    for axis in rs.axes:
        if len(axis.values) < 2:
            continue
        others = [o for o in rs.axes if o is not axis and len(o.values) > 1]
        ncols = 3 if size == "two" else 2
        nrows = math.ceil(len(PARAMETER_METRICS) / ncols)
        fig, axs = _new(size, 0.3 * nrows if size == "two" else 0.42 * nrows, nrows, ncols)
        axs = np.atleast_1d(axs).ravel()
        handles: dict[str, object] = {}
        for ax, (metric, title) in zip(axs, PARAMETER_METRICS, strict=False):
            lines = _band_points(rs, axis, others, metric)
            colors = line_colors(len(lines))
            drawn = False
            for color, (line, pts) in zip(colors, lines.items(), strict=True):
                pts = [p for p in pts if math.isfinite(p[1])]
                if not pts:
                    continue
                x = np.array(
                    [axis.number(p[0]) if axis.numeric else axis.position(p[0]) for p in pts]
                )
                m = np.array([p[1] for p in pts])
                lo = np.array([p[2] if math.isfinite(p[2]) else p[1] for p in pts])
                hi = np.array([p[3] if math.isfinite(p[3]) else p[1] for p in pts])
                # a band beyond what the metric can take (a negative delay, a Jain index
                # above 1) is clipped to its range
                bottom, top = METRIC_RANGE.get(metric, (0.0, math.inf))
                lo, hi = np.clip(lo, bottom, top), np.clip(hi, bottom, top)
                label = (
                    ", ".join(o.describe(v) for o, v in zip(others, line, strict=True)) or "mean"
                )
                (h,) = ax.plot(x, m, marker="o", ms=2.5, color=color, label=label)
                ax.fill_between(x, lo, hi, color=color, alpha=0.18, lw=0)
                handles.setdefault(label, h)
                drawn = True
            ax.set_ylabel(title)
            ax.grid(True, alpha=0.3)
            if not drawn:
                ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
            _x_ticks(ax, axis)
        for ax in axs[len(PARAMETER_METRICS) :]:
            ax.set_visible(False)
        for ax in axs[-ncols:]:
            ax.set_xlabel(axis.title)
        if handles and (len(handles) > 1 or others):
            ncol = min(len(handles), 3 if size == "two" else 2)
            w, h = fig.get_size_inches()  # room for the legend below the panels
            fig.set_size_inches(w, h + 0.14 * math.ceil(len(handles) / ncol) + 0.1)
            fig.legend(
                list(handles.values()),
                list(handles),
                loc="outside lower center",
                ncol=ncol,
                frameon=False,
            )
        out.append((axis.key, fig))
    return out


def parameter_figures(rs: RunSet) -> list[tuple[str, bytes]]:
    """:func:`parameter_figs` as PNG bytes (the page's figures).

    Parameters
    ----------
    rs : RunSet
        A sweep's runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    list of (str, bytes)
        The axis key and its figure.
    """
    return [(k, _png(f)) for k, f in parameter_figs(rs)]


def all_figures(rs: RunSet, size: str = "two") -> list[tuple[str, object]]:
    """Every figure of the report, named as files: ``param-KEY`` (one per sweep axis), ``cdf``,
    ``delay-goodput``, ``timeseries`` (``timeseries-2``, ... beyond ten configurations),
    ``goodput``.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    size : {"one", "two"}
        One column (3.5 in) or two columns (7.16 in) wide.

    Returns
    -------
    list of (str, matplotlib Figure)
    """
    import re

    out = [("param-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", k), f) for k, f in parameter_figs(rs, size)]
    for name, fig in (("cdf", cdf_fig(rs, size)), ("delay-goodput", ellipse_fig(rs, size))):
        if fig is not None:
            out.append((name, fig))
    for i, fig in enumerate(timeseries_figs(rs, size)):
        out.append(("timeseries" if i == 0 else f"timeseries-{i + 1}", fig))
    box = box_fig(rs, size)
    if box is not None:
        out.append(("goodput", box))
    return out
