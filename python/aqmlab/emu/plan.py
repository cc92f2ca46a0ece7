"""The traffic plan of an emulation, from a validated scenario: which flows run, when, with
which kernel congestion control and ECN, and to which receiver address.

The emulator runs dumbbell scenarios whose flow groups are long-lived TCP (``kind = "tcp"``
without ``size``; a ``stop`` ends the flow) and ping probers (``kind = "ping"``). Start times follow the simulator's rule (``start`` plus a
uniform jitter, 1 s by default when ``start`` is absent), drawn from the scenario's seed.
The simulator's congestion-control names map to the kernel's (``newreno`` and ``reno`` are
Linux ``reno``, which is NewReno loss recovery with SACK; ``cubic`` is ``cubic``; ``bbr`` is
``bbr``). A kernel algorithm the simulator lacks (``westwood``) is named in a scenario file as
any other (``cc = "westwood"``): :func:`take_kernel_cc` takes such names out of the document
before the simulator's schema validates it and hands them to :func:`plan_flows`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from aqmlab.emu.netns import SND_ADDR, group_addr
from aqmlab.errors import error

__all__ = [
    "FlowPlan",
    "available_cc",
    "check_ping_group",
    "plan_flows",
    "kernel_cc_name",
    "take_kernel_cc",
    "PORT",
    "PING_PORT",
]

#: The receivers' TCP port.
PORT = 5201
#: The echo programs' UDP port (the ping flows' probes).
PING_PORT = 5202
#: Most flow groups (one receiver address each).
MAX_GROUPS = 250


def _registry() -> list[dict]:
    """The simulator's congestion controllers (``aqmlab._core.congestion_controllers``)."""
    from aqmlab import _core

    return _core.congestion_controllers()


#: The simulator's names mapped to the kernel's modules of the same algorithms.
_SIM_TO_KERNEL = {c["name"]: c["kernel"] for c in _registry() if c["kernel"]}
#: Congestion controls the simulator's schema knows.
_SIM_CC = tuple(c["name"] for c in _registry())


def take_kernel_cc(data: dict) -> dict[int, str]:
    """Replace, in a scenario document, each flow group's ``cc`` the simulator does not know by
    ``"cubic"`` (a placeholder the schema accepts) and return ``{group index: name}``.

    Parameters
    ----------
    data : dict
        The scenario document (changed in place).

    Returns
    -------
    dict of int to str
        The names replaced, by group index.
    """
    out: dict[int, str] = {}
    groups = data.get("flows")
    for i, g in enumerate(groups if isinstance(groups, list) else []):
        cc = g.get("cc") if isinstance(g, dict) else None
        if isinstance(cc, str) and cc.strip().lower() not in _SIM_CC:
            out[i] = cc.strip()
            g["cc"] = "cubic"
    return out


def available_cc() -> list[str]:
    """The congestion controls the kernel offers (``net.ipv4.tcp_available_congestion_control``).

    Returns
    -------
    list of str
        Empty when the file cannot be read.
    """
    p = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    try:
        return p.read_text().split()
    except OSError:
        return []


def missing_cc(given: str, avail: list[str]) -> str:
    """Why the kernel cannot run the congestion control ``given`` (for an error line).

    Parameters
    ----------
    given : str
        A simulator or kernel name.
    avail : list of str
        The kernel's congestion controls (:func:`available_cc`).

    Returns
    -------
    str
    """
    offers = f"the kernel offers {', '.join(avail) or 'none'}"
    if given.strip().lower() == "bbr3":
        # Google's BBRv3 release registers itself as "bbr": by name it cannot be told from
        # BBRv1, so only a module named bbr3 counts.
        return (
            f"this kernel has no BBRv3 (no bbr3 in net.ipv4.tcp_available_congestion_control; "
            f"{offers}; a BBRv3 kernel whose module is named bbr, as Google's release, cannot "
            "be told from BBRv1: run it as --cc bbr)"
        )
    return f"{offers} (net.ipv4.tcp_available_congestion_control)"


def kernel_cc_name(name: str) -> str:
    """The kernel's name for a congestion control given by the user (simulator or kernel name).

    Parameters
    ----------
    name : str
        A simulator or kernel name (``newreno`` is the kernel's ``reno``).

    Returns
    -------
    str
    """
    n = name.strip().lower()
    return _SIM_TO_KERNEL.get(n, n)


def check_ping_group(g: int, grp: dict) -> None:
    """``ValueError`` naming the key if the emulator cannot run ping group ``g``.

    Parameters
    ----------
    g : int
        The group's index.
    grp : dict
        The group (normalised).
    """
    from aqmlab.emu.traffic import MIN_PROBE_SIZE

    size = int(grp.get("size", 64))
    if size < MIN_PROBE_SIZE:
        raise error(
            f"flows[{g}].size",
            size,
            f"the emulator's probes carry a flow id and a sequence number: at least "
            f"{MIN_PROBE_SIZE} bytes",
        )
    for key in ("src", "dst", "path"):
        if grp.get(key) is not None:
            raise error(f"flows[{g}].{key}", repr(grp[key]), "not emulated (dumbbell hosts only)")


