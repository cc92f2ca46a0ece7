"""How close a sweep's time estimate (aqmlab.sweep.budget.run_seconds) is to the time runs take.
Standalone: ``python benches/bench_sweep_estimate.py``.

Simulates a set of scenarios of different shapes (link rates from 1 Mb/s to 1 Gb/s, 1 to 2000
flows, long and short flows, UDP, a parking lot, an explicit topology, FQ-CoDel with ECN and
SACK) one after the other in this process and prints, for each, the measured wall-clock seconds,
the estimate and their ratio. The estimate is there to catch specs that are off by orders of
magnitude (``--max-time``); the bar is that it is within a factor of 4 of the measured time
on every scenario here, in either direction. Exits 1 if the bar fails.
"""

from __future__ import annotations

import sys
import time

from aqmlab.scenario import Scenario
from aqmlab.sim import simulate
from aqmlab.sweep.budget import run_seconds

BAR = 4.0

SCENARIOS = {
    "1 Mb/s, 1 flow, 60 s": {
        "duration": "60s",
        "dumbbell": {"rate": "1Mbps"},
        "flows": [{"count": 1}],
    },
    "10 Mb/s, 2 flows, 20 s": {
        "duration": "20s",
        "dumbbell": {"rate": "10Mbps"},
        "flows": [{"count": 2}],
    },
    "10 Mb/s, 200 flows, 10 s, RTT 10 ms": {
        "duration": "10s",
        "dumbbell": {"rate": "10Mbps", "rtt": "10ms"},
        "flows": [{"count": 200}],
    },
    "100 Mb/s, 20 flows, 10 s, CoDel": {
        "duration": "10s",
        "dumbbell": {"rate": "100Mbps"},
        "aqm": {"type": "codel"},
        "flows": [{"count": 20}],
    },
    "100 Mb/s, 2000 flows, 2 s": {
        "duration": "2s",
        "dumbbell": {"rate": "100Mbps"},
        "flows": [{"count": 2000}],
    },
    "1 Gb/s, 100 flows, 5 s": {
        "duration": "5s",
        "dumbbell": {"rate": "1Gbps"},
        "flows": [{"count": 100}],
    },
    "1 Gb/s, 50 flows, 5 s, RTT 10 ms, FQ-CoDel, ECN, SACK": {
        "duration": "5s",
        "dumbbell": {"rate": "1Gbps", "rtt": "10ms", "buffer": 2000},
        "aqm": {"type": "fq_codel"},
        "flows": [{"count": 50, "sack": True, "ecn": True}],
    },
    "100 Mb/s, short flows (200/s of 100 kB), 10 s": {
        "duration": "10s",
        "dumbbell": {"rate": "100Mbps", "rtt": "20ms"},
        "flows": [{"kind": "tcp_short", "arrival_rate": 200, "mean_size": "100kB"}],
    },
    "100 Mb/s, 1 UDP flow at 50 Mb/s, 10 s": {
        "duration": "10s",
        "dumbbell": {"rate": "100Mbps"},
        "flows": [{"kind": "udp_cbr", "rate": "50Mbps"}],
    },
    "parking lot, 3 hops of 10 Mb/s, 10 s": {
        "duration": "10s",
        "parking_lot": {"rate": "10Mbps", "hops": 3},
        "flows": [{"count": 3}],
    },
    "explicit, 2 links of 20 Mb/s, 10 s": {
        "duration": "10s",
        "nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "links": [
            {"src": "a", "dst": "b", "rate": "20Mbps", "delay": "10ms"},
            {"src": "b", "dst": "c", "rate": "20Mbps", "delay": "10ms"},
        ],
        "flows": [{"src": "a", "dst": "c", "count": 4}],
    },
}


def main() -> int:
    worst = 1.0
    print(f"{'scenario':56s} {'measured':>9s} {'estimate':>9s} {'est/meas':>8s}")
    for name, data in SCENARIOS.items():
        est = run_seconds(Scenario(data))
        t0 = time.perf_counter()
        simulate(data)
        took = time.perf_counter() - t0
        ratio = est / took
        worst = max(worst, ratio, 1 / ratio)
        print(f"{name:56s} {took:8.3f}s {est:8.3f}s {ratio:8.2f}")
    ok = worst <= BAR
    print(f"worst factor {worst:.2f} (bar {BAR:g}): {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
