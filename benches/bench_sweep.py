"""Speed of sweeps (aqmlab.sweep). Standalone: ``python benches/bench_sweep.py [--runs 1000]``.

Bars (issue "Experiments at scale", section 5):
  * per-run overhead of a sweep beyond the simulation itself < 20 ms: a 1-worker sweep of N short
    runs against the same N simulations run one after the other in this process (the reference,
    measured in the same run): ``(T_sweep - T_reference) / N``, pool start-up, records and
    results.parquet included;
  * two workers at least 1.6x faster than one on 16 runs of about half a second each (both
    sweeps measured here, one after the other).
Reported without a bar: runs per minute of a sweep of ``--runs`` (default 1000) short
simulations on a local pool of all cores and on a Dask ``LocalCluster`` of as many workers
(skipped if dask is not installed), against the in-process reference rate.

The machine may be shared: the wall times are what a user sees; the 2-worker ratio can only be
reached when two cores are free. Exits 1 if a bar fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from aqmlab import sweep
from aqmlab.sim import simulate

OVERHEAD_BAR_S = 0.020
SPEEDUP_BAR = 1.6

# short runs: a few ms of simulation each, so that the overhead shows
SHORT = {
    "duration": "2s",
    "dumbbell": {"rate": "10Mbps", "rtt": "50ms", "buffer": 60},
    "aqm": {"type": "codel"},
    "flows": [{"count": 4}],
}
# about half a second each on one core (for the 2-worker speed-up)
HALF_SECOND = {
    "duration": "20s",
    "dumbbell": {"rate": "100Mbps", "rtt": "50ms", "buffer": 500},
    "aqm": {"type": "codel"},
    "flows": [{"count": 20}],
}


def reference(spec: dict) -> float:
    """The spec's simulations one after the other in this process (wall seconds)."""
    sp = sweep.load_spec(spec)
    t0 = time.perf_counter()
    for r in sp.runs():
        simulate(sp.scenario_data(r.overrides, r.seed))
    return time.perf_counter() - t0


def timed_sweep(spec: dict, out: Path, **kw) -> float:
    return timed_sweep_runs(spec, out, **kw)[0]


def timed_sweep_runs(spec: dict, out: Path, **kw) -> tuple[float, float]:
    """(wall seconds of the sweep, mean wall seconds of one run inside its worker)."""
    t0 = time.perf_counter()
    df = sweep.run(spec, out, **kw).to_pandas()
    took = time.perf_counter() - t0
    assert df["error"].isna().all(), df["error"].dropna().iloc[0]
    shutil.rmtree(out)
    return took, float(df["wall_s"].mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000, help="runs of the throughput sweeps")
    ap.add_argument("--overhead-runs", type=int, default=100)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    ok = True
    # the 2-worker bar needs two free cores: show how busy the machine is
    print(f"cores: {sweep.default_workers()}, load average (1 min) at start: "
          f"{os.getloadavg()[0]:.2f}")  # fmt: skip
    try:
        # 1. per-run overhead
        n = args.overhead_runs
        spec = {"base": SHORT, "seeds": list(range(1, n + 1))}
        simulate(SHORT)  # warm the reference's imports
        t_ref = reference(spec)
        t_one = timed_sweep(spec, tmp / "one", workers=1)
        over = (t_one - t_ref) / n
        verdict = "PASS" if over < OVERHEAD_BAR_S else "FAIL"
        ok &= over < OVERHEAD_BAR_S
        print(f"per-run overhead, {n} runs of {t_ref / n * 1e3:.1f} ms: in-process {t_ref:.2f} s, "
              f"1-worker sweep {t_one:.2f} s -> {over * 1e3:.1f} ms per run "
              f"(bar < {OVERHEAD_BAR_S * 1e3:.0f} ms) {verdict}")  # fmt: skip

        # 2. two workers vs one on 16 runs
        spec = {"base": HALF_SECOND, "seeds": list(range(1, 17))}
        t1, run1 = timed_sweep_runs(spec, tmp / "w1", workers=1)
        t2, run2 = timed_sweep_runs(spec, tmp / "w2", workers=2)
        ratio = t1 / t2
        # if the cores are not free, each run slows down when two run at once
        print(f"  one run took {run1:.3f} s with 1 worker, {run2:.3f} s with 2 "
              f"({run2 / run1:.2f}x: 1.00x when two cores are free); load average (1 min) "
              f"after: {os.getloadavg()[0]:.2f}")  # fmt: skip
        verdict = "PASS" if ratio >= SPEEDUP_BAR else "FAIL"
        ok &= ratio >= SPEEDUP_BAR
        print(f"16 runs of ~{t1 / 16:.2f} s: 1 worker {t1:.2f} s, 2 workers {t2:.2f} s -> "
              f"speed-up {ratio:.2f}x (bar >= {SPEEDUP_BAR}x) {verdict}")  # fmt: skip

        # 3. runs per minute of a large sweep of short simulations
        n = args.runs
        spec = {"base": SHORT, "seeds": list(range(1, n + 1))}
        workers = sweep.default_workers()
        t_ref = reference({"base": SHORT, "seeds": list(range(1, 101))}) * n / 100
        print(f"{n}-run sweep of {SHORT['duration']} simulations, {workers} workers:")
        print(f"  in-process reference (1 core, no sweep): {60 * n / t_ref:8.0f} runs/min")
        t_loc = timed_sweep(spec, tmp / "local", workers=workers)
        print(f"  local pool:                              {60 * n / t_loc:8.0f} runs/min "
              f"({t_loc:.1f} s; {t_ref / t_loc:.2f}x the reference)")  # fmt: skip
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            print("  Dask LocalCluster: skipped (pip install 'aqmlab[dask]')")
        else:
            t_dask = timed_sweep(spec, tmp / "dask", dask="local", workers=workers)
            print(f"  Dask LocalCluster:                       {60 * n / t_dask:8.0f} runs/min "
                  f"({t_dask:.1f} s incl. cluster start; {t_ref / t_dask:.2f}x the reference)")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
