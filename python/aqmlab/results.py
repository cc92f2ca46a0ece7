"""Simulation results: the results contract of ``docs/design.md`` as a Python object.

A :class:`SimResult` holds the summary (a plain ``dict`` shaped like ``summary.json``) and the
columnar records the simulator produced (time series per monitored link, per-flow rows, optional
congestion-window traces). It converts them to pandas, plots them and writes them to a directory:

``DIR/summary.json``, ``DIR/timeseries.parquet``, ``DIR/flows.parquet``, ``DIR/cwnd.parquet``
(when traces were asked for), ``DIR/class_timeseries.parquet`` (per-class queues of class-based
qdiscs, when there are any) and ``DIR/queue.png`` (queue length and throughput).

Writing goes through :mod:`aqmlab.output`: everything is written into a temporary sibling folder
that is renamed into place at the end, an existing folder is replaced only if it is an aqmlab
result, and a failure or Ctrl-C leaves nothing behind.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.protocol import Result, deprecated, json_ready, new_axes, plotted

__all__ = ["SimResult", "flow_columns", "jain_index", "write_scenario"]

# The Parquet tables of a results folder; the optional ones are written only when not empty.
_TABLES = ("timeseries", "flows", "cwnd", "class_timeseries", "pings")
_OPTIONAL = ("cwnd", "class_timeseries", "pings")
_EXTRA = ("sqm_controller.json",)  # further JSON files a run may write (SimResult.extra)


def flow_columns(rows: list[dict[str, Any]]) -> dict[str, list]:
    """The ``flows.parquet`` columns of the summary's ``flows`` rows.

    Every flat key becomes a column; the nested ``queue_delay_by_link`` (per-link queueing
    delays) stays in ``summary.json`` only, the flat ``queue_delay_ms_*`` columns give the
    flow's bottleneck queue (``queue_delay_link``).

    Parameters
    ----------
    rows : list of dict
        The ``flows`` entries of a summary.

    Returns
    -------
    dict
        Column name to list of values, in the rows' order.
    """
    cols: dict[str, list] = {}
    for row in rows:
        for k, v in row.items():
            if not isinstance(v, dict):
                cols.setdefault(k, []).append(v)
    return cols


def write_scenario(scenario, directory: Path) -> None:
    """Write ``scenario.toml`` (the normalized scenario) into a result folder, with copies of
    the files it reads (PAQMAN policies) beside it, so that ``aqmlab run
    DIR/scenario.toml`` reruns the run from the folder alone.

    Parameters
    ----------
    scenario : aqmlab.scenario.Scenario
        The scenario that was run.
    directory : Path
        The (temporary) result folder.
    """
    import shutil

    files: dict[str, Path] = {}
    text = scenario.to_toml(files)
    for name, src in files.items():
        shutil.copyfile(src, directory / name)
    (directory / "scenario.toml").write_text(text)


def jain_index(values) -> float:
    """Jain's fairness index ``(sum x)^2 / (n sum x^2)``; 1.0 for an empty or all-zero input.

    Parameters
    ----------
    values : iterable of float
        The allocations.

    Returns
    -------
    float
    """
    xs = [float(v) for v in values]
    sq = sum(x * x for x in xs)
    if not xs or sq == 0.0:
        return 1.0
    return sum(xs) ** 2 / (len(xs) * sq)


@dataclass(repr=False)
class SimResult(Result):
    """Results of one simulation run (or emulation), with the result protocol of
    :mod:`aqmlab.protocol`: :meth:`to_pandas` (its four tables), :meth:`to_dict` (the
    summary), :meth:`plot`, :meth:`save` / :meth:`load`, a one-line ``repr`` and a notebook
    view.

    Attributes
    ----------
    summary : dict
        The ``summary.json`` content (results contract, ``docs/design.md``). Times in seconds unless the
        key says ``_ms``; rates in bits per second; queue lengths in packets or bytes as named.
    columns : dict
        Raw columnar records: ``"timeseries"``, ``"flows"``, ``"cwnd"`` and
        ``"class_timeseries"``, each a mapping from column name to a list or array of equal
        length.
    extra : dict
        Further JSON files of the run, ``{file name: data}`` (``sqm_controller.json`` when SQM's
        online controller ran).
    scenario : aqmlab.scenario.Scenario, optional
        The scenario that was run; saved as the folder's ``scenario.toml`` (normalized: every
        default filled in), from which ``aqmlab run`` reproduces the run.
    flent_samples : aqmlab.flent.FlowSamples, optional
        An emulation's per-flow bytes received at each 200 ms step, from which
        :func:`aqmlab.flent.write_flent` writes its Flent file (``None`` for a simulation,
        whose Flent file is sampled by :func:`aqmlab.flent.run_sampled`). Not saved.
    """

    summary: dict[str, Any]
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    scenario: Any = None
    flent_samples: Any = field(default=None, repr=False, compare=False)

    # -- the result protocol (aqmlab.protocol) --------------------------------------------------
    def _figures(self) -> dict[str, Any]:
        s = self.summary
        out: dict[str, Any] = {
            "scenario": s.get("scenario"),
            "seed": s.get("seed"),
            "sim_seconds": s.get("sim_seconds", 0.0),
            "flows": len(s.get("flows", [])),
            "links": len(s.get("links", {})),
        }
        for name, link in list(s.get("links", {}).items())[:2]:
            out[f"{name}.utilization"] = link.get("utilization")
            out[f"{name}.queue_delay_ms"] = (link.get("queue_delay_ms") or {}).get("mean")
        return out

    def _tables(self) -> dict[str, Any]:
        import pandas as pd

        links = pd.DataFrame(
            [
                {
                    "link": name,
                    "utilization": v.get("utilization"),
                    "queue_delay_ms_mean": (v.get("queue_delay_ms") or {}).get("mean"),
                    "drops": v.get("drops"),
                    "marks": v.get("marks"),
                }
                for name, v in self.summary.get("links", {}).items()
            ]
        )
        tables = {"links": links}
        tables.update((k, v) for k, v in self.to_pandas().items() if len(v))
        return tables

    def to_dict(self) -> dict[str, Any]:
        """The summary (``summary.json``'s content) as a new JSON-ready dict.

        Returns
        -------
        dict
            Run-level statistics (results contract, ``docs/design.md``).
        """
        return json_ready(self.summary)

    def to_pandas(self, table: str | None = None):
        """The run's tables as DataFrames (the Parquet files of the results contract).

        Parameters
        ----------
        table : str, optional
            One of ``"timeseries"``, ``"flows"``, ``"cwnd"``, ``"class_timeseries"``: return
            that table only.

        Returns
        -------
        dict of str to pandas.DataFrame, or pandas.DataFrame
            ``timeseries``: per sample interval and monitored link (``time_s, link,
            queue_pkts, queue_bytes, queue_delay_ms_mean, arrivals, drops, marks,
            throughput_bps, active_flows``; ``active_flows``: backlogged flow queues of a
            hashed qdisc such as ``fq_codel`` at the sample instant, 0 for other qdiscs).
            ``flows``: one row per flow (``id, kind, cc, goodput_bps, rtt_ms_mean,
            retransmits, fct_s, ...``). ``cwnd``: congestion-window traces (``time_s, flow,
            cwnd, ssthresh, srtt_ms``; windows in segments) of the flows that asked for one.
            ``class_timeseries``: per sample interval, monitored link and class of a
            class-based qdisc (``time_s, link, class, queue_pkts, queue_bytes, tx_bytes,
            drops, marks``; queue at the sample instant, the others in the interval). A
            table the run did not record is empty.

        Raises
        ------
        KeyError
            ``table`` is not one of the four names.
        """
        if table is not None:
            if table not in _TABLES:
                raise KeyError(f"table = {table!r}: one of {', '.join(_TABLES)}")
            return self._frame(table)
        return {k: self._frame(k) for k in _TABLES}

    def _frame(self, key: str):
        import pandas as pd

        return pd.DataFrame(self.columns.get(key, {}))

    # -- deprecated aliases, kept for one release ----------------------------------------------
    def timeseries(self):
        """Deprecated alias of ``to_pandas("timeseries")``, kept for one release.

        Returns
        -------
        pandas.DataFrame
        """
        deprecated("SimResult.timeseries()", 'SimResult.to_pandas("timeseries")')
        return self._frame("timeseries")

    def class_timeseries(self):
        """Deprecated alias of ``to_pandas("class_timeseries")``, kept for one release.

        Returns
        -------
        pandas.DataFrame
        """
        deprecated("SimResult.class_timeseries()", 'SimResult.to_pandas("class_timeseries")')
        return self._frame("class_timeseries")

    def flows(self):
        """Deprecated alias of ``to_pandas("flows")``, kept for one release.

        Returns
        -------
        pandas.DataFrame
        """
        deprecated("SimResult.flows()", 'SimResult.to_pandas("flows")')
        return self._frame("flows")

    def cwnd(self):
        """Deprecated alias of ``to_pandas("cwnd")``, kept for one release.

        Returns
        -------
        pandas.DataFrame
        """
        deprecated("SimResult.cwnd()", 'SimResult.to_pandas("cwnd")')
        return self._frame("cwnd")

    def queue_delay_histogram(self, link: str = "bottleneck"):
        """The link's post-warm-up queue-delay histogram, its non-empty bins in order.

        Parameters
        ----------
        link : str
            The link (as named in results).

        Returns
        -------
        pandas.DataFrame
            Columns ``lo_ms, hi_ms, count`` (packets with ``lo_ms <= delay < hi_ms``) and
            ``cdf`` (fraction of the packets below ``hi_ms``: exact at each bin's upper edge).
            Bins are 32 per octave, so a bin midpoint is within 1.6 % of any delay in it
            (docs/design.md, ``queue_delay_hist``). Empty if the link dequeued nothing or the
            results predate the histogram.
        """
        import numpy as np
        import pandas as pd

        h = self.link(link).get("queue_delay_hist") or {"lo_ms": [], "hi_ms": [], "counts": []}
        counts = np.asarray(h["counts"], dtype=np.int64)
        total = counts.sum()
        cdf = np.cumsum(counts) / total if total else np.zeros(len(counts))
        return pd.DataFrame({"lo_ms": h["lo_ms"], "hi_ms": h["hi_ms"], "count": counts, "cdf": cdf})

    def link(self, name: str = "bottleneck") -> dict[str, Any]:
        """The summary of one link (``KeyError`` naming the known links if absent).

        Parameters
        ----------
        name : str
            The link (as named in results).

        Returns
        -------
        dict
        """
        links = self.summary.get("links", {})
        if name not in links:
            raise KeyError(f"no link {name!r} in the results (links: {', '.join(links)})")
        return links[name]

    # -- plots ----------------------------------------------------------------------------------
    def plot(self, ax=None, link: str | None = None):
        """Plot queue length and per-interval throughput of ``link`` (all monitored if None),
        with the queue of each class of a class-based qdisc (dashed).

        Parameters
        ----------
        ax : matplotlib Axes or pair of Axes, optional
            Two Axes: queue and throughput panels; one Axes: the queue panel only. Without
            it, a new Figure with both panels.
        link : str, optional
            The monitored link to draw (default: all).

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        if isinstance(ax, str):  # the old order plot(link, ax), kept for one release
            deprecated("SimResult.plot(link)", "SimResult.plot(link=link)")
            ax, link = link, ax
        fig, axes = new_axes(ax, 2, 1, figsize=(8, 5.5), sharex=True)
        panels = list(axes) if hasattr(axes, "__len__") else [axes]
        self._draw(fig, panels, link)
        return plotted(fig, ax)

    def _draw(self, fig, axes, link: str | None) -> None:
        """Draw :meth:`plot`'s panels on ``axes`` (two, or the queue panel alone) from the
        columns (numpy only, no pandas: the command line writes this figure with every run);
        ``fig`` (None for the caller's Axes) gets a tight layout."""
        import numpy as np

        ts = self.columns.get("timeseries") or {}
        links = list(ts.get("link", []))
        if links:
            t = np.asarray(ts["time_s"], dtype=float)
            lk = np.asarray(links, dtype=object)
            queue = np.asarray(ts["queue_pkts"], dtype=float)
            tput = np.asarray(ts["throughput_bps"], dtype=float)
            names = [link] if link else list(dict.fromkeys(links))
            for name in names:
                m = lk == name
                tt = t[m]
                axes[0].plot(tt, queue[m], lw=0.8, label=name)
                if len(axes) < 2:
                    continue
                # a 10 ms sample holds a handful of packets: average over 100 ms for the plot
                dt = float(np.median(np.diff(tt))) if len(tt) > 1 else 0.1
                k = max(1, round(0.1 / dt)) if dt > 0 else 1
                axes[1].plot(tt, _rolling_mean(tput[m], k) / 1e6, lw=0.8, label=name)
            # Classes of a class-based qdisc (drr, wfq, ...): their queues, thinner.
            cts = self.columns.get("class_timeseries") or {}
            if len(cts.get("link", [])):
                cl = np.asarray(cts["link"], dtype=object)
                cc = np.asarray(cts["class"], dtype=object)
                ct = np.asarray(cts["time_s"], dtype=float)
                cq = np.asarray(cts["queue_pkts"], dtype=float)
                keep = set(names)
                pairs = dict.fromkeys(
                    (a, b) for a, b in zip(cts["link"], cts["class"], strict=True) if a in keep
                )
                for name, cls in pairs:
                    m = (cl == name) & (cc == cls)
                    axes[0].plot(ct[m], cq[m], lw=0.5, ls="--", label=f"{name} {cls}")
        axes[0].set_ylabel("queue [packets]")
        if len(axes) > 1:
            axes[1].set_ylabel("throughput [Mb/s], 100 ms mean")
        axes[-1].set_xlabel("time [s]")
        axes[0].legend(loc="upper right", fontsize="small")
        warm = self.summary.get("warmup_s")
        if warm:
            for a in axes:
                a.axvline(warm, color="grey", ls=":", lw=0.8)
        axes[0].set_title(f"{self.summary.get('scenario', '')} (seed {self.summary.get('seed')})")
        if fig is not None:  # a figure of its own (not the caller's Axes)
            fig.tight_layout()

    def save_queue_figure(self, path: str | os.PathLike[str]) -> None:
        """Write the queue figure (:meth:`plot`'s panels, all monitored links) as a PNG to
        ``path``: a bare Figure without pyplot state, drawn from the columns without pandas.

        Parameters
        ----------
        path : path-like
            The PNG file.
        """
        from matplotlib.figure import Figure

        fig = Figure(figsize=(8, 5.5))
        self._draw(fig, fig.subplots(2, 1, sharex=True), None)
        fig.savefig(path, dpi=110, format="png")

    def _save_queue_figure_atomic(self, path: Path) -> None:
        """:meth:`save_queue_figure` through a temporary name (a worker writes it beside files
        its parent writes)."""
        from aqmlab.output import write_atomic

        with write_atomic(path) as tmp:
            self.save_queue_figure(tmp)

    def _write_tables(self, directory: Path) -> None:
        """The Parquet files of the results contract (the optional ones only when not empty)."""
        import pyarrow.parquet as pq

        from aqmlab.arrow import table

        for key in _TABLES:
            cols = self.columns.get(key)
            if cols is None or (key in _OPTIONAL and not any(len(v) for v in cols.values())):
                continue
            pq.write_table(table(cols), directory / f"{key}.parquet")

    def _part(self, summary_keys: tuple[str, ...], tables: tuple[str, ...]) -> SimResult:
        """A copy with only these summary keys and tables, to hand to a worker."""
        return SimResult(
            summary={k: self.summary.get(k) for k in summary_keys},
            columns={k: v for k, v in self.columns.items() if k in tables},
        )

    # -- persistence ----------------------------------------------------------------------------
    def write_into(
        self, directory: str | os.PathLike[str], plots: bool = True, worker=None
    ) -> None:
        """Write the results contract files into an existing directory (not atomic by itself).

        Parameters
        ----------
        directory : path-like
            The folder (a temporary one of :func:`aqmlab.output.output_dir`).
        plots : bool
            Write ``queue.png``.
        worker : aqmlab.forked.Worker, optional
            A forked process that draws ``queue.png`` while this one writes the Parquet files,
            or without plots writes the Parquet files while this one writes the JSON ones
            (waited for before returning; killed if anything fails). Without it, everything is
            written here.
        """
        d = Path(directory)
        if worker is not None and plots:
            part = self._part(("scenario", "seed", "warmup_s"), ("timeseries", "class_timeseries"))
            worker.submit("queue.png", part._save_queue_figure_atomic, d / "queue.png")
        elif worker is not None:
            worker.submit("Parquet files", self._part((), _TABLES)._write_tables, d)
        try:
            (d / "summary.json").write_text(
                json.dumps(self.summary, indent=2, sort_keys=False) + "\n"
            )
            if self.scenario is not None:
                write_scenario(self.scenario, d)
            if worker is None or plots:
                self._write_tables(d)
            for name, data in self.extra.items():
                (d / name).write_text(json.dumps(data, indent=1, default=float) + "\n")
            if worker is not None:
                worker.wait()
            elif plots:
                self.save_queue_figure(d / "queue.png")
        except BaseException:
            if worker is not None:
                worker.close()  # before the caller removes the folder it may be writing into
            raise

    def save(
        self, directory: str | os.PathLike[str], plots: bool = True, force: bool = False
    ) -> Path:
        """Write the results to ``directory`` (see :mod:`aqmlab.output`) and return its path.

        Parameters
        ----------
        directory : path-like
            The result folder.
        plots : bool
            Write ``queue.png``.
        force : bool
            Replace a folder that holds more than an aqmlab result.

        Returns
        -------
        Path

        Raises
        ------
        OutputError
            ``directory`` exists and is not an aqmlab result (unless ``force``), or is a file,
            the current folder, the home folder, ...
        """
        from aqmlab.output import output_dir

        with output_dir(directory, force=force, command="save") as tmp:
            self.write_into(tmp, plots=plots)
        return Path(directory)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> SimResult:
        """Read a results directory written by :meth:`save`.

        Parameters
        ----------
        directory : path-like
            The result folder.

        Returns
        -------
        SimResult
        """
        import pyarrow.parquet as pq

        d = Path(directory)
        summary = json.loads((d / "summary.json").read_text())
        columns = {}
        for key in _TABLES:
            f = d / f"{key}.parquet"
            if f.exists():
                columns[key] = pq.read_table(f).to_pydict()
        extra = {}
        for name in _EXTRA:
            if (d / name).exists():
                extra[name] = json.loads((d / name).read_text())
        scenario = None
        if (d / "scenario.toml").exists():
            from aqmlab.scenario import load_scenario

            scenario = load_scenario(d / "scenario.toml")
        return cls(summary=summary, columns=columns, extra=extra, scenario=scenario)


def _rolling_mean(x, k: int):
    """Mean of the last ``k`` values at each position (fewer at the start), like pandas'
    ``rolling(k, min_periods=1).mean()``."""
    import numpy as np

    c = np.concatenate(([0.0], np.cumsum(x)))
    i = np.arange(1, len(x) + 1)
    lo = np.maximum(0, i - k)
    return (c[i] - c[lo]) / (i - lo)
