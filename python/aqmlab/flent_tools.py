"""Flent data files from the output of known tools run by ``aqmlab shell --flent``: iputils
``ping -D`` (a ping series) and ``iperf3 -J`` (one throughput series per stream). The files are
written through :func:`aqmlab.flent.flent_document`, as the simulator's and the emulator's
(docs/shell.md, "Flent files").
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path

from aqmlab.errors import error

__all__ = ["TOOLS", "check_flent_command", "iperf3_flent", "ping_flent", "tool_flent"]

#: The tools whose output ``aqmlab shell --flent`` reads, with the option each needs.
TOOLS = {"ping": "-D", "iperf3": "-J"}

_REPLY = re.compile(r"^\[(\d+(?:\.\d+)?)\].*icmp_seq=(\d+).*time=([\d.]+) ms")
_SENT = re.compile(r"^(\d+) packets transmitted")


def _tool(argv: list[str]) -> str:
    return Path(argv[0]).name if argv else ""


def _has(argv: list[str], short: str, long: str | None = None) -> bool:
    """``short`` given alone or among combined short options (``-nD``), or ``long``."""
    letter = short[1]
    for a in argv[1:]:
        if a == long or a == short:
            return True
        if re.fullmatch(r"-[A-Za-z]+", a) and letter in a[1:]:
            return True
    return False


def check_flent_command(argv: list[str]) -> str:
    """The tool of ``argv`` if ``aqmlab shell --flent`` can read its output, else
    ``ValueError`` naming the command (one line).

    Parameters
    ----------
    argv : list of str
        The command.

    Returns
    -------
    str
        ``"ping"`` or ``"iperf3"``.
    """
    tool = _tool(argv)
    if tool not in TOOLS:
        raise error(
            "COMMAND",
            repr(tool),
            "--flent reads the output of ping (with -D) and iperf3 (with -J) only",
        )
    if tool == "ping" and not _has(argv, "-D"):
        raise error("COMMAND", repr(" ".join(argv)), "--flent needs ping's -D (timestamps)")
    if tool == "iperf3":
        if not _has(argv, "-J", "--json"):
            raise error("COMMAND", repr(" ".join(argv)), "--flent needs iperf3's -J (JSON)")
        if _has(argv, "-u", "--udp"):
            raise error("COMMAND", repr(" ".join(argv)), "--flent reads TCP iperf3 runs only")
        if "--bidir" in argv:
            raise error(
                "COMMAND", repr(" ".join(argv)), "--flent reads one-way iperf3 runs (no --bidir)"
            )
    return tool


def _interval(argv: list[str]) -> float:
    """ping's ``-i`` (default 1 s)."""
    for i, a in enumerate(argv[1:], 1):
        if a == "-i" and i + 1 < len(argv):
            return float(argv[i + 1])
        if a.startswith("-i") and len(a) > 2:
            return float(a[2:])
    return 1.0


def ping_flent(text: str, argv: list[str], title: str = "shell") -> dict:
    """Flent data (test ``ping``, series ``Ping (ms) ICMP``) from iputils ``ping -D`` output.

    Each reply line (``[EPOCH] ... icmp_seq=N ... time=RTT ms``) is a raw value stamped with
    its arrival, as Flent's own ping runner reads it; the step is ping's ``-i``; probes
    transmitted without a reply are ``LOST``.

    Parameters
    ----------
    text : str
        ping's standard output.
    argv : list of str
        The command (its ``-i``).
    title : str
        ``TITLE``.

    Returns
    -------
    dict
        The Flent data (:func:`aqmlab.flent.flent_document`).
    """
    from aqmlab.flent import flent_document, ping_steps

    replies, sent = [], None
    for line in text.splitlines():
        if m := _REPLY.match(line.strip()):
            replies.append((float(m.group(1)), int(m.group(2)), float(m.group(3))))
        elif m := _SENT.match(line.strip()):
            sent = int(m.group(1))
    if not replies:
        raise error("COMMAND", repr(" ".join(argv)), "ping printed no reply; no Flent file")
    step = _interval(argv)
    # the origin: the first probe's send time (its arrival less its RTT)
    t0 = replies[0][0] - replies[0][2] / 1e3
    back = sorted((t - t0, rtt) for t, _, rtt in replies)
    length = back[-1][0]
    x = [step * (k + 1) for k in range(max(1, math.ceil(length / step - 1e-9)))]
    name = "Ping (ms) ICMP"
    lost = (sent - len(replies)) if sent is not None else None
    return flent_document(
        "ping",
        title,
        datetime.fromtimestamp(t0, UTC),
        x,
        step,
        {name: ping_steps(back, x)},
        {name: [{"t": t0 + t, "val": r} for t, r in back]},
        {name: {"UNITS": "ms", "RUNNER": "ping", "LOST": lost}},
        length=length,
        note="aqmlab shell: iputils ping -D behind aqmlab's emulated link",
        aqmlab={"source": "shell", "command": list(argv)},
    )


