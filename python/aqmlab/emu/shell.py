"""Any program through the emulated bottleneck: ``aqmlab shell`` and ``aqmlab emulate -- CMD``.

:func:`shell` runs a command in the inside namespace (``aqmlab-PID-snd``, address
``10.203.0.1``) whose only route out, the default route, is the TUN device of the forwarder:
every packet it sends crosses the uplink (the first scenario's bottleneck: its qdisc, buffer,
rate or trace, half the RTT) to the far namespace (``aqmlab-PID-rcv``, address
``10.203.1.1``, given to the command as ``AQMLAB_PEER``), and every packet back crosses the
downlink (the second scenario's bottleneck, the other half of the RTT). A server on the far
side is started with ``peer_command``. The command runs with the caller's environment, as the
user who called ``sudo`` (``SUDO_UID``/``SUDO_GID``), in its own process group that gets the
terminal (so an interactive shell and Ctrl-C work as without aqmlab); its exit status is
returned (128 + N when signal N ended it).

Cleanup is :class:`aqmlab.emu.netns.Testbed`'s: whatever ends the session (the command's exit,
a signal to aqmlab, a forwarder error), every process in both namespaces is killed, the
namespaces are deleted and the TUN devices closed. See ``docs/shell.md``.

The helpers :func:`calling_user`, :func:`spawn`, :func:`finish` and :func:`exit_status` also
run ``aqmlab emulate -- CMD`` (a command beside the emulation's own flows).
"""

from __future__ import annotations

import json
import os
import platform
import pwd
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.emu.netns import (
    NETNS_DIR,
    SND_ADDR,
    EmulationError,
    Testbed,
    group_addr,
    list_namespaces,
)
from aqmlab.emu.netns import _run as _ip

__all__ = [
    "PEER_ENV",
    "ShellResult",
    "calling_user",
    "check_command",
    "check_not_nested",
    "exit_status",
    "finish",
    "shell",
    "spawn",
]

#: The variable that holds the far side's address inside the shell (Mahimahi's
#: ``MAHIMAHI_BASE``); its presence also marks a shell inside a shell.
PEER_ENV = "AQMLAB_PEER"

#: Seconds a command gets to end after SIGTERM before it is killed.
GRACE_S = 5.0

#: Seconds ``shell`` waits for the peer command to listen on a socket before it starts the
#: command anyway.
PEER_WAIT_S = 5.0


def check_not_nested(environ: dict[str, str] | None = None) -> None:
    """Raise ``ValueError`` (one line naming what was found) inside an aqmlab shell: when
    ``AQMLAB_PEER`` is set, or when this process's network namespace is one of aqmlab's
    (which ``sudo``, resetting the environment, cannot hide). A shell inside a shell is not
    supported: the inner one would build its namespaces from inside the outer one's.

    Parameters
    ----------
    environ : dict, optional
        The environment to look at (default ``os.environ``).
    """
    env = os.environ if environ is None else environ
    if env.get(PEER_ENV):
        raise ValueError(
            f"{PEER_ENV} = {env[PEER_ENV]}: already inside an aqmlab shell; a shell inside a "
            "shell is not supported (run it from outside)"
        )
    try:
        mine = os.stat("/proc/self/ns/net")
    except OSError:
        return
    for ns in list_namespaces():
        try:
            st = os.stat(NETNS_DIR / ns)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
            raise ValueError(
                f"network namespace = {ns}: already inside an aqmlab shell or emulation; a "
                "shell inside a shell is not supported (run it from outside)"
            )


def check_command(argv: list[str]) -> list[str]:
    """``argv`` if its program exists (a path to an executable file, or a name found on
    ``PATH``), else ``ValueError`` naming it: checked before anything is created, so a
    mistyped name is bad input (exit status 2) rather than a session that fails at once.

    Parameters
    ----------
    argv : list of str
        The command.

    Returns
    -------
    list of str
        ``argv``.
    """
    import shutil

    prog = argv[0]
    found = os.access(prog, os.X_OK) and os.path.isfile(prog) if "/" in prog else shutil.which(prog)
    if not found:
        where = "not an executable file" if "/" in prog else "not found on PATH"
        raise ValueError(f"COMMAND = {prog!r}: {where}")
    return argv


