"""Live emulation: the scenario's dumbbell as a userspace bottleneck carrying real Linux TCP.

:func:`emulate` runs a dumbbell scenario (:class:`aqmlab.scenario.Scenario`) with real kernel
TCP connections between two network namespaces, forwarded by the Rust ``emu`` crate through
the ``aqm`` crate's queue discipline (the same code and config as the simulator's), and
returns a :class:`aqmlab.results.SimResult` with the simulator's results contract. Needs root
and ``/dev/net/tun`` (:class:`EmulationError` otherwise). See ``docs/emulate.md``.

Modules: :mod:`~aqmlab.emu.netns` (namespaces, devices, cleanup), :mod:`~aqmlab.emu.plan`
(flows from the scenario), :mod:`~aqmlab.emu.traffic` (sender and receiver programs).

Examples
--------
>>> from aqmlab.scenario import Scenario
>>> from aqmlab.emu import emulate                                      # doctest: +SKIP
>>> sc = Scenario({"duration": "10s", "warmup": "2s",
...                "dumbbell": {"rate": "10Mbps", "rtt": "40ms", "buffer": 100},
...                "aqm": {"type": "codel"}, "flows": [{"count": 4, "cc": "cubic"}]})
>>> res = emulate(sc)                                                   # doctest: +SKIP
>>> res.summary["links"]["bottleneck"]["utilization"]                   # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import threading
import time

from aqmlab.emu.netns import (
    EmulationError,
    Testbed,
    check_environment,
    check_sysctls,
    group_addr,
)
from aqmlab.emu.plan import PING_PORT, PORT, plan_flows
from aqmlab.emu.traffic import STEP_S
from aqmlab.errors import error
from aqmlab.output import signals_raise
from aqmlab.provenance import meta, now_utc
from aqmlab.results import SimResult, flow_columns, jain_index

__all__ = ["emulate", "EmulationError", "check_environment", "check_link", "check_scenario"]

#: Time between the traffic programs reporting ready and the run's origin, s.
_LEAD_S = 0.2


def _mtu(normalized: dict) -> int:
    sizes = {g.get("packet_size", normalized["dumbbell"]["pkt_size"]) for g in normalized["flows"]}
    if len(sizes) != 1:
        raise error(
            "flows.packet_size", sorted(sizes), "the emulator needs one packet size (the MTU)"
        )
    mtu = sizes.pop()
    if not 576 <= mtu <= 9000:
        raise error("dumbbell.pkt_size", mtu, "the emulator takes an MTU in [576, 9000]")
    return int(mtu)


#: The fastest bottleneck the emulator takes, bit/s. Its userspace forwarder moves every packet
#: through two TUN devices: on a 2-core machine it carried 1.23 Gb/s at most (8 CUBIC flows, a
#: 2 Gb/s setting: 61 % utilization), and at 800 Mb/s on a busy machine it already released
#: packets up to 38 ms late (p99). Above this rate a run would measure the forwarder, not the
#: queue (docs/emulate.md, "Limits").
MAX_RATE_BPS = 1e9

#: The shortest run the emulator takes, s: the traffic programs start, connect and report
#: around the run; a shorter one measures nothing (a 1 ms run reported 0 % utilization).
MIN_DURATION_S = 1.0


#: A run's timing is reliable when 99 % of the forwarder's packet releases are at most this
#: late, µs (1 ms; at 200 Mb/s on an idle 2-core machine the p99 was 150 µs).
TIMING_P99_US = 1000.0


def _ephemeral_ports() -> int:
    """How many source ports one address can use towards one destination port (the kernel's
    ``ip_local_port_range``)."""
    try:
        lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
        return hi - lo + 1
    except (OSError, ValueError):
        return 28232  # Linux's default range, 32768-60999


def max_flows() -> int:
    """The most flows the emulator's traffic programs can hold: one socket each in the sender
    and in the receiver, under the open-file limit they raise their own to (the hard limit,
    ``ulimit -Hn``), less a margin for the programs' other files."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    return max(0, int(hard) - 64)


