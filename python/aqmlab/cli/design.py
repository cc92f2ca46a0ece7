"""`aqmlab design METHOD` commands: print a controller design (gains, margins, bounds).

Methods: ``pi`` (Hollot), ``pd-lq`` (Kim-Tang-Low), ``sfc`` (Gao-Hou), ``edc`` (Suzer et al.),
``sqm-sigma`` (SQM Theorem 3).

Units: every time carries its unit (``--rtt-max 246ms``; a bare number is an error). A capacity
is a packet rate (``--capacity 3750pps``) or a bit rate converted with the packet size
(``--capacity 15Mbps --pkt-size 500``; ``--pkt-size`` defaults to 1000 bytes, the simulator's
default IP packet size); a bare number is an error. A sampling frequency is ``160Hz`` (a bare
number is Hz, as the simulator's PI ``w``). Dimensionless numbers (flows, gains, queues in
packets, probabilities) are bare. RTT lists are ``100ms,150ms`` or a range ``100ms:150ms``
(spread linearly over the queues).

``--json`` prints exactly one JSON object; it includes ``"aqm"``, the simulator configuration of
the design (``to_aqm()``) where one exists. ``--plot FILE`` writes a figure (Bode or Nyquist,
stability region, root locus, ...) in any format matplotlib writes (png, pdf, svg, eps, jpg,
tif, webp, ...); the path is checked before anything is computed, and an existing file is
replaced only with ``--force``. Bad input prints one line ``error: --option = value: reason`` and
exits with status 2, writing nothing.

Examples::

    aqmlab design pi --flows-min 60 --capacity 3750pps --rtt-max 246ms --fs 160Hz --json
    aqmlab design pd-lq --capacity 4000pps --flows 100 --prop-rtt 150ms --q-ref 200 --lam -3.75
    aqmlab design sfc --capacity 10Mbps --flows-min 300 --rtt-max 600ms --b 2 --k2 0.2 --plot sfc.png
    aqmlab design edc --flows 60 --capacity 1.5Mbps --q-ref 200 --prop-rtt 100ms --kp 0.03
    aqmlab design sqm-sigma --rates 120pps,120pps,80pps,80pps --rtts 100ms:150ms
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import BadOption as _Bad
from aqmlab.cli._common import PktSize
from aqmlab.cli._common import capacity_opt as _capacity
from aqmlab.cli._common import check_figure as _check_figure
from aqmlab.cli._common import fail as _fail
from aqmlab.cli._common import frequency_opt as _frequency
from aqmlab.cli._common import number as _num
from aqmlab.cli._common import rate_list_opt as _rates
from aqmlab.cli._common import save_figure as _save_figure
from aqmlab.cli._common import size_opt as _size
from aqmlab.cli._common import time_list_opt as _times
from aqmlab.cli._common import time_opt as _time

app = typer.Typer(help="controller design commands", no_args_is_help=True)

Json = Annotated[bool, typer.Option("--json", help="print one JSON object", show_default=False)]
Plot = Annotated[
    Path | None,
    typer.Option("--plot", help="write a figure to this file (.png, .pdf, .svg, ...)"),
]
Force = Annotated[
    bool, typer.Option("--force", help="replace an existing --plot file", show_default=False)
]

#: Units of the printed quantities (the text table's labels; JSON keys stay plain).
UNITS = {
    "a": "1/packet",
    "b": "1/packet",
    "K": "1/(packet s)",
    "z": "rad/s",
    "omega_g": "rad/s",
    "fs": "Hz",
    "q_ref": "packets",
    "gain_margin": "factor",
    "phase_margin_deg": "deg",
    "crossover_frequency": "rad/s",
    "phase_crossover_frequency": "rad/s",
    "delay_margin": "s",
    "H1": "1/packet",
    "H2": "s/packet",
    "H3": "s^2/packet",
    "p_star": "probability",
    "tau": "s",
    "A1": "1/s^2",
    "A2": "1/s",
    "B1": "packets/s^2",
    "k1": "1/packet",
    "k1_max_printed": "1/packet",
    "k1_max_exact": "1/packet",
    "p0": "probability",
    "theta": "rad",
    "sigma": "packets",
    "queue_excess": "packets",
    "poles_re": "per event",
    "poles_im": "per event",
    "spectral_radius": "per event",
}


def _plain(v):
    import numpy as np

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


def _emit(d: dict, as_json: bool, title: str, units: dict | None = None) -> None:
    d = _plain(d)
    if as_json:
        typer.echo(json.dumps(d))
        return
    units = {**UNITS, **(units or {})}
    typer.echo(title)
    for k, v in d.items():
        if k == "aqm":
            continue
        if isinstance(v, float):
            v = f"{v:.6g}"
        elif isinstance(v, list) and v and isinstance(v[0], float):
            v = "[" + ", ".join(f"{x:.6g}" for x in v) + "]"
        unit = units.get(k)
        label = f"{k} [{unit}]" if unit else k
        typer.echo(f"  {label}: {v}")
    if "aqm" in d:
        typer.echo(f"  simulator AQM config: {json.dumps(d['aqm'])}")


def _save(result, path: Path | None, force: bool, **kw) -> None:
    if path is None:
        return
    import matplotlib

    matplotlib.use("Agg")

    fig = result.plot(**kw)  # a new Figure (the result protocol, aqmlab.protocol)
    fig.tight_layout()
    _save_figure("--plot", fig, path, force)


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
    capacity: Annotated[
        str, typer.Option("--capacity", help="C: packet rate (3750pps) or bit rate (15Mbps)")
    ],
    rtt_max: Annotated[str, typer.Option("--rtt-max", help="largest RTT R+ (e.g. 246ms)")],
    fs: Annotated[str, typer.Option("--fs", help="sampling frequency (e.g. 160Hz)")] = "160Hz",
    q_ref: Annotated[
        float, typer.Option("--q-ref", help="reference queue for the AQM config, packets")
    ] = 200.0,
    omega_g: Annotated[
        float | None, typer.Option("--omega-g", help="design crossover, rad/s (default z)")
    ] = None,
    z: Annotated[
        float | None, typer.Option("--z", help="PI zero, rad/s (default TCP pole)")
    ] = None,
    gain_rule: Annotated[str, typer.Option("--gain-rule", help="hollot | unity")] = "hollot",
    kind: Annotated[str, typer.Option("--plot-kind", help="bode | nyquist")] = "bode",
    pkt_size: PktSize = "1000",
    as_json: Json = False,
    plot: Plot = None,
    force: Force = False,
) -> None:
    """Hollot's PI design (zero on the TCP pole) and Tustin coefficients a, b."""
    from aqmlab.design import hollot_pi

    def go():
        _num("--flows-min", flows_min, positive=True)
        size = _size("--pkt-size", pkt_size)
        c = _capacity("--capacity", capacity, size)
        r = _time("--rtt-max", rtt_max)
        f = _frequency("--fs", fs)
        _num("--q-ref", q_ref, nonneg=True)
        _num("--omega-g", omega_g, positive=True)
        _num("--z", z, positive=True)
        if gain_rule not in ("hollot", "unity"):
            raise _Bad(f"--gain-rule = {gain_rule}: must be hollot or unity")
        if kind not in ("bode", "nyquist"):
            raise _Bad(f"--plot-kind = {kind}: must be bode or nyquist")
        _check_figure("--plot", plot, force)
        d = hollot_pi(flows_min, c, r, f, omega_g=omega_g, z=z, gain_rule=gain_rule, q_ref=q_ref)
        _save(d, plot, force, kind=kind)
        return d

    d = _run(go)
    _emit({**d.to_dict(), "q_ref": d.q_ref, "aqm": d.to_aqm()}, as_json, "Hollot PI design")


