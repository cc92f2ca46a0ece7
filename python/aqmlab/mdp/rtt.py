"""PAQMAN single flow with non-negligible RTT (docs/paqman.md, PAQMAN §V-A).

Decisions are taken at the first arrival at least one RTT ``R`` after the previous decision; the
arrivals in between are admitted while there is room. Interarrivals are exponential (``alpha = 1``)
with the rate in force ``lambda_k``, service is exponential ``mu``. Over one inter-decision interval
the queue moves by ``P_lambda = expm(Q_lambda R) * lambda (lambda I - Q_0)^{-1}`` (Prop. V.2).

Decisions recorded here (the reward and the delay test; docs/paqman.md):

* default reward per decision = expected number of packets admitted until the next decision
  (the decision packet if admitted, plus ``lambda * int_0^R P(Q(t) < B) dt`` window arrivals),
  minus ``P`` times the expected number of those admissions whose expected delay
  ``(j + 1) / mu`` exceeds the target (``j`` = queue the packet finds). Occupation times
  ``int_0^R expm(Q_lambda t) dt`` come from one block matrix exponential (Van Loan 1978).
  The window admissions are what makes a large RTT call for earlier drops (PAQMAN Fig. 6).
* literal reward: ``phi(lambda') - phi(lambda)`` and ``-P`` for the decision packet only.
* delay test for the decision packet uses the queue after the action.
* the default penalty ``P = 0.5`` and why ``P = 1`` lost throughput with RTT are recorded in
  :mod:`aqmlab.mdp.model`.

Examples
--------
>>> from aqmlab.mdp import rtt_model, solve
>>> m = rtt_model(833.3, 0.005, rtt_s=0.01, buffer=30, grid=10)
>>> bool(abs(m.kernel.sum(axis=2) - 1).max() < 1e-9)
True
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.linalg import expm
from threadpoolctl import threadpool_limits

from aqmlab.mdp.model import ADMIT, DEFAULT_DROP_PROJECTION, DROP, Smdp, _skeleton

__all__ = ["birth_death_generator", "pure_death_generator", "interval_kernel", "rtt_model"]


def birth_death_generator(lam: float, mu: float, buffer: int) -> np.ndarray:
    """Generator ``Q_lambda`` on ``{0..B}``: births ``lam`` (blocked at ``B``), deaths ``mu``.

    docs/paqman.md (PAQMAN §V-A); rows sum to zero.

    Parameters
    ----------
    lam : float
        Birth (arrival) rate (1/s).
    mu : float
        Death (service) rate (1/s).
    buffer : int
        ``B``.

    Returns
    -------
    ndarray, shape (B + 1, B + 1)
    """
    n = buffer + 1
    g = np.zeros((n, n))
    i = np.arange(n - 1)
    g[i, i + 1] = lam
    g[i + 1, i] = mu
    g[np.arange(n), np.arange(n)] = -g.sum(axis=1)
    return g


def pure_death_generator(mu: float, buffer: int) -> np.ndarray:
    """Generator ``Q_0`` of eq. (9): deaths ``mu`` while non-empty, no births.

    Parameters
    ----------
    mu : float
        Service rate (1/s).
    buffer : int
        ``B``.

    Returns
    -------
    numpy.ndarray, shape (B + 1, B + 1)
    """
    return birth_death_generator(0.0, mu, buffer)


def interval_kernel(
    lam: float, mu: float, rtt_s: float, buffer: int, f: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Queue transition matrix over one inter-decision interval, and a window occupation integral.

    ``P = expm(Q_lambda R) @ lambda (lambda I - Q_0)^{-1}`` (PAQMAN Prop. V.2, docs/paqman.md; the
    second factor is ``E[expm(Q_0 Y)]``, ``Y ~ Exp(lambda)``, by Fact V.1) and
    ``int_0^R expm(Q_lambda t) f dt`` from the top-right column of ``expm([[Q, f], [0, 0]] R)``
    (Van Loan 1978), so one SciPy ``expm`` of size ``B + 2`` gives both.

    Parameters
    ----------
    lam : float
        Arrival rate in force (packets/s).
    mu : float
        Service rate (packets/s).
    rtt_s : float
        ``R`` (s), may be 0.
    buffer : int
        ``B``.
    f : ndarray, shape (B + 1,), optional
        Per-queue-state rate to integrate over the window (default: ones, giving ``R``).

    Returns
    -------
    kernel : ndarray, shape (B + 1, B + 1)
    occupation : ndarray, shape (B + 1,)
        ``E[int_0^R f(Q(t)) dt | Q(0) = q]`` for each start state ``q``.

    Examples
    --------
    >>> p, occ = interval_kernel(50.0, 100.0, 0.01, 10)
    >>> bool(abs(p.sum(axis=1) - 1).max() < 1e-12), round(float(occ[0]), 6)
    (True, 0.01)
    """
    n = buffer + 1
    if f is None:
        f = np.ones(n)
    big = np.zeros((n + 1, n + 1))
    big[:n, :n] = birth_death_generator(lam, mu, buffer) * rtt_s
    big[:n, n] = np.asarray(f, dtype=float) * rtt_s
    e = expm(big)
    window, occ = e[:n, :n], e[:n, n]
    return _after_window(window[None], np.array([lam]), mu, buffer)[0], occ


