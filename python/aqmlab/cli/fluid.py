"""`aqmlab fluid MODEL` commands: simulate a fluid model, print its equilibrium and final state.

Every command validates its whole input first -- values, the ``--out`` folder and the cost of the
run (RK4 steps and memory, refused within a second if it would exceed the limits of
``aqmlab.fluid.base``) -- and bad input prints one line ``error: --option = value: reason`` and
exits with status 2, writing nothing. With ``--out DIR`` the trajectories go to
``DIR/trajectory.parquet``, a figure to ``DIR/figure.png`` and the printed summary to
``DIR/summary.json``, written through :mod:`aqmlab.output` (a temporary folder renamed into
place; a folder aqmlab did not write is replaced only with ``--force``; nothing is left behind on
an error or Ctrl-C). ``--json`` prints exactly one JSON object.

Units: every time carries its unit (``--rtt 200ms``, ``--duration 100s``, ``--dt 1ms``; a bare
number is an error). A capacity is a packet rate (``--capacity 3750pps``) or a bit rate divided
by ``8 * --pkt-size`` (``--capacity 30Mbps``, default packet size 1000 bytes); a bare number is
an error. PI's sampling frequency is ``160Hz`` (a bare number is Hz). Dimensionless numbers
(flows, weights, gains, queues in packets, probabilities) are bare. RTT lists: ``100ms:150ms``
spreads RTTs linearly over the flows, ``100ms,120ms,150ms`` lists them, ``100ms`` is one value.

Examples::

    aqmlab fluid misra --flows 60 --capacity 3750pps --rtt 200ms --duration 100s --out run/
    aqmlab fluid sqm --capacity 1000pps --rtt 100ms:150ms \\
        --weights 1500,1500,1500,1500,1500,1000,1000,1000,1000,1000 --duration 50s --json
    aqmlab fluid edc --flows 60 --capacity 1.5Mbps --rtt 100ms --duration 200s
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import BadOption as _Bad
from aqmlab.cli._common import PktSize
from aqmlab.cli._common import capacity_opt as _capacity
from aqmlab.cli._common import fail as _fail
from aqmlab.cli._common import frequency_opt as _frequency
from aqmlab.cli._common import number as _num
from aqmlab.cli._common import number_list_opt as _numbers
from aqmlab.cli._common import size_opt as _size
from aqmlab.cli._common import time_list_opt as _times
from aqmlab.cli._common import time_opt as _time

app = typer.Typer(help="fluid commands", no_args_is_help=True)

Duration = Annotated[str, typer.Option("--duration", help="horizon (e.g. 100s)")]
Dt = Annotated[
    str | None, typer.Option("--dt", help="RK4 step (e.g. 1ms); model default if omitted")
]
Json = Annotated[bool, typer.Option("--json", help="print one JSON object", show_default=False)]
Out = Annotated[Path | None, typer.Option("--out", help="folder for parquet + figure + summary")]
Force = Annotated[
    bool,
    typer.Option(
        "--force", help="replace --out even if it holds files aqmlab did not write",
        show_default=False,
    ),
]  # fmt: skip

#: Units of the printed states and results (labels of the text output).
_UNITS = {
    "W": "packets",
    "q": "packets",
    "p": "probability",
    "R": "s",
    "x": "packets/s",
    "y": "packets/s",
    "time": "s",
    "e_prev": "packets",
    "avg": "packets",
    "bhat": "packets",
    "final_rates": "packets/s",
    "final_queues": "packets",
}


def _unit(name: str) -> str:
    u = _UNITS.get(name.split("[", 1)[0])
    return f"{name} [{u}]" if u else name


def _pos(name: str, value, allow_zero=False, allow_inf=False):
    if value is None:
        return value
    if allow_inf and value == float("inf"):
        return value
    return _num(name, value, positive=not allow_zero, nonneg=allow_zero)


def _law(
    law: str,
    a,
    b,
    fs,
    qref,
    min_th,
    max_th,
    max_p,
    wq,
    gamma,
    phi,
    h1,
    h2,
    h3,
    p1,
    k1,
    k2,
    p_offset,
):
    from aqmlab.fluid import laws

    name = law.lower()
    if name == "pi":
        return laws.PI(a=_num("--a", a), b=_num("--b", b), fs=_frequency("--fs", fs), qref=qref)
    if name == "red":
        _pos("--min-th", min_th, allow_zero=True)
        _pos("--max-th", max_th)
        if max_th <= min_th:
            raise _Bad(f"--max-th = {max_th}: must exceed --min-th = {min_th}")
        if not 0 < wq < 1:
            raise _Bad(f"--wq = {wq}: must be in (0, 1)")
        if not 0 < max_p <= 1:
            raise _Bad(f"--max-p = {max_p}: must be in (0, 1]")
        return laws.RED(min_th=min_th, max_th=max_th, max_p=max_p, w_q=wq)
    if name == "rem":
        _num("--phi", phi)
        if phi <= 1:
            raise _Bad(f"--phi = {phi}: must be > 1")
        return laws.REM(gamma=_pos("--gamma", gamma), phi=phi, qref=qref)
    if name in ("pd-lq", "pdlq"):
        for key, v in (("--h1", h1), ("--h2", h2), ("--h3", h3), ("--p-offset", p_offset)):
            _num(key, v)
        return laws.PDLQ(h1=h1, h2=h2, h3=h3, p1=_pos("--p1", p1), qref=qref, p_offset=p_offset)
    if name == "sfc":
        for key, v in (("--k1", k1), ("--k2", k2), ("--p-offset", p_offset)):
            _num(key, v)
        return laws.SFC(k1=k1, k2=k2, qref=qref, p_offset=p_offset or 0.0)
    raise _Bad(f"--law = {law}: unknown law; choose red, pi, rem, pd-lq, sfc")


def _jsonable(v):
    import numpy as np

    a = np.asarray(v)
    return a.tolist()


def _write(result, summary: dict, out: Path, force: bool, command: str) -> None:
    """Write trajectory, figure and summary into ``out`` through aqmlab.output."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aqmlab.output import output_dir

    with output_dir(out, force=force, command=command) as tmp:
        result.to_pandas().to_parquet(tmp / "trajectory.parquet", index=False)
        fig = result.plot()
        try:
            fig.savefig(tmp / "figure.png", dpi=110)
        finally:
            plt.close(fig)
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


