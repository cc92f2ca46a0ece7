"""`aqmlab design METHOD` commands: print a controller design (gains, margins, bounds).

Methods: ``pi`` (Hollot), ``pd-lq`` (Kim-Tang-Low), ``sfc`` (Gao-Hou), ``edc`` (Suzer et al.),
``sqm-sigma`` (SQM Theorem 3).  Units: capacities in packets/s, times in seconds, queues in
packets.  ``--json`` prints exactly one JSON object; ``--plot FILE`` writes a figure (Bode or
Nyquist, stability region, root locus, ...).  Bad input prints one line
``error: --option: reason (got value)`` and exits with status 2, writing nothing.

Examples::

    aqmlab design pi --flows-min 60 --capacity 3750 --rtt-max 0.246 --fs 160 --json
    aqmlab design pd-lq --capacity 4000 --flows 100 --prop-rtt 0.15 --q-ref 200 --p1 1 --lam -3.75
    aqmlab design sfc --capacity 1250 --flows-min 300 --rtt-max 0.6 --b 2 --k2 0.2 --plot sfc.png
    aqmlab design edc --flows 60 --capacity 187.5 --q-ref 200 --prop-rtt 0.1 --kp 0.03 --ki 0.01
    aqmlab design sqm-sigma --rates 120,120,120,120,120,80,80,80,80,80 --rtts 0.1:0.15
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from aqmlab.cli._common import BadOption as _Bad
from aqmlab.cli._common import fail as _fail

app = typer.Typer(help="controller design commands", no_args_is_help=True)

Json = Annotated[bool, typer.Option("--json", help="print one JSON object")]
Plot = Annotated[Path | None, typer.Option("--plot", help="write a figure to this file")]


def _check(name: str, value, *, positive=True, allow_zero=False, negative=False):
    if value is None:
        return value
    if not math.isfinite(value):
        raise _Bad(f"{name}: must be finite (got {value})")
    if negative and not value < 0:
        raise _Bad(f"{name}: must be < 0 (got {value})")
    if positive and not negative:
        ok = value >= 0 if allow_zero else value > 0
        if not ok:
            raise _Bad(f"{name}: must be {'>= 0' if allow_zero else '> 0'} (got {value})")
    return value


def _floats(name: str, text: str, n: int | None = None) -> list[float]:
    """``a,b,c`` or, with ``n`` known, ``a:b`` (n values spread linearly)."""
    try:
        if ":" in text:
            a, b = (float(v) for v in text.split(":"))
            if n is None:
                raise _Bad(f"{name}: a range a:b needs the list length (got {text})")
            vals = list(np.linspace(a, b, n))
        else:
            vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise _Bad(f"{name}: not a list of numbers (got {text})") from None
    if not vals:
        raise _Bad(f"{name}: empty (got {text!r})")
    for v in vals:
        _check(name, v)
    return vals


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple | np.ndarray):
        return [_plain(x) for x in v]
    if isinstance(v, np.bool_ | bool):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        f = float(v)
        return f if math.isfinite(f) else None
    return v


def _emit(d: dict, as_json: bool, title: str) -> None:
    d = _plain(d)
    if as_json:
        typer.echo(json.dumps(d))
        return
    typer.echo(title)
    for k, v in d.items():
        if isinstance(v, float):
            v = f"{v:.6g}"
        typer.echo(f"  {k}: {v}")


def _save(result, path: Path | None, **kw) -> None:
    if path is None:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = result.plot(**kw)
    fig = (ax[0] if isinstance(ax, np.ndarray | list | tuple) else ax).figure
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _run(fn):
    try:
        return fn()
    except _Bad as e:
        _fail(str(e))
    except ValueError as e:  # from the design functions: name the offending input
        _fail(str(e).splitlines()[0])


@app.command("pi")
def pi_cmd(
    flows_min: Annotated[float, typer.Option("--flows-min", help="smallest N")],
    capacity: Annotated[float, typer.Option("--capacity", help="C, packets/s")],
    rtt_max: Annotated[float, typer.Option("--rtt-max", help="largest RTT R+, s")],
    fs: Annotated[float, typer.Option("--fs", help="sampling frequency, Hz")] = 160.0,
    omega_g: Annotated[
        float | None, typer.Option("--omega-g", help="design crossover, rad/s (default z)")
    ] = None,
    z: Annotated[
        float | None, typer.Option("--z", help="PI zero, rad/s (default TCP pole)")
    ] = None,
    gain_rule: Annotated[str, typer.Option("--gain-rule", help="hollot | unity")] = "hollot",
    kind: Annotated[str, typer.Option("--plot-kind", help="bode | nyquist")] = "bode",
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Hollot's PI design (zero on the TCP pole) and Tustin coefficients a, b."""
    from aqmlab.design import hollot_pi

    def go():
        _check("--flows-min", flows_min)
        _check("--capacity", capacity)
        _check("--rtt-max", rtt_max)
        _check("--fs", fs)
        _check("--omega-g", omega_g)
        _check("--z", z)
        if gain_rule not in ("hollot", "unity"):
            raise _Bad(f"--gain-rule: must be hollot or unity (got {gain_rule})")
        if kind not in ("bode", "nyquist"):
            raise _Bad(f"--plot-kind: must be bode or nyquist (got {kind})")
        return hollot_pi(
            flows_min, capacity, rtt_max, fs, omega_g=omega_g, z=z, gain_rule=gain_rule
        )

    d = _run(go)
    _emit(d.to_dict(), as_json, "Hollot PI design")
    _save(d, plot, kind=kind)


