"""The traffic programs of an emulation: a bulk sender and a counting receiver of real kernel
TCP connections, each run inside its namespace (``python -m aqmlab.emu.traffic send|recv``).

Both print ``ready`` once set up (the receiver listening), then read the run's origin ``t0``
from stdin, a ``CLOCK_MONOTONIC`` instant in ns (the forwarder's clock), and work to
``t0 + duration``; they print one JSON document on stdout at the end.

The JSON arguments may be ``-``: the program then reads them as one line from stdin first.

* ``recv --port P --warmup W --duration D --starts JSON [--dscp JSON]``: accepts connections on
  port ``P`` (every address of the namespace); each connection starts with its 4-byte flow id;
  counts payload bytes per flow, and the bytes read before ``t0 + max(start, warmup)``; a flow
  given a DSCP (``{id: dscp}``) has it set with ``IP_TOS`` once its id is read (its ACKs carry
  it). Output: ``{"flows": {id: {"bytes": total, "bytes_before_window": n}}}``.
* ``send --plan JSON``: opens each flow at ``t0 + start_s`` to ``dst:port`` with the congestion
  control ``cc`` (``TCP_CONGESTION`` on the socket, before connect) and the DSCP ``dscp``
  (``IP_TOS``, when not 0), and writes as fast as the
  socket takes data. After the warm-up it samples ``TCP_INFO`` every 100 ms (smoothed RTT)
  and reads the retransmission counters at the warm-up and at the end. Output:
  ``{"flows": {id: {"rtt_ms_mean", "rtt_ms_min", "ecn_negotiated", "retransmits", "timeouts",
  "connected"}}}``. ``rtt_ms_min`` is the kernel's minimum RTT (``tcpi_min_rtt``);
  ``ecn_negotiated`` is ``TCPI_OPT_ECN`` (false after a retransmitted SYN fell back to
  Not-ECT); ``timeouts`` is null on kernels whose ``tcp_info`` lacks ``tcpi_total_rto``
  (before Linux 6.7).

Both run under ``SCHED_FIFO`` at :data:`FIFO_PRIORITY`, below the forwarder's 10 (the kernel's
real-time throttling keeps 5 % of each second for other tasks; both sleep in ``select``
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
#: ``tcpi_options`` (byte 5) and its ``TCPI_OPT_ECN`` bit: the connection negotiated ECN.
_OPTIONS, _OPT_ECN = 5, 0x08
_INFO_LEN = 248
_CHUNK = 1 << 18
#: ``SCHED_FIFO`` priority of the traffic programs (the forwarder thread has 10).
FIFO_PRIORITY = 5


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
) -> dict:
    """Count bytes per flow until ``t0 + duration`` (see the module doc).

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

    Returns
    -------
    dict
        The receiver's report (see the module doc).
    """
    dscp = dscp or {}
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
    pending: dict[socket.socket, bytes] = {}
    buf = bytearray(_CHUNK)
    while True:
        now = _now()
        for f, t in opens.items():
            if f not in before and now >= t:
                before[f] = total.get(f, 0)
        if now >= end:
            break
        nxt = min([end, *(t for f, t in opens.items() if f not in before)])
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
                total[fid] = total.get(fid, 0) + len(head) - 4
                continue
            if n == 0:
                sel.unregister(s)
                s.close()
                continue
            total[key.data] = total.get(key.data, 0) + n
    return {
        "flows": {
            str(f): {
                "bytes": total.get(f, 0),
                "bytes_before_window": before.get(f, total.get(f, 0)),
            }
            for f in starts
        }
    }


def _info(s: socket.socket) -> bytes | None:
    try:
        return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _INFO_LEN)
    except OSError:
        return None


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
    next_sample = warm
    i = 0
    while True:
        now = _now()
        if now >= end:
            break
        while i < len(flows) and now >= t0 + int(flows[i]["start_s"] * 1e9):
            f = flows[i]
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
        wake = [end, next_sample]
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
    out = {}
    for fid, x in st.items():
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
        out[str(fid)] = {
            "rtt_ms_mean": sum(x["rtt"]) / len(x["rtt"]) if x["rtt"] else None,
            "rtt_ms_min": min_rtt,
            "ecn_negotiated": ecn,
            "retransmits": retr,
            "timeouts": rto,
            "connected": x["connected"],
        }
    for s in socks.values():
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    return {"flows": out}


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
    s = sub.add_parser("send")
    s.add_argument("--plan", required=True, help="JSON plan, or - for stdin (one line)")
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
        res = receive(a.port, a.warmup, a.duration, starts, marks)
    else:
        res = send(json.loads(sys.stdin.readline() if a.plan == "-" else a.plan))
    res["realtime"] = realtime
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