def check_scenario(scenario, kernel_cc: str | None = None, group_cc: dict | None = None):
    """The flow plan and MTU of ``scenario``, or ``ValueError`` naming the key (no side
    effects; does not need root). ``kernel_cc``, ``group_cc``: see :func:`emulate`.

    Parameters
    ----------
    scenario : aqmlab.scenario.Scenario
        The scenario (a dumbbell).
    kernel_cc : str, optional
        Every flow's kernel congestion control (see :func:`emulate`).
    group_cc : dict, optional
        Some groups' kernel congestion controls by group index (see :func:`emulate`).

    Returns
    -------
    tuple of (list of FlowPlan, int)
        The flows and the MTU (bytes).
    """
    n = scenario.normalized
    for g, grp in enumerate(n["flows"]):
        # before planning them one by one
        count, ports = int(grp.get("count", 1)), _ephemeral_ports()
        if count > ports:
            raise error(
                f"flows[{g}].count",
                count,
                f"a group's flows share one source address, which has {ports} ports towards "
                "the receiver (net.ipv4.ip_local_port_range)",
            )
    total = sum(int(grp.get("count", 1)) for grp in n["flows"])
    if total > max_flows():
        raise error(
            "flows",
            total,
            f"the emulator's traffic programs hold one socket per flow; at most {max_flows()} "
            "here (the open-file limit, ulimit -Hn, less a margin)",
        )
    duration = float(n["duration"])
    if duration < MIN_DURATION_S:
        raise error(
            "duration",
            f"{duration:g} s",
            f"an emulation runs in real time and needs at least {MIN_DURATION_S:g} s (the "
            "traffic programs start and connect around it)",
        )
    flows = plan_flows(n, kernel_cc, group_cc)
    return flows, check_link(scenario)


def check_link(scenario) -> int:
    """The MTU of ``scenario``'s dumbbell if the emulator can run its link, else
    ``ValueError`` naming the key (no side effects; does not need root). ``aqmlab emulate``
    and ``aqmlab shell`` check their links here.

    Parameters
    ----------
    scenario : aqmlab.scenario.Scenario
        The scenario (a dumbbell).

    Returns
    -------
    int
        The MTU, bytes.
    """
    n = scenario.normalized
    if "dumbbell" not in n:
        raise error("topology", n.get("topology", "?"), "the emulator runs dumbbells only")
    d = n["dumbbell"]
    if float(d["rate"]) > MAX_RATE_BPS:
        raise error(
            "dumbbell.rate",
            f"{float(d['rate']) / 1e9:g} Gb/s",
            "the emulator's userspace forwarder carries at most about 1.2 Gb/s; it takes rates "
            f"up to {MAX_RATE_BPS / 1e9:g} Gb/s",
        )
    if d.get("loss", 0.0):
        raise error("dumbbell.loss", d["loss"], "not emulated")
    if d.get("access", "link") != "link":
        raise error(
            "dumbbell.access",
            f'"{d["access"]}"',
            "not emulated (the emulator's hosts sit in namespaces behind the forwarder; "
            'access = "none" is simulator-only)',
        )
    return _mtu(n)


