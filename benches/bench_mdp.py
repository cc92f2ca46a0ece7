"""Speed bars of the PAQMAN solvers (aqmlab.mdp). Standalone: ``python benches/bench_mdp.py``.

Bars (issue "PAQMAN: optimal drop policies"):
  * negligible RTT, B = 200, 100-point rate grid: model + solve < 2 s
  * single flow with RTT (10 ms), B = 200, 100-point grid: model + solve < 10 s
Ratios against references computed in this script:
  * vectorised relative value iteration vs a plain per-state Python loop (same instance, same
    sweeps), on a small instance;
  * banded uniformization vs SciPy ``expm`` per rate for Prop. V.2's matrices.
Prints seconds, PASS/FAIL and ratios; exits 1 if a bar fails.

The bars are judged on process CPU time with single-threaded BLAS (set below, before NumPy loads),
which is what the wall time is on an idle core; the wall time is printed too, since on a shared,
loaded machine it can be several times larger.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from aqmlab.mdp import negligible_rtt_model, rtt_model, solve, transform
from aqmlab.mdp.model import ADMIT, DROP

MU = 10e6 / (8 * 1500)  # 10 Mbit/s, 1500-byte packets


def timed(fn, repeat: int = 1):
    """Best (CPU seconds, wall seconds) over ``repeat`` calls, and the last result."""
    cpu, wall, out = np.inf, np.inf, None
    for _ in range(repeat):
        c, t = time.process_time(), time.perf_counter()
        out = fn()
        cpu = min(cpu, time.process_time() - c)
        wall = min(wall, time.perf_counter() - t)
    return cpu, wall, out


def plain_rvi(model, sweeps: int) -> np.ndarray:
    """Reference: the same RVI written as loops over states and successors (no vectorisation)."""
    rbar, w, _ = transform(model)
    p = model.to_sparse()
    nq, nr = model.buffer + 1, model.grid.size
    succ = []
    for a in (ADMIT, DROP):
        pa = p[a]
        succ.append(
            [
                list(zip(pa.indices[pa.indptr[s] : pa.indptr[s + 1]].tolist(),
                         pa.data[pa.indptr[s] : pa.indptr[s + 1]].tolist(), strict=True))
                for s in range(nq * nr)
            ]
        )  # fmt: skip
    rb = [rbar[a].ravel().tolist() for a in (ADMIT, DROP)]
    ww = [w[a].ravel().tolist() for a in (ADMIT, DROP)]
    feas = [model.feasible[a].ravel().tolist() for a in (ADMIT, DROP)]
    v = [0.0] * (nq * nr)
    for _ in range(sweeps):
        new = []
        for s in range(nq * nr):
            best = -np.inf
            for a in (ADMIT, DROP):
                if not feas[a][s]:
                    continue
                e = 0.0
                for s2, pr in succ[a][s]:
                    e += pr * v[s2]
                val = rb[a][s] + ww[a][s] * e + (1 - ww[a][s]) * v[s]
                best = max(best, val)
            new.append(best)
        v = [x - new[0] for x in new]
    return np.array(v)


def _vector_rvi(model, sweeps: int) -> np.ndarray:
    """The sweeps of :func:`aqmlab.mdp.solve` (same update), for a like-for-like ratio."""
    rbar, w, _ = transform(model)
    v = np.zeros((model.grid.size, model.buffer + 1))
    for _ in range(sweeps):
        q = rbar + w * model.expected_next(v) + (1 - w) * v[None]
        q[~model.feasible] = -np.inf
        vn = q.max(axis=0)
        v = vn - vn[0, 0]
    return v.ravel()


def main() -> int:
    ok = True
    print("PAQMAN solver benchmarks (seconds, best of runs)")

    t, w, pol = timed(lambda: solve(negligible_rtt_model(MU, 0.005, buffer=200, grid=50)), 2)
    flag = t < 2.0
    ok &= flag
    print(f"negligible RTT  B=200 rates=100: cpu {t:6.2f} s (wall {w:6.2f} s, "
          f"{pol.iterations} sweeps)  bar 2 s  {'PASS' if flag else 'FAIL'}")  # fmt: skip

    t, w, pol = timed(lambda: solve(rtt_model(MU, 0.005, 0.010, buffer=200, grid=50)))
    flag = t < 10.0
    ok &= flag
    print(f"RTT 10 ms       B=200 rates=100: cpu {t:6.2f} s (wall {w:6.2f} s, "
          f"{pol.iterations} sweeps)  bar 10 s {'PASS' if flag else 'FAIL'}")  # fmt: skip

    small = negligible_rtt_model(MU, 0.005, buffer=30, grid=10)
    sweeps = 50
    t_plain, _, v_plain = timed(lambda: plain_rvi(small, sweeps))
    t_vec, _, v_vec = timed(lambda: _vector_rvi(small, sweeps), 3)
    assert np.allclose(v_plain, v_vec, rtol=1e-9, atol=1e-6), "reference and solver disagree"
    print(f"RVI sweep, B=30 rates=20, {sweeps} sweeps: plain loop {t_plain:.3f} s, "
          f"vectorised {t_vec:.4f} s, ratio {t_plain / t_vec:.0f}x")  # fmt: skip

    t_exp, _, _ = timed(lambda: rtt_model(MU, 0.005, 0.010, buffer=200, grid=50), 2)
    t_uni, _, _ = timed(lambda: rtt_model(MU, 0.005, 0.010, buffer=200, grid=50,
                                          method="uniformization"))  # fmt: skip
    print(f"Prop. V.2 matrices, B=200 rates=100, R=10 ms: expm {t_exp:.2f} s, "
          f"uniformization {t_uni:.2f} s, ratio {t_uni / t_exp:.1f}x")  # fmt: skip
    print("ALL PASS" if ok else "SOME BARS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
