"""The emulated link's command-line options, declared once for ``aqmlab emulate`` and
``aqmlab shell`` so that the two commands cannot drift apart (``docs/emulate.md``,
``docs/shell.md``).

Each name is a typer parameter type (an ``Annotated`` alias, as :data:`aqmlab.cli.sim.Force`
is): a command declares ``netem: Netem = None`` and gets the option with its flag and help.
Every option defaults to None (not given), so that a command can tell a given option from its
default and refuse it beside a scenario file. The values go through
:func:`aqmlab.cli.sim.build_dumbbell`, which both commands call. ``tests/test_shell.py``
checks that both commands declare every option listed in :data:`SHARED` the same way.
"""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = [
    "SHARED",
    "Aqm",
    "AqmParam",
    "Buffer",
    "Netem",
    "PktSize",
    "Rate",
    "RateTrace",
    "ReverseNetem",
    "Rtt",
    "SampleInterval",
    "Seed",
]

Rate = Annotated[
    str | None,
    typer.Option(
        help="Link rate [10Mbps] (shell: of each direction); with --rate-trace the nominal "
        "rate AQMs are told [the trace's mean rate]."
    ),
]
RateTrace = Annotated[
    str | None,
    typer.Option(
        "--rate-trace",
        help="Mahimahi trace file the bottleneck (shell: the uplink) follows (docs/traces.md).",
    ),
]
Netem = Annotated[
    str | None,
    typer.Option(
        "--netem",
        help="netem impairments of the bottleneck's (shell: the uplink's) packets, in netem's "
        'syntax, e.g. "delay 10ms 5ms loss 1%" (docs/netem.md).',
    ),
]
ReverseNetem = Annotated[
    str | None,
    typer.Option(
        "--reverse-netem",
        help="netem impairments of the reverse direction's packets (the ACKs; shell: the "
        "downlink), in netem's syntax (docs/netem.md).",
    ),
]
Rtt = Annotated[str | None, typer.Option(help="Two-way propagation delay [40ms].")]
Buffer = Annotated[
    int | None, typer.Option(help="Buffer, packets [100] (shell: of each direction).")
]
Aqm = Annotated[
    str | None,
    typer.Option(help="AQM or qdisc (`aqmlab aqms`) [droptail] (shell: of each direction)."),
]
AqmParam = Annotated[
    list[str] | None,
    typer.Option("--aqm-param", help="AQM parameter key=value, times with a unit."),
]
PktSize = Annotated[
    int | None, typer.Option(help="IP size of data packets = the MTU, bytes [1500].")
]
Seed = Annotated[int | None, typer.Option(help="Seed (start times, AQM randomness).")]
SampleInterval = Annotated[str | None, typer.Option(help="Time-series sampling period [10ms].")]

#: The parameter names both commands declare with the types above.
SHARED = (
    "rate",
    "rate_trace",
    "netem",
    "reverse_netem",
    "rtt",
    "buffer",
    "aqm",
    "aqm_param",
    "pkt_size",
    "seed",
    "sample_interval",
)