def emulate(
    scenario,
    kernel_cc: str | None = None,
    group_cc: dict[int, str] | None = None,
    sysctls: dict[str, str] | None = None,
    command: list[str] | None = None,
    pcap: str | os.PathLike[str] | None = None,
) -> SimResult:
    """Emulate ``scenario`` (a dumbbell of long-lived TCP groups and ping probers) in real time.

    Parameters
    ----------
    scenario : aqmlab.scenario.Scenario
        Validated scenario; its duration is wall-clock time.
    kernel_cc : str, optional
        A kernel congestion control for every group (e.g. ``"bbr"``), else each group's ``cc``.
    group_cc : dict, optional
        ``{group index: kernel algorithm}`` for groups whose algorithm the scenario schema does
        not know (:func:`aqmlab.emu.plan.take_kernel_cc`).
    sysctls : dict, optional
        Further kernel settings of the senders' namespace, ``{key: value}`` (``net.ipv4.*``,
        ``net.core.*``), applied after the pinned ones and recorded in
        ``emulation.sysctls.snd``; e.g. ``{"net.ipv4.tcp_recovery": "0"}`` turns RACK off.
    command : list of str, optional
        A program run in the senders' namespace beside the flows, from the run's origin, as
        :func:`aqmlab.emu.shell.shell` runs its command (the calling user, the environment
        plus ``AQMLAB_PEER`` = the first group's receiver address); ended (SIGTERM, then
        SIGKILL) if it still runs when the run ends. Its exit status is
        ``emulation.command.exit_status``.
    pcap : path, optional
        Capture the real packets at both TUN devices into this pcapng file (created or
        replaced; interfaces ``senders`` and ``receivers``, the first 128 bytes of each
        packet, timestamps from the forwarder's clock; ``docs/pcap.md``). The summary's
        ``emulation.captured`` counts them per device.

    Returns
    -------
    SimResult
        ``summary.json`` content as the simulator's (``links.bottleneck``, ``flows[]``,
        ``fairness``, ``pings`` with ping groups) plus ``emulation`` (timing errors of the
        forwarder, kernel, sysctls); ``columns["pings"]`` the probes. Its attribute
        ``flent_samples`` (:class:`aqmlab.flent.FlowSamples`) holds every flow's bytes received
        by each 200 ms step: ``aqmlab.flent.write_flent(DIR, res, res.flent_samples,
        scenario)`` writes the run's Flent file.

    Raises
    ------
    ValueError
        A scenario the emulator cannot run, or a sysctl that is not allowed or that the
        kernel refused (the message names the key; nothing is left behind).
    EmulationError
        Not root, no ``/dev/net/tun``, or a set-up command failed.
    KeyboardInterrupt
        SIGINT or SIGTERM during the run; everything was removed.
    """
    flows, mtu = check_scenario(scenario, kernel_cc, group_cc)
    extra = check_sysctls(sysctls or {})
    check_environment()
    with signals_raise():
        return _run(scenario, flows, mtu, extra, command, pcap)


