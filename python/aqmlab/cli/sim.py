"""Simulator commands: ``run``, ``dumbbell``, ``aqms``, ``demo``.

Every command checks its whole input (scenario, options, output folder) before it simulates. Bad
input prints one line naming the key and value and exits with status 2. Results are written
through :mod:`aqmlab.output`: nothing half-written is left behind and a folder that is not an
aqmlab result is never replaced without ``--force``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail

DEMO_AQMS = ("droptail", "red", "pi", "pie", "codel")

Force = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace OUT even if it holds files aqmlab did not write.",
        show_default=False,
    ),
]
NoPlots = Annotated[
    bool, typer.Option("--no-plots", help="Skip the PNG figures.", show_default=False)
]


def _progress():
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description:<12}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}% sim"),
        TimeElapsedColumn(),
        transient=False,
        disable=not sys.stderr.isatty(),
        console=None,
    )


def _run_with_progress(sim, label: str):
    """Run a Simulation to its end, showing progress on a terminal. Returns a SimResult."""
    with _progress() as prog:
        task = prog.add_task(label, total=sim.duration)
        sim.run(progress=lambda t: prog.update(task, completed=t))
    return sim.result()


def _summary_table(rows: dict[str, dict], title: str):
    from rich.table import Table

    t = Table(title=title)
    for col in (
        "AQM",
        "util [%]",
        "mean queue [pkt]",
        "mean delay [ms]",
        "p99 delay [ms]",
        "loss [%]",
        "marks [pkt]",
        "Jain",
    ):
        t.add_column(col, justify="right" if col != "AQM" else "left")
    for name, s in rows.items():
        link = s["links"].get("bottleneck") or next(iter(s["links"].values()), None)
        if link is None:
            continue
        arrivals = max(link.get("arrivals", 0), 1)
        jain = s["fairness"]["jain"]
        t.add_row(
            name,
            f"{100 * link['utilization']:.1f}",
            f"{link['mean_queue_pkts']:.1f}",
            f"{link['queue_delay_ms']['mean']:.1f}",
            f"{link['queue_delay_ms']['p99']:.1f}",
            f"{100 * link['drops'] / arrivals:.2f}",
            str(link["marks"]),
            "-" if jain is None else f"{jain:.3f}",
        )
    return t


# Scenario keys of the dumbbell command's scenario, as the command's options.
_OPTION_OF = [
    (r"^flows\[0\]\.count\b", "--flows"),
    (r"^flows\[0\]\.delack\b", "--delack"),
    (r"^flows\[0\]\.packet_size\b", "--pkt-size"),
    (r"^flows\[0\]\.", "--"),
    (r"^dumbbell\.", "--"),
    (r"^aqm\.type\b", "--aqm"),
    (r"^aqm\.", "--aqm-param "),
]


def _as_option(msg: str) -> str:
    """``dumbbell.pkt_size = 10: ...`` -> ``--pkt-size = 10: ...`` (one scenario key only)."""
    for pat, repl in _OPTION_OF:
        m = re.match(pat, msg)
        if m:
            rest = msg[m.end() :]
            key, sep, tail = rest.partition(" ")
            if repl.endswith("-") or repl.endswith(" "):
                key = key.replace("_", "-") if repl == "--" else key
                return f"{repl}{key}{sep}{tail}"
            return f"{repl}{rest}"
    m = re.match(r"^(sample_interval|warmup|duration|seed)\b", msg)
    if m:
        return "--" + msg.replace("_", "-", 1 if m.group(1) == "sample_interval" else 0)
    return msg


def _quantity(option: str, text: str, kind: str) -> str:
    """Check that ``text`` is a quantity with a unit (the command line's rule); return it."""
    from aqmlab.units import parse_rate, parse_time

    parse = {"rate": parse_rate, "time": parse_time}[kind]
    try:
        parse(text, require_unit=True, key=option)
    except ValueError as e:
        _fail(str(e))
    return text


def _prepare(sc, out: Path, force: bool, seed: int | None = None):
    """Check the output folder and build the simulation (routing included) before any work."""
    from aqmlab.output import check_output_dir
    from aqmlab.sim import Simulation

    try:
        check_output_dir(out, force)
        return Simulation(sc, seed=seed)
    except ValueError as e:
        _fail(str(e))


def _write(res, out: Path, force: bool, plots: bool, command: str) -> None:
    from aqmlab.output import output_dir

    try:
        with output_dir(out, force=force, command=command) as tmp:
            res.write_into(tmp, plots=plots)
    except ValueError as e:
        _fail(str(e))


def register(app: typer.Typer) -> None:
    """Attach the simulator commands to the top-level app."""

    @app.command("run")
    def run(
        scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
        out: Annotated[Path, typer.Option("--out", help="Output folder (an aqmlab result).")],
        seed: Annotated[int | None, typer.Option(help="Override the scenario's seed.")] = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="Override a scenario key: key=value (repeatable)."),
        ] = None,
        no_plots: NoPlots = False,
        force: Force = False,
    ) -> None:
        """Run a scenario file and write summary.json, Parquet time series and plots to OUT."""
        from aqmlab.scenario import load_scenario

        try:
            sc = load_scenario(scenario, overrides=list(set_ or []))
            if seed is not None:
                sc = sc.replace(seed=seed)
        except ValueError as e:
            _fail(str(e))
        sim = _prepare(sc, out, force)
        res = _run_with_progress(sim, sc.name)
        _write(res, out, force, not no_plots, "run")
        from rich.console import Console

        Console().print(_summary_table({sc.aqm.get("type", "-"): res.summary}, sc.name))
        typer.echo(f"results written to {out}")

    @app.command("dumbbell")
    def dumbbell(
        out: Annotated[Path, typer.Option("--out", help="Output folder (an aqmlab result).")],
        flows: Annotated[int, typer.Option(help="Number of long-lived TCP flows.")] = 10,
        rate: Annotated[
            str, typer.Option(help="Bottleneck rate, with a unit (10Mbps).")
        ] = "10Mbps",
        rtt: Annotated[
            str, typer.Option(help="Two-way propagation delay of every flow (100ms).")
        ] = "100ms",
        buffer: Annotated[int, typer.Option(help="Bottleneck buffer [packets].")] = 100,
        aqm: Annotated[str, typer.Option(help="AQM name (see `aqmlab aqms`).")] = "droptail",
        aqm_param: Annotated[
            list[str] | None,
            typer.Option(
                "--aqm-param", help="AQM parameter key=value, times with a unit (repeatable)."
            ),
        ] = None,
        cc: Annotated[
            str,
            typer.Option(help="newreno | reno | cubic | dctcp | prague (the last two imply --ecn)"),
        ] = "newreno",
        ecn: Annotated[
            bool,
            typer.Option(
                "--ecn",
                help="ECN end to end: ECN-capable flows, a marking AQM.",
                show_default=False,
            ),
        ] = False,
        delack: Annotated[
            bool, typer.Option("--delack", help="Delayed ACKs (b = 2).", show_default=False)
        ] = False,
        sack: Annotated[
            bool, typer.Option("--sack", help="SACK loss recovery (RFC 6675).", show_default=False)
        ] = False,
        init_cwnd: Annotated[int, typer.Option(help="Initial window [segments].")] = 10,
        min_rto: Annotated[str, typer.Option(help="Minimum RTO, with a unit.")] = "200ms",
        rwnd: Annotated[
            int | None, typer.Option(help="Receive window [segments] (default unlimited).")
        ] = None,
        loss: Annotated[
            float, typer.Option(help="Bernoulli loss probability on the bottleneck.")
        ] = 0.0,
        pkt_size: Annotated[
            int, typer.Option(help="IP size of data packets incl. 40 B of headers [bytes].")
        ] = 1000,
        duration: Annotated[str, typer.Option(help="Simulated time, with a unit.")] = "60s",
        warmup: Annotated[
            str | None,
            typer.Option(help="Warm-up excluded from statistics (default: duration / 6)."),
        ] = None,
        seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
        sample_interval: Annotated[str, typer.Option(help="Monitor sampling period.")] = "10ms",
        no_plots: NoPlots = False,
        quiet: Annotated[
            bool, typer.Option("--quiet", help="Print nothing on success.", show_default=False)
        ] = False,
        force: Force = False,
    ) -> None:
        """A quick dumbbell experiment without a scenario file."""
        from aqmlab.aqm import aqm_config, describe_aqm
        from aqmlab.scenario import Scenario
        from aqmlab.units import parse_time

        for opt, text, kind in (
            ("--rate", rate, "rate"),
            ("--rtt", rtt, "time"),
            ("--duration", duration, "time"),
            ("--sample-interval", sample_interval, "time"),
            ("--min-rto", min_rto, "time"),
        ):
            _quantity(opt, text, kind)
        if warmup is None:
            warmup = f"{parse_time(duration) / 6!r}s"
        else:
            _quantity("--warmup", warmup, "time")
        params: dict[str, object] = {}
        for item in aqm_param or []:
            if "=" not in item:
                _fail(f"--aqm-param = {item!r}: expected key=value")
            k, v = item.split("=", 1)
            params[k.strip()] = v.strip()
        try:
            describe_aqm(aqm)
        except ValueError as e:
            _fail(f"--aqm = {aqm!r}: {e}")
        try:
            aqm_config(aqm, params, require_unit=True)
        except ValueError as e:
            # Name the --aqm-param the core's message is about (else the --aqm).
            m = re.match(r"^aqm parameter '([^']*)' = [^:]*: (.*)$", str(e))
            named = m.group(1) if m else ""
            key = next((k for k in params if named == k or named.startswith(k + ".")), None)
            if m and key:
                _fail(f"--aqm-param {key}={params[key]}: {m.group(2)}")
            _fail(f"--aqm = {aqm!r}: {e}")
        group: dict[str, object] = {
            "kind": "tcp",
            "count": flows,
            "cc": cc,
            # DCTCP and Prague need ECN (the scenario refuses ecn = false with them).
            "ecn": ecn or cc.strip().lower() in ("dctcp", "prague"),
            "delack": delack,
            "sack": sack,
            "init_cwnd": init_cwnd,
            "min_rto": min_rto,
        }
        if rwnd is not None:
            group["rwnd"] = rwnd
        data = {
            "name": f"dumbbell-{aqm}",
            "seed": seed,
            "duration": duration,
            "warmup": warmup,
            "sample_interval": sample_interval,
            "dumbbell": {
                "rate": rate,
                "rtt": rtt,
                "buffer": buffer,
                "pkt_size": pkt_size,
                "loss": loss,
            },
            "aqm": {"type": aqm, **params},
            "flows": [group],
        }
        try:
            sc = Scenario(data)
        except ValueError as e:
            _fail(_as_option(str(e)))
        sim = _prepare(sc, out, force)
        res = sim.run() or sim.result() if quiet else _run_with_progress(sim, aqm)
        _write(res, out, force, not no_plots, "dumbbell")
        if not quiet:
            from rich.console import Console

            Console().print(_summary_table({aqm: res.summary}, sc.name))
            typer.echo(f"results written to {out}")

    @app.command("aqms")
    def aqms(
        as_json: Annotated[
            bool, typer.Option("--json", help="Print JSON.", show_default=False)
        ] = False,
    ) -> None:
        """List the AQM algorithms and schedulers with their parameters, units and defaults."""
        from aqmlab.aqm import list_aqms, list_schedulers

        table = {**list_aqms(), **list_schedulers()}
        if as_json:
            typer.echo(json.dumps(table, indent=2))
            return
        from rich.console import Console
        from rich.table import Table

        con = Console()
        for name, params in table.items():
            t = Table(title=name, title_justify="left", show_edge=False)
            for col in ("parameter", "unit", "default", "meaning"):
                t.add_column(col)
            for p in params:
                d = "required" if p["default"] is None else f"{p['default']:g}"
                t.add_row(p["name"], p["unit"], d, p["doc"])
            con.print(t)
            con.print()

    @app.command("demo")
    def demo(
        out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("results/demo"),
        scenario: Annotated[
            Path | None,
            typer.Option(help="Scenario (default: the bundled demo); its AQM parameters are kept."),
        ] = None,
        aqms_: Annotated[
            str, typer.Option("--aqms", help="Comma-separated AQMs to compare.")
        ] = ",".join(DEMO_AQMS),
        seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
        force: Force = False,
    ) -> None:
        """The default demo: a dumbbell with a load step under drop-tail, RED, PI, PIE and CoDel."""
        from rich.console import Console

        from aqmlab.aqm import aqm_config
        from aqmlab.compare import compare_aqms, default_demo_scenario
        from aqmlab.scenario import load_scenario

        names = [a.strip() for a in aqms_.split(",") if a.strip()]
        try:
            if not names:
                raise ValueError(f"--aqms = {aqms_!r}: give at least one AQM")
            for n in names:
                try:
                    aqm_config(n)
                except ValueError as e:
                    raise ValueError(f"--aqms = {aqms_!r}: {e}") from None
            base = load_scenario(scenario) if scenario else default_demo_scenario()
            base = base.replace(seed=seed)
            result = compare_aqms(base, names, out, progress_factory=_progress, force=force)
        except ValueError as e:
            _fail(str(e))
        Console().print(_summary_table(result.summaries, f"{base.name}: AQM comparison"))
        typer.echo(f"results written to {out}/ (per-AQM folders, comparison.png, comparison.json)")
