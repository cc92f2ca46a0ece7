"""PAQMAN single flow, negligible RTT: the semi-Markov decision process of docs/paqman.md.

The state is ``(q, r)``: ``q`` in ``0..B`` packets in the system just before an arrival and ``r`` in
``1..2G`` the index of the effective arrival rate ``x = r * unit`` (packets/s). The action is
*admit* or *drop* of the arriving packet. Everything a solver needs is collected in a
:class:`Smdp`, which :mod:`aqmlab.mdp.rtt` builds for the non-negligible-RTT model as well.

Decisions recorded here (docs/paqman.md; every equation of the PAQMAN model is a reconstruction):

* Reward (PAQ §III-B, eq. 1, whose formula did not survive): the default is one packet of
  throughput per admitted packet and ``-P`` when the
  admitted packet's expected delay ``(q + 1) / mu`` exceeds the target ``d``. The literal reading
  (a change of ``phi(rate)``, ``phi = sqrt``) telescopes, so its long-run average is decided by the
  penalty alone; it is kept as ``reward="literal"`` for comparison.
* Delay test: a drop is never penalised (the queue after a drop is unchanged by the decision).
* Rate grid (the value iteration of PAQ §III needs a finite one; the paper gives none): unit
  ``mu / G`` (``G = 50``), indices ``1..2G``; admit ``r -> min(r + 1, 2G)``,
  drop ``r -> r / 2`` projected onto the grid: by default split between ``floor(r / 2)`` and
  ``ceil(r / 2)`` so that the expected rate is ``r / 2`` (``drop_projection="split"``); the
  deterministic ``max(1, r // 2)`` (``"floor"``, the first implementation) made the policy
  islands of docs/paqman.md.
* Full buffer: admit is infeasible at ``q = B`` (a forced drop, which is the drop action,
  including its rate update).
* The penalty (its value in PAQ §VI did not survive). Default reward: ``P = 0.5``
  (:data:`DEFAULT_PENALTY`): an admitted packet
  that is expected to miss the target counts half a packet. An earlier proposal was ``P = 100``,
  which is far more conservative; ``P = 1`` (a late packet earns nothing, the gain is the rate of
  packets delivered within the target) was the default until it was measured with RTT.
  Literal reward: ``P = 100 * max |phi-difference|``.

  Model-level evaluation (:mod:`aqmlab.mdp.evaluate`; 10 Mbit/s, 1500 B, d = 5 ms, B = 200,
  G = 50, floor drop projection (measured before the split default), 5 runs x 20k arrivals,
  seeds 0-4; PAQMAN's mean delay in ms / throughput as a fraction of CoDel's). CoDel (target
  5 ms, interval 100 ms) delivers 649, 666 and 689 packets/s with a mean delay of 65, 50 and
  15 ms at RTT 0, 1 and 10 ms; drop-tail 834, 828 and 825 packets/s with 217, 201 and 147 ms;
  the link serves 833 packets/s:

  ===========  ===============  ===============  ===============
  P            RTT 0            RTT 1 ms         RTT 10 ms
  ===========  ===============  ===============  ===============
  0.5 default  3.8 / 1.04       5.0 / 1.00       6.4 / 0.95
  0.6          3.5 / 1.01       4.4 / 0.95       5.2 / 0.90
  0.7          3.3 / 0.99       4.1 / 0.92       4.6 / 0.86
  1            2.9 / 0.94       3.4 / 0.84       3.7 / 0.78
  100          2.2 / 0.74       1.7 / 0.39       1.5 / 0.23
  ===========  ===============  ===============  ===============

  The validation bar (PAQMAN's mean delay below CoDel's at the same target, throughput within
  10 % of CoDel's) holds at every RTT only from ``P = 0.6`` down, with no margin at 0.6 and
  10 ms; ``P = 0.5`` meets it with a 5 % margin. Its price is a mean delay above the target
  with a 10 ms RTT (6.4 ms, against CoDel's 15 ms); the bar is relative to CoDel, not the target.

  Why ``P = 1`` lost throughput with RTT. No modelling choice inconsistent with docs/paqman.md
  (PAQMAN §V-A) was found (the kernel uses the rate in force, the action acts one epoch later, the
  decision packet's delay test uses the queue after the admission, ``(q + 1) / mu``, and the
  evaluation's sender has exactly the model's lag). Three measured effects add up:
  (a) the RTT model assumes exponential interarrivals (``alpha = 1``, PAQMAN §V-A) where the
  negligible-RTT default has ``alpha = 2``: at RTT 0 with ``alpha = 1``, ``P = 1`` delivers 572
  instead of 610 packets/s; (b) only the first packet after each RTT window is controlled, the
  window packets are admitted, so the queue varies more at a given rate: 572 packets/s at
  RTT 0.1 ms, 535 at 10 ms; (c) CoDel gains with RTT in this sender model (the sender reduces
  at most once per RTT, which absorbs CoDel's drop bursts): 649 to 689 packets/s. (Not charging
  window packets for breaches, ``window_penalty=False``, is no remedy: 4.8 ms / 0.98 at 1 ms but
  136 ms at 10 ms, drop-tail behaviour.) What decides the operating point is ``P``: with Poisson
  arrivals and no control (the large-RTT limit, M/M/1 at load ``rho``) a packet breaches when it
  finds ``k = floor(mu d) = 4`` or more packets, with probability ``rho^k``, so the gain per
  service time ``rho (1 - P rho^k)`` peaks at ``rho* = (P (k + 1))^(-1/k)``: 0.67 for ``P = 1``,
  whose M/M/1 mean delay ``1 / (mu - lambda)`` is 3.6 ms, well below ``d``. ``P = 1`` optimises
  a per-packet deadline, not the mean delay. ``P = 0.6`` puts the M/M/1 optimum at a mean delay
  of ``d`` (``rho = 1 - 1 / (mu d) = 0.76``; measured 5.2 ms at 10 ms), ``P = 0.5`` at
  ``rho* = 0.80`` (5.8 ms; measured 6.4 ms).

Examples
--------
>>> from aqmlab.mdp import negligible_rtt_model, solve
>>> m = negligible_rtt_model(service_pps=833.3, target_s=0.005, buffer=40, grid=10)
>>> res = solve(m)
>>> bool(res.policy[:, 0].any())          # an arrival to an empty queue is never dropped
False
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy import special, stats

__all__ = [
    "ADMIT",
    "DROP",
    "RateGrid",
    "Smdp",
    "negligible_rtt_model",
    "lemma_iii1",
    "served_pmf",
    "reward_table",
]

#: Action indices used in every table (``policy[q, r] == DROP`` means drop).
ADMIT, DROP = 0, 1

#: Projections of the multiplicative decrease onto the rate grid (:class:`RateGrid`).
DROP_PROJECTIONS = ("floor", "split")

#: Default projection of the models (docs/paqman.md, "The policy islands").
DEFAULT_DROP_PROJECTION = "split"

#: Default delay-breach penalty ``P`` of the default reward (ours, see the module docstring).
DEFAULT_PENALTY = 0.5


@dataclass(frozen=True)
class RateGrid:
    """Finite grid of effective arrival rates (the rate grid above; docs/paqman.md).

    Parameters
    ----------
    unit_pps : float
        One grid step in packets/s (the AIMD additive increase ``a``); default ``mu / G``.
    size : int
        Number of grid points; indices ``1..size`` stand for rates ``index * unit_pps``.
    drop_factor : float
        Multiplicative decrease ``b`` (1/2 for Reno); a drop maps ``r`` to ``max(1, floor(b r))``.
    drop_projection : {"floor", "split"}
        How the model projects ``b r`` onto the grid after a drop: ``"floor"`` (the deterministic
        ``max(1, floor(b r))``) or ``"split"`` (mass ``b r - floor(b r)`` on ``ceil(b r)``, the rest
        on ``floor(b r)``, so the expected rate after a drop is exactly ``b r``; the default of the
        models, see docs/paqman.md, "The policy islands").
    """

    unit_pps: float
    size: int
    drop_factor: float = 0.5
    drop_projection: str = "floor"

    def __post_init__(self):
        if self.drop_projection not in DROP_PROJECTIONS:
            raise ValueError(
                f"drop_projection {self.drop_projection!r}: expected one of "
                + ", ".join(map(repr, DROP_PROJECTIONS))
            )

    @property
    def index(self) -> np.ndarray:
        """Grid indices ``1..size``."""
        return np.arange(1, self.size + 1)

    @property
    def rates_pps(self) -> np.ndarray:
        """Effective rates (packets/s) of the grid points."""
        return self.index * self.unit_pps

    def after_admit(self, r: np.ndarray) -> np.ndarray:
        """Index after an admit: ``min(r + 1, size)`` (AIMD additive increase, clamped).

        Parameters
        ----------
        r : numpy.ndarray of int
            Rate indices (1-based).

        Returns
        -------
        numpy.ndarray of int
        """
        return np.minimum(np.asarray(r) + 1, self.size)

    def after_drop(self, r: np.ndarray) -> np.ndarray:
        """Index after a drop: ``max(1, floor(b r))`` (AIMD multiplicative decrease).

        Parameters
        ----------
        r : numpy.ndarray of int
            Rate indices (1-based).

        Returns
        -------
        numpy.ndarray of int
        """
        return np.maximum(1, np.floor(np.asarray(r) * self.drop_factor).astype(int))

    def drop_split(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Law of the index after a drop: ``(lo, hi, w)``, ``hi`` with probability ``w``.

        ``"floor"``: ``lo = hi = after_drop(r)``, ``w = 0``. ``"split"``: ``lo = floor(b r)`` and
        ``hi = ceil(b r)`` (both clamped to ``1..size``), ``w = b r - floor(b r)``, so that
        ``E[index] = b r`` whenever ``b r >= 1``.

        Parameters
        ----------
        r : numpy.ndarray of int
            Rate indices (1-based).

        Returns
        -------
        tuple of numpy.ndarray
            ``(lo, hi, w)``.

        Examples
        --------
        >>> g = RateGrid(1.0, 10, 0.5, "split")
        >>> [a.tolist() for a in g.drop_split(np.array([4, 5]))]
        [[2, 2], [2, 3], [0.0, 0.5]]
        """
        r = np.asarray(r)
        lo = self.after_drop(r)
        if self.drop_projection == "floor":
            return lo, lo.copy(), np.zeros(lo.shape)
        x = r * self.drop_factor
        fl = np.floor(x)
        hi = np.clip(np.ceil(x).astype(int), 1, self.size)
        w = np.where((fl >= 1) & (hi > lo), x - fl, 0.0)
        return lo, hi, w

    def nearest(self, rate_pps: float | np.ndarray) -> np.ndarray:
        """Grid index nearest to a rate in packets/s (clamped to the grid).

        Parameters
        ----------
        rate_pps : float or numpy.ndarray
            Rates (packets/s).

        Returns
        -------
        numpy.ndarray of int
        """
        idx = np.rint(np.asarray(rate_pps, dtype=float) / self.unit_pps).astype(int)
        return np.clip(idx, 1, self.size)


