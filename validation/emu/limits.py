"""Limits and speed of the emulator's forwarder (docs/emulate.md, validation/emu/RESULTS.md).

For each bottleneck rate: 4 CUBIC flows through a drop-tail buffer of one bandwidth-delay
product, 20 ms RTT, 8 s with 2 s of warm-up, repeated ``--reps`` times. Reported per run:

* utilization and the receivers' total goodput (the forwarder keeps up if the link is full);
* the forwarder's release error (lateness of every write to the receivers' device against its
  scheduled time: serialisation and propagation delay together), mean / p99 / p99.9 / max, and
  p99 as a share of the one-way delay (10 ms): the "extra delay error";
* the kernel's minimum RTT of the flows (``tcpi_min_rtt``; its smallest sample is the
  handshake's, whose 60-byte packets serialise in under 50 µs at 10 Mb/s) minus the 20 ms
  propagation: the whole path's overhead (TUN devices, stack, forwarder) on an empty queue.

Needs root. Usage: ``sudo .venv/bin/python validation/emu/limits.py [--rates 10,100,...]``;
prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys

from aqmlab.emu import emulate
from aqmlab.scenario import Scenario


def run(rate_mbps: float, flows: int = 4, rtt_ms: float = 20.0, seconds: float = 8.0) -> dict:
    bdp = max(20, int(rate_mbps * 1e6 * rtt_ms / 1e3 / 8 / 1500))
    sc = Scenario(
        {
            "name": f"limits-{rate_mbps:g}",
            "duration": seconds,
            "warmup": 2.0,
            "dumbbell": {
                "rate": rate_mbps * 1e6,
                "rtt": rtt_ms / 1e3,
                "buffer": bdp,
                "pkt_size": 1500,
            },
            "flows": [{"count": flows, "cc": "cubic", "start_jitter": 0.2}],
        }
    )
    s = emulate(sc).summary
    link = s["links"]["bottleneck"]
    t = s["emulation"]["timing"]
    mins = [f["rtt_ms_min"] for f in s["flows"] if f.get("rtt_ms_min")]
    return {
        "rate": rate_mbps,
        "util": link["utilization"],
        "goodput": sum(f["goodput_bps"] for f in s["flows"]) / 1e6,
        "late": t["forward"],
        "rev": t["reverse"],
        "p99_share": t["forward"]["p99_us"] / (rtt_ms / 2 * 1e3),
        "min_rtt_excess_us": (min(mins) - rtt_ms) * 1e3 if mins else float("nan"),
        "failures": t["write_failures"],
        "rt": t["realtime"],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", default="10,100,200,400,800")
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()
    print(
        "| rate [Mb/s] | util [%] | goodput [Mb/s] | release error mean / p99 / p99.9 / max [µs]"
        " | p99 / one-way delay | ACK-side p99 [µs] | min-RTT excess [µs] | lost writes |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in (float(x) for x in a.rates.split(",")):
        for _ in range(a.reps):
            x = run(r)
            lt = x["late"]
            print(
                f"| {x['rate']:g} | {100 * x['util']:.1f} | {x['goodput']:.1f} | "
                f"{lt['mean_us']:.0f} / {lt['p99_us']:.0f} / {lt['p999_us']:.0f} / "
                f"{lt['max_us']:.0f} | {100 * x['p99_share']:.2f} % | {x['rev']['p99_us']:.0f} | "
                f"{x['min_rtt_excess_us']:.0f} | {x['failures']} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
