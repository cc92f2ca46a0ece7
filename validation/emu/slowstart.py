"""One grid row's congestion window on both sides: the simulator's trace and the kernel's
(``cwnd_trace``; the emulator samples ``TCP_INFO``), and the bottleneck's first CE marks.

Used to find why a single Reno or CUBIC flow at 100 ms keeps a lower window in the kernel
than in the simulator (RESULTS.md, section 4). ``--gso-max-segs 1`` is the one-change
experiment on the kernel's side: the senders' device takes no GSO packets, so the kernel sends
segment by segment (no GSO bursts, no TSO deferral).

Needs root. Usage::

    sudo .venv/bin/python validation/emu/slowstart.py dualpi2-ecn-50M-100ms-1xreno --seed 1
    sudo .venv/bin/python validation/emu/slowstart.py dualpi2-ecn-50M-100ms-1xreno --gso-max-segs 1
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grid  # noqa: E402


def emulate_gso(d: dict, gso_max_segs: int | None):
    """Emulates scenario ``d``; with ``gso_max_segs``, the senders' device takes GSO packets of
    at most that many segments (1: none, the kernel sends segment by segment)."""
    from aqmlab.emu import emulate, netns
    from aqmlab.scenario import Scenario

    configure = netns.Testbed.configure

    def with_gso(self, configure=configure):
        configure(self)
        if gso_max_segs is not None:
            netns._run(["ip", "-n", self.snd, "link", "set", "dev", self.snd_tun,
                        "gso_max_segs", str(gso_max_segs)])  # fmt: skip

    netns.Testbed.configure = with_gso
    try:
        return emulate(Scenario(d))
    finally:
        netns.Testbed.configure = configure


def trace(row: dict, seed: int, sim: bool, gso_max_segs: int | None) -> tuple[dict, dict]:
    """(measures, columns) of one run with every flow's window traced every 20 ms."""
    d = grid.scenario_dict(row, seed, sim)
    for g in d["flows"]:
        g["cwnd_trace"] = True
    d["cwnd_interval"] = 0.02
    if sim:
        from aqmlab.scenario import Scenario
        from aqmlab.sim import simulate

        r = simulate(Scenario(d))
    else:
        r = emulate_gso(d, gso_max_segs)
    return grid.measures(r.summary), r.columns


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("row")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gso-max-segs", type=int, default=None)
    a = ap.parse_args()
    rows = {r["name"]: r for r in grid.rows()}
    if a.row not in rows:
        print(f"error: row = {a.row!r}: not a grid row (grid.py's names)", file=sys.stderr)
        return 2
    for side in ("sim", "emu"):
        m, cols = trace(rows[a.row], a.seed, side == "sim", a.gso_max_segs)
        c, ts = cols["cwnd"], cols["timeseries"]
        marks = [t for t, k in zip(ts["time_s"], ts["marks"], strict=True) if k]
        print(f"{side}: util {m['util']:.3f}, delay {m['delay_ms']:.2f} ms, "
              f"first CE mark at {marks[0] if marks else None} s")  # fmt: skip
        last = None
        for t, f, w, s, r in zip(c["time_s"], c["flow"], c["cwnd"], c["ssthresh"], c["srtt_ms"],
                                 strict=True):  # fmt: skip
            if f != 0:
                continue
            if last is None or s != last or round(t * 50) % 25 == 0:
                ss = "inf" if math.isinf(s) else f"{s:.0f}"
                print(f"  {t:6.2f} s  cwnd {w:5.0f}  ssthresh {ss:>5}  srtt {r:6.1f} ms")
            last = s
            if t > 4.0:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
