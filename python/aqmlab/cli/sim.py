"""Simulator commands: ``run``, ``dumbbell``, ``aqms``, ``demo``.

Every command checks its whole input (scenario, options, output folder) before it simulates. Bad
input prints one line naming the key and value and exits with status 2. Results are written
through :mod:`aqmlab.output`: nothing half-written is left behind and a folder that is not an
aqmlab result is never replaced without ``--force``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from aqmlab.cli._common import fail as _fail
from aqmlab.cli.fct_table import fct_table
from aqmlab.cli.flent_opt import (
    FlentOpt,
    check_flent,
    ping_table,
    run_for_flent,
    wants_flent,
    write_flent,
)

DEMO_AQMS = ("droptail", "red", "pi", "pie", "codel")

Force = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace OUT even if it holds files aqmlab did not write.",
        show_default=False,
    ),
]
NoPlots = Annotated[
    bool, typer.Option("--no-plots", help="Skip the PNG figures.", show_default=False)
]


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


def _run_with_progress(sim, label: str):
    """Run a Simulation to its end, showing progress on a terminal. Returns a SimResult."""
    if not sys.stderr.isatty():  # no bar to show: spare rich.progress's import
        sim.run()
        return sim.result()
    with _progress() as prog:
        task = prog.add_task(label, total=sim.duration)
        sim.run(progress=lambda t: prog.update(task, completed=t))
    return sim.result()


def _import_tables() -> None:
    """Import what prints the tables now, while a worker is still busy, rather than
    after waiting for it (about 0.03 s)."""
    import rich.console  # noqa: F401
    import rich.table  # noqa: F401


def _cc_help() -> str:
    """``--cc``'s help: the registry's names (``aqmlab._core.congestion_controllers``)."""
    from aqmlab import _core

    ccs = _core.congestion_controllers()
    names = " | ".join(c["name"] for c in ccs)
    ecn = ", ".join(c["name"] for c in ccs if c["needs_ecn"])
    return f"{names} ({ecn} imply --ecn)"


def _needs_ecn() -> set[str]:
    """The congestion controllers that need ECN (the registry's)."""
    from aqmlab import _core

    return {c["name"] for c in _core.congestion_controllers() if c["needs_ecn"]}


def _shown_links(summary: dict) -> list[str]:
    """The links a run's table shows: a dumbbell's or parking lot's bottlenecks; otherwise
    the links running an AQM other than drop-tail; otherwise the busiest link. A fabric
    (``fct_slowdown`` in the summary) shows its eight busiest links."""
    links = summary["links"]
    if "fct_slowdown" in summary:
        return sorted(links, key=lambda n: -links[n].get("utilization", 0.0))[:8]
    names = [n for n in links if n.startswith("bottleneck")]
    if not names:
        names = [n for n, v in links.items() if v.get("aqm") not in ("droptail", "fifo")]
    if not names and links:
        names = [max(links, key=lambda n: links[n].get("utilization", 0.0))]
    return names


def _summary_table(rows: dict[str, dict], title: str, link_of: dict[str, str] | None = None):
    """One row per entry of ``rows`` (label -> summary), showing the link ``link_of[label]``
    (default: the summary's ``bottleneck``, else its first link)."""
    from rich.table import Table

    t = Table(title=title)
    for col in (
        "AQM",
        "util [%]",
        "mean queue [pkt]",
        "mean delay [ms]",
        "p99 delay [ms]",
        "loss [%]",
        "marks [pkt]",
        "Jain",
    ):
        t.add_column(col, justify="right" if col != "AQM" else "left")
    for name, s in rows.items():
        if link_of and name in link_of:
            link = s["links"].get(link_of[name])
        else:
            link = s["links"].get("bottleneck") or next(iter(s["links"].values()), None)
        if link is None:
            continue
        arrivals = max(link.get("arrivals", 0), 1)
        jain = s["fairness"]["jain"]
        t.add_row(
            name,
            f"{100 * link['utilization']:.1f}",
            f"{link['mean_queue_pkts']:.1f}",
            f"{link['queue_delay_ms']['mean']:.1f}",
            f"{link['queue_delay_ms']['p99']:.1f}",
            f"{100 * link['drops'] / arrivals:.2f}",
            str(link["marks"]),
            "-" if jain is None else f"{jain:.3f}",
        )
    if rows:
        t.caption = "Jain: over the long-lived TCP flows (per group below)"
    return t


def _run_table(summary: dict, title: str):
    """The summary table of one run: a row per shown link (``_shown_links``)."""
    names = _shown_links(summary)
    rows = {f"{n} ({summary['links'][n]['aqm']})": summary for n in names}
    return _summary_table(rows, title, {f"{n} ({summary['links'][n]['aqm']})": n for n in names})


def _group_table(summary: dict):
    """Per flow group: flows, share of the goodput, Jain's index within the group, mean and
    p99 queueing delay of its packets at its bottleneck queue (the monitored link where they
    waited longest on average), mean one-way delay.
    None for a run with a single group."""
    from rich.table import Table

    groups = summary.get("groups") or []
    if len(groups) < 2:
        return None
    total = sum(g["goodput_bps"] for g in groups) or 1.0
    t = Table(title="flow groups")
    # a direction column only when some group sends right to left
    both = any(g.get("direction") == "reverse" for g in groups)
    cols = ("group", "kind", *(("direction",) if both else ()), "class", "flows",
            "goodput [Mb/s]", "share [%]", "Jain", "mean delay [ms]", "p99 delay [ms]",
            "one-way [ms]")  # fmt: skip
    for col in cols:
        t.add_column(
            col, justify="left" if col in ("group", "kind", "direction", "class") else "right"
        )

    def ms(v):
        return "-" if v is None else f"{v:.1f}"

    for g in groups:
        # the group's bottleneck queue: the monitored link where its packets waited longest
        q = max(g["queue_delay_ms"].values(), key=lambda d: d["mean"], default=None)
        t.add_row(
            g["name"],
            g["cc"] or g["kind"],
            *((g.get("direction", "forward"),) if both else ()),
            g["class"] or "-",
            str(g["flows"]),
            f"{g['goodput_bps'] / 1e6:.2f}",
            f"{100 * g['goodput_bps'] / total:.1f}",
            "-" if g["jain"] is None else f"{g['jain']:.3f}",
            ms(q and q["mean"]),
            ms(q and q["p99"]),
            ms(g["owd_ms"] and g["owd_ms"]["mean"]),
        )
    return t


def _class_table(summary: dict, classes: list[dict], counts: dict[str, int]):
    """Per class: weight, flows, share of the bytes sent, mean and p99 queueing delay."""
    from rich.table import Table

    link = summary["links"].get("bottleneck") or next(iter(summary["links"].values()))
    per = link.get("classes", {})
    total = sum(c["tx_bytes"] for c in per.values()) or 1
    t = Table(title="classes")
    for col in ("class", "weight", "flows", "share [%]", "mean delay [ms]", "p99 delay [ms]"):
        t.add_column(col, justify="left" if col == "class" else "right")
    for c in classes:
        s = per.get(c["name"], {})
        d = s.get("queue_delay_ms", {})
        t.add_row(
            str(c["name"]),
            f"{c['weight']:g}",
            str(counts[c["name"]]),
            f"{100 * s.get('tx_bytes', 0) / total:.1f}",
            f"{d.get('mean', 0):.1f}",
            f"{d.get('p99', 0):.1f}",
        )
    return t


def _print_cake(con, summary: dict) -> None:
    """Print CAKE's per-tin table (python/aqmlab/cli/_cake.py) if a link runs CAKE."""
    from aqmlab.cli._cake import cake_table

    t = cake_table(summary)
    if t is not None:
        con.print(t)


#: Fields of the dumbbell command's flow group with an option of another name.
_FLOW_OPTION = {"count": "--flows", "packet_size": "--pkt-size"}
#: Top-level scenario keys that are options of the same name.
_TOP_OPTIONS = ("sample_interval", "warmup", "duration", "seed")


def _option_of(key: str) -> str | None:
    """The dumbbell command's option behind scenario key ``key`` (``dumbbell.pkt_size`` ->
    ``--pkt-size``, ``flows[0].count`` -> ``--flows``, ``aqm.type`` -> ``--aqm``, ``aqm.X``
    -> ``--aqm-param X``), or None for a key no option writes."""
    head, _, rest = key.partition(".")
    if key in _TOP_OPTIONS:
        return "--" + key.replace("_", "-")
    if head == "dumbbell" and rest:
        return "--" + rest.replace("_", "-")
    if head.startswith("flows[") and rest:
        field = rest.partition(".")[0]
        return _FLOW_OPTION.get(field, "--" + field.replace("_", "-"))
    if head == "aqm" and rest:
        return "--aqm" if rest == "type" else f"--aqm-param {rest}"
    return None


def _as_option(e: BaseException, specs: list[str] | None = None, params=None) -> str:
    """The one error line of a bad option, from the error's fields (``key``, ``value``,
    ``reason``) rather than its message: a scenario key becomes the option that wrote it
    (``dumbbell.pkt_size = 10: ...`` -> ``--pkt-size = 10: ...``), a class's key the
    ``--class`` spec (``aqm.classes[1].weight`` -> ``--class = 'b:0'``), an AQM parameter
    ``--aqm-param KEY=TEXT`` as the user wrote it. An error without fields is its message."""
    key, value, reason = (getattr(e, f, None) for f in ("key", "value", "reason"))
    if not key or reason is None:
        return str(e)
    if specs and key.startswith("aqm.classes["):
        i = key[len("aqm.classes[") :].partition("]")[0]
        if i.isdigit() and int(i) < len(specs):
            return f"--class = {specs[int(i)]!r}: {reason}"
    option = _option_of(key)
    if option is None:
        return str(e)
    if option.startswith("--aqm-param "):
        param = option.removeprefix("--aqm-param ")
        given = next((k for k in params or {} if param == k or param.startswith(k + ".")), None)
        if given is not None:
            return f"--aqm-param {given}={params[given]}: {reason}"
    return f"{option} = {value}: {reason}" if value is not None else f"{option}: {reason}"


def _quantity(option: str, text: str, kind: str) -> str:
    """Check that ``text`` is a quantity with a unit (the command line's rule); return it."""
    from aqmlab.units import parse_rate, parse_time

    parse = {"rate": parse_rate, "time": parse_time}[kind]
    try:
        parse(text, require_unit=True, key=option)
    except ValueError as e:
        _fail(str(e))
    return text


def _prepare(sc, out: Path, force: bool, seed: int | None = None):
    """Check the output folder and build the simulation (routing included) before any work."""
    from aqmlab.output import check_output_dir
    from aqmlab.sim import Simulation

    try:
        check_output_dir(out, force)
        return Simulation(sc, seed=seed)
    except ValueError as e:
        _fail(str(e))


def _one_blas_thread() -> None:
    """Ask OpenBLAS for one thread (unless the user set it) before numpy is first imported:
    the simulator commands do no linear algebra, and starting OpenBLAS's threads makes numpy's
    import, which pyarrow and matplotlib do, about 0.06 s slower on two cores."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _worker(plots: bool):
    """A forked process that imports matplotlib (pyarrow without plots) while the command
    simulates and then draws ``queue.png`` (writes the Parquet files) (:mod:`aqmlab.forked`).
    Use it in a ``with`` block: it is killed if the command ends early."""
    from aqmlab import forked

    return forked.take(forked.preload_for(plots)) or contextlib.nullcontext()


def _write(
    res, out: Path, force: bool, plots: bool, command: str, worker=None, move_in=None, also=None
) -> None:
    """Write the result into ``out`` (atomically, through :mod:`aqmlab.output`); ``move_in``
    (``{name: path}``) are files already written elsewhere that are moved into it; ``also(tmp)``
    writes further files (a Flent file) into the temporary folder."""
    import os

    from aqmlab.forked import WorkerError
    from aqmlab.output import output_dir

    try:
        with output_dir(out, force=force, command=command) as tmp:
            for name, path in (move_in or {}).items():
                os.replace(path, tmp / name)
            res.write_into(tmp, plots=plots, worker=worker)
            if also is not None:
                also(tmp)
    except ValueError as e:
        _fail(str(e))
    except WorkerError as e:
        _fail(str(e), code=1)


def _run_traced(sim, out: Path, force: bool, plots: bool, command: str, run, worker=None):
    """Run with a per-packet trace streamed into ``out/trace.parquet`` and/or a packet
    capture into ``out/capture.pcapng`` (whichever the scenario asks for): the result folder
    is opened first (a temporary sibling, renamed into place at the end), so a failure leaves
    nothing behind. ``run()`` runs the simulation and returns its result."""
    from aqmlab.forked import WorkerError
    from aqmlab.output import output_dir
    from aqmlab.pcap import PCAP_FILE
    from aqmlab.trace import TRACE_FILE

    try:
        with output_dir(out, force=force, command=command) as tmp:
            try:
                if _tracing(sim.scenario):
                    sim.start_trace(tmp / TRACE_FILE)
                if _capturing(sim.scenario):
                    sim.start_pcap(tmp / PCAP_FILE)
                res = run()
                sim.close_trace()
                sim.close_pcap()
            finally:
                sim.abort_trace()
                sim.abort_pcap()
            res.write_into(tmp, plots=plots, worker=worker)
    except ValueError as e:
        _fail(str(e))
    except WorkerError as e:
        _fail(str(e), code=1)
    return res


def _with_pcap(sc, option: bool):
    """The scenario with its bottleneck(s) added to ``[pcap] links`` when ``--pcap`` is given."""
    if not option:
        return sc
    names = list(sc.link_aliases().values())
    if not names:
        _fail(
            "--pcap: the topology has no bottleneck (an explicit topology); name the links "
            'to capture in the scenario: [pcap] links = ["LINK", ...]'
        )
    pcap = dict(sc.data.get("pcap") or {})
    links = list(pcap.get("links") or [])
    pcap["links"] = links + [n for n in names if n not in links]
    try:
        return sc.replace(pcap=pcap)
    except ValueError as e:
        _fail(f"--pcap: {e}")


def _capturing(sc) -> bool:
    return bool((sc.normalized.get("pcap") or {}).get("links"))


PcapOpt = Annotated[
    bool,
    typer.Option(
        "--pcap",
        help="Capture the packets of the bottleneck(s) (both directions; and any [pcap] "
        "links) to OUT/capture.pcapng (headers synthesised, payload not stored; docs/pcap.md).",
        show_default=False,
    ),
]


def _with_trace(sc, option: bool):
    """The scenario with its bottleneck(s) added to ``[trace] links`` when ``--trace`` is given."""
    if not option:
        return sc
    names = list(sc.link_aliases().values())
    if not names:
        _fail(
            "--trace: the topology has no bottleneck (an explicit topology); name the links "
            'to trace in the scenario: [trace] links = ["LINK", ...]'
        )
    trace = dict(sc.data.get("trace") or {})
    links = list(trace.get("links") or [])
    trace["links"] = links + [n for n in names if n not in links]
    try:
        return sc.replace(trace=trace)
    except ValueError as e:
        _fail(f"--trace: {e}")


def _tracing(sc) -> bool:
    return bool((sc.normalized.get("trace") or {}).get("links"))


TraceOpt = Annotated[
    bool,
    typer.Option(
        "--trace",
        help="Write per-packet queue events of the bottleneck(s) (and any [trace] links) to "
        "OUT/trace.parquet.",
        show_default=False,
    ),
]


_CLASS_HELP = (
    "A class of a class-based --aqm (drr, wfq): NAME:WEIGHT[:AQM], e.g. a:1:codel (AQM default "
    "droptail; its parameters with --aqm-param classes.NAME.aqm.KEY=VALUE). Repeatable, in "
    "order; the first class also takes unclassified traffic. Each class gets --flows TCP flows "
    "unless --class-flows says otherwise."
)
_CLASS_FLOWS_HELP = (
    "NAME=COUNT: the number of TCP flows of class NAME (repeatable; default --flows per class; "
    "0 for none)."
)


def _parse_classes(aqm: str, specs: list[str], flows_of: list[str], flows: int):
    """``--class`` and ``--class-flows`` -> (class list for [aqm], {name: flow count}).

    Checks the form of every value (one-line errors naming the option and the value); the
    scenario schema checks the rest (weights, names, AQMs), see :func:`_class_error`.
    """
    from aqmlab.aqm import list_schedulers

    if not specs:
        if flows_of:
            _fail(f"--class-flows = {flows_of[0]!r}: declare the classes with --class first")
        return None, None
    # The class-based schedulers are those with a class list (drr, wfq), not the hashed ones.
    class_based = [
        n for n, ps in list_schedulers().items() if any(p["name"] == "classes" for p in ps)
    ]
    if aqm.strip().lower() not in class_based:
        _fail(
            f"--class = {specs[0]!r}: --aqm {aqm} has no classes; use a class-based AQM "
            f"({', '.join(class_based)})"
        )
    classes = []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (2, 3) or not parts[0].strip() or not parts[1].strip():
            _fail(f"--class = {spec!r}: expected NAME:WEIGHT[:AQM], e.g. a:1:codel")
        try:
            weight = float(parts[1])
        except ValueError:
            _fail(f"--class = {spec!r}: weight {parts[1]!r} is not a number")
        c: dict[str, object] = {"name": parts[0].strip(), "weight": weight}
        if len(parts) == 3:
            if not parts[2].strip():
                _fail(f"--class = {spec!r}: expected NAME:WEIGHT[:AQM], e.g. a:1:codel")
            c["aqm"] = {"type": parts[2].strip()}
        classes.append(c)
    names = [c["name"] for c in classes]
    counts = dict.fromkeys(names, flows)
    seen = set()
    for item in flows_of:
        name, eq, count = item.partition("=")
        name = name.strip()
        if not eq or not count.strip().isdigit():
            _fail(f"--class-flows = {item!r}: expected NAME=COUNT with COUNT >= 0, e.g. a=4")
        if name not in counts:
            _fail(f"--class-flows = {item!r}: no class {name!r} (classes: {', '.join(names)})")
        if name in seen:
            _fail(f"--class-flows = {item!r}: class {name!r} given twice")
        seen.add(name)
        counts[name] = int(count)
    if not any(counts.values()):
        _fail(f"--class-flows = {flows_of[-1]!r}: every class has 0 flows; give one at least")
    return classes, counts


def _check_param_units(aqm: str, classes: list[dict] | None, params: dict[str, object]) -> None:
    """The command line's rule for ``--aqm-param``: a time or size written without a unit is
    an error (``target=5`` is refused, ``target=5ms`` is not). The parameter's unit comes from
    the AQM's description (no parse, no validation: the scenario does those, once); only a
    bare number is looked at, and its error line is the core's."""
    from aqmlab import _core

    class_aqm = {c["name"]: c.get("aqm", {}).get("type", "droptail") for c in classes or []}
    for k, v in params.items():
        name, param = aqm, k
        if classes:
            parts = k.split(".")
            if len(parts) != 4 or parts[0] != "classes" or parts[2] != "aqm":
                continue
            if parts[1] not in class_aqm:
                continue
            name, param = class_aqm[parts[1]], parts[3]
        unit = _param_units(name).get(param)
        if unit not in ("s", "bytes"):
            continue
        try:
            float(str(v))
        except ValueError:
            continue  # text with a unit (or not a number): the scenario parses it
        kind = "time" if unit == "s" else "size"
        try:
            _core.parse_quantity(kind, str(v), require_unit=True)
        except ValueError as e:
            _fail(f"--aqm-param {k}={v}: {e}")


def _param_units(name: str) -> dict[str, str]:
    """``{parameter: unit}`` of an AQM or scheduler (``{}`` for an unknown name: the scenario
    reports it)."""
    from aqmlab import _core

    try:
        return {n: u for (n, u, _d, _doc) in _core.aqm_describe(name)}
    except ValueError:
        return {}


def build_dumbbell(
    *,
    flows: int,
    rate: str | None,
    rtt: str,
    buffer: int,
    aqm: str,
    class_: list[str] | None,
    class_flows: list[str] | None,
    aqm_param: list[str] | None,
    cc: str,
    ecn: bool,
    delack: bool | None,
    sack: bool | None,
    init_cwnd: int,
    min_rto: str,
    rwnd: int | None,
    loss: float,
    pkt_size: int,
    duration: str,
    warmup: str | None,
    seed: int,
    sample_interval: str,
    access: str = "link",
    profile: str = "linux",
    rate_trace: str | None = None,
    reverse_flows: int = 0,
    netem: str | None = None,
    pacing: bool | None = None,
    reverse_netem: str | None = None,
):
    """The dumbbell command's options as a validated scenario: ``(Scenario, classes, counts)``
    (``classes``/``counts``: the ``--class`` list and flows per class, or None). Bad options end
    the command with one line naming the option (see :func:`fail`). ``aqmlab emulate`` builds
    its scenario here too. ``delack``/``sack`` None: as the TCP ``profile`` (``linux`` or
    ``classic``) implies; ``pacing`` None: the scenario's default (off; BBR and BBRv3 pace
    themselves). ``reverse_flows`` > 0 adds a group of that many flows sending right to left
    (``direction = "reverse"``), the forward group then named ``forward``."""
    from aqmlab.scenario import Scenario
    from aqmlab.units import parse_time

    if rate is None and rate_trace is None:
        rate = "10Mbps"
    for opt, text, kind in (
        *([("--rate", rate, "rate")] if rate is not None else []),
        ("--rtt", rtt, "time"),
        ("--duration", duration, "time"),
        ("--sample-interval", sample_interval, "time"),
        ("--min-rto", min_rto, "time"),
    ):
        _quantity(opt, text, kind)
    if warmup is None:
        warmup = f"{parse_time(duration) / 6!r}s"
    else:
        _quantity("--warmup", warmup, "time")
    params: dict[str, object] = {}
    for item in aqm_param or []:
        if "=" not in item:
            _fail(f"--aqm-param = {item!r}: expected key=value")
        k, v = item.split("=", 1)
        params[k.strip()] = v.strip()
    specs = list(class_ or [])
    classes, counts = _parse_classes(aqm, specs, list(class_flows or []), flows)
    _check_param_units(aqm, classes, params)
    group: dict[str, object] = {
        "kind": "tcp",
        "count": flows,
        "cc": cc,
        # DCTCP and Prague need ECN (the scenario refuses ecn = false with them).
        "ecn": ecn or cc.strip().lower() in _needs_ecn(),
        "profile": profile,
        "init_cwnd": init_cwnd,
        "min_rto": min_rto,
    }
    # Only when given: otherwise the profile decides.
    for key, on in (("delack", delack), ("sack", sack), ("pacing", pacing)):
        if on is not None:
            group[key] = on
    if rwnd is not None:
        group["rwnd"] = rwnd
    data = {
        "name": f"dumbbell-{aqm}",
        "seed": seed,
        "duration": duration,
        "warmup": warmup,
        "sample_interval": sample_interval,
        "dumbbell": {
            # with --rate-trace and no --rate, the nominal rate is the trace's mean
            **({"rate": rate} if rate is not None else {}),
            **({"rate_trace": rate_trace} if rate_trace is not None else {}),
            **({"netem": netem} if netem is not None else {}),
            **({"reverse_netem": reverse_netem} if reverse_netem is not None else {}),
            "rtt": rtt,
            "buffer": buffer,
            "pkt_size": pkt_size,
            "loss": loss,
            # Only when not the default, so that the scenario written is as before.
            **({"access": access} if access != "link" else {}),
        },
        "aqm": {"type": aqm, **params},
        "flows": [group],
    }
    if classes:
        data["aqm"]["classes"] = classes
        data["flows"] = [
            {**group, "name": name, "count": n, "class": name}
            for name, n in counts.items()
            if n > 0
        ]
    if reverse_flows < 0:
        _fail(f"--reverse-flows = {reverse_flows}: must be >= 0")
    if reverse_flows > 0:
        if not classes:
            data["flows"] = [{**group, "name": "forward"}]
        data["flows"].append(
            {**group, "name": "reverse", "count": reverse_flows, "direction": "reverse"}
        )
    try:
        sc = Scenario(data)  # the options' one parse and validation
    except ValueError as e:
        _fail(_as_option(e, specs, params))
    return sc, classes, counts


def register(app: typer.Typer) -> None:
    """Attach the simulator commands to the top-level app."""

    @app.command("run")
    def run(
        scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
        out: Annotated[Path, typer.Option("--out", help="Output folder (an aqmlab result).")],
        seed: Annotated[int | None, typer.Option(help="Override the scenario's seed.")] = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="Override a scenario key: key=value (repeatable)."),
        ] = None,
        no_plots: NoPlots = False,
        trace: TraceOpt = False,
        pcap: PcapOpt = False,
        flent: FlentOpt = False,
        quiet: Annotated[
            bool,
            typer.Option("--quiet", help="Print nothing on success.", show_default=False),
        ] = False,
        force: Force = False,
    ) -> None:
        """Run a scenario file and write summary.json, Parquet time series and plots to OUT."""
        from aqmlab.scenario import load_scenario

        _one_blas_thread()
        with _worker(not no_plots) as worker:
            try:
                sc = load_scenario(scenario, overrides=list(set_ or []))
                if seed is not None:
                    sc = sc.replace(seed=seed)
            except ValueError as e:
                _fail(str(e))
            sc = _with_pcap(_with_trace(sc, trace), pcap)
            sim = _prepare(sc, out, force)

            def go():
                try:
                    # with an [sqm] table, Simulation.run runs SQM's online controller
                    # (docs/online.md)
                    if quiet:
                        sim.run()
                        return sim.result()
                    return _run_with_progress(sim, sc.name)
                except ValueError as e:
                    _fail(f"sqm: {e}")

            if not quiet:
                _import_tables()
            flent = wants_flent(sc, flent)
            if flent and (why := check_flent(sc, _tracing(sc) or _capturing(sc))):
                _fail(why)
            if flent:
                res, samples = run_for_flent(sim, sc.name)
                _write(res, out, force, not no_plots, "run", worker,
                       also=lambda d: write_flent(d, res, samples, sc))  # fmt: skip
            elif _tracing(sc) or _capturing(sc):
                res = _run_traced(sim, out, force, not no_plots, "run", go, worker)
            else:
                res = go()
                _write(res, out, force, not no_plots, "run", worker)
        if quiet:
            return
        from rich.console import Console

        con = Console()
        con.print(_run_table(res.summary, sc.name))
        _print_cake(con, res.summary)
        groups = _group_table(res.summary)
        if groups is not None:
            con.print(groups)
        if (pings := ping_table(res.summary)) is not None:
            con.print(pings)
        if (fct := fct_table(res.summary)) is not None:
            con.print(fct)
        typer.echo(f"results written to {out}")

    @app.command("dumbbell")
    def dumbbell(
        out: Annotated[Path, typer.Option("--out", help="Output folder (an aqmlab result).")],
        flows: Annotated[int, typer.Option(help="Number of long-lived TCP flows.")] = 10,
        reverse_flows: Annotated[
            int,
            typer.Option(
                help="Long-lived TCP flows sending the other way (R2 to R1), through the "
                "reverse bottleneck, which then runs the same AQM (docs/scenario.md)."
            ),
        ] = 0,
        rate: Annotated[
            str | None,
            typer.Option(
                help="Bottleneck rate, with a unit [10Mbps]; with --rate-trace the nominal rate "
                "AQMs are told [the trace's mean rate]."
            ),
        ] = None,
        rate_trace: Annotated[
            str | None,
            typer.Option(
                "--rate-trace",
                help="Mahimahi trace file the bottleneck follows (one line per 1500-byte "
                "delivery opportunity, ms; docs/traces.md).",
            ),
        ] = None,
        netem: Annotated[
            str | None,
            typer.Option(
                "--netem",
                help="netem impairments of the bottleneck's packets, in netem's syntax, e.g. "
                '"delay 10ms 5ms distribution normal loss gemodel 1% 10%" (docs/netem.md).',
            ),
        ] = None,
        reverse_netem: Annotated[
            str | None,
            typer.Option(
                "--reverse-netem",
                help="netem impairments of the reverse bottleneck's packets (R2 to R1: the "
                "ACKs), in netem's syntax (docs/netem.md).",
            ),
        ] = None,
        rtt: Annotated[
            str, typer.Option(help="Two-way propagation delay of every flow (100ms).")
        ] = "100ms",
        buffer: Annotated[int, typer.Option(help="Bottleneck buffer [packets].")] = 100,
        access: Annotated[
            str,
            typer.Option(
                help="link: a host pair per flow on access links; none: senders at R1, "
                "receivers at R2 (htsim's dumbbell)."
            ),
        ] = "link",
        aqm: Annotated[str, typer.Option(help="AQM name (see `aqmlab aqms`).")] = "droptail",
        class_: Annotated[
            list[str] | None, typer.Option("--class", help=_CLASS_HELP, show_default=False)
        ] = None,
        class_flows: Annotated[
            list[str] | None,
            typer.Option("--class-flows", help=_CLASS_FLOWS_HELP, show_default=False),
        ] = None,
        aqm_param: Annotated[
            list[str] | None,
            typer.Option(
                "--aqm-param", help="AQM parameter key=value, times with a unit (repeatable)."
            ),
        ] = None,
        cc: Annotated[str, typer.Option(help=_cc_help())] = "newreno",
        ecn: Annotated[
            bool,
            typer.Option(
                "--ecn",
                help="ECN end to end: ECN-capable flows, a marking AQM.",
                show_default=False,
            ),
        ] = False,
        profile: Annotated[
            str,
            typer.Option(
                help="TCP profile: linux (SACK, RACK-TLP, PRR, timestamps, Linux delayed "
                "ACKs, HyStart) | classic (the model of the ns-2-era reproductions)."
            ),
        ] = "linux",
        delack: Annotated[
            bool | None,
            typer.Option(
                "--delack/--no-delack",
                help="Delayed ACKs (b = 2) [default: as the profile: linux on, classic off].",
                show_default=False,
            ),
        ] = None,
        sack: Annotated[
            bool | None,
            typer.Option(
                "--sack/--no-sack",
                help="SACK loss recovery (RFC 6675) [default: as the profile].",
                show_default=False,
            ),
        ] = None,
        pacing: Annotated[
            bool | None,
            typer.Option(
                "--pacing/--no-pacing",
                help="Pace at Linux's tcp_update_pacing_rate, as with sch_fq (scenario key "
                "pacing) [default: off; bbr and bbr3 pace themselves].",
                show_default=False,
            ),
        ] = None,
        init_cwnd: Annotated[int, typer.Option(help="Initial window [segments].")] = 10,
        min_rto: Annotated[str, typer.Option(help="Minimum RTO, with a unit.")] = "200ms",
        rwnd: Annotated[
            int | None, typer.Option(help="Receive window [segments] (default unlimited).")
        ] = None,
        loss: Annotated[
            float, typer.Option(help="Bernoulli loss probability on the bottleneck.")
        ] = 0.0,
        pkt_size: Annotated[
            int, typer.Option(help="IP size of data packets incl. 40 B of headers [bytes].")
        ] = 1000,
        duration: Annotated[str, typer.Option(help="Simulated time, with a unit.")] = "60s",
        warmup: Annotated[
            str | None,
            typer.Option(help="Warm-up excluded from statistics (default: duration / 6)."),
        ] = None,
        seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
        sample_interval: Annotated[str, typer.Option(help="Monitor sampling period.")] = "10ms",
        no_plots: NoPlots = False,
        trace: TraceOpt = False,
        pcap: PcapOpt = False,
        flent: FlentOpt = False,
        quiet: Annotated[
            bool, typer.Option("--quiet", help="Print nothing on success.", show_default=False)
        ] = False,
        force: Force = False,
    ) -> None:
        """A quick dumbbell experiment without a scenario file (drr/wfq classes: --class)."""
        _one_blas_thread()
        with _worker(not no_plots) as worker:
            sc, classes, counts = build_dumbbell(
                flows=flows, rate=rate, rtt=rtt, buffer=buffer, aqm=aqm, class_=class_,
                class_flows=class_flows, aqm_param=aqm_param, cc=cc, ecn=ecn, delack=delack,
                sack=sack, init_cwnd=init_cwnd, min_rto=min_rto, rwnd=rwnd, loss=loss,
                pkt_size=pkt_size, duration=duration, warmup=warmup, seed=seed,
                sample_interval=sample_interval, access=access, profile=profile,
                rate_trace=rate_trace, netem=netem, pacing=pacing, reverse_flows=reverse_flows,
                reverse_netem=reverse_netem,
            )  # fmt: skip
            sc = _with_pcap(_with_trace(sc, trace), pcap)
            sim = _prepare(sc, out, force)

            def go():
                return sim.run() or sim.result() if quiet else _run_with_progress(sim, aqm)

            if not quiet:
                _import_tables()
            if flent and trace or flent and pcap:
                _fail(check_flent(sc, True))
            if flent:
                res, samples = run_for_flent(sim, aqm)
                _write(res, out, force, not no_plots, "dumbbell", worker,
                       also=lambda d: write_flent(d, res, samples, sc))  # fmt: skip
            elif trace or pcap:
                res = _run_traced(sim, out, force, not no_plots, "dumbbell", go, worker)
            else:
                res = go()
                _write(res, out, force, not no_plots, "dumbbell", worker)
        if not quiet:
            from rich.console import Console

            con = Console()
            if "bottleneck_reverse" in res.summary["links"]:
                # a row per direction
                con.print(_run_table(res.summary, sc.name))
            else:
                con.print(_summary_table({aqm: res.summary}, sc.name))
            if classes:
                con.print(_class_table(res.summary, classes, counts))
            _print_cake(con, res.summary)
            groups = _group_table(res.summary)
            if groups is not None:
                con.print(groups)
            typer.echo(f"results written to {out}")

    def _show_default(d: object) -> str:
        """A parameter default as ``aqmlab aqms`` prints it: true/false, a name, a number."""
        if d is None:
            return "required"
        if isinstance(d, bool):
            return "true" if d else "false"
        if isinstance(d, str):
            return d
        return f"{d:g}"

    @app.command("aqms")
    def aqms(
        as_json: Annotated[
            bool, typer.Option("--json", help="Print JSON.", show_default=False)
        ] = False,
    ) -> None:
        """List the AQM algorithms and schedulers with their parameters, units and defaults."""
        from aqmlab.aqm import list_aqms, list_schedulers

        table = {**list_aqms(), **list_schedulers()}
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
                t.add_row(p["name"], p["unit"], _show_default(p["default"]), p["doc"])
            con.print(t)
            con.print()

    @app.command("demo")
    def demo(
        out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("results/demo"),
        scenario: Annotated[
            Path | None,
            typer.Option(help="Scenario (default: the bundled demo); its AQM parameters are kept."),
        ] = None,
        aqms_: Annotated[
            str, typer.Option("--aqms", help="Comma-separated AQMs to compare.")
        ] = ",".join(DEMO_AQMS),
        seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
        force: Force = False,
    ) -> None:
        """The default demo: a dumbbell with a load step under drop-tail, RED, PI, PIE and CoDel."""
        from rich.console import Console

        from aqmlab.aqm import aqm_list
        from aqmlab.compare import compare_aqms, default_demo_scenario
        from aqmlab.scenario import load_scenario

        try:
            names = aqm_list(aqms_)
            base = load_scenario(scenario) if scenario else default_demo_scenario()
            base = base.replace(seed=seed)
            result = compare_aqms(base, names, out, progress_factory=_progress, force=force)
        except ValueError as e:
            _fail(str(e))
        Console().print(_summary_table(result.summaries, f"{base.name}: AQM comparison"))
        typer.echo(f"results written to {out}/ (per-AQM folders, comparison.png, comparison.json)")