def calling_user() -> tuple[int, int] | None:
    """``(uid, gid)`` to run commands as: the user who ran ``sudo`` when running as root
    under it (``SUDO_UID``, ``SUDO_GID``); ``None``: keep this process's user.

    Returns
    -------
    tuple of (int, int) or None
    """
    uid, gid = os.environ.get("SUDO_UID"), os.environ.get("SUDO_GID")
    if os.geteuid() != 0 or not uid or not gid:
        return None
    try:
        u, g = int(uid), int(gid)
    except ValueError:
        return None
    return None if u == 0 else (u, g)


def _as_user(argv: list[str], user: tuple[int, int] | None) -> list[str]:
    """``argv`` run as ``user`` through util-linux's ``setpriv`` (real, effective and saved
    ids; the user's groups from the group database when it has a passwd entry)."""
    if user is None:
        return list(argv)
    uid, gid = user
    try:
        pwd.getpwuid(uid)
        groups = "--init-groups"
    except KeyError:
        groups = "--clear-groups"
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", groups, "--", *argv]


def spawn(
    tb: Testbed,
    role: str,
    argv: list[str],
    env: dict[str, str],
    user: tuple[int, int] | None,
    *,
    foreground: bool = False,
    **popen: Any,
) -> subprocess.Popen:
    """Start ``argv`` inside the namespace ``role`` (``snd``: the inside, ``rcv``: the far
    side) as ``user`` with ``env``, in a process group of its own. With ``foreground`` and a
    terminal on stdin of which this process is in the foreground, the group gets the terminal
    (give it back with :func:`finish`).

    Parameters
    ----------
    tb : Testbed
        The namespaces.
    role : str
        ``"snd"`` or ``"rcv"``.
    argv : list of str
        The command.
    env : dict
        Its environment.
    user : tuple of (int, int) or None
        ``(uid, gid)`` to run as (:func:`calling_user`).
    foreground : bool
        Give it the terminal.
    **popen
        Further arguments of :class:`subprocess.Popen` (``stdin``, ``stdout``, ...).

    Returns
    -------
    subprocess.Popen
    """
    p = subprocess.Popen(
        tb.exec_argv(role, _as_user(argv, user)), env=env, process_group=0, **popen
    )
    p.aqmlab_terminal = foreground and _tty_foreground()
    if p.aqmlab_terminal:
        _give_terminal(p.pid)
        try:  # it may have stopped reading the terminal before it was its own (SIGTTIN)
            os.killpg(p.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    return p


def _tty_foreground() -> bool:
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


def _give_terminal(pgid: int) -> None:
    """Make ``pgid`` the terminal's foreground group (SIGTTOU ignored meanwhile: a background
    process may not otherwise change it)."""
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(0, pgid)
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def exit_status(returncode: int) -> int:
    """A process's exit status as a shell reports it: its code, or 128 + N after signal N.

    Parameters
    ----------
    returncode : int
        :attr:`subprocess.Popen.returncode` (negative: the signal).

    Returns
    -------
    int
    """
    return 128 - returncode if returncode < 0 else returncode


def finish(p: subprocess.Popen, grace: float = GRACE_S, sig: int = signal.SIGTERM) -> int:
    """End ``p``'s process group if ``p`` still runs (``sig``, then SIGKILL after ``grace``
    seconds), take the terminal back if it had it, and return ``p``'s exit status.

    Parameters
    ----------
    p : subprocess.Popen
        A process started by :func:`spawn`.
    grace : float
        Seconds between ``sig`` and SIGKILL.
    sig : int
        The first signal.

    Returns
    -------
    int
        :func:`exit_status` of ``p``.
    """
    if p.poll() is None:
        _killpg(p.pid, sig)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            _killpg(p.pid, signal.SIGKILL)
            p.wait()
    if getattr(p, "aqmlab_terminal", False):
        p.aqmlab_terminal = False
        _give_terminal(os.getpgrp())
    return exit_status(p.returncode)


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _running(p: subprocess.Popen) -> bool:
    """Whether ``p`` still runs. When it stopped (Ctrl-Z: SIGTSTP) while it had the terminal,
    aqmlab takes the terminal back and stops itself, so that the user's shell gets the
    terminal as for any job, and continues the command in the foreground when it is itself
    continued (``fg``)."""
    if p.returncode is not None:
        return False
    try:
        pid, status = os.waitpid(p.pid, os.WNOHANG | os.WUNTRACED)
    except ChildProcessError:
        return p.poll() is None
    if pid == 0:
        return True
    if not os.WIFSTOPPED(status):
        p.returncode = os.waitstatus_to_exitcode(status)
        return False
    if getattr(p, "aqmlab_terminal", False):  # a job of the user's shell: stop with it
        _give_terminal(os.getpgrp())
        os.kill(os.getpid(), signal.SIGSTOP)  # until the user's shell continues us (fg)
        _give_terminal(p.pid)
        _killpg(p.pid, signal.SIGCONT)
    # without the terminal: it stays stopped until whoever stopped it continues it
    return True


def _listening(pid: int, ns: str) -> bool:
    """Whether a TCP socket listens or a UDP socket is bound in the namespace ``ns``, read
    through ``/proc/PID/net`` once process ``pid`` has entered it."""
    try:
        if os.stat(f"/proc/{pid}/ns/net").st_ino != os.stat(NETNS_DIR / ns).st_ino:
            return False
        for name in ("tcp", "tcp6", "udp", "udp6"):
            lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
            for ln in lines:
                f = ln.split()
                # tcp: state 0A = LISTEN; udp: any bound socket (state 07)
                if name.startswith("tcp") and f[3] == "0A" or name.startswith("udp"):
                    return True
    except (OSError, IndexError):
        return False
    return False


@dataclass
class ShellResult:
    """What a shell session gives back.

    Attributes
    ----------
    exit_status : int
        The command's exit status (128 + N after signal N).
    summary : dict
        ``summary.json``: ``links.uplink``, ``links.downlink`` (the simulator's link keys),
        ``shell`` (the command, its exit status, the links' settings), ``emulation``.
    columns : dict
        ``{"timeseries": {column: list}}``: both links' samples (``link`` = ``uplink`` or
        ``downlink``).
    output : bytes or None
        The command's standard output, when :func:`shell` was asked to keep it
        (``keep_output``; it was passed through as well).
    """

    exit_status: int
    summary: dict[str, Any]
    columns: dict[str, Any] = field(default_factory=dict)
    output: bytes | None = None


class _Signals:
    """SIGINT, SIGTERM and SIGHUP to aqmlab while the command runs: remembered and passed on
    to the command's process group (once the command exists)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self):
        self.got: int | None = None
        self.target: int | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        for s in self.SIGNALS:
            self._old[s] = signal.signal(s, self._handle)
        return self

    def _handle(self, signum, _frame) -> None:
        self.got = self.got or signum
        if self.target is not None:
            _killpg(self.target, signum)

    def __exit__(self, *exc) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)


def shell(
    uplink,
    downlink,
    argv: list[str],
    peer_command: str | None = None,
    mtu: int = 1500,
    ecn: bool = False,
    pcap: str | os.PathLike[str] | None = None,
    host_ports: list | None = None,
    keep_output: bool = False,
) -> ShellResult:
    """Run ``argv`` behind the emulated link and return its exit status and the links'
    statistics.

    Parameters
    ----------
    uplink : aqmlab.scenario.Scenario
        A dumbbell whose bottleneck (rate or trace, buffer, qdisc) is the inside-to-far-side
        direction; its ``rtt`` is the two-way propagation delay (half on each direction).
    downlink : aqmlab.scenario.Scenario
        A dumbbell whose bottleneck is the far-side-to-inside direction.
    argv : list of str
        The command.
    peer_command : str, optional
        A shell command started on the far side first (``sh -c``), e.g. ``iperf3 -s``; the
        command starts once it listens on a socket (at most :data:`PEER_WAIT_S` later).
    mtu : int
        MTU of both devices, bytes.
    ecn : bool
        The inside's connections ask for ECN (its routes say ``features ecn``).
    pcap : path, optional
        Capture the real packets at both TUN devices into this pcapng file (created or
        replaced; interface ``senders`` is the inside's device, ``receivers`` the far side's;
        the first 128 bytes of each packet, timestamps from the forwarder's clock;
        ``docs/pcap.md``). The summary's ``emulation.captured`` counts them per device.
    host_ports : list of aqmlab.emu.relay.HostPort, optional
        Ports of the far side's address relayed to the host's services
        (:class:`aqmlab.emu.relay.HostRelay`; ``--host-port``).
    keep_output : bool
        Read the command's standard output through a pipe, pass it on to this process's and
        keep it (``ShellResult.output``; ``aqmlab shell --flent`` parses it).

    Returns
    -------
    ShellResult

    Raises
    ------
    EmulationError
        A set-up command or the forwarder failed (everything was removed).
    ValueError
        The peer command ended before the command started (``--peer-command = ...``).
    KeyboardInterrupt
        SIGINT, SIGTERM or SIGHUP to aqmlab (:class:`aqmlab.output.Interrupted` with the
        signal); the command was ended and everything removed.
    """
    from aqmlab import _core
    from aqmlab.output import Interrupted, signals_raise
    from aqmlab.provenance import meta, now_utc

    peer = group_addr(0)
    user = calling_user()
    env = dict(os.environ, **{PEER_ENV: peer})
    started, wall0 = now_utc(), time.monotonic()
    fw = thread = cmd = server = None
    from aqmlab.emu.relay import HostRelay

    relay = HostRelay(host_ports or [])
    errors: list[BaseException] = []
    status: int | None = None
    kept: list[bytes] = []
    tee = None
    with signals_raise(), Testbed(mtu, [ecn]) as tb:
        try:
            tb.create_namespaces()
            try:
                fw = _core.Forwarder(
                    uplink._core, tb.snd_tun, tb.rcv_tun, [peer], reverse=downlink._core,
                    names=("uplink", "downlink"), until_stopped=True,
                    pcap=None if pcap is None else os.fspath(pcap),
                )  # fmt: skip
            except OSError as e:
                raise EmulationError(str(e)) from None
            tb.configure()
            # the inside's only way out: everything goes through the uplink's device
            route = f"route add default dev {tb.snd_tun} src {SND_ADDR}"
            _ip(["ip", "-n", tb.snd, *(route + (" features ecn" if ecn else "")).split()])
            sysctls = tb.sysctls()

            def forward():
                try:
                    fw.run(time.monotonic_ns())
                except BaseException as e:  # reported by the main thread
                    errors.append(e)

            thread = threading.Thread(target=forward, name="aqmlab-forwarder", daemon=True)
            thread.start()
            relay.start(lambda argv: tb.exec_argv("rcv", argv), peer)
            if peer_command:
                server = spawn(
                    tb, "rcv", ["sh", "-c", peer_command], env, user, stdin=subprocess.DEVNULL,
                    stdout=sys.stderr.fileno(),
                )  # fmt: skip
                deadline = time.monotonic() + PEER_WAIT_S
                while not _listening(server.pid, tb.rcv) and time.monotonic() < deadline:
                    if server.poll() is not None:
                        raise ValueError(
                            f"--peer-command = {peer_command!r}: ended with exit status "
                            f"{exit_status(server.returncode)} before the command started"
                        )
                    time.sleep(0.02)
            with _Signals() as sig:
                if keep_output:
                    cmd = spawn(
                        tb, "snd", list(argv), env, user, foreground=True,
                        stdout=subprocess.PIPE,
                    )  # fmt: skip
                    tee = threading.Thread(target=_tee, args=(cmd.stdout, kept), daemon=True)
                    tee.start()
                else:
                    cmd = spawn(tb, "snd", list(argv), env, user, foreground=True)
                sig.target = cmd.pid
                if sig.got:  # came between the two lines above
                    _killpg(cmd.pid, sig.got)
                since = None
                while _running(cmd) and thread.is_alive():
                    if sig.got and since is None:
                        since = time.monotonic()
                    if since is not None and time.monotonic() - since > GRACE_S:
                        _killpg(cmd.pid, signal.SIGKILL)  # it ignored the signal passed on
                    time.sleep(0.02)
                # ends the command if the forwarder stopped first (its error ends the session)
                status = finish(cmd)
                if sig.got:
                    raise Interrupted(sig.got)
            if errors or not thread.is_alive():
                raise EmulationError(str(errors[0]) if errors else "the forwarder stopped")
            fw.stop()
            thread.join(5)
            try:
                fw.finish_capture()
            except OSError as e:
                raise EmulationError(str(e)) from None
            report = json.loads(fw.report_json())
            ts = {k: list(v) for k, v in fw.timeseries().items()}
            for k, v in fw.reverse_timeseries().items():
                ts.setdefault(k, []).extend(v)
        finally:
            relay.close()
            for p in (cmd, server):
                if p is not None and p.poll() is None:
                    finish(p, grace=1.0)
            if fw is not None:
                fw.stop()
            if thread is not None:
                thread.join(5)
            fw = None  # closes the TUN devices
    assert status is not None
    if tee is not None:
        tee.join(5)
    summary = {
        "scenario": "shell",
        "sim_seconds": report["seconds"],
        "wall_seconds": time.monotonic() - wall0,
        "packets_forwarded": report["packets_forwarded"],
        "links": {"uplink": report["bottleneck"], "downlink": report["reverse"][1]},
        "shell": {
            "command": list(argv),
            "exit_status": status,
            "peer": peer,
            "peer_command": peer_command,
            "host_ports": [
                {"port": h.port, "host": h.host, "host_port": h.host_port} for h in relay.ports
            ],
            "user": None if user is None else {"uid": user[0], "gid": user[1]},
            "uplink": _link_settings(uplink),
            "downlink": _link_settings(downlink),
        },
        "emulation": {
            "timing": report["timing"],
            "ecn": report["ecn"],
            "kernel": platform.release(),
            "sysctls": sysctls,
            "pid": os.getpid(),
            # packets in the capture per device (0, 0 without one; shell(pcap=...))
            "captured": dict(zip(("senders", "receivers"), report["captured"], strict=True)),
        },
        "meta": meta(started=started),
    }
    return ShellResult(status, summary, {"timeseries": ts}, b"".join(kept) if keep_output else None)


def _tee(pipe, kept: list[bytes]) -> None:
    """Copy ``pipe`` to this process's standard output as it comes, keeping every chunk."""
    out = sys.stdout.buffer
    try:
        while chunk := pipe.read1(65536):
            kept.append(chunk)
            try:
                out.write(chunk)
                out.flush()
            except (OSError, ValueError):
                pass
    finally:
        pipe.close()


def _link_settings(sc) -> dict[str, Any]:
    """One direction's settings as normalized by the scenario schema."""
    n = sc.normalized
    d = n["dumbbell"]
    keys = ("rate", "rtt", "buffer", "buffer_bytes", "pkt_size", "rate_trace", "rate_changes",
            "netem")  # fmt: skip
    return {"aqm": n["aqm"], **{k: d[k] for k in keys if d.get(k) not in (None, False, [])}}
