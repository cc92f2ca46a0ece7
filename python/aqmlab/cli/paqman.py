"""`aqmlab paqman` commands: solve, plot, evaluate and reproduce PAQMAN drop policies.

Quantities are accepted ns-3/tc style (``10Mbps``, ``5ms``, ``1500``). Bad input gives one line
naming the option and value and a non-zero exit; outputs are written through a temporary file
and a rename, and only once everything has been computed.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import typer

from aqmlab.cli._common import fail

app = typer.Typer(help="PAQMAN: optimal drop policies from a semi-Markov decision process.",
                  no_args_is_help=True)  # fmt: skip


def _fail(option: str, value, why: str) -> None:
    fail(f"{option} {value!r}: {why}")


def _quantity(option: str, text: str, kind: str, allow_zero: bool = False) -> float:
    from aqmlab.units import parse_rate, parse_size, parse_time

    fn = {"rate": parse_rate, "time": parse_time, "size": parse_size}[kind]
    try:
        v = fn(text)
    except ValueError as e:
        _fail(option, text, str(e).split(": ", 1)[-1])
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        _fail(option, text, "must be positive" if not allow_zero else "must be >= 0")
    return v


def _out_dir_ok(option: str, path: Path) -> None:
    parent = path if path.is_dir() else path.parent
    if parent and not parent.exists():
        _fail(option, str(path), "folder does not exist")


def _load(path: str):
    from aqmlab.mdp import load_policy

    try:
        return load_policy(path)
    except ValueError as e:
        _fail("POLICY", path, str(e).split(": ", 1)[-1])


@app.command()
def solve(
    service: str = typer.Option(..., help="service (link) rate, e.g. 10Mbps"),
    pkt_size: str = typer.Option("1500", help="packet size (bytes), e.g. 1500"),
    target: str = typer.Option("5ms", help="delay target d, e.g. 5ms"),
    rtt: str = typer.Option("0", help="RTT R (0 = negligible-RTT model), e.g. 10ms"),
    buffer: int = typer.Option(200, help="buffer B (packets)"),
    penalty: float = typer.Option(
        None,
        help="delay-breach penalty P (default 0.5 for the default reward, see aqmlab.mdp.model)",
    ),
    reward: str = typer.Option("default", help="reward variant: default | literal"),
    grid: int = typer.Option(50, help="rate grid G: unit = service/G, 2G points"),
    alpha: float = typer.Option(2.0, help="gamma shape of interarrivals (negligible RTT only)"),
    eps: float = typer.Option(1e-4, help="relative stopping tolerance of value iteration"),
    out: str = typer.Option(..., help="policy file to write (JSON)"),
) -> None:
    """Solve for the optimal drop policy and write it as a policy file."""
    out = Path(out)
    from aqmlab.mdp import negligible_rtt_model, rtt_model
    from aqmlab.mdp import solve as solve_smdp

    bps = _quantity("--service", service, "rate")
    size = _quantity("--pkt-size", pkt_size, "size")
    d = _quantity("--target", target, "time")
    r = _quantity("--rtt", rtt, "time", allow_zero=True)
    if buffer < 1 or buffer > 5000:
        _fail("--buffer", buffer, "must be in 1..5000")
    if grid < 1 or grid > 1000:
        _fail("--grid", grid, "must be in 1..1000")
    if penalty is not None and not (math.isfinite(penalty) and penalty >= 0):
        _fail("--penalty", penalty, "must be a number >= 0")
    if reward not in ("default", "literal"):
        _fail("--reward", reward, "expected default or literal")
    if not (math.isfinite(alpha) and alpha > 0):
        _fail("--alpha", alpha, "must be positive")
    if not (0 < eps < 1):
        _fail("--eps", eps, "must be in (0, 1)")
    _out_dir_ok("--out", out)
    mu = bps / (8 * size)
    if r == 0:
        model = negligible_rtt_model(mu, d, buffer, grid, alpha, penalty, reward)
    else:
        model = rtt_model(mu, d, r, buffer, grid, penalty, reward)
    pol = solve_smdp(model, eps=eps)
    pol.meta["pkt_size_bytes"] = size
    pol.save(out)
    s = pol.summary()
    typer.echo(f"model {pol.meta['model']}: mu={mu:.1f} pkt/s, d={d * 1e3:g} ms, "
               f"R={r * 1e3:g} ms, B={buffer}, P={pol.meta['penalty']:g}, reward={reward}")  # fmt: skip
    typer.echo(f"gain {pol.gain:.4f} /s (bounds {pol.lower:.4f} .. {pol.upper:.4f}), "
               f"{pol.iterations} iterations, {pol.solve_seconds:.2f} s")  # fmt: skip
    typer.echo(f"drop region: {100 * s['drop_fraction']:.1f}% of states, "
               f"threshold-like: {s['threshold_like']}")  # fmt: skip
    typer.echo("first drop queue by rate: " + ", ".join(
        f"{k}: {v}" for k, v in s["first_drop_queue_by_rate"].items()))  # fmt: skip
    typer.echo(f"wrote {out}")


@app.command()
def plot(
    policy: str = typer.Argument(..., help="policy file"),
    out: str = typer.Option(..., help="image to write (.png, .pdf, .svg)"),
    qmax: int = typer.Option(None, help="largest queue length shown"),
) -> None:
    """Plot a policy's drop region over (queue, arrival rate)."""
    out = Path(out)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pol = _load(policy)
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        _fail("--out", str(out), "expected a .png, .pdf or .svg file")
    if qmax is not None and qmax < 1:
        _fail("--qmax", qmax, "must be >= 1")
    _out_dir_ok("--out", out)
    fig, ax = plt.subplots(figsize=(5, 4))
    pol.plot(ax=ax, qmax=qmax)
    fig.tight_layout()
    tmp = out.with_name(f".{out.name}.tmp{out.suffix}")
    fig.savefig(tmp, dpi=120)
    os.replace(tmp, out)
    typer.echo(f"wrote {out}")


