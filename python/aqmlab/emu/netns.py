"""The emulator's network namespaces and devices: creation, configuration and removal.

A run with process id ``PID`` owns two namespaces, ``aqmlab-PID-snd`` (the senders) and
``aqmlab-PID-rcv`` (the receivers), each holding one TUN device (``aqmPIDs`` / ``aqmPIDr``)
whose other end is the forwarder in the calling process. Addresses are private ones used only
inside these namespaces (``10.203.0.1`` for the senders, ``10.203.1.G`` for the receivers of
flow group ``G - 1``); nothing is routed to other hosts, and the root namespace gets no address
or route.

Removal (:meth:`Testbed.close`) kills every process still inside the namespaces and deletes
them; the TUN devices vanish when the forwarder closes them. A run killed with SIGKILL leaves
its namespaces behind: :func:`remove_stale` (called by every run) deletes the namespaces of
process ids that no longer exist.

Pinned sysctls (per namespace; ``Testbed.SYSCTLS``): ``net.ipv4.tcp_ecn = 2`` in the senders'
namespace, so a connection asks for ECN only when its route says ``features ecn`` (the
ECN-enabled flow groups), ``net.ipv4.tcp_ecn_fallback = 0`` there (a retransmitted SYN still
asks for ECN: the default falls back to Not-ECT, RFC 3168 §6.1.1.1, which turned flows of ECN
groups that started into a full buffer into Not-ECT ones), ``net.ipv4.tcp_no_metrics_save = 1`` (no cached ssthresh between
flows or runs), IPv6 off on the devices (no router solicitations through the bottleneck).
Everything else is the kernel's default, recorded in the results (``emulation.sysctls``).
Further settings of the senders' namespace (e.g. ``net.ipv4.tcp_recovery = 0``, RACK off) are
given with ``Testbed(..., snd_sysctls=...)`` (``aqmlab emulate --sysctl KEY=VALUE``), checked
by :func:`check_sysctls`, applied after the pinned ones and recorded with them.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

__all__ = [
    "EmulationError",
    "Testbed",
    "check_environment",
    "check_sysctls",
    "remove_stale",
    "ns_names",
    "parse_counters",
]

NETNS_DIR = Path("/run/netns")
_NS_RE = re.compile(r"^aqmlab-(\d+)-(snd|rcv)$")
SND_ADDR = "10.203.0.1"


class EmulationError(RuntimeError):
    """The machine cannot run the emulator (not root, no TUN, no namespaces), or a set-up
    command failed; the message is one line."""


def ns_names(pid: int) -> tuple[str, str]:
    """``(senders' namespace, receivers' namespace)`` of process ``pid``.

    Parameters
    ----------
    pid : int
        The process id.

    Returns
    -------
    tuple of (str, str)
    """
    return f"aqmlab-{pid}-snd", f"aqmlab-{pid}-rcv"


def tun_names(pid: int) -> tuple[str, str]:
    """``(senders' TUN, receivers' TUN)`` of process ``pid`` (at most 15 characters)."""
    return f"aqm{pid}s", f"aqm{pid}r"


def group_addr(g: int) -> str:
    """The receivers' address of flow group ``g`` (0-based, < 250)."""
    return f"10.203.1.{g + 1}"


def check_environment() -> None:
    """Raise :class:`EmulationError` unless we are root with ``/dev/net/tun``, ``ip`` and
    ``sysctl``."""
    if os.geteuid() != 0:
        raise EmulationError(
            f"emulate needs root (network namespaces, TUN devices); running as uid {os.geteuid()}"
        )
    if not Path("/dev/net/tun").exists():
        raise EmulationError("emulate needs /dev/net/tun (the tun kernel module); it is missing")
    for tool, package in (("ip", "iproute2"), ("sysctl", "procps")):
        if shutil.which(tool) is None:
            raise EmulationError(f"emulate needs the '{tool}' command ({package}); not on PATH")


_SYSCTL_KEY = re.compile(r"^net\.(ipv4|core)\.[a-z0-9_]+$")
_SYSCTL_VALUE = re.compile(r"^[0-9A-Za-z_. -]+$")


def parse_counters(text: str) -> dict[str, int]:
    """The ``TcpExt`` and ``Tcp`` counters of ``/proc/net/netstat`` and ``/proc/net/snmp``
    text (a header line of names, then a line of values, per row), named as ``nstat`` names
    them (``TcpExtTCPLossProbes``, ``TcpRetransSegs``).

    Parameters
    ----------
    text : str
        The two files' contents, concatenated.

    Returns
    -------
    dict
        ``{name: value}``; rows other than ``TcpExt`` and ``Tcp`` are left out.
    """
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, vals in zip(lines, lines[1:], strict=False):
        row, _, names = head.partition(":")
        row2, _, values = vals.partition(":")
        if row != row2 or row not in ("TcpExt", "Tcp") or not names.split()[0].isalpha():
            continue
        for k, v in zip(names.split(), values.split(), strict=False):
            if v.lstrip("-").isdigit():
                out[row + k] = int(v)
    return out