@app.command("pd-lq")
def pd_lq_cmd(
    capacity: Annotated[
        str, typer.Option("--capacity", help="c: packet rate (4000pps) or bit rate (32Mbps)")
    ],
    flows: Annotated[float, typer.Option("--flows", help="N")],
    prop_rtt: Annotated[str, typer.Option("--prop-rtt", help="propagation RTT d (e.g. 150ms)")],
    q_ref: Annotated[float, typer.Option("--q-ref", help="target queue b*, packets")],
    p1: Annotated[float, typer.Option("--p1", help="RED filter cut-off P1, 1/s")] = 1.0,
    lam: Annotated[float, typer.Option("--lam", help="closed-loop eigenvalue, 1/s (< 0)")] = -3.75,
    memory: Annotated[
        bool, typer.Option("--memory", help="delay-compensating law", show_default=False)
    ] = False,
    pkt_size: PktSize = "1000",
    as_json: Json = False,
    plot: Plot = None,
    force: Force = False,
) -> None:
    """Kim-Tang-Low PD-LQ gains with all closed-loop eigenvalues at --lam."""
    from aqmlab.design import pd_lq_design

    def go():
        size = _size("--pkt-size", pkt_size)
        c = _capacity("--capacity", capacity, size)
        _num("--flows", flows, positive=True)
        d = _time("--prop-rtt", prop_rtt)
        _num("--q-ref", q_ref, nonneg=True)
        _num("--p1", p1, positive=True)
        _num("--lam", lam, negative=True)
        _check_figure("--plot", plot, force)
        res = pd_lq_design(c, flows, d, q_ref, p1, lam, memory)
        _save(res, plot, force)
        return res

    d = _run(go)
    title = "PD-LQ design" + (" (memory)" if memory else "")
    _emit({**d.to_dict(), "aqm": d.to_aqm()}, as_json, title)


