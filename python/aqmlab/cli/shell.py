"""``aqmlab shell``: any program through the emulated bottleneck (``docs/shell.md``).

``aqmlab shell [SCENARIO.toml | link options] [--out DIR] -- COMMAND [ARGS...]`` runs COMMAND
in a namespace whose only route out crosses the emulated link in both directions
(:func:`aqmlab.emu.shell.shell`) and exits with COMMAND's exit status. The link options are
those of ``aqmlab emulate`` and go through the same function (:func:`aqmlab.cli.sim.
build_dumbbell`); they describe both directions, and ``--reverse-*`` changes the downlink's.
Bad input is one line naming the option and value with exit status 2, checked before anything
is created; a shell inside a shell is refused the same way.

A new link option of the emulator (an impairment, a capture) reaches ``shell`` the way it
reaches ``emulate``: as a scenario key it is carried by a scenario file and ``--set`` to both
directions (:func:`downlink_scenario` copies the uplink's document), and on the command line it
is one more argument of ``build_dumbbell`` and one more option here, as in ``emulate``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli import _common
from aqmlab.cli import link_options as lo
from aqmlab.cli._common import fail as _fail
from aqmlab.cli.flent_opt import ShellFlentOpt
from aqmlab.cli.sim import Force, _as_option, _quantity, build_dumbbell

#: The link's defaults (as ``aqmlab emulate``'s).
_DEFAULTS = {"rate": "10Mbps", "rtt": "40ms", "buffer": 100, "aqm": "droptail", "pkt_size": 1500}


def _params(items: list[str] | None, option: str) -> dict[str, str]:
    out = {}
    for item in items or []:
        k, eq, v = item.partition("=")
        if not eq or not k.strip():
            _fail(f"{option} = {item!r}: expected key=value")
        out[k.strip()] = v.strip()
    return out


def downlink_scenario(
    uplink,
    rate: str | None = None,
    rate_trace: str | None = None,
    buffer: int | None = None,
    aqm: str | None = None,
    aqm_param: dict[str, str] | None = None,
    netem: str | None = None,
):
    """The downlink's scenario: the uplink's link (its ``reverse_rate_trace`` as the trace,
    its ``reverse_netem`` as the netem impairments, without ``rate_changes``) with the
    ``--reverse-*`` options applied; ``ValueError`` naming the ``--reverse-*`` option
    otherwise. Its nominal rate is ``rate``, else its trace's mean, else the uplink's nominal
    rate.

    Parameters
    ----------
    uplink : aqmlab.scenario.Scenario
        The uplink's scenario (a dumbbell).
    rate, rate_trace : str, optional
        ``--reverse-rate``, ``--reverse-rate-trace``.
    buffer : int, optional
        ``--reverse-buffer``, packets.
    aqm : str, optional
        ``--reverse-aqm`` (its parameters start from the defaults).
    aqm_param : dict, optional
        ``--reverse-aqm-param`` values.
    netem : str, optional
        ``--reverse-netem``: the downlink's netem impairments (else the uplink's
        ``reverse_netem``; the uplink's ``netem`` is the uplink's only).

    Returns
    -------
    aqmlab.scenario.Scenario
    """
    from aqmlab.scenario import Scenario

    data = uplink.data
    d = data["dumbbell"]
    d.pop("rate_changes", None)
    d.pop("rate_trace", None)
    d.pop("netem", None)
    impair = d.pop("reverse_netem", None) if netem is None else netem
    if impair is not None:
        d["netem"] = impair
    trace = d.pop("reverse_rate_trace", None) if rate_trace is None else rate_trace
    # the nominal rate: --reverse-rate, else the downlink trace's mean, else the uplink's
    d.pop("rate", None)
    if rate is not None:
        d["rate"] = rate
    if trace is not None:
        d["rate_trace"] = trace
    elif rate is None:
        d["rate"] = uplink.normalized["dumbbell"]["rate"]
    if buffer is not None:
        d.pop("buffer_bytes", None)
        d["buffer"] = buffer
    if aqm is not None:
        data["aqm"] = {"type": aqm}
    data["aqm"] = {**data.get("aqm", {}), **(aqm_param or {})}
    try:
        return Scenario(data)
    except ValueError as e:
        msg = _as_option(e, None, aqm_param)
        if msg.startswith("--"):
            msg = "--reverse-" + msg[2:]
        raise ValueError(msg) from None


def _flent_writer(command: list[str], res):
    """``also(tmp)`` writing the Flent file of the command's output into the result folder,
    or None (with a warning) if the output holds no data."""
    from aqmlab.flent import save_flent
    from aqmlab.flent_tools import tool_flent

    links = res.summary["links"]
    egress = {
        "iface": "uplink",
        "qdiscs": [{"name": links["uplink"]["aqm"], "id": "1:", "parent": "root"}],
        "aqmlab_link": "uplink",
        "rate_bps": links["uplink"].get("rate_bps"),
        "downlink": {
            "aqm": links["downlink"]["aqm"],
            "rate_bps": links["downlink"].get("rate_bps"),
        },
    }
    try:
        data = tool_flent(command, (res.output or b"").decode(errors="replace"), egress)
    except ValueError as e:
        typer.echo(f"warning: {e}", err=True)
        return None
    return lambda d: save_flent(d, data)


def register(app: typer.Typer) -> None:
    """Attach ``shell`` to the top-level app.

    Parameters
    ----------
    app : typer.Typer
        The top-level ``aqmlab`` app.
    """

    @app.command("shell")
    def shell_cmd(
        scenario: Annotated[
            Path | None,
            typer.Argument(help="Scenario TOML file (its dumbbell's link); else the options."),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option("--out", help="Write the links' statistics here (summary.json, ...)."),
        ] = None,
        rate: lo.Rate = None,
        rate_trace: lo.RateTrace = None,
        netem: lo.Netem = None,
        rtt: lo.Rtt = None,
        buffer: lo.Buffer = None,
        aqm: lo.Aqm = None,
        aqm_param: lo.AqmParam = None,
        ecn: Annotated[
            bool,
            typer.Option(
                "--ecn", help="The inside's connections ask for ECN; AQMs mark.", show_default=False
            ),
        ] = False,
        pkt_size: lo.PktSize = None,
        seed: lo.Seed = None,
        sample_interval: lo.SampleInterval = None,
        reverse_rate: Annotated[
            str | None, typer.Option("--reverse-rate", help="Downlink rate [--rate].")
        ] = None,
        reverse_rate_trace: Annotated[
            str | None,
            typer.Option("--reverse-rate-trace", help="Mahimahi trace of the downlink."),
        ] = None,
        reverse_buffer: Annotated[
            int | None, typer.Option("--reverse-buffer", help="Downlink buffer [--buffer].")
        ] = None,
        reverse_aqm: Annotated[
            str | None, typer.Option("--reverse-aqm", help="Downlink AQM or qdisc [--aqm].")
        ] = None,
        reverse_aqm_param: Annotated[
            list[str] | None,
            typer.Option("--reverse-aqm-param", help="Downlink AQM parameter key=value."),
        ] = None,
        reverse_netem: lo.ReverseNetem = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="Override a scenario key: key=value (with SCENARIO)."),
        ] = None,
        peer_command: Annotated[
            str | None,
            typer.Option(
                "--peer-command",
                help="Shell command started on the far side first, e.g. 'iperf3 -s'.",
            ),
        ] = None,
        pcap: Annotated[
            bool,
            typer.Option(
                "--pcap",
                help="Capture the real packets at both TUN devices to OUT/capture.pcapng "
                "(headers: the first 128 bytes; docs/pcap.md).",
                show_default=False,
            ),
        ] = False,
        host_port: Annotated[
            list[str] | None,
            typer.Option(
                "--host-port",
                help="Relay $AQMLAB_PEER:PORT to the host's service: PORT[:[HOST:]HOST_PORT] "
                "(HOST 127.0.0.1), across the link (repeatable).",
            ),
        ] = None,
        flent: ShellFlentOpt = False,
        quiet: Annotated[
            bool, typer.Option("--quiet", help="Print no summary.", show_default=False)
        ] = False,
        force: Force = False,
    ) -> None:
        """Run COMMAND (after --) behind the emulated link; exit with its status (needs root)."""
        from aqmlab.emu import EmulationError, check_environment, check_link
        from aqmlab.emu.shell import check_command, check_not_nested, shell
        from aqmlab.output import Interrupted, check_output_dir

        try:
            check_not_nested()
        except ValueError as e:
            _fail(str(e))
        command = _common.trailing_command
        if command is None:
            command = [os.environ.get("SHELL") or "/bin/sh"]
        elif not command:
            _fail("COMMAND: missing after --; e.g. aqmlab shell --rate 10Mbps -- bash")
        try:
            check_command(command)
        except ValueError as e:
            _fail(str(e))
        given = {"rate": rate, "rate_trace": rate_trace, "rtt": rtt, "buffer": buffer,
                 "aqm": aqm, "pkt_size": pkt_size, "sample_interval": sample_interval,
                 "netem": netem}  # fmt: skip
        from aqmlab.emu.relay import parse_host_port

        try:
            host_ports = [parse_host_port(h) for h in host_port or []]
        except ValueError as e:
            _fail(str(e))
        if pcap and out is None:
            _fail("--pcap: needs --out DIR (the capture is written to DIR/capture.pcapng)")
        if flent:
            from aqmlab.flent_tools import check_flent_command

            if out is None:
                _fail("--flent: needs --out DIR (the Flent file is written into DIR)")
            try:
                check_flent_command(command)
            except ValueError as e:
                _fail(str(e))
        if reverse_rate is not None:
            _quantity("--reverse-rate", reverse_rate, "rate")
        if scenario is not None:
            from aqmlab.scenario import load_scenario

            extra = [k for k, v in given.items() if v is not None]
            extra += ["aqm_param"] * bool(aqm_param) + ["ecn"] * ecn
            if extra:
                opt = "--" + extra[0].replace("_", "-")
                _fail(f"{opt}: not with a scenario file ({scenario}); use --set KEY=VALUE")
            try:
                up = load_scenario(scenario, overrides=list(set_ or []))
                if seed is not None:
                    up = up.replace(seed=seed)
            except ValueError as e:
                _fail(str(e))
            ecn = any(g.get("ecn") for g in up.normalized["flows"])
        else:
            if set_:
                _fail(f"--set = {set_[0]!r}: only with a scenario file")
            opts = {k: (_DEFAULTS.get(k) if v is None else v) for k, v in given.items()}
            opts["sample_interval"] = sample_interval or "10ms"
            if rate is None and rate_trace is not None:
                opts["rate"] = None  # the nominal rate: the trace's mean
            # the emulator's link options, parsed as `aqmlab emulate` parses them (one flow
            # group stands for COMMAND; the run ends with it, not after `duration`)
            up, _, _ = build_dumbbell(
                **opts, flows=1, aqm_param=aqm_param, class_=None, class_flows=None, ecn=ecn,
                seed=1 if seed is None else seed, cc="cubic", delack=None, sack=None,
                init_cwnd=10, min_rto="200ms", rwnd=None, loss=0.0, duration="1s",
                warmup="0s",
            )  # fmt: skip
        try:
            mtu = check_link(up)
        except ValueError as e:
            _fail(str(e) if scenario is not None else _as_option(e))
        params = _params(reverse_aqm_param, "--reverse-aqm-param")
        try:
            down = downlink_scenario(
                up, reverse_rate, reverse_rate_trace, reverse_buffer, reverse_aqm, params,
                netem=reverse_netem,
            )  # fmt: skip
            check_link(down)
        except ValueError as e:
            _fail(str(e))
        if out is not None:
            try:
                check_output_dir(out, force)
            except ValueError as e:
                _fail(str(e))
        cap = None
        try:
            check_environment()
            if pcap:
                from aqmlab.output import temp_file_beside

                # written beside the result folder, moved into it with the other files
                cap = temp_file_beside(out.resolve().parent / f"{out.name}.pcapng")
            res = shell(
                up, down, command, peer_command=peer_command, mtu=mtu, ecn=ecn, pcap=cap,
                host_ports=host_ports, keep_output=flent,
            )  # fmt: skip
            if out is not None:
                from aqmlab.cli.sim import _write
                from aqmlab.pcap import PCAP_FILE
                from aqmlab.results import SimResult

                also = _flent_writer(command, res) if flent else None
                _write(SimResult(summary=res.summary, columns=res.columns), out, force, False,
                       "shell", move_in={PCAP_FILE: cap} if cap else None,
                       also=also)  # fmt: skip
        except EmulationError as e:
            _fail(str(e).replace("emulate needs", "shell needs"), 1)
        except Interrupted as e:
            _fail("interrupted", 128 + e.signum)
        except ValueError as e:  # the peer command ended early, a relay port taken
            _fail(str(e))
        finally:
            if cap is not None:
                cap.unlink(missing_ok=True)
        if not quiet:
            links = res.summary["links"]
            parts = [
                f"{name} {s['aqm']}: utilization {s['utilization']:.3f}, queue delay mean "
                f"{s['queue_delay_ms']['mean']:.2f} ms, drops {s['drops']}, marks {s['marks']}"
                for name, s in links.items()
            ]
            typer.echo("aqmlab shell: " + "; ".join(parts), err=True)
            if out is not None:
                typer.echo(f"aqmlab shell: results written to {out}", err=True)
        raise typer.Exit(res.exit_status)
