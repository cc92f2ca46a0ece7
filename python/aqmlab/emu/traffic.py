"""The traffic programs of an emulation: a bulk sender and a counting receiver of real kernel
TCP connections, and a UDP prober and its echo for the ping flows, each run inside its
namespace (``python -m aqmlab.emu.traffic send|recv|probe|echo``).

Each prints ``ready`` once set up (the receiver listening, the echo bound), then read the run's origin ``t0``
from stdin, a ``CLOCK_MONOTONIC`` instant in ns (the forwarder's clock), and work to
``t0 + duration``; they print one JSON document on stdout at the end.

The JSON arguments may be ``-``: the program then reads them as one line from stdin first.

* ``recv --port P --warmup W --duration D --starts JSON [--dscp JSON] [--stops JSON]
  [--step S]``: accepts connections on port ``P`` (every address of the namespace); each
  connection starts with its 4-byte flow id; counts payload bytes per flow, the bytes read
  before ``t0 + max(start, warmup)`` and by ``t0 + stop`` (``{id: stop_s}``), and the bytes
  read in each step ``[k S, (k + 1) S)`` after the origin (one clock read per ``recv``; ``S``
  is :data:`STEP_S` by default); a flow given a DSCP (``{id: dscp}``) has it set with
  ``IP_TOS`` once its id is read (its ACKs carry it). Output: ``{"flows": {id: {"bytes":
  total, "bytes_before_window": n, "bytes_at_stop": n, "steps": [n, ...]}}, "step": S}``.
* ``send --plan JSON``: opens each flow at ``t0 + start_s`` to ``dst:port`` with the congestion
  control ``cc`` (``TCP_CONGESTION`` on the socket, before connect) and the DSCP ``dscp``
  (``IP_TOS``, when not 0), writes as fast as the socket takes data, and resets it at
  ``t0 + stop_s`` (when not null; ``SO_LINGER`` 0, so nothing queued leaves after the stop).
  After the warm-up it samples ``TCP_INFO`` every 100 ms (smoothed RTT) and reads the
  retransmission counters at the warm-up and at the end (or the stop); a flow with
  ``cwnd_trace`` has its window sampled every ``cwnd_interval`` (the plan's, s) while it runs.
  Output: ``{"flows": {id: {"rtt_ms_mean", "rtt_ms_min", "ecn_negotiated", "retransmits",
  "timeouts", "connected"[, "cwnd": [[t_s, cwnd, ssthresh, srtt_ms], ...]]}}}`` (``t_s``
  from the origin, windows in segments, ``ssthresh`` null while infinite, ``srtt_ms`` null
  before an RTT sample). ``rtt_ms_min`` is the kernel's minimum RTT (``tcpi_min_rtt``);
  ``ecn_negotiated`` is ``TCPI_OPT_ECN`` (false after a retransmitted SYN fell back to
  Not-ECT); ``timeouts`` is null on kernels whose ``tcp_info`` lacks ``tcpi_total_rto``
  (before Linux 6.7).
* ``probe --plan JSON``: per ping flow (``id``, ``dst``, ``port``, ``start_s``, ``stop_s``,
  ``interval``, ``size``, ``dscp``) a UDP socket of its own (``IP_TOS`` for the DSCP) sends a
  probe of ``size`` IP bytes (flow id and sequence number, padded) every ``interval`` from
  ``t0 + start_s`` while before the stop and the end; an echo's RTT is the kernel's receive
  timestamp of it (``SO_TIMESTAMPNS``, ``CLOCK_REALTIME``) minus the clock read just before
  its probe was sent. Output: ``{"pings": {id: {"seq", "time_s", "rtt_ms"}}}`` (``time_s``
  the send time after the origin; ``rtt_ms`` null without an echo by the end).
* ``echo --port P --duration D --addr A [--addr B ...]``: one UDP socket bound to each
  address sends every datagram back to its sender at once, with the DS field it came with
  (``IP_RECVTOS``, then ``IP_TOS`` on the reply), until ``t0 + D``. Output: ``{"echoed": n}``.

All run under ``SCHED_FIFO`` at :data:`FIFO_PRIORITY`, below the forwarder's 10 (the kernel's
real-time throttling keeps 5 % of each second for other tasks; all sleep in ``select``
between socket events). At normal priority, other load on a small machine delayed them enough
to change the queue the kernel's flows built (``validation/emu/RESULTS.md``, row 9). Each
output carries ``"realtime"``: whether the priority was granted.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import struct
import sys
import time

#: ``struct tcp_info`` offsets (linux/tcp.h): tcpi_rtt (µs), tcpi_total_retrans,
#: tcpi_min_rtt (µs), tcpi_total_rto (u16, Linux >= 6.7).
_RTT, _TOTAL_RETRANS, _MIN_RTT, _TOTAL_RTO = 68, 100, 148, 240
#: tcpi_snd_ssthresh and tcpi_snd_cwnd (segments); Linux's infinite ssthresh
#: (``TCP_INFINITE_SSTHRESH``).
_SSTHRESH, _CWND, _INFINITE_SSTHRESH = 76, 80, 0x7FFFFFFF
#: ``tcpi_options`` (byte 5) and its ``TCPI_OPT_ECN`` bit: the connection negotiated ECN.
_OPTIONS, _OPT_ECN = 5, 0x08
_INFO_LEN = 248
_CHUNK = 1 << 18
#: ``SCHED_FIFO`` priority of the traffic programs (the forwarder thread has 10).
FIFO_PRIORITY = 5
#: The receiver's sampling step of per-flow bytes, s (Flent's ``STEP_SIZE``).
STEP_S = 0.2
#: A probe's payload: flow id and sequence number (the UDP payload is padded to the group's
#: ``size`` less the 28 bytes of IPv4 and UDP headers).
_PROBE = struct.Struct("!II")
#: ``SO_TIMESTAMPNS`` (= ``SCM_TIMESTAMPNS``; ``include/uapi/asm-generic/socket.h``, the value
#: of x86, arm and most architectures; Python's socket module does not name it): the kernel
#: stamps each datagram it receives with ``CLOCK_REALTIME``, a ``struct timespec``.
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
#: The smallest probe the emulator sends, IP bytes (headers and the payload above).
MIN_PROBE_SIZE = 28 + _PROBE.size


def _realtime() -> bool:
    """Run this process under ``SCHED_FIFO`` at :data:`FIFO_PRIORITY`; False if refused."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(FIFO_PRIORITY))
    except (OSError, AttributeError):
        return False
    return True