@app.command("pd-lq")
def pd_lq_cmd(
    capacity: Annotated[float, typer.Option("--capacity", help="c, packets/s")],
    flows: Annotated[float, typer.Option("--flows", help="N")],
    prop_rtt: Annotated[float, typer.Option("--prop-rtt", help="propagation RTT d, s")],
    q_ref: Annotated[float, typer.Option("--q-ref", help="target queue b*, packets")],
    p1: Annotated[float, typer.Option("--p1", help="RED filter cut-off P1, 1/s")] = 1.0,
    lam: Annotated[float, typer.Option("--lam", help="closed-loop eigenvalue, 1/s (< 0)")] = -3.75,
    memory: Annotated[bool, typer.Option("--memory", help="delay-compensating law")] = False,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Kim-Tang-Low PD-LQ gains with all closed-loop eigenvalues at --lam."""
    from aqmlab.design import pd_lq_design

    def go():
        _check("--capacity", capacity)
        _check("--flows", flows)
        _check("--prop-rtt", prop_rtt)
        _check("--q-ref", q_ref, allow_zero=True)
        _check("--p1", p1)
        _check("--lam", lam, negative=True)
        return pd_lq_design(capacity, flows, prop_rtt, q_ref, p1, lam, memory)

    d = _run(go)
    _emit(d.to_dict(), as_json, "PD-LQ design" + (" (memory)" if memory else ""))
    _save(d, plot)


@app.command("sfc")
def sfc_cmd(
    capacity: Annotated[float, typer.Option("--capacity", help="C, packets/s")],
    flows_min: Annotated[float, typer.Option("--flows-min", help="smallest N")],
    rtt_max: Annotated[float, typer.Option("--rtt-max", help="largest RTT, s")],
    b: Annotated[float, typer.Option("--b", help="packets per ACK (1 or 2)")] = 2.0,
    k2: Annotated[float, typer.Option("--k2", help="window gain k2")] = 0.2,
    k1: Annotated[float | None, typer.Option("--k1", help="queue gain k1, 1/packet")] = None,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Gao-Hou stability region: K2max and the k1 bound (printed and exact)."""
    from aqmlab.design import sfc_design

    def go():
        _check("--capacity", capacity)
        _check("--flows-min", flows_min)
        _check("--rtt-max", rtt_max)
        _check("--b", b)
        _check("--k2", k2, allow_zero=True)
        _check("--k1", k1)
        return sfc_design(capacity, flows_min, rtt_max, b, k2, k1)

    d = _run(go)
    _emit(d.to_dict(), as_json, "SFC design")
    _save(d, plot)


@app.command("edc")
def edc_cmd(
    flows: Annotated[float, typer.Option("--flows", help="N")],
    capacity: Annotated[float, typer.Option("--capacity", help="C, packets/s")],
    prop_rtt: Annotated[float, typer.Option("--prop-rtt", help="propagation RTT Tp, s")],
    q_ref: Annotated[float, typer.Option("--q-ref", help="reference queue, packets")] = 200.0,
    n_event: Annotated[int, typer.Option("--n-event", help="event threshold, packets")] = 30,
    kp: Annotated[float, typer.Option("--kp", help="K_P")] = 0.03,
    ki: Annotated[float, typer.Option("--ki", help="K_I")] = 0.01,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """Closed-loop poles of EDC's event-driven PI and the largest stable K_P for --ki."""
    from aqmlab.design import edc_design, edc_stable_region

    def go():
        _check("--flows", flows)
        _check("--capacity", capacity)
        _check("--prop-rtt", prop_rtt)
        _check("--q-ref", q_ref, allow_zero=True)
        _check("--n-event", n_event)
        _check("--kp", kp)
        _check("--ki", ki, allow_zero=True)
        d = edc_design(flows, capacity, q_ref, prop_rtt, n_event, kp, ki)
        reg = edc_stable_region(
            flows, capacity, q_ref, prop_rtt, n_event, kp=np.logspace(-5, 2, 281), ki=[ki]
        )
        return d, float(reg.kp_max()[0])

    d, kp_max = _run(go)
    _emit({**d.to_dict(), "kp_max_grid": kp_max}, as_json, "EDC design")
    _save(d, plot)


@app.command("sqm-sigma")
def sqm_sigma_cmd(
    rates: Annotated[str, typer.Option("--rates", help="per-queue rates x_i, comma list, pkt/s")],
    rtts: Annotated[str, typer.Option("--rtts", help="RTTs D_i: comma list or a:b range, s")],
    alpha: Annotated[float, typer.Option("--alpha", help="fairness parameter")] = 2.0,
    rho: Annotated[float, typer.Option("--rho", help="Razumikhin constant > 1")] = 1.01,
    margin: Annotated[float, typer.Option("--margin", help="budget reserve in [0, 1)")] = 0.1,
    split: Annotated[str, typer.Option("--split", help="equal | proportional")] = "equal",
    scale: Annotated[float, typer.Option("--scale", help="multiplier on sigma")] = 1.0,
    as_json: Json = False,
    plot: Plot = None,
) -> None:
    """SQM Theorem 3: Lyapunov matrix, J, ||A||, the bound of eq. 23 and sigma per queue."""
    from aqmlab.design import sqm_sigma

    def go():
        x = _floats("--rates", rates)
        D = _floats("--rtts", rtts, len(x))
        if len(D) != len(x):
            raise _Bad(f"--rtts: {len(D)} values for {len(x)} rates (got {rtts})")
        _check("--alpha", alpha)
        _check("--rho", rho)
        if rho <= 1:
            raise _Bad(f"--rho: must be > 1 (got {rho})")
        _check("--margin", margin, allow_zero=True)
        if margin >= 1:
            raise _Bad(f"--margin: must be < 1 (got {margin})")
        if split not in ("equal", "proportional"):
            raise _Bad(f"--split: must be equal or proportional (got {split})")
        _check("--scale", scale)
        return sqm_sigma(x, D, alpha, None, rho, margin, split, scale)

    r = _run(go)
    _emit(r.to_dict(), as_json, "SQM sigma (Theorem 3)")
    _save(r, plot)