@app.command()
def evaluate(
    policy: str = typer.Argument(..., help="policy file"),
    runs: int = typer.Option(10, help="runs per AQM"),
    arrivals: int = typer.Option(20000, help="packet arrivals per run"),
    compare: str = typer.Option("codel,droptail", help="comma-separated: codel, droptail"),
    seed: int = typer.Option(0, help="seed of run 0 (run i uses seed + i)"),
    estimate_rate: bool = typer.Option(
        False, help="PAQMAN uses an online rate estimate instead of the true rate"
    ),
    out: str = typer.Option(..., help="output folder"),
) -> None:
    """Model-level comparison with CoDel and drop-tail; writes DIR/summary.json and figures."""
    out = Path(out)
    from aqmlab.mdp.evaluate import evaluate as run_eval

    pol = _load(policy)
    if runs < 1:
        _fail("--runs", runs, "must be >= 1")
    if arrivals < 100:
        _fail("--arrivals", arrivals, "must be >= 100")
    names = tuple(c.strip() for c in compare.split(",") if c.strip())
    for c in names:
        if c not in ("codel", "droptail"):
            _fail("--compare", compare, f"unknown AQM {c!r} (expected codel, droptail)")
    if out.exists() and not out.is_dir():
        _fail("--out", str(out), "exists and is not a folder")
    if not out.parent.exists():
        _fail("--out", str(out), "parent folder does not exist")
    ev = run_eval(pol, runs=runs, arrivals=arrivals, compare=names, seed=seed,
                  estimate_rate=estimate_rate)  # fmt: skip
    summ = ev.write(out)
    for aqm, s in summ.items():
        typer.echo(f"{aqm:9s} mean queue {s['mean_queue_pkts']:8.2f} pkts  delay "
                   f"{s['mean_delay_ms']:8.2f} ms  throughput {s['throughput_pkts_per_s']:8.1f} pkt/s")  # fmt: skip
    typer.echo(f"wrote {out / 'summary.json'}")


@app.command()
def figures(
    out: str = typer.Option(..., help="output folder"),
    service_low: str = typer.Option("5Mbps", help="service rate of Fig. 5(a)"),
    service_high: str = typer.Option("10Mbps", help="service rate of Fig. 5(b), 6-11"),
    rtts: str = typer.Option("1ms,10ms", help="RTTs: first two = Fig. 6 low/high; all in Fig. 11"),
    target: str = typer.Option("5ms", help="delay target"),
    pkt_size: str = typer.Option("1500", help="packet size (bytes)"),
    buffer: int = typer.Option(200, help="buffer B (packets)"),
    runs: int = typer.Option(10, help="runs per AQM and setting"),
    arrivals: int = typer.Option(20000, help="arrivals per run"),
) -> None:
    """Reproduce the paper's evaluation figures (Fig. 5-9, 11) at model level."""
    out = Path(out)
    from aqmlab.mdp.figures import paper_figures

    lo = _quantity("--service-low", service_low, "rate")
    hi = _quantity("--service-high", service_high, "rate")
    d = _quantity("--target", target, "time")
    size = _quantity("--pkt-size", pkt_size, "size")
    rl = [_quantity("--rtts", x.strip(), "time") for x in rtts.split(",") if x.strip()]
    if len(rl) < 2:
        _fail("--rtts", rtts, "need at least two RTTs")
    if runs < 1:
        _fail("--runs", runs, "must be >= 1")
    if arrivals < 100:
        _fail("--arrivals", arrivals, "must be >= 100")
    if not out.parent.exists():
        _fail("--out", str(out), "parent folder does not exist")
    summ = paper_figures(out, lo, hi, rl, d, size, buffer, runs, arrivals)
    typer.echo(json.dumps(summ, indent=1))