def _now() -> int:
    return time.monotonic_ns()


def _sleep_until(t_ns: int) -> None:
    d = (t_ns - _now()) / 1e9
    if d > 0:
        time.sleep(d)


def _origin() -> int:
    """Say ``ready`` and read the run's origin (ns) from stdin."""
    print("ready", flush=True)
    return int(sys.stdin.readline())


def receive(
    port: int,
    warmup: float,
    duration: float,
    starts: dict[int, float],
    dscp: dict[int, int] | None = None,
    stops: dict[int, float] | None = None,
    step: float = STEP_S,
) -> dict:
    """Count bytes per flow until ``t0 + duration``, in total and per ``step`` (see the
    module doc).

    Parameters
    ----------
    port : int
        TCP port to listen on.
    warmup : float
        Seconds after the origin before a flow's bytes count.
    duration : float
        Seconds after the origin at which counting ends.
    starts : dict of int to float
        Each flow's start (s after the origin).
    dscp : dict of int to int, optional
        The DSCP of some flows: set with ``IP_TOS`` on their sockets once their flow id is
        read, so their ACKs carry it (the handshake's and the first ACKs do not).
    stops : dict of int to float, optional
        The stop of some flows (s after the origin): their bytes read by then are
        ``bytes_at_stop``.
    step : float
        The sampling step of ``steps``, seconds.

    Returns
    -------
    dict
        The receiver's report (see the module doc).
    """
    dscp = dscp or {}
    stops = stops or {}
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1024)
    srv.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ, None)
    t0 = _origin()
    end = t0 + int(duration * 1e9)
    total: dict[int, int] = {}
    before: dict[int, int] = {}
    # per flow: the instant its window opens
    opens = {f: t0 + int(max(s, warmup) * 1e9) for f, s in starts.items()}
    # per flow: its stop, and the bytes read by then
    closes = {f: t0 + int(s * 1e9) for f, s in stops.items() if s < duration}
    at_stop: dict[int, int] = {}
    # per flow: the bytes read in each step [k step, (k + 1) step) after the origin
    step_ns = max(int(round(step * 1e9)), 1)
    nsteps = max(1, -(-int(duration * 1e9) // step_ns))
    steps: dict[int, list[int]] = {f: [0] * nsteps for f in starts}
    pending: dict[socket.socket, bytes] = {}
    buf = bytearray(_CHUNK)

    def count(fid: int, n: int) -> None:
        total[fid] = total.get(fid, 0) + n
        if fid in steps:
            k = (_now() - t0) // step_ns  # one clock read per recv
            steps[fid][min(max(k, 0), nsteps - 1)] += n

    while True:
        now = _now()
        for f, t in opens.items():
            if f not in before and now >= t:
                before[f] = total.get(f, 0)
        for f, t in closes.items():
            if f not in at_stop and now >= t:
                at_stop[f] = total.get(f, 0)
        if now >= end:
            break
        nxt = min(
            [end, *(t for f, t in opens.items() if f not in before),
             *(t for f, t in closes.items() if f not in at_stop)]
        )  # fmt: skip
        for key, _ in sel.select(timeout=max(0.0, (nxt - now) / 1e9)):
            s = key.fileobj
            if s is srv:
                try:
                    c, _ = srv.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                pending[c] = b""
                sel.register(c, selectors.EVENT_READ, None)
                continue
            try:
                n = s.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            if key.data is None:  # the 4-byte flow id first
                head = pending[s] + bytes(buf[:n])
                if n == 0:
                    sel.unregister(s)
                    s.close()
                    pending.pop(s, None)
                    continue
                if len(head) < 4:
                    pending[s] = head
                    continue
                fid = struct.unpack("!I", head[:4])[0]
                if dscp.get(fid):
                    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, dscp[fid] << 2)
                pending.pop(s, None)
                sel.modify(s, selectors.EVENT_READ, fid)
                count(fid, len(head) - 4)
                continue
            if n == 0:
                sel.unregister(s)
                s.close()
                continue
            count(key.data, n)
    return {
        "flows": {
            str(f): {
                "bytes": total.get(f, 0),
                "bytes_before_window": before.get(f, total.get(f, 0)),
                "bytes_at_stop": at_stop.get(f, total.get(f, 0)),
                "steps": steps[f],
            }
            for f in starts
        },
        "step": step,
    }


def _info(s: socket.socket) -> bytes | None:
    try:
        return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _INFO_LEN)
    except OSError:
        return None


