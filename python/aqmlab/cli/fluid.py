"""`aqmlab fluid MODEL` commands: simulate a fluid model, print its equilibrium and final state.

Every command validates its input first; bad input prints one line ``error: --option: reason
(got value)`` and exits with status 2, writing nothing. With ``--out DIR`` the trajectories go to
``DIR/trajectory.parquet`` and a figure to ``DIR/figure.png`` (written to a temporary directory
and moved into place at the end). ``--json`` prints exactly one JSON object.

Units: capacities in packets/s, times in seconds, queues in packets. ``--rtt a:b`` spreads RTTs
linearly over the flows from ``a`` to ``b``; ``--rtt a,b,c`` lists them; ``--rtt a`` is one value.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from aqmlab.cli._common import BadOption as _Bad
from aqmlab.cli._common import fail as _fail

app = typer.Typer(help="fluid commands", no_args_is_help=True)

Duration = Annotated[float, typer.Option("--duration", help="horizon (s)")]
Dt = Annotated[float | None, typer.Option("--dt", help="RK4 step (s); model default if omitted")]
Json = Annotated[bool, typer.Option("--json", help="print one JSON object")]
Out = Annotated[Path | None, typer.Option("--out", help="directory for parquet + figure")]


def _pos(name: str, value, allow_zero=False, allow_inf=False):
    if value is None:
        return value
    ok = value >= 0 if allow_zero else value > 0
    if not ((np.isfinite(value) or (allow_inf and value == np.inf)) and ok):
        raise _Bad(f"{name}: must be {'>= 0' if allow_zero else '> 0'} (got {value})")
    return value


def _floats(name: str, text: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise _Bad(f"{name}: not a comma-separated list of numbers (got {text})") from None
    if not vals:
        raise _Bad(f"{name}: empty (got {text!r})")
    for v in vals:
        _pos(name, v)
    return vals


def _rtts(text: str, n: int | None) -> list[float]:
    """``a:b`` (linear over n flows), ``a,b,...`` or ``a``."""
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 2:
            raise _Bad(f"--rtt: expected a:b (got {text})")
        a, b = (_floats("--rtt", p)[0] for p in parts)
        if n is None:
            raise _Bad(f"--rtt: a range needs the number of flows (got {text})")
        return list(np.linspace(a, b, n)) if n > 1 else [a]
    vals = _floats("--rtt", text)
    if n is not None and len(vals) == 1:
        return vals * n
    if n is not None and len(vals) != n:
        raise _Bad(f"--rtt: {len(vals)} values for {n} flows (got {text})")
    return vals


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
        return laws.PI(a=_pos("--a", a), b=_pos("--b", b), fs=_pos("--fs", fs), qref=qref)
    if name == "red":
        if max_th <= min_th:
            raise _Bad(f"--max-th: must exceed --min-th (got {max_th} <= {min_th})")
        if not 0 < wq < 1:
            raise _Bad(f"--wq: must be in (0, 1) (got {wq})")
        return laws.RED(min_th=min_th, max_th=max_th, max_p=_pos("--max-p", max_p), w_q=wq)
    if name == "rem":
        if phi <= 1:
            raise _Bad(f"--phi: must be > 1 (got {phi})")
        return laws.REM(gamma=_pos("--gamma", gamma), phi=phi, qref=qref)
    if name in ("pd-lq", "pdlq"):
        return laws.PDLQ(h1=h1, h2=h2, h3=h3, p1=_pos("--p1", p1), qref=qref, p_offset=p_offset)
    if name == "sfc":
        return laws.SFC(k1=k1, k2=k2, qref=qref, p_offset=p_offset or 0.0)
    raise _Bad(f"--law: unknown law (got {law}); choose red, pi, rem, pd-lq, sfc")


def _jsonable(v):
    a = np.asarray(v)
    return a.tolist()


def _emit(result, params: dict, as_json: bool, out: Path | None, extra: dict | None = None):
    """Print the summary and write outputs atomically."""
    eq = result.equilibrium
    final = {k: float(v[0]) for k, v in result.final().items()}
    summary = {
        "model": result.model,
        "params": params,
        "equilibrium": eq.to_dict(0) if eq is not None else None,
        "final": final,
        "t_end": float(result.t[-1]),
        "wall_seconds": result.info.get("wall_seconds"),
    }
    summary.update(extra or {})
    if out is not None:
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise _Bad(f"--out: exists and is not a directory (got {out})")
        parent = out.parent if str(out.parent) else Path(".")
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".fluid-", dir=parent))
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            result.to_pandas().to_parquet(tmp / "trajectory.parquet", index=False)
            fig = result.plot()
            fig.savefig(tmp / "figure.png", dpi=110)
            plt.close(fig)
            (tmp / "summary.json").write_text(json.dumps(summary, indent=2))
            out.mkdir(parents=True, exist_ok=True)
            for f in tmp.iterdir():
                shutil.move(str(f), out / f.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        summary["out"] = str(out)
    if as_json:
        typer.echo(json.dumps(summary))
        return
    typer.echo(f"model: {result.model}   t_end = {summary['t_end']:g}")
    if summary["equilibrium"] is not None:
        typer.echo("equilibrium:")
        for k, v in summary["equilibrium"].items():
            typer.echo(f"  {k:>8} = {np.round(v, 6).tolist()}")
    typer.echo("final state:")
    for k, v in final.items():
        typer.echo(f"  {k:>8} = {v:.6g}")
    for k, v in (extra or {}).items():
        typer.echo(f"{k}: {np.round(v, 6).tolist()}")
    if out is not None:
        typer.echo(f"wrote {out}/trajectory.parquet, {out}/figure.png")


def _run(build, duration, dt, as_json, out, extra_fn=None):
    try:
        _pos("--duration", duration)
        _pos("--dt", dt)
        model, params = build()
        res = model.simulate(duration, dt=dt)
        extra = extra_fn(res) if extra_fn else None
        _emit(res, params, as_json, out, extra)
    except _Bad as e:
        _fail(str(e))
    except ValueError as e:
        _fail(str(e).splitlines()[0])


@app.command("sqm")
def sqm(
    capacity: Annotated[float, typer.Option(help="bottleneck capacity C (packets/s)")] = 1000.0,
    rtt: Annotated[str, typer.Option(help="flow RTTs (s): a:b, a,b,... or a")] = "0.100:0.150",
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
    duration: Duration = 50.0,
    dt: Dt = None,
    as_json: Json = False,
    out: Out = None,
):
    """SQM alpha-fair multi-queue model on one bottleneck (ALGORITHMS.md §1.5). Prints final_rates."""

    def build():
        from aqmlab.fluid import SQM

        _pos("--capacity", capacity)
        w = _floats("--weights", weights)
        n = flows if flows is not None else len(w)
        if n <= 0:
            raise _Bad(f"--flows: must be > 0 (got {n})")
        if len(w) != n:
            raise _Bad(f"--weights: {len(w)} weights for {n} flows (got {weights})")
        _pos("--alpha", alpha)
        _pos("--sigma", sigma)
        _pos("--beta", beta, allow_zero=True)
        d = _rtts(rtt, n)
        model = SQM(capacity, d, weights=w, alpha=alpha, sigma=sigma, beta=beta)
        return model, {
            "capacity": capacity,
            "rtt": d,
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
        lambda r: {"final_rates": r["x"][-1, 0].tolist(), "final_queues": r["q"][-1, 0].tolist()},
    )


def _window_cmd(
    kind: str,
    flows,
    capacity,
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
):
    def build():
        from aqmlab.fluid import KTL, SFC, GaoHou, Misra

        _pos("--flows", flows)
        _pos("--capacity", capacity)
        _pos("--rtt", rtt)
        _pos("--qref", qref, allow_zero=True)
        _pos("--buffer", buffer, allow_inf=True)
        off = p_offset
        if off is None and law.lower() in ("pd-lq", "pdlq"):
            # §4 item 3: PD-LQ adds the operating-point probability at the target queue
            probe = {"misra": Misra, "ktl": KTL}.get(kind)
            tmp = probe(flows, capacity, rtt, SFC()) if probe else None
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
            model = GaoHou(flows, capacity, rtt, lw, b=_pos("--ack-b", ack_b), buffer=buffer)
        elif kind == "ktl":
            model = KTL(flows, capacity, rtt, lw, buffer=buffer)
        else:
            model = Misra(flows, capacity, rtt, lw, buffer=buffer)
        params = {
            "flows": flows,
            "capacity": capacity,
            "rtt": rtt,
            "law": lw.name,
            **{k: _jsonable(v) for k, v in lw.params().items() if v is not None},
        }
        return model, params

    _run(build, duration, dt, as_json, out)


LawOpt = Annotated[str, typer.Option(help="AQM law: red | pi | rem | pd-lq | sfc")]


def _window_command(kind, help_text, defaults):
    f0, c0, r0, law0, q0, dur0 = defaults

    def cmd(
        flows: Annotated[float, typer.Option(help="number of flows N")] = f0,
        capacity: Annotated[float, typer.Option(help="capacity C (packets/s)")] = c0,
        rtt: Annotated[float, typer.Option(help="propagation RTT (s); Gao-Hou: constant RTT")] = r0,
        law: LawOpt = law0,
        qref: Annotated[float, typer.Option(help="target queue (packets)")] = q0,
        a: Annotated[float, typer.Option(help="PI a (1/packet)")] = 1.822e-5,
        b: Annotated[float, typer.Option(help="PI b (1/packet)")] = 1.816e-5,
        fs: Annotated[float, typer.Option(help="PI sampling frequency (Hz)")] = 160.0,
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
        duration: Duration = dur0,
        dt: Dt = None,
        as_json: Json = False,
        out: Out = None,
    ):
        _window_cmd(
            kind,
            flows,
            capacity,
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
        )

    cmd.__doc__ = help_text
    app.command(kind)(cmd)


_window_command(
    "misra",
    "Misra-Hollot Reno model (§1.1) with a fluid AQM law (default: Hollot's PI).",
    (60.0, 3750.0, 0.2, "pi", 200.0, 100.0),
)
_window_command(
    "gao-hou",
    "Gao-Hou enhanced model (§1.3), default SFC law of the paper's example.",
    (300.0, 1250.0, 0.6, "sfc", 50.0, 100.0),
)
_window_command(
    "ktl",
    "Kim-Tang-Low AIMD model (§1.4), default memoryless PD-LQ (tau=0.2 gains).",
    (100.0, 4000.0, 0.15, "pd-lq", 200.0, 60.0),
)


@app.command("kelly")
def kelly(
    capacity: Annotated[float, typer.Option(help="link capacity (packets/s)")] = 100.0,
    rtt: Annotated[str, typer.Option(help="route RTTs (s): a:b, a,b,... or a")] = "0.1:0.2",
    weights: Annotated[str, typer.Option(help="willingness to pay w_r, one per route")] = "1,3",
    gain: Annotated[float, typer.Option(help="kappa (1/s)")] = 5.0,
    duration: Duration = 60.0,
    dt: Dt = None,
    as_json: Json = False,
    out: Out = None,
):
    """Kelly primal rate model on one link (§1.2). Prints final_rates."""

    def build():
        from aqmlab.fluid import Kelly

        _pos("--capacity", capacity)
        _pos("--gain", gain)
        w = _floats("--weights", weights)
        d = _rtts(rtt, len(w))
        return Kelly(capacity, d, weights=w, gain=gain), {
            "capacity": capacity,
            "rtt": d,
            "weights": w,
            "gain": gain,
        }

    _run(build, duration, dt, as_json, out, lambda r: {"final_rates": r["x"][-1, 0].tolist()})


@app.command("edc")
def edc(
    flows: Annotated[float, typer.Option(help="number of flows N")] = 60.0,
    capacity: Annotated[
        float, typer.Option(help="capacity (packets/s); 1.5 Mb/s / 1000 B")
    ] = 187.5,
    rtt: Annotated[float, typer.Option(help="propagation RTT (s)")] = 0.1,
    qref: Annotated[float, typer.Option(help="target queue (packets)")] = 200.0,
    kp: Annotated[float, typer.Option(help="K_P")] = 0.03,
    ki: Annotated[float, typer.Option(help="K_I")] = 0.01,
    n_event: Annotated[int, typer.Option(help="arrivals per controller run")] = 30,
    duration: Annotated[
        float, typer.Option(help="horizon (s), converted to duration*capacity packets")
    ] = 200.0,
    as_json: Json = False,
    out: Out = None,
):
    """EDC spatial-domain model with the event-driven PI (§1.6, §2.4)."""

    def build():
        from aqmlab.fluid import EDC

        for name, v in (("--flows", flows), ("--capacity", capacity), ("--rtt", rtt)):
            _pos(name, v)
        _pos("--qref", qref, allow_zero=True)
        if n_event < 1:
            raise _Bad(f"--n-event: must be >= 1 (got {n_event})")
        return EDC(flows, capacity, rtt, qref=qref, kp=kp, ki=ki, n_event=n_event), {
            "flows": flows,
            "capacity": capacity,
            "rtt": rtt,
            "qref": qref,
            "kp": kp,
            "ki": ki,
            "n_event": n_event,
            "packets": duration * capacity,
        }

    _run(build, duration * capacity if capacity > 0 else duration, None, as_json, out)