def _after_window(window: np.ndarray, lams: np.ndarray, mu: float, buffer: int) -> np.ndarray:
    """``window @ lambda (lambda I - Q_0)^{-1}`` per rate (Prop. V.2 second factor, Fact V.1).

    The second factor is the pure-death law over an ``Exp(lambda)`` time, lower triangular:
    ``A[i, j] = pi c^(i - j)`` (``1 <= j <= i``), ``A[i, 0] = c^i``, ``pi = lambda / (lambda + mu)``,
    ``c = 1 - pi``; so ``window @ A`` is a reverse geometric recursion over columns, ``O(B^2)``.
    """
    pi = lams / (lams + mu)
    c = (1.0 - pi)[:, None]
    out = np.empty_like(window)
    acc = np.zeros(window.shape[:2])
    for j in range(buffer, 0, -1):  # acc_j = sum_{i >= j} W[:, i] c^(i - j)
        acc = window[:, :, j] + c * acc
        out[:, :, j] = pi[:, None] * acc
    out[:, :, 0] = window[:, :, 0] + c * acc  # sum_i W[:, i] c^i
    np.clip(out, 0.0, None, out=out)
    out /= out.sum(axis=2, keepdims=True)  # remove round-off (entries ~1e-16)
    return out


def uniformized_windows(
    lams: np.ndarray, mu: float, rtt_s: float, buffer: int, f: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``expm(Q_lambda R)`` and ``int_0^R expm(Q_lambda t) f_lambda dt`` for many rates at once.

    Uniformization (Jensen 1953): with ``L = lambda + mu`` and ``U = I + Q / L`` (tridiagonal),
    ``expm(Q R) = sum_k Poi(k; L R) U^k`` and ``int_0^R expm(Q t) f dt = sum_k P(N > k) U^k f / L``,
    ``N ~ Poi(L R)``; the series is cut where the Poisson tail is below ``1e-15``. This is the same
    matrix exponential as :func:`interval_kernel` computes with SciPy ``expm`` (the tests check
    agreement to 1e-10), in banded ``O(K B^2)`` work per rate instead of dense ``O(B^3)``.

    Parameters
    ----------
    lams : ndarray, shape (n,)
        Arrival rates (packets/s).
    mu, rtt_s, buffer
        As :func:`interval_kernel`.
    f : ndarray, shape (n, B + 1)
        Integrand per rate.

    Returns
    -------
    window : ndarray, shape (n, B + 1, B + 1)
    occupation : ndarray, shape (n, B + 1)
    """
    lams = np.asarray(lams, dtype=float)
    n, nq = lams.size, buffer + 1
    eye = np.broadcast_to(np.eye(nq), (n, nq, nq)).copy()
    if rtt_s == 0:
        return eye, np.zeros((n, nq))
    big_l = lams + mu  # uniformization constant per rate
    up = np.zeros((n, nq))  # U[i, i+1]
    dn = np.zeros((n, nq))  # U[i, i-1]
    up[:, :-1] = (lams / big_l)[:, None]
    dn[:, 1:] = mu / big_l[:, None]
    stay = 1.0 - up - dn
    lt = big_l * rtt_s
    kmax_each = stats.poisson.isf(1e-15, lt).astype(int) + 10  # series length per rate
    kmax = int(kmax_each.max())
    k = np.arange(kmax + 1)
    w = stats.poisson.pmf(k[None, :], lt[:, None])  # (n, K)
    tail = stats.poisson.sf(k[None, :], lt[:, None]) / big_l[:, None]  # P(N > k) / L
    m = eye  # U^k as a stack, rows = start state
    v = np.asarray(f, dtype=float).copy()  # U^k f
    window = w[:, 0, None, None] * m
    occ = tail[:, 0, None] * v
    m2 = np.empty_like(m)
    tmp = np.empty_like(m)
    order = np.argsort(kmax_each)
    if not (order == np.arange(n)).all():  # rates come sorted from the grid; keep it general
        raise ValueError("lams must be sorted ascending")
    for j in range(1, kmax + 1):
        lo = int(np.searchsorted(kmax_each, j))  # rates whose series is not finished
        a, b, c = m[lo:], m2[lo:], tmp[lo:]
        np.multiply(stay[lo:, :, None], a, out=b)
        np.multiply(up[lo:, :-1, None], a[:, 1:], out=c[:, :-1])
        b[:, :-1] += c[:, :-1]
        np.multiply(dn[lo:, 1:, None], a[:, :-1], out=c[:, 1:])
        b[:, 1:] += c[:, 1:]
        m, m2 = m2, m
        np.multiply(w[lo:, j, None, None], m[lo:], out=c)
        window[lo:] += c
        v2 = stay * v
        v2[:, :-1] += up[:, :-1] * v[:, 1:]
        v2[:, 1:] += dn[:, 1:] * v[:, :-1]
        v = v2
        occ += tail[:, j, None] * v
    return window, occ


def rtt_model(
    service_pps: float,
    target_s: float,
    rtt_s: float,
    buffer: int = 200,
    grid: int = 50,
    penalty: float | None = None,
    reward: str = "default",
    phi: str = "sqrt",
    drop_factor: float = 0.5,
    window_penalty: bool = True,
    method: str = "expm",
    drop_projection: str = DEFAULT_DROP_PROJECTION,
) -> Smdp:
    """Build the single-flow non-negligible-RTT PAQMAN SMDP (docs/paqman.md, PAQMAN §V-A).

    State ``(Q_k, lambda_k)``: queue at decision epoch ``k`` and the rate in force until the next
    one; the action sets the next rate (eq. (10)); ``tau = R + 1 / lambda`` (eq. (8)).

    Parameters
    ----------
    service_pps : float
        ``mu`` (packets/s).
    target_s : float
        Delay target ``d`` (s).
    rtt_s : float
        ``R`` (s), ``>= 0``.
    buffer, grid, penalty, reward, phi, drop_factor
        As :func:`aqmlab.mdp.negligible_rtt_model`; exponential interarrivals (``alpha = 1``).
    window_penalty : bool
        Default reward only: also charge ``P`` for window admissions that breach the target
        (True) or only for the decision packet (False).
    method : {"expm", "uniformization"}
        How ``expm(Q_lambda R)`` is evaluated: SciPy ``expm`` per rate (Prop. V.2 verbatim, one
        ``(B + 2)``-square exponential per rate, default) or the banded uniformization series
        (a cross-check; slower with single-threaded BLAS, competitive only for small ``R``).
    drop_projection : {"split", "floor"}
        As :func:`aqmlab.mdp.negligible_rtt_model`.

    Returns
    -------
    Smdp

    Examples
    --------
    >>> m = rtt_model(833.3, 0.005, 0.001, buffer=20, grid=5)
    >>> m.kernel.shape
    (10, 21, 21)
    """
    if not np.isfinite(rtt_s) or rtt_s < 0:
        raise ValueError(f"rtt_s {rtt_s!r}: must be >= 0")
    sk = _skeleton(
        service_pps, target_s, buffer, grid, drop_factor, reward, penalty, phi, drop_projection
    )
    g, rew, pen, qrow = sk.grid, sk.reward, sk.penalty, sk.qrow
    nq, nr = buffer + 1, g.size
    q = np.arange(nq)
    lam = g.rates_pps
    # Window admissions (default reward): +1 each, -P if the packet's expected delay breaches.
    ok = q < buffer
    breach = ok & ((q + 1) / service_pps > target_s)
    per_state = ok.astype(float) - (pen if window_penalty else 0.0) * breach
    f = lam[:, None] * per_state[None, :]
    if method == "expm":
        kernel = np.empty((nr, nq, nq))
        win = np.empty((nr, nq))  # expected window reward by start queue
        # Many small (B + 2)-square products: threaded BLAS only adds contention (measured
        # 0.8 s single-threaded vs 20+ s with all threads on a loaded 2-core machine).
        with threadpool_limits(limits=1, user_api="blas"):
            for i, la in enumerate(lam):
                kernel[i], win[i] = interval_kernel(la, service_pps, rtt_s, buffer, f[i])
    elif method == "uniformization":
        window, win = uniformized_windows(lam, service_pps, rtt_s, buffer, f)
        kernel = _after_window(window, lam, service_pps, buffer)
    else:
        raise ValueError(f"method {method!r}: expected 'uniformization' or 'expm'")
    blk = np.stack([g.index - 1, g.index - 1])  # the kernel depends on the rate in force now
    if reward == "default":
        rew[ADMIT] += win[:, qrow[ADMIT]]
        rew[DROP] += win[:, qrow[DROP]]
    tau = np.broadcast_to((rtt_s + 1.0 / lam)[None, :, None], (2, nr, nq)).copy()
    meta = dict(
        model="rtt",
        block_by="current",
        service_pps=service_pps,
        target_s=target_s,
        rtt_s=rtt_s,
        alpha=1.0,
        penalty=pen,
        reward=reward,
        phi=phi,
        window_penalty=window_penalty,
        drop_projection=drop_projection,
    )
    return Smdp(kernel, blk, sk.nxt, qrow, rew, tau, sk.feasible, g, meta, sk.nxt_hi, sk.nxt_w)
