"""Run one scenario under several AQMs and compare them (the engine behind ``aqmlab demo``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from aqmlab.output import output_dir
from aqmlab.protocol import Result, plotted
from aqmlab.results import SimResult
from aqmlab.scenario import Scenario, load_scenario

__all__ = ["Comparison", "compare_aqms", "default_demo_scenario", "plot_comparison"]

_DEMO = Path(__file__).resolve().parents[2] / "scenarios" / "demo.toml"


def default_demo_scenario() -> Scenario:
    """The bundled demo scenario (``scenarios/demo.toml``).

    Returns
    -------
    Scenario
    """
    return load_scenario(_DEMO)


@dataclass(repr=False)
class Comparison(Result):
    """Results of one scenario under several AQMs, keyed by AQM name.

    Attributes
    ----------
    results : dict of str to SimResult
        Each AQM's run.
    """

    results: dict[str, SimResult]

    @property
    def summaries(self) -> dict[str, dict]:
        """Each AQM's ``summary.json`` content."""
        return {k: r.summary for k, r in self.results.items()}

    def _figures(self) -> dict:
        out: dict = {"aqms": list(self.results)}
        for row in self.table():
            out[f"{row['aqm']}.mean_delay_ms"] = row["mean_delay_ms"]
        return out

    def to_pandas(self):
        """:meth:`table` as a DataFrame, one row per AQM.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame(self.table())

    def to_dict(self) -> dict:
        """JSON-ready: ``{"table": comparison.json's rows}``.

        Returns
        -------
        dict
        """
        return {"table": self.table()}

    def plot(self, ax=None):
        """The bottleneck's queueing delay over time per AQM and bars of mean delay,
        utilization and loss (:func:`plot_comparison`).

        Parameters
        ----------
        ax : sequence of four matplotlib Axes, optional
            The delay panel and the three bar panels; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        if ax is None:
            return plot_comparison(self)
        _draw(self, ax, "bottleneck")
        return plotted(None, ax)

    def table(self) -> list[dict]:
        """One row per AQM with the headline numbers of the bottleneck link.

        Returns
        -------
        list of dict
            ``aqm``, ``utilization``, ``mean_queue_pkts``, ``mean_delay_ms``, ``p99_delay_ms``,
            ``loss`` (drops over arrivals), ``marks``, ``jain`` (``comparison.json``'s rows).
        """
        rows = []
        for name, r in self.results.items():
            link = r.link("bottleneck")
            rows.append(
                {
                    "aqm": name,
                    "utilization": link["utilization"],
                    "mean_queue_pkts": link["mean_queue_pkts"],
                    "mean_delay_ms": link["queue_delay_ms"]["mean"],
                    "p99_delay_ms": link["queue_delay_ms"]["p99"],
                    "loss": link["drops"] / max(link.get("arrivals", 0), 1),
                    "marks": link["marks"],
                    "jain": r.summary["fairness"]["jain"],
                }
            )
        return rows


def with_aqm(base: Scenario, name: str, params: dict | None = None) -> Scenario:
    """A copy of ``base`` whose AQM is ``name``.

    Parameters the scenario gives its own AQM are kept when ``name`` is that AQM; for another
    AQM only an explicit ``ecn`` carries over (other names mean other things: CoDel's ``target``
    is not PIE's). ``params`` are applied last.
    """
    data = base.data
    own = dict(data.get("aqm") or {})
    own_type = str(own.pop("type", "droptail")).lower()
    if own_type in ("fifo", "taildrop"):
        own_type = "droptail"
    kept = own if own_type == name.lower() else {k: v for k, v in own.items() if k == "ecn"}
    return base.replace(aqm={"type": name, **kept, **(params or {})}, name=f"{base.name}-{name}")


def _draw(cmp: Comparison, axes, link: str) -> None:
    """The comparison's four panels: the queueing delay of ``link`` over time per AQM, then
    bars of mean delay, utilization and loss."""
    ax_q = axes[0]
    for name, r in cmp.results.items():
        ts = r.to_pandas("timeseries")
        ts = ts[ts["link"] == link]
        ax_q.plot(ts["time_s"], ts["queue_delay_ms_mean"], lw=0.7, label=name)
    ax_q.set_xlabel("time [s]")
    ax_q.set_ylabel("queue delay [ms]")
    ax_q.legend(
        ncol=len(cmp.results), fontsize="small", loc="lower center", bbox_to_anchor=(0.5, 1.0)
    )
    rows = cmp.table()
    names = [row["aqm"] for row in rows]
    for ax, key, label, scale in (
        (axes[1], "mean_delay_ms", "mean queue delay [ms]", 1.0),
        (axes[2], "utilization", "utilization [%]", 100.0),
        (axes[3], "loss", "loss [%]", 100.0),
    ):
        ax.bar(names, [row[key] * scale for row in rows], color="C0")
        ax.set_ylabel(label)
        ax.tick_params(axis="x", rotation=45)


def plot_comparison(cmp: Comparison, link: str = "bottleneck"):
    """Queue delay over time per AQM, plus bars of delay, utilization and loss.

    Parameters
    ----------
    cmp : Comparison
        The runs.
    link : str
        The link whose delay is drawn.

    Returns
    -------
    matplotlib Figure
    """
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(11, 7))
    gs = fig.add_gridspec(2, 3, height_ratios=[1.3, 1])
    axes = [fig.add_subplot(gs[0, :]), *(fig.add_subplot(gs[1, i]) for i in range(3))]
    _draw(cmp, axes, link)
    fig.tight_layout()
    return fig


