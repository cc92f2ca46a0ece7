"""CAKE's ACK filter in ``aqmlab emulate``: real Linux ACKs, their TCP headers parsed by the
emulator (``crates/emu/src/tcp.rs``), through a CAKE uplink with ``ack-filter``.

Needs root and /dev/net/tun, as the other emulation tests; skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import AQMLAB, ROOT  # noqa: E402

if os.geteuid() != 0:
    pytest.skip("emulation needs root (network namespaces, TUN devices)", allow_module_level=True)
if not Path("/dev/net/tun").exists():
    pytest.skip("emulation needs /dev/net/tun", allow_module_level=True)

ENV = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT / "python"))

ASYMMETRIC = """name = "ackfilter"
duration = "8s"
warmup = "2s"
[dumbbell]
rate = "20Mbps"
rtt = "20ms"
buffer = 200
pkt_size = 1500
[aqm]
type = "cake"
[reverse_aqm]
type = "cake"
bandwidth = "200kbit"
ack_filter = "{ack_filter}"
[[flows]]
count = 4
cc = "cubic"
start = 0
"""


def _run(tmp_path: Path, ack_filter: str) -> dict:
    (tmp_path / f"{ack_filter}.toml").write_text(ASYMMETRIC.format(ack_filter=ack_filter))
    out = tmp_path / ack_filter
    p = subprocess.run(
        [*AQMLAB, "emulate", str(tmp_path / f"{ack_filter}.toml"), "--out", str(out), "--quiet",
         "--no-plots"],
        capture_output=True, text=True, env=ENV, timeout=90,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return json.loads((out / "summary.json").read_text())


def test_ack_filter_drops_real_acks_and_frees_the_downlink(tmp_path):
    """20 Mbit/s down, the ACKs through CAKE shaped at 200 kbit/s (``reverse_aqm``), four
    CUBIC downloads (Linux ACKs every second segment: about 830 ACKs/s of 52 bytes at 20
    Mbit/s, 350 kbit/s). Without the filter the uplink carries at most 200e3 / 416 = 480
    ACKs/s, so the downloads are ACK-limited (about 11 Mbit/s; measured 10.3); with
    ``ack-filter`` CAKE drops queued ACKs that a newer one covers (counted in ``cake_tins``
    as ``ack_drops`` and among the uplink's drops) and the downloads fill the link (measured
    19.2 Mbit/s, 2913 ACKs dropped). Asserted: ACK drops > 0 (none without the filter) and a
    goodput at least 1.3 times that without it, a margin that emulation timing on a busy
    machine does not close (the two bounds are 11.1 and 19.3 Mbit/s)."""
    runs = {af: _run(tmp_path, af) for af in ("no-ack-filter", "ack-filter")}
    goodput = {af: sum(f["goodput_bps"] for f in s["flows"]) for af, s in runs.items()}
    up = {af: s["links"]["bottleneck_reverse"] for af, s in runs.items()}
    acks = {af: u["cake_tins"]["best_effort"]["ack_drops"] for af, u in up.items()}
    assert acks["no-ack-filter"] == 0
    assert acks["ack-filter"] > 0
    assert acks["ack-filter"] <= up["ack-filter"]["drops"]
    assert goodput["ack-filter"] >= 1.3 * goodput["no-ack-filter"], goodput