def _run(scenario, flows, mtu, sysctls_snd: dict[str, str], command=None, pcap=None) -> SimResult:
    """:func:`emulate` once the input is checked (SIGTERM raises KeyboardInterrupt here)."""
    from aqmlab import _core

    n = scenario.normalized
    groups = len(n["flows"])
    ecn_groups = [any(f.ecn for f in flows if f.group == g) for g in range(groups)]
    procs: list[subprocess.Popen] = []
    fw = thread = cmd = None
    cmd_status = None
    wall0 = time.monotonic()
    started = now_utc()
    try:
        reverse_ecn = any(f.ecn for f in flows if f.reverse)
        with Testbed(mtu, ecn_groups, sysctls_snd, reverse_ecn=reverse_ecn) as tb:
            tb.create_namespaces()
            try:
                fw = _core.Forwarder(
                    scenario._core,
                    tb.snd_tun,
                    tb.rcv_tun,
                    [group_addr(g) for g in range(groups)],
                    pcap=None if pcap is None else os.fspath(pcap),
                )
            except OSError as e:
                raise EmulationError(str(e)) from None
            tb.configure()
            sysctls = tb.sysctls()
            duration, warmup = float(n["duration"]), float(n["warmup"])
            py = [sys.executable, "-m", "aqmlab.emu.traffic"]
            # a receiver and a sender per direction: the forward groups' from the senders'
            # namespace to the receivers', the reverse groups' (direction = "reverse") the
            # other way, across the reverse link
            progs = []  # (name, namespace, argv, plan on stdin)
            for rev, send_ns, recv_ns in ((False, "snd", "rcv"), (True, "rcv", "snd")):
                tag = "reverse " if rev else ""
                progs += _ping_programs(
                    [f for f in flows if f.reverse == rev and f.kind == "ping"],
                    tag, send_ns, recv_ns, duration,
                )  # fmt: skip
                mine = [f for f in flows if f.reverse == rev and f.kind == "tcp"]
                if not mine:
                    continue
                starts = {f.id: f.start_s for f in mine}
                plan = {
                    "warmup": warmup,
                    "duration": duration,
                    "cwnd_interval": float(n.get("cwnd_interval") or n.get("sample_interval")
                                           or 0.01),
                    "flows": [
                        {"id": f.id, "dst": f.dst, "port": PORT, "cc": f.cc,
                         "start_s": f.start_s, "stop_s": f.stop_s, "dscp": f.dscp,
                         "cwnd_trace": f.cwnd_trace}
                        for f in mine
                    ],
                }  # fmt: skip
                # the receiver's second line: the DSCP of each marked flow (for its ACKs);
                # the third: the stops
                marks = {f.id: f.dscp for f in mine if f.dscp}
                stops = {f.id: f.stop_s for f in mine if f.stop_s is not None}
                # the plans go through stdin: a command line holds at most 128 KiB per
                # argument
                progs.append((f"{tag}receiver", recv_ns,
                              ["recv", "--port", str(PORT), "--warmup", str(warmup),
                               "--duration", str(duration), "--starts", "-", "--dscp", "-",
                               "--stops", "-", "--step", str(STEP_S)],
                              json.dumps(starts) + "\n" + json.dumps(marks) + "\n"
                              + json.dumps(stops)))  # fmt: skip
                progs.append((f"{tag}sender", send_ns, ["send", "--plan", "-"], json.dumps(plan)))
            for _, ns, args, _ in progs:
                procs.append(
                    subprocess.Popen(
                        tb.exec_argv(ns, [*py, *args]),
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                        start_new_session=True,
                    )
                )
            for (_, _, _, text), p in zip(progs, procs, strict=True):
                if text:
                    p.stdin.write(text + "\n")
                    p.stdin.flush()
            # Every program is up (imports done, receivers listening) before the origin is set.
            for (name, _, _, _), p in zip(progs, procs, strict=True):
                if p.stdout.readline().strip() != "ready":
                    raise EmulationError(f"{name} did not start: {_tail(p)}")
            t0 = time.monotonic_ns() + int(_LEAD_S * 1e9)
            for p in procs:
                p.stdin.write(f"{t0}\n")
                p.stdin.flush()
            errors: list[BaseException] = []

            def forward():
                try:
                    fw.run(t0)
                except BaseException as e:  # reported by the main thread
                    errors.append(e)

            thread = threading.Thread(target=forward, name="aqmlab-forwarder", daemon=True)
            thread.start()
            if command:
                cmd = _start_command(tb, command, t0)
            warm_ns = t0 + int(warmup * 1e9)
            counters0 = None
            while thread.is_alive():
                # sleep, not join(timeout): a signal interrupting join leaves the thread
                # marked stopped while it still runs (CPython 3.11)
                time.sleep(0.05)
                if counters0 is None and time.monotonic_ns() >= warm_ns:
                    counters0 = {r: tb.tcp_counters(r) for r in ("snd", "rcv")}
            if errors:
                raise EmulationError(str(errors[0]))
            if cmd is not None:
                from aqmlab.emu.shell import finish

                ran_out = cmd.poll() is None
                cmd_status = {
                    "argv": list(command),
                    "exit_status": finish(cmd, grace=2.0),
                    "ended_by_run": ran_out,
                }
            # the programs' reports, merged per role (flow ids are distinct)
            outs = {role: {"flows": {}, "pings": {}, "realtime": True}
                    for role in ("receiver", "sender", "prober", "echo")}  # fmt: skip
            for (name, _, _, _), p in zip(progs, procs, strict=True):
                try:
                    out, err = p.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    raise EmulationError(f"{name} did not finish") from None
                if p.returncode != 0:
                    raise EmulationError(f"{name} failed: {' '.join(err.split())[-300:]}")
                got = json.loads(out.strip().splitlines()[-1])
                mine = outs[name.split()[-1]]
                mine["flows"].update(got.get("flows", {}))
                mine["pings"].update(got.get("pings", {}))
                mine["realtime"] = mine["realtime"] and bool(got.get("realtime"))
            try:
                fw.finish_capture()
            except OSError as e:
                raise EmulationError(str(e)) from None
            report = json.loads(fw.report_json())
            counters = _counter_window(counters0, {r: tb.tcp_counters(r) for r in ("snd", "rcv")})
            ts = {k: list(v) for k, v in fw.timeseries().items()}
            for k, v in fw.reverse_timeseries().items():  # with a reverse_rate_trace
                ts.setdefault(k, []).extend(v)
            cts = dict(fw.class_timeseries())
    finally:
        if cmd is not None and cmd.poll() is None:
            from aqmlab.emu.shell import finish

            finish(cmd, grace=1.0)
        if fw is not None:
            fw.stop()
        if thread is not None:
            thread.join(5)
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for s in (p.stdin, p.stdout, p.stderr):
                if s:
                    s.close()
        fw = None  # closes the TUN devices
    res = _result(
        scenario, flows, report, ts, cts, outs, sysctls, time.monotonic() - wall0, started
    )
    res.summary["emulation"]["tcp_counters"] = counters
    if cmd_status is not None:
        res.summary["emulation"]["command"] = cmd_status
    return res