def _window(info: bytes, t: float) -> list:
    """``[t, cwnd, ssthresh, srtt_ms]`` from a ``TCP_INFO`` (null ``ssthresh`` while infinite,
    null ``srtt_ms`` before an RTT sample)."""
    ssthresh, cwnd = struct.unpack_from("II", info, _SSTHRESH)
    rtt = struct.unpack_from("I", info, _RTT)[0]
    return [
        round(t, 9),
        cwnd,
        None if ssthresh >= _INFINITE_SSTHRESH else ssthresh,
        rtt / 1e3 if rtt else None,
    ]


def _final(x: dict) -> dict:
    """A flow's report from its socket's ``TCP_INFO`` now (at its stop or the end)."""
    info = _info(x["s"]) if x["s"] is not None else None
    retr = rto = min_rtt = ecn = None
    if info is not None:
        ecn = bool(info[_OPTIONS] & _OPT_ECN)
    if info is not None and len(info) >= _MIN_RTT + 4:
        min_rtt = struct.unpack_from("I", info, _MIN_RTT)[0] / 1e3
    if info is not None and x["r0"] is not None:
        retr = struct.unpack_from("I", info, _TOTAL_RETRANS)[0] - x["r0"]
        if x["rto0"] is not None:
            rto = struct.unpack_from("H", info, _TOTAL_RTO)[0] - x["rto0"]
    return {
        "rtt_ms_mean": sum(x["rtt"]) / len(x["rtt"]) if x["rtt"] else None,
        "rtt_ms_min": min_rtt,
        "ecn_negotiated": ecn,
        "retransmits": retr,
        "timeouts": rto,
        "connected": x["connected"],
        **({"cwnd": x["cwnd"]} if "cwnd" in x else {}),
    }


