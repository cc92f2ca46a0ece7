"""``--flent`` of ``aqmlab run``, ``aqmlab dumbbell`` and ``aqmlab emulate`` (and ``[output]
flent = true``): the run is sampled every Flent step and a Flent data file is written into the
result folder (:mod:`aqmlab.flent`, docs/flent.md); ``--flent`` of ``aqmlab shell`` reads a
known tool's output (:mod:`aqmlab.flent_tools`, docs/shell.md)."""

from __future__ import annotations

from typing import Annotated

import typer

FlentOpt = Annotated[
    bool,
    typer.Option(
        "--flent",
        help="Also write a Flent data file OUT/TEST-DATE.TITLE.flent.gz (docs/flent.md); "
        "same as [output] flent = true.",
        show_default=False,
    ),
]


ShellFlentOpt = Annotated[
    bool,
    typer.Option(
        "--flent",
        help="Also write a Flent data file OUT/TEST-DATE.shell.flent.gz from COMMAND's output: "
        "ping -D (a ping series) or iperf3 -J (throughput per stream); docs/shell.md.",
        show_default=False,
    ),
]


def wants_flent(sc, option: bool) -> bool:
    """True if ``--flent`` is given or the scenario's ``[output]`` asks for a Flent file.

    Parameters
    ----------
    sc : aqmlab.scenario.Scenario
        The scenario.
    option : bool
        ``--flent``.

    Returns
    -------
    bool
    """
    return option or bool((sc.normalized.get("output") or {}).get("flent"))


def check_flent(sc, traced: bool) -> str | None:
    """Why a Flent file cannot be written for this run (one line naming the key), or None.

    Parameters
    ----------
    sc : aqmlab.scenario.Scenario
        The scenario.
    traced : bool
        The run writes a trace or a capture.

    Returns
    -------
    str or None
    """
    if sc.normalized.get("sqm") is not None:
        return "output.flent = true: not available with [sqm] (its controller steps the run)"
    if traced:
        return "output.flent = true: not available with [trace] or [pcap] yet"
    return None


def run_for_flent(sim, label: str):
    """Run ``sim`` to its end sampled every Flent step; returns the result and the samples.

    Parameters
    ----------
    sim : aqmlab.sim.Simulation
        The simulation.
    label : str
        Its label (unused without a terminal).

    Returns
    -------
    tuple
        ``(SimResult, FlowSamples)``.
    """
    from aqmlab.flent import run_sampled

    samples = run_sampled(sim)
    return sim.result(), samples


def ping_table(summary: dict):
    """The latency-under-load table (one row per ping group), or None without ping flows.

    Parameters
    ----------
    summary : dict
        The run's summary.

    Returns
    -------
    rich.table.Table or None
    """
    from rich.table import Table

    p = summary.get("pings")
    if not p:
        return None
    t = Table(title="latency under load (ping RTT)")
    for col in ("group", "probes", "lost", "mean [ms]", "p50 [ms]", "p90 [ms]", "p99 [ms]"):
        t.add_column(col, justify="left" if col == "group" else "right")

    def ms(v):
        return "-" if v is None else f"{v:.1f}"

    for name, g in p["groups"].items():
        t.add_row(
            name,
            str(g["sent"]),
            str(g["lost"]),
            ms(g["mean_ms"]),
            ms(g["p50_ms"]),
            ms(g["p90_ms"]),
            ms(g["p99_ms"]),
        )
    return t


def write_flent(directory, res, samples, sc) -> None:
    """The Flent data file of a run into its (temporary) result folder (:mod:`aqmlab.flent`).

    Parameters
    ----------
    directory : Path
        The temporary result folder.
    res : aqmlab.results.SimResult
        The result.
    samples : aqmlab.flent.FlowSamples
        Its per-step delivered bytes.
    sc : aqmlab.scenario.Scenario
        The scenario.
    """
    from aqmlab.flent import write_flent as write

    write(directory, res, samples, sc)