def compare_aqms(
    base: Scenario,
    aqms: list[str],
    out: str | Path,
    progress_factory=None,
    force: bool = False,
) -> Comparison:
    """Simulate ``base`` once per AQM and write per-AQM results plus a comparison.

    All AQM names and the output folder are checked before anything runs; ``out`` is written
    through :mod:`aqmlab.output` with ``out/NAME/`` (results contract per AQM),
    ``out/comparison.json`` and ``out/comparison.png``. See :func:`with_aqm` for which AQM
    parameters of ``base`` are kept.

    Parameters
    ----------
    base : Scenario
        The scenario.
    aqms : list of str
        AQM names (``aqmlab aqms``).
    out : path
        The output folder.
    progress_factory : callable, optional
        Returns a ``rich.progress.Progress``-like context manager that shows each run's progress.
    force : bool
        Replace ``out`` even if it holds files aqmlab did not write.

    Returns
    -------
    Comparison
    """
    import matplotlib

    matplotlib.use("Agg", force=False)  # writes a file; plot() alone leaves the backend be
    import matplotlib.pyplot as plt

    from aqmlab.output import check_output_dir
    from aqmlab.sim import simulate

    if not aqms:
        raise ValueError("aqms: give at least one AQM")
    scenarios = {name: with_aqm(base, name) for name in aqms}
    check_output_dir(out, force)
    results: dict[str, SimResult] = {}
    with output_dir(out, force=force, command="demo") as tmp:
        if progress_factory is not None:
            with progress_factory() as prog:
                for name, sc in scenarios.items():
                    task = prog.add_task(name, total=sc.duration)
                    results[name] = simulate(
                        sc, progress=lambda t, task=task: prog.update(task, completed=t)
                    )
        else:
            for name, sc in scenarios.items():
                results[name] = simulate(sc)
        for name, r in results.items():
            (tmp / name).mkdir()
            r.write_into(tmp / name)
        cmp = Comparison(results)
        (tmp / "comparison.json").write_text(json.dumps(cmp.table(), indent=2) + "\n")
        fig = plot_comparison(cmp)
        fig.savefig(tmp / "comparison.png", dpi=110)
        plt.close(fig)
    return cmp
