"""The report's HTML: one self-contained page (inline CSS, figures as base64 PNG data URIs, no
script, no external file or address)."""

from __future__ import annotations

import base64
import math
from html import escape

from aqmlab.report.figures import (
    ELLIPSE_SIGMA,
    cdf_figure,
    delay_goodput_figure,
    goodput_boxplot,
    parameter_figures,
    timeseries_figures,
)
from aqmlab.report.inputs import RunSet, primary_link
from aqmlab.report.metrics import METRICS, run_metrics
from aqmlab.stats import mean_ci

__all__ = ["render_page", "render_suite"]

_CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222;
       padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.5em; border-bottom: 2px solid #446; padding-bottom: .2em; }
h2 { font-size: 1.2em; margin-top: 1.8em; color: #335; }
table { border-collapse: collapse; font-size: .88em; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: right; }
th { background: #eef; }
td.cfg, th.cfg { text-align: left; }
tbody tr:nth-child(even) { background: #f8f8fb; }
.note { color: #555; font-size: .9em; }
img { max-width: 100%; height: auto; display: block; margin: .5em 0; }
section { margin-bottom: 1em; }
code { background: #f3f3f3; padding: 0 .2em; }
"""


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    a = abs(x)
    if a >= 100:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _cell(values: list[float]) -> str:
    """``mean ± half-width`` of the 95 % Student-t interval: the half-width to two significant
    digits (whole units from 10 up) and the mean to the same decimal place (``0.32 ± 0.14``,
    ``98.9 ± 1.2``, ``60 ± 127``), so every cell is written by one rule; the mean alone
    (:func:`_fmt`) without an interval."""
    r = mean_ci(v for v in values if v is None or math.isfinite(v))  # 95 % Student-t
    mean, lo, hi = r.mean, r.ci_low, r.ci_high
    if not math.isfinite(mean):
        return "n/a"
    if not math.isfinite(lo):
        return _fmt(mean)
    half = (hi - lo) / 2
    if half <= 0:
        return f"{_fmt(mean)} ± 0"
    d = min(6, max(0, 1 - math.floor(math.log10(half))))
    return f"{mean:.{d}f} ± {half:.{d}f}"


def _ci_table(rs: RunSet) -> str:
    head = "".join(
        f"<th>{escape(title)}{f' [{escape(unit)}]' if unit else ''}</th>"
        for _k, title, unit in METRICS
    )
    rows = []
    for cfg in rs.configs:
        runs = rs.ok(cfg)
        failed = sum(1 for r in rs.failed if r.config == cfg)
        per = [run_metrics(r) for r in runs]
        cells = "".join(f"<td>{_cell([p[k] for p in per])}</td>" for k, _t, _u in METRICS)
        n = f"{len(runs)}" + (f" (+{failed} failed)" if failed else "")
        rows.append(f'<tr><td class="cfg">{escape(cfg)}</td><td>{n}</td>{cells}</tr>')
    return (
        '<table class="ci"><thead><tr><th class="cfg">configuration</th><th>n runs</th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _links_note(rs: RunSet) -> str:
    links = sorted({primary_link(r.summary, r.flat) or "?" for r in rs.ok()})
    return ", ".join(f"<code>{escape(n)}</code>" for n in links) or "–"


def _failed_section(rs: RunSet, pre: str = "", h: int = 2) -> str:
    if not rs.failed:
        return ""
    rows = "".join(
        f'<tr><td class="cfg">{escape(r.key)}</td><td class="cfg">{escape(r.config)}</td>'
        f"<td>{'' if r.seed is None else r.seed}</td>"
        f'<td class="cfg">{escape(r.error or "")}</td></tr>'
        for r in rs.failed
    )
    return (
        f'<section id="{pre}failed"><h{h}>Failed runs</h{h}><p class="note">Left out of every '
        'table and figure.</p><table><thead><tr><th class="cfg">run</th><th class="cfg">'
        'configuration</th><th>seed</th><th class="cfg">error</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _figure_section(
    ident: str, title: str, note: str, pngs: list[bytes], missing: str, h: int = 2
) -> str:
    body = "".join(_img(p, title) for p in pngs) if pngs else f'<p class="note">{missing}</p>'
    return f'<section id="{ident}"><h{h}>{title}</h{h}><p class="note">{note}</p>{body}</section>'


def _content(rs: RunSet, pre: str = "", h: int = 2) -> list[str]:
    """The report's sections for ``rs``: element ids prefixed with ``pre``, headings at level
    ``h``."""
    kind = {"sweep": "sweep", "runs": "folder of runs", "run": "single run"}[rs.kind]
    n_ok, n_failed = len(rs.ok()), len(rs.failed)
    keys = ", ".join(f"<code>{escape(k)}</code>" for k in rs.keys) or "–"
    params = parameter_figures(rs)
    cdf = cdf_figure(rs)
    dg = delay_goodput_figure(rs)
    ts = timeseries_figures(rs)
    box = goodput_boxplot(rs)
    return [
        f"<p>Source: <code>{escape(rs.source.name or str(rs.source))}</code> ({kind}); "
        f"{n_ok} run(s) in {len(rs.configs)} configuration(s)"
        + (f", {n_failed} failed" if n_failed else "")
        + f". Configurations differ in: {keys}. Link described: {_links_note(rs)}.</p>",
        f'<section id="{pre}summary"><h{h}>Summary with 95 % confidence intervals</h{h}>'
        '<p class="note">Per configuration, the mean over its runs (seeds) ± the half-width of '
        "the two-sided 95 % Student-t confidence interval of the mean (no interval with one "
        "run). Statistics exclude each run's warm-up. Loss = queue drops / arrivals; goodput = "
        "sum of the flows' goodputs; Jain's index over the long-lived TCP flows.</p>"
        f"{_ci_table(rs)}</section>",
        _figure_section(
            f"{pre}parameters",
            "Metric versus parameter",
            "One figure per axis of the sweep: median and p99 queue delay, utilization, loss, "
            "Jain's index and per-flow goodput over the fair share (link rate / flows; 1 is "
            "fair), one line per value of the other axes: the mean over the seeds and a band "
            "of the two-sided 95 % Student-t confidence interval of the mean.",
            [p for _k, p in params],
            "Only a sweep with an axis of at least two values has these figures.",
            h,
        )
        if rs.kind == "sweep"
        else "",
        _figure_section(
            f"{pre}cdf",
            "Queue-delay CDF",
            "Per configuration, the histograms of every packet's queue delay (all runs "
            "added up; 32 equal bins per octave, so the CDF is exact at every bin edge and a "
            "quantile read from the curve lies in the exact quantile's bin, within 3.1 % of "
            "it). Delays below 0.1 µs are drawn at 0.1 µs.",
            [cdf] if cdf else [],
            "No run has a queue-delay histogram (results written before it existed).",
            h,
        ),
        _figure_section(
            f"{pre}delay-goodput",
            "Delay versus goodput (RFC 7928 §2.7)",
            "One small dot per run (mean queue delay, total goodput), a cross at the "
            f"configuration's mean and its {ELLIPSE_SIGMA:g}-σ ellipse: the contour of a "
            "two-dimensional normal fitted to the runs' points (covariance of the points; about "
            "39 % of such a normal lies inside), drawn for configurations with at least three "
            "runs. The delay axis is reversed, so better is up and to the right.",
            [dg] if dg else [],
            "No run has both a delay and a goodput.",
            h,
        ),
        _figure_section(
            f"{pre}timeseries",
            "Time series",
            "Queue delay (mean sojourn of the packets dequeued in each 10 ms interval) and "
            "throughput of the link, averaged over the configuration's runs at each sample "
            "time, then over 100 ms; warm-up included.",
            ts,
            "No time series in the input (a sweep keeps them only when asked to).",
            h,
        ),
        _figure_section(
            f"{pre}goodput",
            "Per-flow goodput",
            "Goodput of every flow over its fair share (the link's rate over the number of "
            "flows, short flows left out; 1, the dashed line, is a fair share), the runs of a "
            "configuration pooled: box from the first to the third quartile, line at the "
            "median, whiskers to the furthest flow within 1.5 times the box's length.",
            [box] if box else [],
            "No per-flow results in the input.",
            h,
        ),
        _failed_section(rs, pre, h),
    ]


def _document(title: str, parts: list[str]) -> str:
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    return "\n".join(p for p in [*head, *parts, "</body></html>"] if p) + "\n"


def render_page(rs: RunSet, title: str) -> str:
    """The whole report for ``rs`` as an HTML document (a str).

    Parameters
    ----------
    rs : RunSet
        The runs (:func:`aqmlab.report.load_runs`).
    title : str
        The page's title.

    Returns
    -------
    str
    """
    return _document(title, _content(rs))


def render_suite(parts: list[tuple[str, str, RunSet]], title: str) -> str:
    """One HTML document for several run sets (the RFC 7928 suite's sections): a contents
    list, then per ``(ident, heading, rs)`` a section holding ``rs``'s report one heading level
    down, its element ids prefixed with ``ident-``.

    Parameters
    ----------
    parts : list of tuple
        ``(ident, heading, rs)`` per section.
    title : str
        The page's title.

    Returns
    -------
    str
    """
    toc = "".join(f'<li><a href="#{i}">{escape(t)}</a></li>' for i, t, _ in parts)
    out = [f"<nav><ul>{toc}</ul></nav>"]
    for ident, heading, rs in parts:
        out.append(f'<section id="{ident}"><h2>{escape(heading)}</h2>')
        out += _content(rs, pre=f"{ident}-", h=3)
        out.append("</section>")
    return _document(title, out)