def _emit(result, params: dict, as_json: bool, out, force: bool, extra: dict | None = None):
    """Write the outputs (if any), then print the summary."""
    eq = result.equilibrium
    final = {k: float(v[0]) for k, v in result.final().items()}
    summary = {
        "model": result.model,
        "params": params,
        "equilibrium": eq.to_dict(0) if eq is not None else None,
        "final": final,
        "t_end": float(result.t[-1]),
        "t_unit": "packets" if result.model == "edc" else "s",
        "wall_seconds": result.info.get("wall_seconds"),
    }
    summary.update(extra or {})
    if out is not None:
        _write(result, summary, out, force, f"aqmlab fluid {result.model}")
        summary["out"] = str(out)
    if as_json:
        typer.echo(json.dumps(summary))
        return
    typer.echo(f"model: {result.model}   t_end = {summary['t_end']:g} {summary['t_unit']}")
    if summary["equilibrium"] is not None:
        import numpy as np

        typer.echo("equilibrium:")
        for k, v in summary["equilibrium"].items():
            typer.echo(f"  {_unit(k):>22} = {np.round(v, 6).tolist()}")
    typer.echo("final state:")
    for k, v in final.items():
        typer.echo(f"  {_unit(k):>22} = {v:.6g}")
    import numpy as np

    for k, v in (extra or {}).items():
        typer.echo(f"{_unit(k)}: {np.round(v, 6).tolist()}")
    if out is not None:
        typer.echo(f"wrote {out}/trajectory.parquet, {out}/figure.png, {out}/summary.json")


