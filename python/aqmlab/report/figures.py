"""The report's figures, drawn with matplotlib (Agg) and returned as PNG bytes.

Every function takes a :class:`~aqmlab.report.inputs.RunSet`, skips failed runs, and returns
None when it has nothing to draw. A configuration keeps one colour in every figure.
"""

from __future__ import annotations

import io
import math

import numpy as np

from aqmlab.report.inputs import RunSet, primary_link
from aqmlab.report.metrics import delay_histogram, flow_goodputs_mbps, run_metrics

__all__ = [
    "ELLIPSE_SIGMA",
    "MIN_CDF_MS",
    "cdf_figure",
    "delay_goodput_figure",
    "goodput_boxplot",
    "merged_histogram",
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


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    plt = _plt()
    buf = io.BytesIO()
    # no "Software" text chunk: the page must not name any web address, even encoded
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _colors(rs: RunSet) -> dict[str, object]:
    plt = _plt()
    configs = rs.configs
    cmap = plt.get_cmap("tab10" if len(configs) <= 10 else "tab20")
    return {c: cmap(i % cmap.N) for i, c in enumerate(configs)}


def _legend(ax, n: int) -> None:
    if n > 6:
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.legend(fontsize="small")


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


def cdf_figure(rs: RunSet) -> bytes | None:
    """Queue-delay CDF of each configuration, from its runs' merged histograms.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    bytes or None
        The figure as PNG (None when no run has the data).
    """
    plt = _plt()
    colors = _colors(rs)
    fig, ax = plt.subplots(figsize=(9, 4.8))
    drawn = 0
    for cfg in rs.configs:
        lo, hi, counts = merged_histogram(rs, cfg)
        if counts.sum() <= 0:
            continue
        x, y = cdf_points(lo, hi, counts)
        n = len(rs.ok(cfg))
        ax.plot(np.maximum(x, MIN_CDF_MS), y, color=colors[cfg], lw=1.2, label=f"{cfg} (n={n})")
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log")
    ax.set_ylim(0, 1.005)
    ax.set_xlabel("queue delay [ms] (log scale)")
    ax.set_ylabel("fraction of packets")
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax, drawn)
    fig.tight_layout()
    return _png(fig)


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


def delay_goodput_figure(rs: RunSet) -> bytes | None:
    """RFC 7928 §2.7-style plot: mean queue delay (x, reversed) against total goodput (y), one
    point per run, the mean and a 1-sigma ellipse per configuration (with >= 3 runs).

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    bytes or None
        The figure as PNG (None when no run has the data).
    """
    plt = _plt()
    colors = _colors(rs)
    fig, ax = plt.subplots(figsize=(9, 5.2))
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
        ax.scatter(xs, ys, s=12, color=c, alpha=0.6)
        ax.scatter(
            [xs.mean()], [ys.mean()], s=60, color=c, marker="X", label=f"{cfg} (n={len(xs)})"
        )
        _ellipse(ax, xs, ys, c)
        drawn += 1
    if not drawn:
        plt.close(fig)
        return None
    ax.autoscale_view()
    ax.invert_xaxis()
    ax.set_xlabel("mean queue delay [ms] (decreasing: better to the right)")
    ax.set_ylabel("total goodput [Mb/s]")
    ax.grid(True, alpha=0.3)
    _legend(ax, drawn)
    fig.tight_layout()
    return _png(fig)


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


def timeseries_figures(rs: RunSet) -> list[bytes]:
    """Queue delay and throughput over time of the primary link, one line per configuration
    (mean over its runs; 100 ms moving average), at most PER_FIGURE configurations a figure.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    list of bytes
        PNG figures (empty without time series).
    """
    plt = _plt()
    colors = _colors(rs)
    series = [(c, s) for c in rs.configs if (s := _mean_series(rs, c)) is not None]
    out = []
    for i in range(0, len(series), PER_FIGURE):
        chunk = series[i : i + PER_FIGURE]
        fig, axes = plt.subplots(2, 1, figsize=(9, 5.6), sharex=True)
        for cfg, (t, delay, thr) in chunk:
            axes[0].plot(t, delay, lw=0.9, color=colors[cfg], label=cfg)
            axes[1].plot(t, thr, lw=0.9, color=colors[cfg], label=cfg)
        axes[0].set_ylabel("queue delay [ms]")
        axes[1].set_ylabel("throughput [Mb/s]")
        axes[1].set_xlabel("time [s]")
        for a in axes:
            a.grid(True, alpha=0.3)
        _legend(axes[0], len(chunk))
        fig.tight_layout()
        out.append(_png(fig))
    return out


def goodput_boxplot(rs: RunSet) -> bytes | None:
    """Per-flow goodput of each configuration (its runs' flows pooled), one box each.

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).

    Returns
    -------
    bytes or None
        The figure as PNG (None when no run has the data).
    """
    plt = _plt()
    colors = _colors(rs)
    data, labels, cols = [], [], []
    for cfg in rs.configs:
        vals = [g for r in rs.ok(cfg) for g in flow_goodputs_mbps(r)]
        if vals:
            data.append(vals)
            labels.append(cfg)
            cols.append(colors[cfg])
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.45 * len(data)))
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
    ax.set_yticks(range(1, len(labels) + 1), labels, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("per-flow goodput [Mb/s]")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return _png(fig)