def send(plan: dict) -> dict:
    """Run the bulk flows of ``plan`` (see the module doc).

    Parameters
    ----------
    plan : dict
        The flows, warm-up and duration (see the module doc).

    Returns
    -------
    dict
        The sender's report (see the module doc).
    """
    t0 = _origin()
    warm = t0 + int(plan["warmup"] * 1e9)
    end = t0 + int(plan["duration"] * 1e9)
    flows = sorted(plan["flows"], key=lambda f: f["start_s"])
    sel = selectors.DefaultSelector()
    data = memoryview(bytes(_CHUNK))
    socks: dict[int, socket.socket] = {}
    st = {
        f["id"]: {"rtt": [], "r0": None, "rto0": None, "connected": False, "s": None} for f in flows
    }
    traced = {f["id"] for f in flows if f.get("cwnd_trace")}
    cw_step = int(float(plan.get("cwnd_interval", 0.01)) * 1e9)
    next_cw = t0 if traced else None
    next_sample = warm
    i = 0
    # flows with a stop before the end: (instant, id), earliest first
    stops = sorted(
        (t0 + int(f["stop_s"] * 1e9), f["id"])
        for f in flows
        if f.get("stop_s") is not None and f["stop_s"] < plan["duration"]
    )
    done: dict[int, dict] = {}
    while True:
        now = _now()
        if now >= end:
            break
        while stops and now >= stops[0][0]:
            fid = stops.pop(0)[1]
            s = socks.pop(fid, None)
            done[fid] = _final(st[fid])
            if s is not None:
                # the flow ends at its stop: reset, so nothing it queued is sent after it
                try:
                    sel.unregister(s)
                except (KeyError, ValueError):
                    pass
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
        while i < len(flows) and now >= t0 + int(flows[i]["start_s"] * 1e9):
            f = flows[i]
            if f["id"] in done:  # stopped before it started
                i += 1
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, f["cc"].encode())
            if f.get("dscp"):
                # the DS field of every packet, the SYN included (the kernel keeps the ECN bits)
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, f["dscp"] << 2)
            s.setblocking(False)
            s.connect_ex((f["dst"], f["port"]))
            st[f["id"]]["s"] = s
            socks[f["id"]] = s
            sel.register(s, selectors.EVENT_WRITE, [f["id"], struct.pack("!I", f["id"])])
            i += 1
        if now >= next_sample:
            for fid, s in socks.items():
                info = _info(s)
                if info is None or len(info) < _TOTAL_RETRANS + 4:
                    continue
                x = st[fid]
                if x["r0"] is None:
                    x["r0"] = struct.unpack_from("I", info, _TOTAL_RETRANS)[0]
                    if len(info) >= _TOTAL_RTO + 2:
                        x["rto0"] = struct.unpack_from("H", info, _TOTAL_RTO)[0]
                rtt = struct.unpack_from("I", info, _RTT)[0]
                if rtt:
                    x["rtt"].append(rtt / 1e3)
            next_sample = max(next_sample + 100_000_000, now)
        if next_cw is not None and now >= next_cw:
            for fid in traced:
                if fid in socks and (info := _info(socks[fid])) is not None:
                    st[fid].setdefault("cwnd", []).append(_window(info, (next_cw - t0) / 1e9))
            next_cw += cw_step * max(1, (now - next_cw) // cw_step + 1)
        wake = [end, next_sample] + ([next_cw] if next_cw is not None else [])
        if stops:
            wake.append(stops[0][0])
        if i < len(flows):
            wake.append(t0 + int(flows[i]["start_s"] * 1e9))
        for key, _ in sel.select(timeout=max(0.0, (min(wake) - _now()) / 1e9)):
            s, item = key.fileobj, key.data
            try:
                if item[1]:
                    n = s.send(item[1])
                    item[1] = item[1][n:]
                    st[item[0]]["connected"] = True
                else:
                    s.send(data)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                sel.unregister(s)
    out = {str(fid): done[fid] if fid in done else _final(x) for fid, x in st.items()}
    for s in socks.values():
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    return {"flows": out}


def _realtime_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def probe(plan: dict) -> dict:
    """Send the ping flows' probes of ``plan`` and time their echoes (see the module doc).

    Parameters
    ----------
    plan : dict
        ``duration`` and ``probes``: per ping flow ``id``, ``dst``, ``port``, ``start_s``,
        ``stop_s`` (or null), ``interval`` (s), ``size`` (IP bytes), ``dscp``.

    Returns
    -------
    dict
        ``{"pings": {id: {"seq": [...], "time_s": [...], "rtt_ms": [...]}}}`` (``rtt_ms``
        null: no echo by the end).
    """
    t0 = _origin()
    end = t0 + int(plan["duration"] * 1e9)
    sel = selectors.DefaultSelector()
    st = {}
    for f in plan["probes"]:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if f.get("dscp"):
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, f["dscp"] << 2)
        # the kernel's receive time of each echo (CLOCK_REALTIME), not this program's wake-up
        try:
            s.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        except OSError:
            pass  # then the echo is stamped when this program reads it
        s.setblocking(False)
        s.connect((f["dst"], f["port"]))
        stop = f.get("stop_s")
        last = t0 + int(min(plan["duration"], stop if stop is not None else 1e18) * 1e9)
        st[f["id"]] = {
            "s": s,
            "next": t0 + int(f["start_s"] * 1e9),
            "last": last,
            "interval": max(int(round(f["interval"] * 1e9)), 1),
            "pad": bytes(max(0, f["size"] - MIN_PROBE_SIZE)),
            "sent_mono": [],
            "sent_real": [],
            "rtt": [],
        }
        sel.register(s, selectors.EVENT_READ, f["id"])
    cmsg_room = socket.CMSG_SPACE(16)
    while True:
        now = _now()
        if now > end:
            break
        for fid, x in st.items():
            # every probe due, at most one per flow and pass (a late one is sent at once)
            if x["next"] <= now and x["next"] <= x["last"]:
                seq = len(x["sent_mono"])
                payload = _PROBE.pack(fid, seq) + x["pad"]
                x["sent_mono"].append(_now())
                x["sent_real"].append(_realtime_ns())
                x["rtt"].append(None)
                try:
                    x["s"].send(payload)
                except OSError:
                    pass
                x["next"] += x["interval"]
        due = [x["next"] for x in st.values() if x["next"] <= x["last"]]
        wake = min([end + 1, *due])
        for key, _ in sel.select(timeout=max(0.0, (wake - _now()) / 1e9)):
            x = st[key.data]
            while True:
                try:
                    data, anc, _, _ = key.fileobj.recvmsg(2048, cmsg_room)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    break
                if len(data) < _PROBE.size:
                    continue
                fid, seq = _PROBE.unpack_from(data)
                if fid != key.data or seq >= len(x["rtt"]) or x["rtt"][seq] is not None:
                    continue
                at = None
                for level, kind, val in anc:
                    if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
                        sec, nsec = struct.unpack("qq", val[:16])
                        at = sec * 1_000_000_000 + nsec
                if at is None:
                    at = _realtime_ns()
                x["rtt"][seq] = (at - x["sent_real"][seq]) / 1e6
    out = {}
    for fid, x in st.items():
        x["s"].close()
        out[str(fid)] = {
            "seq": list(range(len(x["sent_mono"]))),
            "time_s": [(t - t0) / 1e9 for t in x["sent_mono"]],
            "rtt_ms": x["rtt"],
        }
    return {"pings": out}


