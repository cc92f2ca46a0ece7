"""`aqmlab paqman` commands: solve, plot, evaluate and reproduce PAQMAN drop policies.

Quantities are written ns-3/tc style and need their unit (``--service 10Mbps``, ``--target 5ms``,
``--rtt 10ms``; a bare number is an error, except ``0`` for a negligible RTT). A packet size is
bytes (``1500`` or ``1500B``). Bad input -- an option, a policy file that is not a valid policy,
an output path -- gives one line ``error: --option = value: reason`` and exit status 2, before
anything is computed. Every output goes through :mod:`aqmlab.output`: a policy file or a figure
is written to a temporary file and renamed, a result folder is written to a temporary folder and
renamed, an existing file or a folder aqmlab did not write is replaced only with ``--force``, and
nothing is left behind on an error or Ctrl-C.

Examples::

    aqmlab paqman solve --service 10Mbps --pkt-size 1500 --target 5ms --rtt 10ms --out policy.json
    aqmlab paqman plot policy.json --out policy.png
    aqmlab paqman evaluate policy.json --runs 10 --arrivals 20000 --compare codel,droptail --out eval/
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from aqmlab.cli._common import BadOption, check_figure, fail, save_figure

app = typer.Typer(help="PAQMAN: optimal drop policies from a semi-Markov decision process.",
                  no_args_is_help=True)  # fmt: skip

#: Largest number of simulated packet arrivals one evaluate/figures command may ask for
#: (runs x arrivals x AQMs); about ten minutes of model-level simulation.
MAX_EVENTS = 50_000_000

FORCE_HELP = "replace an existing output even if aqmlab did not write it"


def _fail(option: str, value, why: str) -> None:
    fail(f"{option} = {value}: {why}")


def _quantity(option: str, text: str, kind: str, allow_zero: bool = False) -> float:
    from aqmlab.units import parse_rate, parse_size, parse_time

    fn = {"rate": parse_rate, "time": parse_time, "size": parse_size}[kind]
    t = str(text).strip()
    need_unit = kind != "size" and not (allow_zero and t in ("0", "0.0"))
    try:
        v = fn(t, require_unit=need_unit, key=option)
    except ValueError as e:
        _fail(option, t, str(e).split(": ", 1)[-1])
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        _fail(option, t, "must be > 0" if not allow_zero else "must be >= 0")
    return v


def _check_out_file(option: str, path: str, force: bool, suffixes) -> Path:
    from aqmlab.output import OutputError, check_output_file

    try:
        return check_output_file(path, force, suffixes, option)
    except OutputError as e:
        fail(str(e))


def _check_out_dir(option: str, path: str, force: bool) -> Path:
    from aqmlab.output import OutputError, check_output_dir

    try:
        return check_output_dir(path, force)
    except OutputError as e:
        fail(f"{option}: {e}")


def _load(path: str):
    from aqmlab.mdp import load_policy

    try:
        return load_policy(path)
    except ValueError as e:
        _fail("POLICY", path, str(e).split(": ", 1)[-1])


def _write_dir(option: str, out: Path, force: bool, command: str, write) -> None:
    """``write(tmp)`` into a temporary folder that replaces ``out`` when it succeeds."""
    from aqmlab.output import OutputError, output_dir

    try:
        with output_dir(out, force=force, command=command) as tmp:
            write(tmp)
    except OutputError as e:
        fail(f"{option}: {e}")


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
    drop_projection: str = typer.Option(
        "split", help="rate after a drop on the grid: split (unbiased, default) | floor"
    ),
    out: str = typer.Option(..., help="policy file to write (.json)"),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP, show_default=False),
) -> None:
    """Solve for the optimal drop policy and write it as a policy file."""
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
    if drop_projection not in ("split", "floor"):
        _fail("--drop-projection", drop_projection, "expected split or floor")
    _check_out_file("--out", out, force, (".json",))
    mu = bps / (8 * size)
    proj = {"drop_projection": drop_projection}
    if r == 0:
        model = negligible_rtt_model(mu, d, buffer, grid, alpha, penalty, reward, **proj)
    else:
        model = rtt_model(mu, d, r, buffer, grid, penalty, reward, **proj)
    pol = solve_smdp(model, eps=eps)
    pol.meta["pkt_size_bytes"] = size
    from aqmlab.output import OutputError, output_file

    try:
        with output_file(out, force, (".json",), "--out") as tmp:
            pol.save(tmp)
    except OutputError as e:
        fail(str(e))
    s = pol.summary()
    typer.echo(f"model {pol.meta['model']}: mu = {mu:.1f} packets/s, d = {d * 1e3:g} ms, "
               f"R = {r * 1e3:g} ms, B = {buffer} packets, P = {pol.meta['penalty']:g}, "
               f"reward = {reward}")  # fmt: skip
    typer.echo(f"gain {pol.gain:.4f} /s (bounds {pol.lower:.4f} .. {pol.upper:.4f}), "
               f"{pol.iterations} iterations, {pol.solve_seconds:.2f} s")  # fmt: skip
    typer.echo(f"drop region: {100 * s['drop_fraction']:.1f}% of states, "
               f"threshold-like: {s['threshold_like']}, "
               f"threshold reversals over rate: {s['threshold_reversals']}")  # fmt: skip
    typer.echo("first drop queue (packets) by rate index: " + ", ".join(
        f"{k}: {v}" for k, v in s["first_drop_queue_by_rate"].items()))  # fmt: skip
    typer.echo(f"wrote {out}")


@app.command()
def plot(
    policy: str = typer.Argument(..., help="policy file"),
    out: str = typer.Option(..., help="image to write (.png, .pdf, .svg, ...)"),
    qmax: int = typer.Option(None, help="largest queue length shown (packets)"),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP, show_default=False),
) -> None:
    """Plot a policy's drop region over (queue, arrival rate)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pol = _load(policy)
    if qmax is not None and qmax < 1:
        _fail("--qmax", qmax, "must be >= 1")
    try:
        check_figure("--out", out, force)
        fig, ax = plt.subplots(figsize=(5, 4))
        pol.plot(ax=ax, qmax=qmax)
        fig.tight_layout()
        save_figure("--out", fig, out, force, dpi=120)
    except BadOption as e:
        fail(str(e))
    typer.echo(f"wrote {out}")


