"""Fluid-model benchmark: prints seconds, a ratio against a reference run, and PASS/FAIL.

1. 10-flow SQM model over 50 s (bar: < 0.5 s); reference: the same model integrated one flow
   at a time is not meaningful, so the ratio is against scipy's solve_ivp (RK45, rtol 1e-8) on the
   delay-free variant (D_i -> 0) of the same model.
2. A batch of 1,000 Misra-PI parameter sets over 100 s (bar: < 30 s); reference: a loop of
   single runs, timed on 20 sets and scaled to 1,000.
"""

import time

import numpy as np
from aqmlab.fluid import PI, SQM, Misra
from scipy.integrate import solve_ivp


def bench_sqm():
    rtt = np.linspace(0.1, 0.15, 10)
    m = SQM(capacity=1000, rtt=rtt, weights=[1500] * 5 + [1000] * 5)
    m.simulate(1.0)  # warm-up
    t0 = time.perf_counter()
    r = m.simulate(50.0)
    ours = time.perf_counter() - t0
    N = m.N

    def f(t, y):
        x, q = y[:N], y[N:]
        p = np.clip((q - m.beta[0]) / m.sigma[0], 0, 1)
        dq = x - m.Cpair[0]
        dq = np.where((q <= 0) & (dq < 0), 0, dq)
        return np.concatenate([m.k[0] * (1 - x**2 * p), dq])

    t0 = time.perf_counter()
    solve_ivp(f, (0, 50), m.initial_state()[0], rtol=1e-8, atol=1e-8)
    ref = time.perf_counter() - t0
    rates = r["x"][-1, 0]
    print(
        f"SQM 10 flows, 50 s: {ours:.3f} s (dt={r.info['dt']}), final rates "
        f"{rates[0]:.2f}/{rates[-1]:.2f}; scipy solve_ivp delay-free: {ref:.3f} s; "
        f"ratio ours/ref = {ours / ref:.2f}  -> {'PASS' if ours < 0.5 else 'FAIL'} (< 0.5 s)"
    )


def bench_misra_batch(B=1000):
    rng = np.random.default_rng(1)
    n = rng.uniform(40, 120, B)
    rtt = rng.uniform(0.1, 0.25, B)
    t0 = time.perf_counter()
    r = Misra(n_flows=n, capacity=3750, rtt=rtt, law=PI(qref=200)).simulate(100.0, dt=0.01)
    ours = time.perf_counter() - t0
    k = 20
    t0 = time.perf_counter()
    for i in range(k):
        Misra(n_flows=n[i], capacity=3750, rtt=rtt[i], law=PI(qref=200)).simulate(100.0, dt=0.01)
    loop = (time.perf_counter() - t0) / k * B
    print(
        f"Misra-PI batch of {B}, 100 s: {ours:.2f} s (final q median {np.median(r['q'][-1]):.1f}); "
        f"loop of single runs (extrapolated from {k}): {loop:.1f} s; speed-up {loop / ours:.0f}x"
        f"  -> {'PASS' if ours < 30 else 'FAIL'} (< 30 s)"
    )


if __name__ == "__main__":
    bench_sqm()
    bench_misra_batch()