def iperf3_flent(text: str, argv: list[str], title: str = "shell") -> dict:
    """Flent data (test ``tcp_nup``, or ``tcp_ndown`` for ``-R``) from ``iperf3 -J`` output:
    one series per stream, ``TCP upload::k`` (``TCP download::k``), its throughput in each of
    iperf3's intervals (``bits_per_second``, Mbits/s), the step iperf3's interval.

    Parameters
    ----------
    text : str
        iperf3's standard output (one JSON document).
    argv : list of str
        The command.
    title : str
        ``TITLE``.

    Returns
    -------
    dict
        The Flent data (:func:`aqmlab.flent.flent_document`).
    """
    from aqmlab.flent import flent_document

    try:
        doc = json.loads(text[text.index("{") :])
    except ValueError:
        raise error(
            "COMMAND", repr(" ".join(argv)), "iperf3 printed no JSON; no Flent file"
        ) from None
    if doc.get("error") or not doc.get("intervals"):
        why = doc.get("error") or "no intervals"
        raise error("COMMAND", repr(" ".join(argv)), f"iperf3: {why}; no Flent file")
    start = doc["start"]
    reverse = bool(start["test_start"].get("reverse"))
    base = "TCP download" if reverse else "TCP upload"
    t0 = float(start["timestamp"]["timesecs"])
    sockets: list[int] = []
    for iv in doc["intervals"]:
        for st in iv["streams"]:
            if st["socket"] not in sockets:
                sockets.append(st["socket"])
    names = {s: f"{base}::{k + 1}" for k, s in enumerate(sockets)}
    x = [float(iv["sum"]["end"]) for iv in doc["intervals"]]
    results = {n: [None] * len(x) for n in names.values()}
    raw: dict[str, list] = {n: [] for n in names.values()}
    for i, iv in enumerate(doc["intervals"]):
        for st in iv["streams"]:
            n = names[st["socket"]]
            v = st["bits_per_second"] / 1e6
            results[n][i] = v
            raw[n].append({"t": t0 + float(st["end"]), "val": v})
    first = doc["intervals"][0]["sum"]
    step = float(first["end"]) - float(first["start"])
    meta = {n: {"UNITS": "Mbits/s", "RUNNER": "iperf3"} for n in names.values()}
    n_streams = str(len(names))
    return flent_document(
        "tcp_ndown" if reverse else "tcp_nup",
        title,
        datetime.fromtimestamp(t0, UTC),
        x,
        step,
        results,
        raw,
        meta,
        length=x[-1],
        note="aqmlab shell: iperf3 -J behind aqmlab's emulated link",
        test_parameters={
            "upload_streams": "0" if reverse else n_streams,
            "download_streams": n_streams if reverse else "0",
        },
        aqmlab={"source": "shell", "command": list(argv)},
    )


def tool_flent(argv: list[str], text: str, egress: dict | None = None) -> dict:
    """Flent data from a known tool's output (:func:`ping_flent`, :func:`iperf3_flent`).

    Parameters
    ----------
    argv : list of str
        The command (its tool checked by :func:`check_flent_command`).
    text : str
        Its standard output.
    egress : dict, optional
        ``EGRESS_INFO``: the emulated link's qdisc.

    Returns
    -------
    dict
    """
    tool = check_flent_command(argv)
    data = ping_flent(text, argv) if tool == "ping" else iperf3_flent(text, argv)
    if egress:
        data["metadata"]["EGRESS_INFO"] = egress
    return data