def _counter_window(before: dict | None, after: dict) -> dict:
    """The kernel's TCP counters (:meth:`Testbed.tcp_counters`) that moved between the end
    of the warm-up (``before``; the run's start if it ended before the warm-up) and the end,
    per namespace: ``{"snd": {"TcpExtTCPLossProbes": 41, ...}, "rcv": {...}}``."""
    out = {}
    for role, now in after.items():
        was = (before or {}).get(role, {})
        out[role] = {k: v - was.get(k, 0) for k, v in now.items() if v != was.get(k, 0)}
    return out


def _ping_programs(probes, tag: str, send_ns: str, recv_ns: str, duration: float) -> list:
    """The prober of ``probes`` (ping flows of one direction) in ``send_ns`` and the echo in
    ``recv_ns``, as ``(name, namespace, argv, stdin text)``; none without probes."""
    if not probes:
        return []
    plan = {
        "duration": duration,
        "probes": [
            {"id": f.id, "dst": f.dst, "port": PING_PORT, "start_s": f.start_s,
             "stop_s": f.stop_s, "interval": f.interval, "size": f.size, "dscp": f.dscp}
            for f in probes
        ],
    }  # fmt: skip
    return [
        (f"{tag}echo", recv_ns,
         ["echo", "--port", str(PING_PORT), "--duration", str(duration),
          *(a for d in dict.fromkeys(f.dst for f in probes) for a in ("--addr", d))], ""),
        (f"{tag}prober", send_ns, ["probe", "--plan", "-"], json.dumps(plan)),
    ]  # fmt: skip


def _start_command(tb, command: list[str], t0: int) -> subprocess.Popen:
    """``command`` in the senders' namespace from the run's origin ``t0`` (a
    ``time.monotonic_ns()`` instant), as the calling user, with ``AQMLAB_PEER``."""
    from aqmlab.emu.shell import PEER_ENV, calling_user, spawn

    time.sleep(max(0.0, (t0 - time.monotonic_ns()) / 1e9))
    env = dict(os.environ, **{PEER_ENV: group_addr(0)})
    return spawn(tb, "snd", list(command), env, calling_user(), stdin=subprocess.DEVNULL)


def _tail(p: subprocess.Popen) -> str:
    try:
        _, err = p.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        return "no output"
    return " ".join((err or "").split())[-300:] or f"exit status {p.returncode}"


#: Per-flow statistics of the simulator's summary that the emulator does not measure (the
#: forwarder sees packets, not flows; the kernel's TCP_INFO gives a smoothed RTT only).
_NOT_MEASURED = {
    **{f"rtt_ms_{k}": None for k in ("p50", "p95", "p99")},
    "rtt_samples": None,
    **{f"owd_ms_{k}": None for k in ("mean", "p50", "p95", "p99")},
    "queue_delay_link": None,
    **{f"queue_delay_ms_{k}": None for k in ("mean", "p50", "p95", "p99")},
    "queue_delay_by_link": {},
}


def _jain(goodputs: list[float]) -> float | None:
    """Jain's index, null where the simulator's is: no flow, or none delivered anything."""
    if not goodputs or not any(goodputs):
        return None
    return jain_index(goodputs)


def _groups(groups: list[dict], rows: list[dict]) -> list[dict]:
    """The summary's ``groups`` for emulated flows: goodput and Jain's index per group."""
    out = []
    for gi, g in enumerate(groups):
        mine = [r for r in rows if r["group"] == gi]
        active = [r["goodput_bps"] for r in mine if r["window_s"] > 0]
        out.append(
            {
                "group": gi,
                "name": g.get("name") or f"flows[{gi}]",
                "kind": g.get("kind", "tcp"),
                "cc": mine[0]["cc"] if mine else g.get("cc"),
                "class": g.get("class"),
                "flows": len(mine),
                "active_flows": len(active),
                "goodput_bps": sum(active),
                "goodput_bps_mean": sum(active) / len(active) if active else 0.0,
                "jain": _jain(active) if g.get("kind", "tcp") == "tcp" else None,
                "jain_flows": len(active) if g.get("kind", "tcp") == "tcp" else 0,
                "retransmits": sum(r["retransmits"] or 0 for r in mine),
                "timeouts": sum(r["timeouts"] or 0 for r in mine),
                "rtt_ms": None,
                "owd_ms": None,
                "queue_delay_ms": {},
            }
        )
    return out