@dataclass
class Smdp:
    """A PAQMAN semi-Markov decision process over states ``(q, r)``, ``q = 0..B``, ``r = 1..R``.

    The kernel is stored by blocks so that one value-iteration sweep costs two batched
    matrix-vector products instead of a generic sparse product: for action ``a`` the next queue
    follows row ``qrow[a][q]`` of ``kernel[blk[a][r - 1]]`` and the next rate index is
    ``nxt[a][r - 1]``. Arrays over states have shape ``(R, B + 1)`` (rate-major).

    Attributes
    ----------
    kernel : ndarray, shape (n_blocks, B + 1, B + 1)
        Row-stochastic queue transition matrices.
    blk, nxt : ndarray, shape (2, R)
        Kernel block and next rate index (1-based) per action and current rate index.
    qrow : ndarray, shape (2, B + 1)
        Kernel row per action and current queue (``q`` for drop, ``q + 1`` for admit).
    reward : ndarray, shape (2, R, B + 1)
        Expected reward per decision (reward units).
    tau : ndarray, shape (2, R, B + 1)
        Expected time to the next decision epoch (s).
    feasible : ndarray of bool, shape (2, R, B + 1)
        Whether the action is allowed (admit is not at ``q = B``).
    grid : RateGrid
    meta : dict
        Model parameters (service rate, target, penalty, reward variant, ...), for policy files.
    nxt_hi, nxt_w : ndarray, shape (2, R), optional
        A random next rate index: ``nxt_hi`` with probability ``nxt_w``, else ``nxt`` (the
        ``"split"`` drop projection of :class:`RateGrid`). ``None``: ``nxt`` is certain.
    """

    kernel: np.ndarray
    blk: np.ndarray
    nxt: np.ndarray
    qrow: np.ndarray
    reward: np.ndarray
    tau: np.ndarray
    feasible: np.ndarray
    grid: RateGrid
    meta: dict = field(default_factory=dict)
    nxt_hi: np.ndarray | None = None
    nxt_w: np.ndarray | None = None
    _fft: tuple | None = field(default=None, repr=False)

    def _branches(self, a: int):
        """``(next index, probability)`` pairs of action ``a`` (one or two branches)."""
        if self.nxt_hi is None or not self.nxt_w[a].any():
            return [(self.nxt[a], None)]
        return [(self.nxt[a], 1.0 - self.nxt_w[a]), (self.nxt_hi[a], self.nxt_w[a])]

    @property
    def buffer(self) -> int:
        """Buffer size ``B`` (packets)."""
        return self.kernel.shape[1] - 1

    @property
    def n_states(self) -> int:
        """Number of states ``(B + 1) * R``."""
        return self.grid.size * (self.buffer + 1)

    def expected_next(self, values: np.ndarray) -> np.ndarray:
        """``E[V(s') | s, a]`` for both actions, shape ``(2, R, B + 1)``.

        Parameters
        ----------
        values : ndarray, shape (R, B + 1)

        Returns
        -------
        numpy.ndarray, shape (2, R, B + 1)
        """
        out = np.empty((2, *values.shape))
        if self.meta.get("block_by") == "next":
            # blk == nxt: one product per block serves both actions (and both branches).
            w = self._toeplitz_apply(values) if self._fft is not None else _bmv(self.kernel, values)
            for a in (ADMIT, DROP):
                out[a] = sum(
                    (1.0 if p is None else p[:, None]) * w[n - 1][:, self.qrow[a]]
                    for n, p in self._branches(a)
                )
        else:
            ident = (self.blk == np.arange(self.grid.size)[None, :]).all(axis=1)
            for a in (ADMIT, DROP):
                k = self.kernel if ident[a] else self.kernel[self.blk[a]]
                nv = sum(
                    (1.0 if p is None else p[:, None]) * values[n - 1] for n, p in self._branches(a)
                )
                w = _bmv(k, nv)
                out[a] = w[:, self.qrow[a]]
        return out

    def use_toeplitz(self, pmf: np.ndarray, sf: np.ndarray) -> None:
        """Declare ``kernel[b, i, j] = pmf[b, i - j]`` (``j >= 1``), ``kernel[b, i, 0] = sf[b, i]``.

        :meth:`expected_next` then applies the kernel as an FFT convolution, ``O(B log B)`` per
        block instead of ``O(B^2)`` (the negligible-RTT kernel of Prop. III.2 has this form).

        Parameters
        ----------
        pmf : numpy.ndarray, shape (n_blocks, B + 1)
            Probability of ``k`` services per block.
        sf : numpy.ndarray, shape (n_blocks, B + 1)
            Probability of at least ``i`` services per block (the column ``j = 0``).
        """
        nq = self.buffer + 1
        n = 1 << int(np.ceil(np.log2(2 * nq)))
        self._fft = (np.fft.rfft(pmf, n=n, axis=1), sf, n)

    def _toeplitz_apply(self, values: np.ndarray) -> np.ndarray:
        fp, sf, n = self._fft
        nq = values.shape[1]
        conv = np.fft.irfft(fp * np.fft.rfft(values[:, 1:], n=n, axis=1), n=n, axis=1)
        w = np.empty_like(values)
        w[:, 0] = values[:, 0]
        w[:, 1:] = conv[:, : nq - 1] + sf[:, 1:] * values[:, :1]
        return w

    def to_sparse(self) -> list[sp.csr_matrix]:
        """Explicit transition matrices ``P_a`` (``n_states x n_states``, CSR), one per action.

        Rows of infeasible state-action pairs are copies of the drop row so that every row is a
        distribution; use :attr:`feasible` to mask them. State index ``s = (r - 1) * (B + 1) + q``.

        Returns
        -------
        list of scipy.sparse.csr_matrix
            ``[P_admit, P_drop]``.
        """
        nq, nr = self.buffer + 1, self.grid.size
        out = []
        for a in (ADMIT, DROP):
            rows, cols, vals = [], [], []
            for ri in range(nr):
                for q in range(nq):
                    b = a if self.feasible[a, ri, q] else DROP
                    for n, p in self._branches(b):
                        pr = 1.0 if p is None else float(p[ri])
                        if pr == 0.0:
                            continue
                        blk = n[ri] - 1 if self.meta.get("block_by") == "next" else self.blk[b][ri]
                        row = self.kernel[blk, self.qrow[b][q]]
                        nz = np.nonzero(row)[0]
                        rows.append(np.full(nz.size, ri * nq + q))
                        cols.append((n[ri] - 1) * nq + nz)
                        vals.append(pr * row[nz])
            out.append(
                sp.csr_matrix(
                    (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                    shape=(nq * nr, nq * nr),
                )
            )
        return out


# --- PAQMAN Lemma III.1 / Prop. III.2 ------------------------------------------------------------


def served_pmf(alpha: float, lam: float, mu: float, kmax: int) -> np.ndarray:
    """Law of the number of exponential(mu) services completed in a Gamma(alpha, lam) time.

    Negative binomial ``NB(alpha, pi)``, ``pi = lam / (lam + mu)`` (PAQMAN Lemma III.1):
    ``P(K = j) = Gamma(alpha + j) / (Gamma(alpha) j!) pi^alpha (1 - pi)^j``.

    Parameters
    ----------
    alpha : float
        Gamma shape of the interarrival time.
    lam : float
        Gamma rate parameter (1/s); the mean interarrival time is ``alpha / lam``.
    mu : float
        Service rate (packets/s).
    kmax : int
        Largest ``j`` returned.

    Returns
    -------
    ndarray, shape (kmax + 1,)

    Examples
    --------
    >>> round(float(served_pmf(1.0, 1.0, 1.0, 3)[0]), 3)
    0.5
    """
    pi = lam / (lam + mu)
    return stats.nbinom.pmf(np.arange(kmax + 1), alpha, pi)


def lemma_iii1(k: int, alpha: float, lam: float, mu: float) -> float:
    """``P(S_k < X)`` for ``S_k ~ Gamma(k, mu)`` and ``X ~ Gamma(alpha, lam)`` (PAQMAN Lemma III.1).

    ``1 - sum_{j<k} Gamma(alpha + j) / (Gamma(alpha) j!) pi^alpha (1 - pi)^j``, ``pi = lam/(lam+mu)``.

    Parameters
    ----------
    k : int
        Number of exponential services summed.
    alpha : float
        Gamma shape of ``X``.
    lam : float
        Gamma rate parameter of ``X`` (1/s).
    mu : float
        Service rate (1/s).

    Returns
    -------
    float

    Examples
    --------
    >>> round(lemma_iii1(1, 2.0, 1.0, 1.0), 4)     # 1 - pi^alpha
    0.75
    """
    if k <= 0:
        return 1.0
    pi = lam / (lam + mu)
    j = np.arange(k)
    logt = (
        special.gammaln(alpha + j)
        - special.gammaln(alpha)
        - special.gammaln(j + 1)
        + alpha * np.log(pi)
        + j * np.log1p(-pi)
    )
    return float(1.0 - np.exp(logt).sum())


def _nb_kernel(alpha: float, lam_next: np.ndarray, mu: float, buffer: int) -> np.ndarray:
    """Queue kernels of Prop. III.2, one per next gamma rate: ``K[b, q+, q+ - k]``.

    ``NB(k)`` for ``k < q+`` and the tail ``P(K >= q+)`` lumped on the empty queue.
    """
    nq = buffer + 1
    pi = lam_next / (lam_next + mu)
    k = np.arange(nq)
    pmf = stats.nbinom.pmf(k[None, :], alpha, pi[:, None])  # (nb, nq): P(K = k)
    sf = stats.nbinom.sf(k[None, :] - 1, alpha, pi[:, None])  # P(K >= k)
    qp = k[:, None]
    j = k[None, :]
    lag = qp - j  # k = q+ - j services
    kern = np.where((lag >= 0)[None], pmf[:, np.clip(lag, 0, nq - 1)], 0.0)
    kern[:, :, 0] = sf[:, :]  # all q+ served: empty queue (Prop. III.2, k = q+)
    kern[:, 0, 0] = 1.0
    return kern, pmf, sf


def reward_table(
    kind: str,
    grid: RateGrid,
    buffer: int,
    service_pps: float,
    target_s: float,
    penalty: float | None,
    phi: str = "sqrt",
) -> tuple[np.ndarray, float]:
    """Per-decision reward ``r((q, r), a)`` (PAQMAN eq. (1); module docstring; docs/paqman.md).

    Parameters
    ----------
    kind : {"default", "literal"}
        ``"default"``: ``1`` per admitted packet, ``0`` per drop. ``"literal"``:
        ``phi(x') - phi(x)`` with ``x`` the effective rate in units of the service rate.
        Both add ``-penalty`` to an admit whose expected delay ``(q + 1) / mu`` exceeds ``target_s``.
    penalty : float or None
        ``P``; ``None`` means :data:`DEFAULT_PENALTY` (0.5: a late packet counts half a packet)
        for the default reward and ``100 * max |non-penalty reward|`` for the literal one
        (the measured trade-off is in the module docstring).
    phi : {"sqrt", "square", "log"}
        Literal variant only.
    grid : RateGrid
        Rate grid of the model.
    buffer : int
        ``B`` (packets).
    service_pps : float
        ``mu`` (packets/s).
    target_s : float
        Delay target ``d`` (s).

    Returns
    -------
    reward : ndarray, shape (2, R, B + 1)
    penalty : float
        The penalty actually used.
    """
    nr, nq = grid.size, buffer + 1
    q = np.arange(nq)
    r = grid.index
    if kind == "default":
        base = np.zeros((2, nr, nq))
        base[ADMIT] = 1.0
    elif kind == "literal":
        f = {"sqrt": np.sqrt, "square": np.square, "log": np.log}[phi]
        x = grid.rates_pps / service_pps
        xa = grid.after_admit(r) * grid.unit_pps / service_pps
        lo, hi, w = grid.drop_split(r)
        fd = (1 - w) * f(lo * grid.unit_pps / service_pps) + w * f(hi * grid.unit_pps / service_pps)
        base = np.zeros((2, nr, nq))
        base[ADMIT] = (f(xa) - f(x))[:, None]
        base[DROP] = (fd - f(x))[:, None]
    else:
        raise ValueError(f"reward {kind!r}: expected 'default' or 'literal'")
    if penalty is None:  # decision recorded in the module docstring (the penalty)
        penalty = DEFAULT_PENALTY if kind == "default" else 100.0 * float(np.abs(base).max())
    breach = (q + 1) / service_pps > target_s  # PAQMAN eq. (1): admitted packet's delay
    base[ADMIT] -= penalty * breach[None, :]
    return base, float(penalty)


def negligible_rtt_model(
    service_pps: float,
    target_s: float,
    buffer: int = 200,
    grid: int = 50,
    alpha: float = 2.0,
    penalty: float | None = None,
    reward: str = "default",
    phi: str = "sqrt",
    drop_factor: float = 0.5,
    drop_projection: str = DEFAULT_DROP_PROJECTION,
) -> Smdp:
    """Build the negligible-RTT PAQMAN SMDP (docs/paqman.md, PAQMAN §III).

    Parameters
    ----------
    service_pps : float
        Exponential service rate ``mu`` (packets/s).
    target_s : float
        Delay target ``d`` (s).
    buffer : int
        ``B`` (packets, including the one in service).
    grid : int
        ``G``; the rate unit is ``mu / G`` and the grid has ``2G`` points (rates up to ``2 mu``).
    alpha : float
        Gamma shape of interarrival times (default 2, ours: the paper's value did not survive).
    penalty : float or None
        Delay-breach penalty ``P`` (reward units); ``None`` = the default of the module docstring.
    reward : {"default", "literal"}
        Reward variant, see :func:`reward_table`.
    phi : str
        ``phi`` of the literal variant.
    drop_factor : float
        Multiplicative decrease.
    drop_projection : {"split", "floor"}
        Projection of the decreased rate onto the grid (:class:`RateGrid`): ``"split"`` (default,
        unbiased) or ``"floor"`` (the deterministic map used before; it makes the policy islands
        of docs/paqman.md).

    Returns
    -------
    Smdp

    Examples
    --------
    >>> m = negligible_rtt_model(100.0, 0.05, buffer=20, grid=5)
    >>> m.kernel.shape, bool(abs(m.kernel.sum(axis=2) - 1).max() < 1e-12)
    ((10, 21, 21), True)
    """
    _check_positive(alpha=alpha)
    sk = _skeleton(
        service_pps, target_s, buffer, grid, drop_factor, reward, penalty, phi, drop_projection
    )
    g, nxt = sk.grid, sk.nxt
    nq = buffer + 1
    lam_next = alpha * g.rates_pps  # gamma rate parameter of the next interarrival
    kernel, pmf, sf = _nb_kernel(alpha, lam_next, service_pps, buffer)
    # Expected sojourn: mean of the next interarrival, alpha / lambda' = 1 / x' (PAQMAN §III),
    # averaged over the two branches of a split drop.
    tau = np.empty((2, g.size, nq))
    tau[ADMIT] = (1.0 / (nxt[ADMIT] * g.unit_pps))[:, None]
    w = sk.nxt_w[DROP]
    tau[DROP] = ((1 - w) / (nxt[DROP] * g.unit_pps) + w / (sk.nxt_hi[DROP] * g.unit_pps))[:, None]
    meta = dict(
        model="negligible_rtt",
        block_by="next",
        service_pps=service_pps,
        target_s=target_s,
        rtt_s=0.0,
        alpha=alpha,
        penalty=sk.penalty,
        reward=reward,
        phi=phi,
        drop_projection=drop_projection,
    )
    m = Smdp(
        kernel, nxt - 1, nxt, sk.qrow, sk.reward, tau, sk.feasible, g, meta, sk.nxt_hi, sk.nxt_w
    )
    m.use_toeplitz(pmf, sf)
    return m


def _bmv(kernels: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product ``kernels[b] @ values[b]``."""
    return np.matmul(kernels, values[:, :, None])[:, :, 0]


@dataclass
class _Skeleton:
    grid: RateGrid
    nxt: np.ndarray
    qrow: np.ndarray
    reward: np.ndarray
    penalty: float
    feasible: np.ndarray
    nxt_hi: np.ndarray
    nxt_w: np.ndarray


def _skeleton(
    service_pps, target_s, buffer, grid, drop_factor, reward, penalty, phi, drop_projection
) -> _Skeleton:
    """What the PAQMAN models share: checks, rate grid (module docstring) with its drop projection,
    AIMD maps, kernel rows (``q + 1`` after admit, ``q`` after drop), per-decision reward and
    feasibility (a full buffer forces a drop)."""
    _check_positive(service_pps=service_pps, target_s=target_s)
    if buffer < 1 or grid < 1:
        raise ValueError(f"buffer {buffer!r} / grid {grid!r}: must be >= 1")
    g = RateGrid(service_pps / grid, 2 * grid, drop_factor, drop_projection)
    r, q = g.index, np.arange(buffer + 1)
    lo, hi, w = g.drop_split(r)
    up = g.after_admit(r)
    nxt = np.stack([up, lo])
    nxt_hi = np.stack([up, hi])
    nxt_w = np.stack([np.zeros(g.size), w])
    qrow = np.stack([np.minimum(q + 1, buffer), q])
    rew, pen = reward_table(reward, g, buffer, service_pps, target_s, penalty, phi)
    feasible = np.ones((2, g.size, buffer + 1), dtype=bool)
    feasible[ADMIT, :, buffer] = False  # a full buffer forces a drop
    return _Skeleton(g, nxt, qrow, rew, pen, feasible, nxt_hi, nxt_w)


def _check_positive(**kw: float) -> None:
    for k, v in kw.items():
        if not np.isfinite(v) or v <= 0:
            raise ValueError(f"{k} {v!r}: must be a positive number")