@dataclass(frozen=True)
class FlowPlan:
    """One flow: id (results order), group, start (s after the origin), kernel cc, ECN,
    receiver address.

    Attributes
    ----------
    id : int
        The flow's number (the results' order).
    group : int
        Its flow group (position in the scenario's ``flows``).
    start_s : float
        Start, seconds after the origin.
    cc : str
        The kernel's congestion control.
    ecn : bool
        ECN-capable.
    dst : str
        The receiver's IPv4 address.
    reverse : bool
        The group sends the other way (``direction = "reverse"``): the sender runs in the
        receivers' namespace and sends to the senders' address (``SND_ADDR``) across the
        reverse link.
    dscp : int
        The group's DSCP (0..63), set with ``IP_TOS`` on both ends' sockets.
    kind : str
        ``tcp`` (a bulk TCP flow) or ``ping`` (a UDP prober, :func:`aqmlab.emu.traffic.probe`).
    stop_s : float or None
        Its stop, seconds after the origin (null: the end of the run).
    interval : float
        A prober's time between probes, s (0 for TCP).
    size : int
        A prober's IP size of a probe and of its echo, bytes (0 for TCP).
    cwnd_trace : bool
        Its group asked for a congestion-window trace (``cwnd_trace``): the sender samples the
        kernel's ``TCP_INFO`` every ``cwnd_interval``.
    """

    id: int
    group: int
    start_s: float
    cc: str
    ecn: bool
    dst: str
    reverse: bool = False
    dscp: int = 0
    kind: str = "tcp"
    stop_s: float | None = None
    interval: float = 0.0
    size: int = 0
    cwnd_trace: bool = False


def plan_flows(
    normalized: dict, kernel_cc: str | None = None, group_cc: dict[int, str] | None = None
) -> list[FlowPlan]:
    """The flows of a normalised scenario (``Scenario.normalized``); ``ValueError`` naming the
    key for what the emulator cannot run. ``group_cc`` gives some groups' algorithms (from
    :func:`take_kernel_cc`); ``kernel_cc`` replaces every group's.

    Parameters
    ----------
    normalized : dict
        ``Scenario.normalized``.
    kernel_cc : str, optional
        Every group's kernel congestion control.
    group_cc : dict of int to str, optional
        Some groups' kernel congestion controls by group index.

    Returns
    -------
    list of FlowPlan
    """
    if "dumbbell" not in normalized:
        raise error("topology", None, "the emulator runs dumbbell scenarios ([dumbbell]) only")
    groups = normalized["flows"]
    if len(groups) > MAX_GROUPS:
        raise error("flows", None, f"{len(groups)} groups; the emulator takes at most {MAX_GROUPS}")
    avail = available_cc()
    rng = random.Random(normalized.get("seed", 1))
    out: list[FlowPlan] = []
    ecn_back: dict[str, object] = {}  # the reverse groups' ecn (one route back)
    for g, grp in enumerate(groups):
        kind = grp.get("kind", "tcp")
        if kind not in ("tcp", "ping"):
            raise error(
                f"flows[{g}].kind",
                repr(kind),
                "the emulator runs long-lived TCP flows and ping probers only",
            )
        if kind == "tcp" and grp.get("size") is not None:
            raise error(
                f"flows[{g}].size", repr(grp["size"]), "the emulator runs long-lived flows only"
            )
        ed = grp.get("extra_delay")
        if ed is not None and any(float(v) for v in (ed if isinstance(ed, list) else [ed])):
            # every group shares the link's one propagation delay (rtt / 2 each way)
            raise error(
                f"flows[{g}].extra_delay",
                ed,
                "not emulated (the emulated link has one propagation delay for every flow)",
            )
        if kind == "ping":
            check_ping_group(g, grp)
            cc = None
        else:
            given = kernel_cc or (group_cc or {}).get(g) or grp.get("cc", "newreno")
            cc = kernel_cc_name(given)
            if cc not in avail:
                raise error(f"flows[{g}].cc", repr(given), missing_cc(given, avail))
        start = grp.get("start")
        jitter = grp.get("start_jitter")
        if jitter is None:
            jitter = 1.0 if start is None else 0.0
        reverse = grp.get("direction", "forward") == "reverse"
        if (
            reverse
            and kind == "tcp"
            and grp.get("ecn") != ecn_back.setdefault("ecn", grp.get("ecn"))
        ):
            raise error(
                f"flows[{g}].ecn",
                grp.get("ecn"),
                "the emulator's reverse groups share one route back (ECN is chosen per route): "
                "give them the same ecn",
            )
        for _ in range(int(grp.get("count", 1))):
            out.append(
                FlowPlan(
                    id=len(out),
                    group=g,
                    start_s=float(start or 0.0) + rng.uniform(0.0, float(jitter)),
                    cc=cc,
                    ecn=bool(grp.get("ecn", False)),
                    dst=SND_ADDR if reverse else group_addr(g),
                    reverse=reverse,
                    dscp=int(grp.get("dscp", 0)),
                    kind=kind,
                    stop_s=None if grp.get("stop") is None else float(grp["stop"]),
                    interval=float(grp.get("interval", 0.2)) if kind == "ping" else 0.0,
                    size=int(grp.get("size", 64)) if kind == "ping" else 0,
                    cwnd_trace=kind == "tcp" and bool(grp.get("cwnd_trace", False)),
                )
            )
    return out
