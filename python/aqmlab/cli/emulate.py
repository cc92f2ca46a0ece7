"""``aqmlab emulate``: a dumbbell (options or a scenario file) run on real Linux TCP through
the userspace bottleneck of :mod:`aqmlab.emu` (see ``docs/emulate.md``).

The whole input (scenario or options, the kernel's congestion controls, the output folder) is
checked before anything is created; bad input is one line naming the key and the value with
exit status 2. A machine that cannot emulate (not root, no ``/dev/net/tun``) is one line with
exit status 1. Results are written through :mod:`aqmlab.output` like the simulator's; Ctrl-C
or SIGTERM removes the namespaces, devices and processes and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli import _common
from aqmlab.cli import link_options as lo
from aqmlab.cli._common import fail as _fail
from aqmlab.cli.flent_opt import FlentOpt, ping_table, wants_flent, write_flent
from aqmlab.cli.sim import Force, NoPlots, _as_option, _summary_table, _write, build_dumbbell

# Options that describe the dumbbell; with a scenario file they are refused (use --set).
_DUMBBELL_DEFAULTS = {
    "flows": 10,
    "rate": "10Mbps",
    "rtt": "40ms",
    "buffer": 100,
    "aqm": "droptail",
    "pkt_size": 1500,
    "duration": "30s",
    "sample_interval": "10ms",
}


def register(app: typer.Typer) -> None:
    """Attach ``emulate`` to the top-level app.

    Parameters
    ----------
    app : typer.Typer
        The top-level ``aqmlab`` app.
    """

    @app.command("emulate")
    def emulate_cmd(
        scenario: Annotated[
            Path | None,
            typer.Argument(help="Scenario TOML file (a dumbbell); else the options below."),
        ] = None,
        out: Annotated[
            Path | None, typer.Option("--out", help="Output folder (an aqmlab result).")
        ] = None,
        flows: Annotated[int | None, typer.Option(help="Long-lived TCP flows [10].")] = None,
        rate: lo.Rate = None,
        rate_trace: lo.RateTrace = None,
        netem: lo.Netem = None,
        reverse_netem: lo.ReverseNetem = None,
        rtt: lo.Rtt = None,
        buffer: lo.Buffer = None,
        aqm: lo.Aqm = None,
        aqm_param: lo.AqmParam = None,
        class_: Annotated[
            list[str] | None, typer.Option("--class", help="drr/wfq class NAME:WEIGHT[:AQM].")
        ] = None,
        class_flows: Annotated[
            list[str] | None, typer.Option("--class-flows", help="NAME=COUNT flows of a class.")
        ] = None,
        cc: Annotated[
            str | None,
            typer.Option(
                help="Kernel congestion control of every flow (net.ipv4."
                "tcp_available_congestion_control; newreno = reno) [cubic]; with a scenario, "
                "overrides its groups'."
            ),
        ] = None,
        ecn: Annotated[
            bool,
            typer.Option("--ecn", help="ECN-capable flows, a marking AQM.", show_default=False),
        ] = False,
        pkt_size: lo.PktSize = None,
        duration: Annotated[str | None, typer.Option(help="Run time (wall clock) [30s].")] = None,
        warmup: Annotated[
            str | None, typer.Option(help="Warm-up excluded from statistics [duration / 6].")
        ] = None,
        seed: lo.Seed = None,
        sample_interval: lo.SampleInterval = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="Override a scenario key: key=value (with SCENARIO)."),
        ] = None,
        sysctl: Annotated[
            list[str] | None,
            typer.Option(
                "--sysctl",
                help="Kernel setting of the senders' namespace KEY=VALUE (net.ipv4.*, "
                "net.core.*), after the pinned ones, e.g. net.ipv4.tcp_recovery=0.",
            ),
        ] = None,
        no_plots: NoPlots = False,
        pcap: Annotated[
            bool,
            typer.Option(
                "--pcap",
                help="Capture the real packets at both TUN devices to OUT/capture.pcapng "
                "(headers: the first 128 bytes; docs/pcap.md).",
                show_default=False,
            ),
        ] = False,
        flent: FlentOpt = False,
        quiet: Annotated[
            bool, typer.Option("--quiet", help="Print nothing on success.", show_default=False)
        ] = False,
        force: Force = False,
    ) -> None:
        """Run a dumbbell on real Linux TCP through the aqm qdiscs (needs root); a COMMAND
        after -- runs beside the flows in the senders' namespace (docs/shell.md)."""
        from aqmlab.emu import EmulationError, check_environment, check_scenario, emulate
        from aqmlab.emu.netns import check_sysctls
        from aqmlab.emu.plan import available_cc, kernel_cc_name, missing_cc, take_kernel_cc
        from aqmlab.output import check_output_dir

        if out is None:
            _fail("--out: missing; give the output folder, e.g. --out results/emu")
        if cc is not None and kernel_cc_name(cc) not in available_cc():
            _fail(f"--cc = {cc!r}: {missing_cc(cc, available_cc())}")
        settings: dict[str, str] = {}
        for item in sysctl or []:
            k, eq, v = item.partition("=")
            if not eq or not k.strip():
                _fail(f"--sysctl = {item!r}: give KEY=VALUE, e.g. net.ipv4.tcp_recovery=0")
            settings[k.strip()] = v.strip()
        try:
            check_sysctls(settings)
        except ValueError as e:
            _fail(f"--{e}")
        given = {
            "flows": flows,
            "rate": rate,
            "rtt": rtt,
            "buffer": buffer,
            "aqm": aqm,
            "pkt_size": pkt_size,
            "duration": duration,
            "sample_interval": sample_interval,
            "warmup": warmup,
            "rate_trace": rate_trace,
            "netem": netem,
            "reverse_netem": reverse_netem,
        }
        group_cc: dict[int, str] = {}
        if scenario is not None:
            from aqmlab.scenario import load_scenario

            extra = [k for k, v in given.items() if v is not None]
            extra += ["aqm_param"] * bool(aqm_param) + ["class"] * bool(class_)
            extra += ["class_flows"] * bool(class_flows) + ["ecn"] * ecn
            if extra:
                opt = "--" + extra[0].replace("_", "-")
                _fail(f"{opt}: not with a scenario file ({scenario}); use --set KEY=VALUE")
            try:
                sc = load_scenario(
                    scenario,
                    overrides=list(set_ or []),
                    prepare=lambda d: group_cc.update(take_kernel_cc(d)),
                )
                if seed is not None:
                    sc = sc.replace(seed=seed)
            except ValueError as e:
                _fail(str(e))
        else:
            if set_:
                _fail(f"--set = {set_[0]!r}: only with a scenario file")
            opts = {k: (_DUMBBELL_DEFAULTS.get(k) if v is None else v) for k, v in given.items()
                    if k != "warmup"}  # fmt: skip
            if rate is None and rate_trace is not None:
                opts["rate"] = None  # the nominal rate: the trace's mean
            sim_cc = kernel_cc_name(cc or "cubic")
            sc, _, _ = build_dumbbell(
                **opts, warmup=warmup, aqm_param=aqm_param, class_=class_,
                class_flows=class_flows, ecn=ecn, seed=1 if seed is None else seed,
                # the simulator's name where it has the algorithm (the scenario schema checks
                # it); the kernel's algorithm is chosen by kernel_cc below
                cc=sim_cc if sim_cc in ("reno", "cubic") else "cubic",
                # the kernel's TCP: the linux profile's defaults describe it
                delack=None, sack=None, init_cwnd=10, min_rto="200ms", rwnd=None, loss=0.0,
            )  # fmt: skip
            cc = cc or "cubic"
        try:
            check_scenario(sc, cc, group_cc)
        except ValueError as e:
            # name the option the scenario key came from (dumbbell.pkt_size -> --pkt-size)
            _fail(str(e) if scenario is not None else _as_option(e))
        try:
            check_output_dir(out, force)
        except ValueError as e:
            _fail(str(e))
        command = _common.trailing_command
        if command is not None:
            from aqmlab.emu.shell import check_command

            if not command:
                _fail("COMMAND: missing after --; e.g. aqmlab emulate -- ping -c 5 $AQMLAB_PEER")
            try:
                check_command(command)
            except ValueError as e:
                _fail(str(e))
        cap = None
        try:
            check_environment()
            if pcap:
                from aqmlab.output import temp_file_beside

                # written beside the result folder, moved into it with the other files
                cap = temp_file_beside(out.resolve().parent / f"{out.name}.pcapng")
            res = emulate(
                sc, kernel_cc=cc, group_cc=group_cc, sysctls=settings, command=command, pcap=cap
            )
            from aqmlab.pcap import PCAP_FILE

            also = None
            if wants_flent(sc, flent):
                also = lambda d: write_flent(d, res, res.flent_samples, sc)  # noqa: E731
            _write(res, out, force, not no_plots, "emulate",
                   move_in={PCAP_FILE: cap} if cap else None, also=also)  # fmt: skip
        except EmulationError as e:
            _fail(str(e), 1)
        except ValueError as e:  # a sysctl the kernel refused (everything was removed)
            _fail(f"--{e}")
        finally:
            if cap is not None:
                cap.unlink(missing_ok=True)
        t = res.summary["emulation"]["timing"]["forward"]
        if not res.summary["emulation"]["timing_reliable"]:
            typer.echo(
                f"warning: the forwarder released packets up to {t['p99_us'] / 1e3:.1f} ms late "
                "(p99): the emulated link did not keep its schedule (a busy machine or a rate "
                "beyond the forwarder); see docs/emulate.md, Limits",
                err=True,
            )
        if not quiet:
            from rich.console import Console

            link = res.summary["links"]["bottleneck"]
            con = Console()
            con.print(_summary_table({link["aqm"]: res.summary}, f"{sc.name} (emulated)"))
            if (pings := ping_table(res.summary)) is not None:
                con.print(pings)
            t = res.summary["emulation"]["timing"]["forward"]
            typer.echo(
                f"forwarder release error: mean {t['mean_us']:.0f} us, p99 {t['p99_us']:.0f} us"
            )
            typer.echo(f"results written to {out}")