def check_sysctls(settings: dict[str, str]) -> dict[str, str]:
    """``settings`` (``{key: value}`` for the senders' namespace) if every key is a
    ``net.ipv4.*`` or ``net.core.*`` setting this kernel has (``/proc/sys``) and every value
    is plain (digits, letters, ``_ . -`` and spaces); else ``ValueError`` naming the first bad
    key and value. Whether the kernel accepts a value is known only when it is set
    (:meth:`Testbed.configure`).

    Parameters
    ----------
    settings : dict of str to str
        The settings.

    Returns
    -------
    dict of str to str
        ``settings``.
    """
    for k, v in settings.items():
        if not _SYSCTL_KEY.match(k):
            raise ValueError(
                f"sysctl {k} = {v!r}: only net.ipv4.* and net.core.* settings can be set"
            )
        if not Path("/proc/sys", *k.split(".")).is_file():
            raise ValueError(f"sysctl {k} = {v!r}: this kernel has no such setting")
        if not _SYSCTL_VALUE.match(str(v)):
            raise ValueError(f"sysctl {k} = {v!r}: not a plain value")
    return {k: str(v) for k, v in settings.items()}


def _run(args: list[str], stdin: str | None = None) -> str:
    r = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        msg = " ".join((r.stderr or r.stdout).split()) or f"exit status {r.returncode}"
        raise EmulationError(f"'{' '.join(args[:6])}': {msg}")
    return r.stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_namespaces() -> list[str]:
    """Every aqmlab namespace on the machine (``aqmlab-PID-snd|rcv``)."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir() if _NS_RE.match(p.name))


def _delete(ns: str) -> None:
    """Kill the processes inside ``ns`` and delete it (quietly if it is already gone)."""
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    for tok in r.stdout.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def remove_stale() -> list[str]:
    """Delete the namespaces of aqmlab runs whose process is gone; return their names.

    Returns
    -------
    list of str
        The names of the namespaces deleted.
    """
    gone = []
    for ns in list_namespaces():
        pid = int(_NS_RE.match(ns).group(1))
        if not _alive(pid):
            _delete(ns)
            gone.append(ns)
    return gone


class Testbed:
    """The two namespaces of this process, their devices, addresses, routes and sysctls.

    Use as a context manager; :meth:`close` is idempotent and runs on any exit.

    Parameters
    ----------
    mtu : int
        MTU of both devices, bytes (the IP size of full data packets).
    ecn_groups : list of bool
        Per flow group, whether its connections negotiate ECN.
    snd_sysctls : dict, optional
        Further ``{key: value}`` settings of the senders' namespace, applied after
        :attr:`SYSCTLS` (checked with :func:`check_sysctls`).
    reverse_ecn : bool
        The route from the receivers' namespace back to the senders' address asks for ECN
        (``features ecn``): the reverse flow groups (``direction = "reverse"``) are
        ECN-capable.
    """

    #: Sysctls set in each namespace (``{namespace role: {key: value}}``).
    SYSCTLS = {
        "snd": {
            "net.ipv4.tcp_ecn": "2",
            "net.ipv4.tcp_ecn_fallback": "0",
            "net.ipv4.tcp_no_metrics_save": "1",
        },
        "rcv": {"net.ipv4.tcp_ecn": "2", "net.ipv4.tcp_no_metrics_save": "1"},
    }
    #: Kernel settings read back into the results (not changed).
    RECORDED = (
        "net.ipv4.tcp_sack",
        "net.ipv4.tcp_timestamps",
        "net.ipv4.tcp_window_scaling",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
        "net.ipv4.tcp_min_tso_segs",
        "net.ipv4.tcp_recovery",
        "net.ipv4.tcp_early_retrans",
        "net.ipv4.tcp_slow_start_after_idle",
    )

    def __init__(
        self,
        mtu: int,
        ecn_groups: list[bool],
        snd_sysctls: dict[str, str] | None = None,
        reverse_ecn: bool = False,
    ):
        self.pid = os.getpid()
        #: The route back (receivers' namespace to the senders' address) asks for ECN: the
        #: reverse flow groups are ECN-capable.
        self.reverse_ecn = reverse_ecn
        self.snd, self.rcv = ns_names(self.pid)
        self.snd_tun, self.rcv_tun = tun_names(self.pid)
        self.mtu = mtu
        self.ecn_groups = list(ecn_groups)
        self.snd_sysctls = dict(snd_sysctls or {})
        self._created: list[str] = []

    def __enter__(self) -> Testbed:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def create_namespaces(self) -> None:
        """Remove stale sets, then add this run's two namespaces (before the devices exist)."""
        remove_stale()
        for ns in (self.snd, self.rcv):
            if (NETNS_DIR / ns).exists():  # our own pid's leftovers (pid reuse)
                _delete(ns)
            _run(["ip", "netns", "add", ns])
            self._created.append(ns)

    def configure(self) -> None:
        """Move the (already created) TUN devices in and set addresses, routes and sysctls."""
        for tun, ns in ((self.snd_tun, self.snd), (self.rcv_tun, self.rcv)):
            _run(["ip", "link", "set", "dev", tun, "netns", ns])
        groups = range(len(self.ecn_groups))
        snd = [
            "link set dev lo up",
            f"link set dev {self.snd_tun} mtu {self.mtu} up",
            f"addr add {SND_ADDR}/32 dev {self.snd_tun}",
        ] + [
            f"route add {group_addr(g)}/32 dev {self.snd_tun} src {SND_ADDR}"
            + (" features ecn" if self.ecn_groups[g] else "")
            for g in groups
        ]
        rcv = [
            "link set dev lo up",
            f"link set dev {self.rcv_tun} mtu {self.mtu} up",
            *(f"addr add {group_addr(g)}/32 dev {self.rcv_tun}" for g in groups),
            f"route add {SND_ADDR}/32 dev {self.rcv_tun}"
            + (" features ecn" if self.reverse_ecn else ""),
        ]
        for role, ns, tun, cmds in (
            ("snd", self.snd, self.snd_tun, snd),
            ("rcv", self.rcv, self.rcv_tun, rcv),
        ):
            sets = {**self.SYSCTLS[role], f"net.ipv6.conf.{tun}.disable_ipv6": "1"}
            _run(
                [
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "sysctl",
                    "-q",
                    "-w",
                    *(f"{k}={v}" for k, v in sets.items()),
                ]
            )
            _run(["ip", "-n", ns, "-batch", "-"], stdin="\n".join(cmds) + "\n")
        for k, v in self.snd_sysctls.items():
            try:
                _run(["ip", "netns", "exec", self.snd, "sysctl", "-q", "-w", f"{k}={v}"])
            except EmulationError as e:
                raise ValueError(f"sysctl {k} = {v!r}: the kernel refused it ({e})") from None

    def sysctls(self) -> dict[str, dict[str, str]]:
        """The pinned and recorded kernel settings of both namespaces, as read back.

        Returns
        -------
        dict
            ``{role: {key: value}}`` for ``snd`` and ``rcv``.
        """
        out = {}
        for role, ns in (("snd", self.snd), ("rcv", self.rcv)):
            extra = self.snd_sysctls if role == "snd" else {}
            keys = list(dict.fromkeys([*self.SYSCTLS[role], *extra, *self.RECORDED]))
            text = _run(["ip", "netns", "exec", ns, "sysctl", *keys])
            out[role] = {
                k.strip(): " ".join(v.split())
                for k, _, v in (line.partition("=") for line in text.splitlines())
                if k.strip()
            }
        return out

    def tcp_counters(self, role: str = "snd") -> dict[str, int]:
        """The kernel's TCP counters in one namespace now (``nstat``'s ``TcpExt`` and ``Tcp``
        rows of ``/proc/net/netstat`` and ``/proc/net/snmp``).

        Parameters
        ----------
        role : str
            ``"snd"`` or ``"rcv"``.

        Returns
        -------
        dict
            ``{"TcpExtTCPLossProbes": 12, ...}``: every counter of the two rows, named as
            ``nstat`` names them.
        """
        ns = self.snd if role == "snd" else self.rcv
        text = _run(["ip", "netns", "exec", ns, "cat", "/proc/net/netstat", "/proc/net/snmp"])
        return parse_counters(text)

    def exec_argv(self, role: str, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace ``role`` (``snd`` or ``rcv``).

        Parameters
        ----------
        role : str
            ``"snd"`` or ``"rcv"``.
        argv : list of str
            The command.

        Returns
        -------
        list of str
        """
        return ["ip", "netns", "exec", self.snd if role == "snd" else self.rcv, *argv]

    def close(self) -> None:
        """Kill what runs inside the namespaces and delete them (idempotent)."""
        while self._created:
            _delete(self._created.pop())