def _run(build, duration, dt, as_json, out, force, extra_fn=None, scale=1.0, rtt=None):
    """Check everything (values, output folder, cost), then simulate and write.

    ``build() -> (model, params)``; ``duration`` and ``dt`` are the option texts; ``scale``
    converts seconds to the model's time (EDC: packets)."""
    from aqmlab.output import OutputError, check_output_dir

    try:
        dur = _time("--duration", duration)
        step = None if dt is None else _time("--dt", dt)
        model, params = build()
        if out is not None:
            check_output_dir(out, force)
        names = {
            "duration": f"--duration = {duration}",
            "dt": f"--dt = {dt}",
            "delay": f"--rtt = {rtt} (longest delay {model.max_delay():.3g} s)",
        }
        model.check_cost(dur * scale, None if step is None else step * scale, names=names)
        res = model.simulate(dur * scale, dt=None if step is None else step * scale)
        extra = extra_fn(res) if extra_fn else None
        _emit(res, params, as_json, out, force, extra)
    except (_Bad, OutputError) as e:
        _fail(str(e))
    except ValueError as e:
        _fail(str(e).splitlines()[0])


@app.command("sqm")
def sqm(
    capacity: Annotated[
        str, typer.Option(help="bottleneck capacity C: packet rate (1000pps) or bit rate (8Mbps)")
    ] = "1000pps",
    rtt: Annotated[
        str, typer.Option(help="flow RTTs: a:b, a,b,... or a (e.g. 100ms:150ms)")
    ] = "100ms:150ms",
    weights: Annotated[str, typer.Option(help="WFQ weights, one per flow")] = (
        "1500,1500,1500,1500,1500,1000,1000,1000,1000,1000"
    ),
    flows: Annotated[
        int | None, typer.Option(help="number of flows (default: from --weights)")
    ] = None,
    alpha: Annotated[float, typer.Option(help="fairness exponent (2 = Reno)")] = 2.0,
    sigma: Annotated[
        float | None,
        typer.Option(help="slope of p=(q-beta)/sigma (packets); default critically damped"),
    ] = None,
    beta: Annotated[float, typer.Option(help="target queue (packets)")] = 0.0,
    pkt_size: PktSize = "1000",
    duration: Duration = "50s",
    dt: Dt = None,
    as_json: Json = False,
    out: Out = None,
    force: Force = False,
):
    """SQM alpha-fair multi-queue model on one bottleneck (docs/fluid.md). Prints final_rates."""

    def build():
        from aqmlab.fluid import SQM

        c = _capacity("--capacity", capacity, _size("--pkt-size", pkt_size))
        w = _numbers("--weights", weights)
        n = flows if flows is not None else len(w)
        if n <= 0:
            raise _Bad(f"--flows = {n}: must be > 0")
        if len(w) != n:
            raise _Bad(f"--weights = {weights}: {len(w)} weights for {n} flows")
        _pos("--alpha", alpha)
        _pos("--sigma", sigma)
        _pos("--beta", beta, allow_zero=True)
        d = _times("--rtt", rtt, n)
        model = SQM(c, d, weights=w, alpha=alpha, sigma=sigma, beta=beta)
        return model, {
            "capacity_pps": c,
            "rtt_s": d,
            "weights": w,
            "alpha": alpha,
            "sigma": _jsonable(model.sigma[0]),
            "beta": beta,
        }

    _run(
        build,
        duration,
        dt,
        as_json,
        out,
        force,
        lambda r: {"final_rates": r["x"][-1, 0].tolist(), "final_queues": r["q"][-1, 0].tolist()},
        rtt=rtt,
    )


def _window_cmd(
    kind: str,
    flows,
    capacity,
    pkt_size,
    rtt,
    law,
    qref,
    a,
    b,
    fs,
    min_th,
    max_th,
    max_p,
    wq,
    gamma,
    phi,
    h1,
    h2,
    h3,
    p1,
    k1,
    k2,
    p_offset,
    buffer,
    ack_b,
    duration,
    dt,
    as_json,
    out,
    force,
):
    def build():
        from aqmlab.fluid import KTL, SFC, GaoHou, Misra

        _pos("--flows", flows)
        c = _capacity("--capacity", capacity, _size("--pkt-size", pkt_size))
        r = _time("--rtt", rtt)
        _pos("--qref", qref, allow_zero=True)
        _pos("--buffer", buffer, allow_inf=True)
        _num("--p-offset", p_offset)
        off = p_offset
        if off is None and law.lower() in ("pd-lq", "pdlq"):
            # PD-LQ adds the operating-point probability at the target queue (docs/fluid.md)
            probe = {"misra": Misra, "ktl": KTL}.get(kind)
            tmp = probe(flows, c, r, SFC()) if probe else None
            import numpy as np

            off = float(tmp.p_required(np.asarray(qref))) if tmp else 0.0
        lw = _law(
            law,
            a,
            b,
            fs,
            qref,
            min_th,
            max_th,
            max_p,
            wq,
            gamma,
            phi,
            h1,
            h2,
            h3,
            p1,
            k1,
            k2,
            off or 0.0,
        )
        if kind == "gao-hou":
            model = GaoHou(flows, c, r, lw, b=_pos("--ack-b", ack_b), buffer=buffer)
        elif kind == "ktl":
            model = KTL(flows, c, r, lw, buffer=buffer)
        else:
            model = Misra(flows, c, r, lw, buffer=buffer)
        params = {
            "flows": flows,
            "capacity_pps": c,
            "rtt_s": r,
            "law": lw.name,
            **{k: _jsonable(v) for k, v in lw.params().items() if v is not None},
        }
        return model, params

    _run(build, duration, dt, as_json, out, force, rtt=rtt)