def _result(scenario, flows, report, ts, cts, outs, sysctls, wall, started) -> SimResult:
    n = scenario.normalized
    end = report["seconds"]
    warm = float(n["warmup"])
    rows = []
    for f in flows:
        if f.kind == "ping":
            rows.append(_ping_row(f, outs["prober"]["pings"].get(str(f.id), {}), end, warm))
            continue
        r = outs["receiver"]["flows"].get(str(f.id), {})
        s = outs["sender"]["flows"].get(str(f.id), {})
        t_open = max(f.start_s, warm)
        t_close = end if f.stop_s is None else min(end, f.stop_s)
        window = t_close - t_open
        got = r.get("bytes_at_stop", r.get("bytes", 0)) - r.get("bytes_before_window", 0)
        rows.append(
            {
                "id": f.id,
                "group": f.group,
                "kind": "tcp",
                "cc": f.cc,
                "direction": "reverse" if f.reverse else "forward",
                "start_s": f.start_s,
                "window_s": max(window, 0.0),
                "goodput_bps": 8.0 * got / window if window > 0 else 0.0,
                "bytes_in_window": got if window > 0 else 0,
                # the kernel's smoothed RTT (TCP_INFO), not the simulator's per-ACK samples
                "rtt_ms_mean": s.get("rtt_ms_mean"),
                "rtt_ms_min": s.get("rtt_ms_min"),
                **_NOT_MEASURED,
                "retransmits": s.get("retransmits"),
                "timeouts": s.get("timeouts"),
                "fct_s": None,
                "size_bytes": None,
                "bytes_delivered": r.get("bytes", 0),
                "ecn": f.ecn,
                "ecn_negotiated": s.get("ecn_negotiated"),
                "connected": s.get("connected"),
            }
        )
    tcp = [r for r in rows if r["kind"] == "tcp"]
    summary = {
        "scenario": n["name"],
        "seed": n["seed"],
        "sim_seconds": end,
        "warmup_s": warm,
        "wall_seconds": wall,
        "events": report["timing"]["wakeups"],
        "packets_forwarded": report["packets_forwarded"],
        "links": {
            "bottleneck": report["bottleneck"],
            # the ACK direction's link, with a reverse_rate_trace
            **({report["reverse"][0]: report["reverse"][1]} if report.get("reverse") else {}),
        },
        "flows": rows,
        "groups": _groups(n["flows"], rows),
        "fairness": {
            "jain": _jain([r["goodput_bps"] for r in tcp if r["window_s"] > 0]),
            "flows": len(tcp),
            "scope": "long-lived TCP flows active in the window",
        },
        "emulation": {
            "timing": report["timing"],
            # the forwarder kept the link's schedule: 99 % of its releases within 1 ms
            "timing_reliable": report["timing"]["forward"]["p99_us"] <= TIMING_P99_US,
            "traffic_realtime": all(o.get("realtime") for o in outs.values()),
            "ecn": report["ecn"],
            # packets in the capture per device (0, 0 without one; emulate(pcap=...))
            "captured": dict(zip(("senders", "receivers"), report["captured"], strict=True)),
            "kernel": platform.release(),
            "sysctls": sysctls,
            "pid": os.getpid(),
        },
    }
    cols = {
        "timeseries": ts,
        "class_timeseries": cts,  # no rows (and no file) for a FIFO
        "flows": flow_columns(rows),
    }
    trace = _cwnd_columns(flows, outs["sender"]["flows"])
    if trace["flow"]:
        cols["cwnd"] = trace
    pings = _ping_columns(flows, outs["prober"]["pings"])
    if pings["flow"]:
        from aqmlab.pings import ping_summary

        cols["pings"] = pings
        summary["pings"] = ping_summary(pings, summary)
    summary["meta"] = meta(started=started)
    res = SimResult(summary=summary, columns=cols, scenario=scenario)
    res.flent_samples = _flow_samples(flows, outs["receiver"]["flows"], end)
    return res