def echo(port: int, duration: float, addrs: list[str]) -> dict:
    """Echo every UDP datagram on ``port`` of ``addrs`` to its sender with the DS field it
    came with, until ``t0 + duration`` (see the module doc).

    Parameters
    ----------
    port : int
        The UDP port.
    duration : float
        Seconds after the origin at which it stops.
    addrs : list of str
        The addresses the probes are sent to: one socket bound to each, so that each echo
        leaves from the address its probe was sent to.

    Returns
    -------
    dict
        ``{"echoed": n}``.
    """
    sel = selectors.DefaultSelector()
    for a in dict.fromkeys(addrs):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((a, port))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    t0 = _origin()
    end = t0 + int(duration * 1e9)
    n = 0
    room = socket.CMSG_SPACE(4)
    while _now() < end:
        for key, _ in sel.select(timeout=max(0.0, (end - _now()) / 1e9)):
            n += _echo_all(key.fileobj, room)
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    return {"echoed": n}


def _echo_all(s: socket.socket, room: int) -> int:
    """Echo every datagram waiting on ``s``; how many."""
    n = 0
    while True:
        try:
            data, anc, _, addr = s.recvmsg(65536, room)
        except (BlockingIOError, InterruptedError):
            break
        tos = 0
        for level, kind, val in anc:
            if level == socket.IPPROTO_IP and kind == socket.IP_TOS:
                tos = val[0] & 0xFC  # the DSCP; the echo is Not-ECT
        try:
            s.sendmsg([data], [(socket.IPPROTO_IP, socket.IP_TOS, bytes([tos]))], 0, addr)
            n += 1
        except OSError:
            pass
    return n


