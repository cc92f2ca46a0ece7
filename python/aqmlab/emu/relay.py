"""The host's own services behind the emulated link: ``aqmlab shell --host-port``.

The inside of an ``aqmlab shell`` has no route to the host (the root namespace gets no
address, route or NAT rule; ``docs/shell.md``). To reach a service of the host all the same,
and only across the bottleneck, a relay listens on the far side's address (``AQMLAB_PEER``)
and port ``PORT``, and carries each connection it accepts to the host's ``HOST:HOST_PORT``
(``127.0.0.1`` by default), as ``socat`` or ``ssh -L`` would. The connection from the
inside ends at the relay, on the far side of the link: its packets cross the uplink and the
downlink with their qdiscs, rates and delays; the relay's own connection to the service is a
second TCP connection on the host (loopback), outside the emulated path. TCP only.

The listening socket is created inside the far namespace by a short-lived child process
(``ip netns exec``) and handed to this process over a Unix socket (``SCM_RIGHTS``): a
socket stays in the namespace it was created in, so this process accepts in the far
namespace and connects in the host's, with no change to the host's network settings.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from dataclasses import dataclass

__all__ = ["HostPort", "HostRelay", "parse_host_port"]

#: Bytes copied per read.
_CHUNK = 65536


@dataclass(frozen=True)
class HostPort:
    """One relayed port: the far side's ``port`` to the host's ``host:host_port``.

    Attributes
    ----------
    port : int
        The port on the far side's address the inside connects to.
    host : str
        The host's address the relay connects to (in the root namespace).
    host_port : int
        The service's port on the host.
    """

    port: int
    host: str
    host_port: int


def parse_host_port(text: str) -> HostPort:
    """``PORT``, ``PORT:HOST_PORT`` or ``PORT:HOST:HOST_PORT`` as a :class:`HostPort`
    (``HOST`` defaults to ``127.0.0.1``, ``HOST_PORT`` to ``PORT``); ``ValueError`` naming
    the option otherwise.

    Parameters
    ----------
    text : str
        The ``--host-port`` value.

    Returns
    -------
    HostPort
    """
    parts = text.split(":")
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"--host-port = {text!r}: expected PORT[:[HOST:]HOST_PORT]")
    host = parts[1] if len(parts) == 3 else "127.0.0.1"
    ports = [parts[0], parts[-1]]
    try:
        port, hport = (int(p) for p in ports)
    except ValueError:
        raise ValueError(f"--host-port = {text!r}: ports are integers in [1, 65535]") from None
    if not (1 <= port <= 65535 and 1 <= hport <= 65535):
        raise ValueError(f"--host-port = {text!r}: ports are integers in [1, 65535]")
    if not host:
        raise ValueError(f"--host-port = {text!r}: empty HOST")
    return HostPort(port, host, hport)


_LISTEN = r"""
import socket, sys
u = socket.socket(fileno=int(sys.argv[1]))
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[2], int(sys.argv[3])))
s.listen(128)
socket.send_fds(u, [b"s"], [s.fileno()])
"""


def _listen_in(exec_argv, addr: str, port: int) -> socket.socket:
    """A TCP socket listening on ``addr:port`` inside the namespace that ``exec_argv`` (a
    function of an argv) enters."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with mine, theirs:
        fd = theirs.fileno()
        p = subprocess.run(
            exec_argv([sys.executable, "-c", _LISTEN, str(fd), addr, str(port)]),
            pass_fds=(fd,), capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if p.returncode != 0:
            why = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
            raise ValueError(f"--host-port = {port}: cannot listen on the far side ({why})")
        _, fds, _, _ = socket.recv_fds(mine, 1, 1)
    return socket.socket(fileno=fds[0])


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copies ``src`` to ``dst`` until ``src`` ends, then ends ``dst``'s sending side."""
    try:
        while data := src.recv(_CHUNK):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class HostRelay:
    """Relays of the far side's ports to the host's services (module docs).

    Parameters
    ----------
    ports : list of HostPort
        The ports to relay.
    """

    def __init__(self, ports: list[HostPort]):
        self.ports = list(ports)
        self._listeners: list[socket.socket] = []
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, exec_argv, addr: str) -> None:
        """Listen on ``addr`` (the far side's address) inside the namespace ``exec_argv``
        enters, and relay what connects there.

        Parameters
        ----------
        exec_argv : callable
            ``argv -> argv`` run inside the far namespace (``Testbed.exec_argv``).
        addr : str
            The far side's address.
        """
        for hp in self.ports:
            lsock = _listen_in(exec_argv, addr, hp.port)
            lsock.settimeout(0.2)  # to notice close()
            self._listeners.append(lsock)
            t = threading.Thread(
                target=self._accept, args=(lsock, hp), name=f"aqmlab-relay-{hp.port}", daemon=True
            )
            t.start()
            self._threads.append(t)

    def _accept(self, lsock: socket.socket, hp: HostPort) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = lsock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            try:
                up = socket.create_connection((hp.host, hp.host_port), timeout=5)
                up.settimeout(None)
            except OSError:
                conn.close()  # the service is not there: the inside sees the connection end
                continue
            with self._lock:
                self._conns += [conn, up]
            for a, b in ((conn, up), (up, conn)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    def close(self) -> None:
        """Stop listening and close every relayed connection (idempotent)."""
        self._stop.set()
        for s in self._listeners:
            s.close()
        for t in self._threads:
            t.join(1)
        with self._lock:
            for s in self._conns:
                try:
                    s.close()
                except OSError:
                    pass
            self._conns.clear()
        self._listeners.clear()