def _cwnd_columns(flows, sent: dict) -> dict[str, list]:
    """``cwnd.parquet``'s columns (the simulator's: ``time_s, flow, cwnd, ssthresh,
    srtt_ms``; windows in segments, an infinite ``ssthresh`` as inf, no RTT sample yet as NaN)
    from the senders' ``TCP_INFO`` samples of the flows with ``cwnd_trace``."""
    cols: dict[str, list] = {"time_s": [], "flow": [], "cwnd": [], "ssthresh": [], "srtt_ms": []}
    for f in flows:
        for t, cwnd, ssthresh, rtt in sent.get(str(f.id), {}).get("cwnd", []):
            cols["time_s"].append(t)
            cols["flow"].append(f.id)
            cols["cwnd"].append(float(cwnd))
            cols["ssthresh"].append(math.inf if ssthresh is None else float(ssthresh))
            cols["srtt_ms"].append(math.nan if rtt is None else rtt)
    return cols


def _ping_columns(flows, pings: dict) -> dict[str, list]:
    """``pings.parquet``'s columns from the probers' reports (NaN: no echo, as the
    simulator's)."""
    cols: dict[str, list] = {"flow": [], "seq": [], "time_s": [], "rtt_ms": []}
    for f in flows:
        p = pings.get(str(f.id))
        if f.kind != "ping" or not p:
            continue
        cols["flow"] += [f.id] * len(p["seq"])
        cols["seq"] += p["seq"]
        cols["time_s"] += p["time_s"]
        cols["rtt_ms"] += [float("nan") if r is None else float(r) for r in p["rtt_ms"]]
    return cols


def _ping_row(f, p: dict, end: float, warm: float) -> dict:
    """A ping flow's ``flows[]`` entry: its probes' RTTs after the warm-up as ``rtt_ms_*``
    (exact order statistics), no goodput."""
    from aqmlab.pings import _quantile

    t_open = max(f.start_s, warm)
    t_close = end if f.stop_s is None else min(end, f.stop_s)
    rtts = sorted(
        r for t, r in zip(p.get("time_s", []), p.get("rtt_ms", []), strict=True)
        if t >= warm and r is not None
    )  # fmt: skip
    q = {k: _quantile(rtts, v) if rtts else None for k, v in (("p50", 0.5), ("p95", 0.95),
                                                             ("p99", 0.99))}  # fmt: skip
    return {
        "id": f.id,
        "group": f.group,
        "kind": "ping",
        "cc": None,
        "direction": "reverse" if f.reverse else "forward",
        "start_s": f.start_s,
        "window_s": max(t_close - t_open, 0.0),
        "goodput_bps": 0.0,
        "bytes_in_window": 0,
        **_NOT_MEASURED,
        "rtt_ms_mean": sum(rtts) / len(rtts) if rtts else None,
        "rtt_ms_min": rtts[0] if rtts else None,
        "rtt_ms_p50": q["p50"],
        "rtt_ms_p95": q["p95"],
        "rtt_ms_p99": q["p99"],
        "rtt_samples": len(rtts),
        "retransmits": None,
        "timeouts": None,
        "fct_s": None,
        "size_bytes": None,
        "bytes_delivered": 0,
        "ecn": False,
        "ecn_negotiated": None,
        "connected": None,
    }


def _flow_samples(flows, received: dict, end: float):
    """Every flow's bytes received by each step (:class:`aqmlab.flent.FlowSamples`) from the
    receivers' per-step counts: the per-flow throughput series of a Flent file."""
    from aqmlab.flent import FlowSamples

    samples = FlowSamples(STEP_S)
    per = {int(k): v.get("steps", []) for k, v in received.items()}
    nsteps = max((len(v) for v in per.values()), default=0)
    if nsteps == 0:
        nsteps = max(1, int(-(-end // STEP_S)))
    acc = [0] * len(flows)
    for k in range(nsteps):
        for f in flows:
            row = per.get(f.id)
            if row and k < len(row):
                acc[f.id] += row[k]
        samples.times.append(min((k + 1) * STEP_S, end))
        samples.delivered.append(list(acc))
    return samples