def _raise_open_files() -> None:
    """One socket per flow: take the open-file limit up to the hard limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv: list[str] | None = None) -> None:
    """The ``recv`` and ``send`` programs (``python -m aqmlab.emu.traffic recv|send``):
    run one and print its JSON report on stdout.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).
    """
    p = argparse.ArgumentParser(prog="python -m aqmlab.emu.traffic")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--warmup", type=float, required=True)
    r.add_argument("--duration", type=float, required=True)
    r.add_argument("--starts", required=True, help="JSON {flow id: start_s}, or - for stdin")
    r.add_argument("--dscp", help="JSON {flow id: dscp}, or - for stdin (after --starts)")
    r.add_argument("--stops", help="JSON {flow id: stop_s}, or - for stdin (after --dscp)")
    r.add_argument("--step", type=float, default=STEP_S)
    s = sub.add_parser("send")
    s.add_argument("--plan", required=True, help="JSON plan, or - for stdin (one line)")
    pr = sub.add_parser("probe")
    pr.add_argument("--plan", required=True, help="JSON plan, or - for stdin (one line)")
    e = sub.add_parser("echo")
    e.add_argument("--port", type=int, required=True)
    e.add_argument("--duration", type=float, required=True)
    e.add_argument("--addr", action="append", required=True, help="an address to echo on")
    a = p.parse_args(argv)
    realtime = _realtime()
    _raise_open_files()
    if a.cmd == "recv":
        text = sys.stdin.readline() if a.starts == "-" else a.starts
        starts = {int(k): float(v) for k, v in json.loads(text).items()}
        marks = None
        if a.dscp is not None:
            text = sys.stdin.readline() if a.dscp == "-" else a.dscp
            marks = {int(k): int(v) for k, v in json.loads(text).items()}
        stops = None
        if a.stops is not None:
            text = sys.stdin.readline() if a.stops == "-" else a.stops
            stops = {int(k): float(v) for k, v in json.loads(text).items()}
        res = receive(a.port, a.warmup, a.duration, starts, marks, stops, a.step)
    elif a.cmd == "echo":
        res = echo(a.port, a.duration, a.addr)
    else:
        plan = json.loads(sys.stdin.readline() if a.plan == "-" else a.plan)
        res = send(plan) if a.cmd == "send" else probe(plan)
    res["realtime"] = realtime
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