@app.command("sfc")
def sfc_cmd(
    capacity: Annotated[
        str, typer.Option("--capacity", help="C: packet rate (1250pps) or bit rate (10Mbps)")
    ],
    flows_min: Annotated[float, typer.Option("--flows-min", help="smallest N")],
    rtt_max: Annotated[str, typer.Option("--rtt-max", help="largest RTT (e.g. 600ms)")],
    b: Annotated[float, typer.Option("--b", help="packets per ACK (1 or 2)")] = 2.0,
    k2: Annotated[float, typer.Option("--k2", help="window gain k2")] = 0.2,
    k1: Annotated[float | None, typer.Option("--k1", help="queue gain k1, 1/packet")] = None,
    q_ref: Annotated[
        float, typer.Option("--q-ref", help="target queue for the AQM config, packets")
    ] = 50.0,
    pkt_size: PktSize = "1000",
    as_json: Json = False,
    plot: Plot = None,
    force: Force = False,
) -> None:
    """Gao-Hou stability region: K2max and the k1 bound (printed and exact)."""
    from aqmlab.design import sfc_design

    def go():
        size = _size("--pkt-size", pkt_size)
        c = _capacity("--capacity", capacity, size)
        _num("--flows-min", flows_min, positive=True)
        r = _time("--rtt-max", rtt_max)
        _num("--b", b, positive=True)
        _num("--k2", k2, nonneg=True)
        _num("--k1", k1, positive=True)
        _num("--q-ref", q_ref, nonneg=True)
        _check_figure("--plot", plot, force)
        res = sfc_design(c, flows_min, r, b, k2, k1, q_ref=q_ref)
        _save(res, plot, force)
        return res

    d = _run(go)
    out = d.to_dict()
    if d.k1 is not None:
        out["aqm"] = d.to_aqm()
    _emit(out, as_json, "SFC design", {"alpha": "packets", "a": "s/packet"})