LawOpt = Annotated[str, typer.Option(help="AQM law: red | pi | rem | pd-lq | sfc")]


def _window_command(kind, help_text, defaults):
    f0, c0, r0, law0, q0, dur0 = defaults

    def cmd(
        flows: Annotated[float, typer.Option(help="number of flows N")] = f0,
        capacity: Annotated[
            str, typer.Option(help="capacity C: packet rate (e.g. 3750pps) or bit rate (30Mbps)")
        ] = c0,
        rtt: Annotated[
            str, typer.Option(help="propagation RTT (e.g. 200ms); Gao-Hou: constant RTT")
        ] = r0,
        law: LawOpt = law0,
        qref: Annotated[float, typer.Option(help="target queue (packets)")] = q0,
        a: Annotated[float, typer.Option(help="PI a (1/packet)")] = 1.822e-5,
        b: Annotated[float, typer.Option(help="PI b (1/packet)")] = 1.816e-5,
        fs: Annotated[str, typer.Option(help="PI sampling frequency (e.g. 160Hz)")] = "160Hz",
        min_th: Annotated[float, typer.Option(help="RED min_th (packets)")] = 150.0,
        max_th: Annotated[float, typer.Option(help="RED max_th (packets)")] = 300.0,
        max_p: Annotated[float, typer.Option(help="RED max_p")] = 0.1,
        wq: Annotated[float, typer.Option(help="RED w_q (per packet)")] = 0.00133,
        gamma: Annotated[float, typer.Option(help="REM gamma")] = 0.001,
        phi: Annotated[float, typer.Option(help="REM phi")] = 1.001,
        h1: Annotated[float, typer.Option(help="PD-LQ H1 (1/packet)")] = 5.657e-4,
        h2: Annotated[float, typer.Option(help="PD-LQ H2 (s/packet)")] = 3.626e-4,
        h3: Annotated[float, typer.Option(help="PD-LQ H3 (s^2/packet)")] = 4.894e-5,
        p1: Annotated[float, typer.Option(help="PD-LQ filter cut-off P1 (1/s)")] = 1.0,
        k1: Annotated[float, typer.Option(help="SFC k1 (1/packet)")] = 0.0005,
        k2: Annotated[float, typer.Option(help="SFC k2")] = 0.2,
        p_offset: Annotated[
            float | None,
            typer.Option(help="offset p* (PD-LQ default: equilibrium p at qref; SFC: 0)"),
        ] = None,
        buffer: Annotated[float, typer.Option(help="queue limit (packets)")] = float("inf"),
        ack_b: Annotated[float, typer.Option("--ack-b", help="Gao-Hou packets per ACK")] = 2.0,
        pkt_size: PktSize = "1000",
        duration: Duration = dur0,
        dt: Dt = None,
        as_json: Json = False,
        out: Out = None,
        force: Force = False,
    ):
        _window_cmd(
            kind,
            flows,
            capacity,
            pkt_size,
            rtt,
            law,
            qref,
            a,
            b,
            fs,
            min_th,
            max_th,
            max_p,
            wq,
            gamma,
            phi,
            h1,
            h2,
            h3,
            p1,
            k1,
            k2,
            p_offset,
            buffer,
            ack_b,
            duration,
            dt,
            as_json,
            out,
            force,
        )

    cmd.__doc__ = help_text
    app.command(kind)(cmd)