@app.command()
def evaluate(
    policy: str = typer.Argument(..., help="policy file"),
    runs: int = typer.Option(10, help="runs per AQM"),
    arrivals: int = typer.Option(20000, help="packet arrivals per run"),
    compare: str = typer.Option("codel,droptail", help="comma-separated: codel, droptail"),
    seed: int = typer.Option(0, help="seed of run 0 (run i uses seed + i)"),
    estimate_rate: bool = typer.Option(
        False,
        "--estimate-rate",
        help="PAQMAN uses an online rate estimate instead of the true rate",
        show_default=False,
    ),
    out: str = typer.Option(..., help="output folder"),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP, show_default=False),
) -> None:
    """Model-level comparison with CoDel and drop-tail; writes DIR/summary.json and figures."""
    from aqmlab.mdp.evaluate import evaluate as run_eval
    from aqmlab.mdp.evaluate import model_parameters

    pol = _load(policy)
    try:
        model_parameters(pol)
    except ValueError as e:
        _fail("POLICY", policy, str(e))
    if runs < 1:
        _fail("--runs", runs, "must be >= 1")
    if arrivals < 100:
        _fail("--arrivals", arrivals, "must be >= 100")
    names = tuple(c.strip() for c in compare.split(",") if c.strip())
    for i, c in enumerate(names):
        if c not in ("codel", "droptail"):
            _fail("--compare", compare, f"unknown AQM {c!r} (expected codel, droptail)")
        if c in names[:i]:
            _fail("--compare", compare, f"{c!r} is given twice")
    events = runs * arrivals * (len(names) + 1)
    if events > MAX_EVENTS:
        _fail("--arrivals", arrivals, f"{runs} runs x {arrivals} arrivals x {len(names) + 1} AQMs "
              f"= {events:.3g} simulated arrivals (limit {MAX_EVENTS:.3g})")  # fmt: skip
    _check_out_dir("--out", out, force)
    ev = run_eval(pol, runs=runs, arrivals=arrivals, compare=names, seed=seed,
                  estimate_rate=estimate_rate)  # fmt: skip
    box = {}
    _write_dir("--out", Path(out), force, "aqmlab paqman evaluate",
               lambda tmp: box.update(summ=ev.write(tmp)))  # fmt: skip
    summ = box["summ"]
    for aqm, s in summ.items():
        typer.echo(f"{aqm:9s} mean queue {s['mean_queue_pkts']:8.2f} packets  delay "
                   f"{s['mean_delay_ms']:8.2f} ms  throughput {s['throughput_pkts_per_s']:8.1f} "
                   "packets/s")  # fmt: skip
    typer.echo(f"wrote {Path(out) / 'summary.json'}")


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
    force: bool = typer.Option(False, "--force", help=FORCE_HELP, show_default=False),
) -> None:
    """Reproduce the paper's evaluation figures (Fig. 5-9, 11) at model level."""
    from aqmlab.mdp.figures import paper_figures

    lo = _quantity("--service-low", service_low, "rate")
    hi = _quantity("--service-high", service_high, "rate")
    d = _quantity("--target", target, "time")
    size = _quantity("--pkt-size", pkt_size, "size")
    parts = [x.strip() for x in rtts.split(",")]
    if any(not x for x in parts):
        _fail("--rtts", rtts, "a comma list of times, e.g. 1ms,10ms")
    rl = [_quantity("--rtts", x, "time") for x in parts]
    if len(rl) < 2:
        _fail("--rtts", rtts, "need at least two RTTs")
    if buffer < 1 or buffer > 5000:
        _fail("--buffer", buffer, "must be in 1..5000")
    if runs < 1:
        _fail("--runs", runs, "must be >= 1")
    if arrivals < 100:
        _fail("--arrivals", arrivals, "must be >= 100")
    events = runs * arrivals * 3 * (2 + len(rl))
    if events > MAX_EVENTS:
        _fail("--arrivals", arrivals, f"{runs} runs x {arrivals} arrivals over all settings "
              f"= {events:.3g} simulated arrivals (limit {MAX_EVENTS:.3g})")  # fmt: skip
    _check_out_dir("--out", out, force)
    box = {}
    _write_dir("--out", Path(out), force, "aqmlab paqman figures",
               lambda tmp: box.update(summ=paper_figures(tmp, lo, hi, rl, d, size, buffer, runs,
                                                         arrivals)))  # fmt: skip
    typer.echo(json.dumps(box["summ"], indent=1))