@app.command("edc")
def edc_cmd(
    flows: Annotated[float, typer.Option("--flows", help="N")],
    capacity: Annotated[
        str, typer.Option("--capacity", help="C: packet rate (187.5pps) or bit rate (1.5Mbps)")
    ],
    prop_rtt: Annotated[str, typer.Option("--prop-rtt", help="propagation RTT Tp (e.g. 100ms)")],
    q_ref: Annotated[float, typer.Option("--q-ref", help="reference queue, packets")] = 200.0,
    n_event: Annotated[int, typer.Option("--n-event", help="event threshold, packets")] = 30,
    kp: Annotated[float, typer.Option("--kp", help="K_P")] = 0.03,
    ki: Annotated[float, typer.Option("--ki", help="K_I")] = 0.01,
    pkt_size: PktSize = "1000",
    as_json: Json = False,
    plot: Plot = None,
    force: Force = False,
) -> None:
    """Closed-loop poles of EDC's event-driven PI and the largest stable K_P for --ki."""
    from aqmlab.design import edc_design, edc_stable_region

    def go():
        _num("--flows", flows, positive=True)
        size = _size("--pkt-size", pkt_size)
        c = _capacity("--capacity", capacity, size)
        tp = _time("--prop-rtt", prop_rtt)
        _num("--q-ref", q_ref, nonneg=True)
        _num("--n-event", n_event, positive=True)
        _num("--kp", kp, positive=True)
        _num("--ki", ki, nonneg=True)
        _check_figure("--plot", plot, force)
        d = edc_design(flows, c, q_ref, tp, n_event, kp, ki)
        import numpy as np

        reg = edc_stable_region(flows, c, q_ref, tp, n_event, kp=np.logspace(-5, 2, 281), ki=[ki])
        _save(d, plot, force)
        return d, float(reg.kp_max()[0])

    d, kp_max = _run(go)
    _emit(
        {**d.to_dict(), "kp_max_grid": kp_max, "q_ref": d.q_ref, "aqm": d.to_aqm()},
        as_json,
        "EDC design",
    )


@app.command("sqm-sigma")
def sqm_sigma_cmd(
    rates: Annotated[
        str, typer.Option("--rates", help="per-queue rates x_i, comma list (e.g. 120pps,80pps)")
    ],
    rtts: Annotated[
        str, typer.Option("--rtts", help="RTTs D_i: comma list or a:b range (e.g. 100ms:150ms)")
    ],
    alpha: Annotated[float, typer.Option("--alpha", help="fairness parameter")] = 2.0,
    rho: Annotated[float, typer.Option("--rho", help="Razumikhin constant > 1")] = 1.01,
    margin: Annotated[float, typer.Option("--margin", help="budget reserve in [0, 1)")] = 0.1,
    split: Annotated[str, typer.Option("--split", help="equal | proportional")] = "equal",
    scale: Annotated[float, typer.Option("--scale", help="multiplier on sigma")] = 1.0,
    beta: Annotated[
        float, typer.Option("--beta", help="queue offset beta of the AQM config, packets")
    ] = 0.0,
    pkt_size: PktSize = "1000",
    as_json: Json = False,
    plot: Plot = None,
    force: Force = False,
) -> None:
    """SQM Theorem 3: Lyapunov matrix, J, ||A||, the bound of eq. 23 and sigma per queue."""
    from aqmlab.design import sqm_sigma

    def go():
        size = _size("--pkt-size", pkt_size)
        x = _rates("--rates", rates, size)
        D = _times("--rtts", rtts, len(x))
        if len(D) != len(x):
            raise _Bad(f"--rtts = {rtts}: {len(D)} values for {len(x)} rates")
        _num("--alpha", alpha, positive=True)
        _num("--rho", rho)
        if rho <= 1:
            raise _Bad(f"--rho = {rho}: must be > 1")
        _num("--margin", margin, nonneg=True)
        if margin >= 1:
            raise _Bad(f"--margin = {margin}: must be < 1")
        if split not in ("equal", "proportional"):
            raise _Bad(f"--split = {split}: must be equal or proportional")
        _num("--scale", scale, positive=True)
        _num("--beta", beta, nonneg=True)
        _check_figure("--plot", plot, force)
        r = sqm_sigma(x, D, alpha, None, rho, margin, split, scale, beta=beta)
        _save(r, plot, force)
        return r

    r = _run(go)
    _emit({**r.to_dict(), "aqm": r.to_aqm()}, as_json, "SQM sigma (Theorem 3)")