_window_command(
    "misra",
    "Misra-Hollot Reno model with a fluid AQM law (default: Hollot's PI).",
    (60.0, "3750pps", "200ms", "pi", 200.0, "100s"),
)
_window_command(
    "gao-hou",
    "Gao-Hou enhanced model, default SFC law of the paper's example.",
    (300.0, "1250pps", "600ms", "sfc", 50.0, "100s"),
)
_window_command(
    "ktl",
    "Kim-Tang-Low AIMD model, default memoryless PD-LQ (tau=0.2 gains).",
    (100.0, "4000pps", "150ms", "pd-lq", 200.0, "60s"),
)


@app.command("kelly")
def kelly(
    capacity: Annotated[
        str, typer.Option(help="link capacity: packet rate (100pps) or bit rate (800kbps)")
    ] = "100pps",
    rtt: Annotated[
        str, typer.Option(help="route RTTs: a:b, a,b,... or a (e.g. 100ms:200ms)")
    ] = "100ms:200ms",
    weights: Annotated[str, typer.Option(help="willingness to pay w_r, one per route")] = "1,3",
    gain: Annotated[float, typer.Option(help="kappa (1/s)")] = 5.0,
    pkt_size: PktSize = "1000",
    duration: Duration = "60s",
    dt: Dt = None,
    as_json: Json = False,
    out: Out = None,
    force: Force = False,
):
    """Kelly primal rate model on one link (docs/fluid.md). Prints final_rates."""

    def build():
        from aqmlab.fluid import Kelly

        c = _capacity("--capacity", capacity, _size("--pkt-size", pkt_size))
        _pos("--gain", gain)
        w = _numbers("--weights", weights)
        d = _times("--rtt", rtt, len(w))
        return Kelly(c, d, weights=w, gain=gain), {
            "capacity_pps": c,
            "rtt_s": d,
            "weights": w,
            "gain": gain,
        }

    _run(
        build,
        duration,
        dt,
        as_json,
        out,
        force,
        lambda r: {"final_rates": r["x"][-1, 0].tolist()},
        rtt=rtt,
    )


@app.command("edc")
def edc(
    flows: Annotated[float, typer.Option(help="number of flows N")] = 60.0,
    capacity: Annotated[
        str, typer.Option(help="capacity: packet rate (187.5pps) or bit rate (1.5Mbps)")
    ] = "1.5Mbps",
    rtt: Annotated[str, typer.Option(help="propagation RTT (e.g. 100ms)")] = "100ms",
    qref: Annotated[float, typer.Option(help="target queue (packets)")] = 200.0,
    kp: Annotated[float, typer.Option(help="K_P")] = 0.03,
    ki: Annotated[float, typer.Option(help="K_I")] = 0.01,
    n_event: Annotated[int, typer.Option(help="arrivals per controller run")] = 30,
    pkt_size: PktSize = "1000",
    duration: Annotated[
        str, typer.Option(help="horizon (e.g. 200s), converted to duration*capacity packets")
    ] = "200s",
    as_json: Json = False,
    out: Out = None,
    force: Force = False,
):
    """EDC spatial-domain model with the event-driven PI (docs/fluid.md, docs/design/edc.md)."""
    c_box = {}

    def build():
        from aqmlab.fluid import EDC

        _pos("--flows", flows)
        c = c_box["c"]
        r = _time("--rtt", rtt)
        _pos("--qref", qref, allow_zero=True)
        _num("--kp", kp)
        _num("--ki", ki)
        if n_event < 1:
            raise _Bad(f"--n-event = {n_event}: must be >= 1")
        return EDC(flows, c, r, qref=qref, kp=kp, ki=ki, n_event=n_event), {
            "flows": flows,
            "capacity_pps": c,
            "rtt_s": r,
            "qref": qref,
            "kp": kp,
            "ki": ki,
            "n_event": n_event,
            "packets": _time("--duration", duration) * c,
        }

    try:
        c_box["c"] = _capacity("--capacity", capacity, _size("--pkt-size", pkt_size))
    except _Bad as e:
        _fail(str(e))
    _run(build, duration, None, as_json, out, force, scale=c_box["c"], rtt=rtt)
