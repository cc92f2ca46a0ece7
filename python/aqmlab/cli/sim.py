"""Simulator commands: ``run``, ``dumbbell``, ``aqms``, ``demo``.

Every command validates its whole input before it simulates, and writes its output directory
atomically: on bad input it prints one line naming the key and value, exits with status 2 and
leaves nothing behind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail

DEMO_AQMS = ("droptail", "red", "pi", "pie", "codel")


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


def _run_with_progress(scenario, label: str):
    """Simulate a scenario, showing progress on a terminal. Returns a SimResult."""
    from aqmlab.sim import simulate

    with _progress() as prog:
        task = prog.add_task(label, total=scenario.duration)
        return simulate(scenario, progress=lambda t: prog.update(task, completed=t))


def _summary_table(rows: dict[str, dict], title: str):
    from rich.table import Table

    t = Table(title=title)
    for col in (
        "AQM",
        "util %",
        "mean queue [pkt]",
        "mean delay [ms]",
        "p99 delay [ms]",
        "loss %",
        "marks",
        "Jain",
    ):
        t.add_column(col, justify="right" if col != "AQM" else "left")
    for name, s in rows.items():
        link = s["links"]["bottleneck"]
        arrivals = max(link.get("arrivals", 0), 1)
        t.add_row(
            name,
            f"{100 * link['utilization']:.1f}",
            f"{link['mean_queue_pkts']:.1f}",
            f"{link['queue_delay_ms']['mean']:.1f}",
            f"{link['queue_delay_ms']['p99']:.1f}",
            f"{100 * link['drops'] / arrivals:.2f}",
            str(link["marks"]),
            f"{s['fairness']['jain']:.3f}",
        )
    return t


def register(app: typer.Typer) -> None:
    """Attach the simulator commands to the top-level app."""

    @app.command("run")
    def run(
        scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
        out: Annotated[Path, typer.Option("--out", help="Output directory (replaced).")],
        seed: Annotated[int | None, typer.Option(help="Override the scenario's seed.")] = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="Override a scenario key: key=value (repeatable)."),
        ] = None,
        no_plots: Annotated[bool, typer.Option("--no-plots", help="Skip the PNG figures.")] = False,
    ) -> None:
        """Run a scenario file and write summary.json, Parquet time series and plots to OUT."""
        from aqmlab.scenario import load_scenario

        try:
            sc = load_scenario(scenario, overrides=list(set_ or []))
            if seed is not None:
                sc.seed = seed
            from aqmlab.sim import build_config

            build_config(sc)  # validate against the core before any work
        except ValueError as e:
            _fail(str(e))
        res = _run_with_progress(sc, sc.name)
        res.save(out, plots=not no_plots)
        from rich.console import Console

        Console().print(_summary_table({sc.aqm.type: res.summary}, sc.name))
        typer.echo(f"results written to {out}")

    @app.command("dumbbell")
    def dumbbell(
        out: Annotated[Path, typer.Option("--out", help="Output directory (replaced).")],
        flows: Annotated[int, typer.Option(help="Number of long-lived TCP flows.")] = 10,
        rate: Annotated[str, typer.Option(help="Bottleneck rate, e.g. 10Mbps.")] = "10Mbps",
        rtt: Annotated[
            str, typer.Option(help="Two-way propagation delay of every flow.")
        ] = "100ms",
        buffer: Annotated[int, typer.Option(help="Bottleneck buffer in packets.")] = 100,
        aqm: Annotated[str, typer.Option(help="AQM name (see `aqmlab aqms`).")] = "droptail",
        aqm_param: Annotated[
            list[str] | None,
            typer.Option("--aqm-param", help="AQM parameter key=value (repeatable)."),
        ] = None,
        cc: Annotated[str, typer.Option(help="newreno | reno | cubic")] = "newreno",
        ecn: Annotated[bool, typer.Option("--ecn", help="ECN-capable flows.")] = False,
        delack: Annotated[bool, typer.Option("--delack", help="Delayed ACKs (b = 2).")] = False,
        loss: Annotated[float, typer.Option(help="Bernoulli loss on the bottleneck.")] = 0.0,
        pkt_size: Annotated[int, typer.Option(help="IP size of data packets [bytes].")] = 1000,
        duration: Annotated[str, typer.Option(help="Simulated time.")] = "60s",
        warmup: Annotated[str, typer.Option(help="Warm-up excluded from statistics.")] = "10s",
        seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
        sample_interval: Annotated[str, typer.Option(help="Monitor sampling period.")] = "10ms",
        no_plots: Annotated[bool, typer.Option("--no-plots", help="Skip the PNG figures.")] = False,
        quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing on success.")] = False,
    ) -> None:
        """A quick dumbbell experiment without a scenario file."""
        from aqmlab.scenario import parse_scenario
        from aqmlab.sim import build_config

        params: dict[str, object] = {"type": aqm}
        for item in aqm_param or []:
            if "=" not in item:
                _fail(f"--aqm-param {item!r}: expected key=value")
            k, v = item.split("=", 1)
            params[k.strip()] = v.strip()
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
            "aqm": params,
            "flows": [{"kind": "tcp", "count": flows, "cc": cc, "ecn": ecn, "delack": delack}],
        }
        try:
            sc = parse_scenario(data)
            build_config(sc)
        except ValueError as e:
            msg = str(e)
            for key, opt in (
                ("dumbbell.", "--"),
                ("flows[0].count", "--flows"),
                ("flows[0].cc", "--cc"),
            ):
                msg = msg.replace(f"scenario key '{key}", f"option '{opt}")
            _fail(msg.replace("pkt_size", "pkt-size"))
        from aqmlab.sim import simulate

        res = simulate(sc) if quiet else _run_with_progress(sc, aqm)
        res.save(out, plots=not no_plots)
        if not quiet:
            from rich.console import Console

            Console().print(_summary_table({aqm: res.summary}, sc.name))
            typer.echo(f"results written to {out}")

    @app.command("aqms")
    def aqms(
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """List the AQM algorithms with their parameters, units and defaults."""
        from aqmlab.aqm import list_aqms

        table = list_aqms()
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
                t.add_row(p["name"], p["unit"], f"{p['default']:g}", p["doc"])
            con.print(t)
            con.print()

    @app.command("demo")
    def demo(
        out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path(
            "results/demo"
        ),
        scenario: Annotated[
            Path | None, typer.Option(help="Scenario (default: the bundled demo).")
        ] = None,
        aqms_: Annotated[
            str, typer.Option("--aqms", help="Comma-separated AQMs to compare.")
        ] = ",".join(DEMO_AQMS),
        seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
    ) -> None:
        """The default demo: a dumbbell with a load step under drop-tail, RED, PI, PIE and CoDel."""
        from rich.console import Console

        from aqmlab.compare import compare_aqms, default_demo_scenario
        from aqmlab.scenario import load_scenario

        try:
            base = load_scenario(scenario) if scenario else default_demo_scenario()
            base.seed = seed
            names = [a.strip() for a in aqms_.split(",") if a.strip()]
            result = compare_aqms(base, names, out, progress_factory=_progress)
        except ValueError as e:
            _fail(str(e))
        Console().print(_summary_table(result.summaries, f"{base.name}: AQM comparison"))
        typer.echo(f"results written to {out}/ (per-AQM folders, comparison.png, comparison.json)")
