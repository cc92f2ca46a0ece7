"""Packet captures: pcapng files of the simulator's links (headers synthesised from the
simulated packets) and of the emulator's TUN devices (the real packets).

A scenario names the links to capture (``[pcap] links = ["bottleneck"]``; ``hosts = true``
adds the hosts, ``ethernet = true`` an Ethernet header); ``aqmlab run`` and ``aqmlab dumbbell``
with ``--pcap`` write ``OUT/capture.pcapng``, :func:`aqmlab.sim.simulate` with ``pcap=PATH``
writes ``PATH``. What is synthesised and what is not real is in ``docs/pcap.md``.

:func:`read_pcapng` reads such a file (any pcapng file with Enhanced Packet Blocks) without
Wireshark.

Examples
--------
>>> import tempfile, pathlib
>>> from aqmlab.sim import simulate
>>> path = pathlib.Path(tempfile.mkdtemp()) / "capture.pcapng"
>>> res = simulate({"duration": "1s", "dumbbell": {"rate": "10Mbps"}, "flows": [{"count": 2}],
...                 "pcap": {"links": ["bottleneck"]}}, pcap=path)
>>> cap = read_pcapng(path)
>>> [i["name"] for i in cap.interfaces]
['bottleneck:fwd', 'bottleneck:rev']
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PCAP_FILE", "Capture", "read_pcapng"]

#: File name of the capture in a result folder.
PCAP_FILE = "capture.pcapng"


@dataclass
class Capture:
    """The content of a pcapng file.

    Attributes
    ----------
    interfaces : list of dict
        Per interface (in id order): ``name``, ``linktype``, ``snaplen`` and ``tsresol``
        (the timestamp unit's negative power of ten, 6 if the file does not say).
    packets : list of tuple
        Per packet, in file order: ``(iface, time_ns, data, orig_len)``; ``data`` are the
        captured bytes.
    """

    interfaces: list[dict] = field(default_factory=list)
    packets: list[tuple[int, int, bytes, int]] = field(default_factory=list)


def read_pcapng(path: str | os.PathLike[str]) -> Capture:
    """Read a little-endian pcapng file (section header, interface and enhanced packet blocks).

    Parameters
    ----------
    path : path-like
        The file.

    Returns
    -------
    Capture

    Raises
    ------
    ValueError
        The file is not a little-endian pcapng file or a block is cut short.
    """
    b = Path(path).read_bytes()
    cap = Capture()
    i = 0
    while i < len(b):
        if i + 12 > len(b):
            raise ValueError(f"{path}: truncated block at byte {i}")
        btype, blen = struct.unpack_from("<II", b, i)
        if i == 0 and (btype != 0x0A0D0D0A or struct.unpack_from("<I", b, 8)[0] != 0x1A2B3C4D):
            raise ValueError(f"{path}: not a little-endian pcapng file")
        if blen < 12 or blen % 4 or i + blen > len(b):
            raise ValueError(f"{path}: bad block length {blen} at byte {i}")
        if struct.unpack_from("<I", b, i + blen - 4)[0] != blen:
            raise ValueError(f"{path}: block at byte {i}: trailing length differs")
        body = b[i + 8 : i + blen - 4]
        if btype == 1:  # IDB
            linktype, _, snaplen = struct.unpack_from("<HHI", body, 0)
            opts = _options(body[8:])
            res = opts.get(9, b"\x06")[0]
            cap.interfaces.append(
                {
                    "name": opts.get(2, b"").decode(errors="replace"),
                    "linktype": linktype,
                    "snaplen": snaplen,
                    "tsresol": res,
                }
            )
        elif btype == 6:  # EPB
            iface, hi, lo, caplen, orig = struct.unpack_from("<IIIII", body, 0)
            res = cap.interfaces[iface]["tsresol"]
            if res & 0x80:
                raise ValueError(f"{path}: binary timestamp resolutions are not supported")
            t = (hi << 32) | lo
            t_ns = t * 10 ** (9 - res) if res <= 9 else t // 10 ** (res - 9)
            cap.packets.append((iface, t_ns, bytes(body[20 : 20 + caplen]), orig))
        i += blen
    return cap


def _options(b: bytes) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    j = 0
    while j + 4 <= len(b):
        code, n = struct.unpack_from("<HH", b, j)
        if code == 0:
            break
        out[code] = bytes(b[j + 4 : j + 4 + n])
        j += 4 + ((n + 3) & ~3)
    return out
