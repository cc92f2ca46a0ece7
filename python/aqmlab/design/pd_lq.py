"""Kim-Tang-Low PD-type AQM: LQ gains, inverse LQ maps, equal-eigenvalue and memory designs.

Model (docs/design/pd_lq.md): RED's low-pass filter ``b_hat' = P1 (b - b_hat)`` on the KTL
queue dynamics gives the third-order companion system (KTL eqs. 4-5)

``z' = A z + B delta p(t - tau)``, ``z = [db_hat, db_hat', db_hat'']``,
``A = [[0, 1, 0], [0, 0, 1], [Ah3, Ah1, Ah2]]``, ``B = [0, 0, P1 B1]``,
``Ah1 = A1 + A2 P1``, ``Ah2 = A2 - P1``, ``Ah3 = A1 P1``,

and the law ``delta p = H1 db_hat + H2 db_hat' + H3 db_hat''`` (``u = H z``, closed loop
``A + B H``; note the sign: ``H = -K`` of the usual ``u = -K x``).

Decisions on ambiguities
------------------------
* P1 is not given by the paper (eq. 3 makes it a design parameter, §III gives no value); default
  1 s^-1, a per-2-ms EWMA weight of 0.002 (RED's classic w_q) that keeps the lambda = -3.75
  design LQ-admissible (Q >= 0 needs P1 below about 4 s^-1 at KTL §III's c, N, tau).
* The OCR shows a second derivative on the left of KTL eq. 4; the third is meant (eliminating b
  from eqs. 2-3 gives a third-order equation, as the companion form (5) requires).
* Proposition 3 prints lambda where the symmetric functions lambda-hat are meant; we use
  ``l1 = sum``, ``l2 = sum of pairs``, ``l3 = product`` of the desired eigenvalues.
* Proposition 1's ``H3*`` is not taken from the (OCR-damaged) quartic: the optimal gains come
  from ``scipy.linalg.solve_continuous_are`` (``H = -B' X``) and ``H1*`` is checked against the
  closed form of Prop. 1.
* The memory law uses the similarity T of the Appendix (the OCR'd formulas, checked:
  ``T A T^-1 = A`` and ``T B~ = [0, 0, Bh1]``); the gain applied to the predictor state h is
  ``H* T``, independent of T2.  Ackermann on ``(A, B~)`` gives the same gain and is
  returned for comparison.
* The operating-point offset ``p* = 2N^2/(2N^2 + c^2 tau^2)`` (the equilibrium of KTL eq. 1)
  is reported so a law can add it: the laws are on ``delta p = p - p*`` (eq. 2) and the paper
  does not say how ``p*`` enters its ns code.

Examples
--------
>>> d = pd_lq_design(4000.0, 100, 0.15, 200.0, p1=1.0, lam=-3.75)
>>> [f"{h:.4g}" for h in d.H]
['0.0005657', '0.0003626', '4.894e-05']
"""

from __future__ import annotations

from dataclasses import dataclass, field

import control
import numpy as np
from scipy.linalg import expm, solve_continuous_are

from aqmlab.design.plants import KTLConstants, check_real, ktl_constants
from aqmlab.protocol import Result

__all__ = [
    "PDLQDesign",
    "equal_eigenvalue_gains",
    "ktl_state_space",
    "lq_gains",
    "memory_transform",
    "pd_lq_design",
    "predictor_kernel",
    "predictor_weights",
    "prop1_h1",
    "prop2_weights",
    "prop3_weights",
]


def ktl_state_space(k: KTLConstants, p1: float) -> tuple[np.ndarray, np.ndarray]:
    """Companion-form ``(A, B)`` of the filtered KTL model, KTL eqs. 4-5.

    Parameters
    ----------
    k : KTLConstants
        from :func:`~aqmlab.design.ktl_constants`.
    p1 : float
        RED filter cut-off P1, 1/s.

    Returns
    -------
    tuple of numpy.ndarray
        ``A`` (3, 3) and ``B`` (3, 1).

    Examples
    --------
    >>> A, B = ktl_state_space(ktl_constants(4000.0, 100, 0.15, 200.0), 1.0)
    >>> A.shape, B.shape
    ((3, 3), (3, 1))
    """
    p1 = check_real("p1", p1, positive=True)
    Ah1 = k.A1 + k.A2 * p1  # KTL eq. 4
    Ah2 = k.A2 - p1
    Ah3 = k.A1 * p1
    A = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [Ah3, Ah1, Ah2]])
    B = np.array([[0.0], [0.0], [p1 * k.B1]])
    return A, B


def _coeffs(A: np.ndarray) -> tuple[float, float, float]:
    """(Ah1, Ah2, Ah3) from the last row of a companion matrix."""
    return float(A[2, 1]), float(A[2, 2]), float(A[2, 0])


def equal_eigenvalue_gains(A: np.ndarray, Bh1: float, lam: float) -> np.ndarray:
    """Gains putting all three closed-loop eigenvalues at ``lam`` (companion pole placement).

    ``H3 = (3 lam - Ah2)/Bh1``, ``H2 = (-3 lam^2 - Ah1)/Bh1``, ``H1 = (lam^3 - Ah3)/Bh1``
    # docs/design/pd_lq.md "Design procedure"

    Parameters
    ----------
    A : numpy.ndarray
        companion matrix.
    Bh1 : float
        input gain of the companion form (``P1 B1``, or from :func:`memory_transform`).
    lam : float
        common closed-loop eigenvalue, 1/s.

    Returns
    -------
    numpy.ndarray, shape (3,)
        ``(H1, H2, H3)``.
    """
    Ah1, Ah2, Ah3 = _coeffs(A)
    return np.array([(lam**3 - Ah3) / Bh1, (-3 * lam**2 - Ah1) / Bh1, (3 * lam - Ah2) / Bh1])


def lq_gains(A: np.ndarray, B: np.ndarray, Q) -> np.ndarray:
    """LQ-optimal ``H`` (``delta p = H z``) for ``int z'Qz + dp^2`` via the Riccati equation.

    Parameters
    ----------
    A, B : numpy.ndarray
        companion model.
    Q : array_like
        3 weights (diagonal) or a 3x3 matrix, >= 0.

    Returns
    -------
    numpy.ndarray, shape (3,)

    Examples
    --------
    >>> A, B = ktl_state_space(ktl_constants(4000.0, 100, 0.15, 200.0), 1.0)
    >>> H = lq_gains(A, B, [1e-6, 1e-6, 1e-6])
    >>> bool(np.all(np.linalg.eigvals(A + B @ H[None, :]).real < 0))
    True
    """
    Q = np.asarray(Q, dtype=float)
    Q = np.diag(Q) if Q.ndim == 1 else Q
    X = solve_continuous_are(A, B, Q, np.eye(1))  # KTL eq. 8, R = 1
    return -(B.T @ X).ravel()


def prop1_h1(A: np.ndarray, Bh1: float, Q1: float) -> float:
    """``H1* = -(Ah3 + sqrt(Ah3^2 + Bh1^2 Q1)) / Bh1``   # KTL Prop. 1

    Parameters
    ----------
    A : numpy.ndarray
        companion matrix.
    Bh1 : float
        companion input gain.
    Q1 : float
        weight on the averaged queue.

    Returns
    -------
    float
    """
    _, _, Ah3 = _coeffs(A)
    return -(Ah3 + np.sqrt(Ah3**2 + Bh1**2 * Q1)) / Bh1


def prop2_weights(A: np.ndarray, Bh1: float, H) -> np.ndarray:
    """Weights ``(Q1, Q2, Q3)`` for which gains ``H`` are LQ-optimal   # KTL Prop. 2

    A design is LQ-admissible only if all three are >= 0.

    Parameters
    ----------
    A : numpy.ndarray
        companion matrix.
    Bh1 : float
        companion input gain.
    H : array_like
        gains (H1, H2, H3).

    Returns
    -------
    numpy.ndarray, shape (3,)
        ``(Q1, Q2, Q3)``.
    """
    Ah1, Ah2, Ah3 = _coeffs(A)
    H1, H2, H3 = (float(h) for h in H)
    Q1 = H1 * (2 * Ah3 + Bh1 * H1) / Bh1
    Q3 = H3**2 + 2 * (Ah2 * H3 + H2) / Bh1
    r = np.sqrt(Ah3**2 + Bh1**2 * Q1)
    Q2 = H2**2 + 2 * (Ah1 * Bh1 * H2 + Ah2 * Ah3) / Bh1**2 + 2 * (Ah2 + Bh1 * H3) * r / Bh1**2
    return np.array([Q1, Q2, Q3])


def prop3_weights(A: np.ndarray, Bh1: float, eigenvalues) -> np.ndarray:
    """Weights ``(Q1, Q2, Q3)`` whose LQ design has the given closed-loop eigenvalues
    # KTL Prop. 3 (lambda-hat = elementary symmetric functions, see module notes)

    Parameters
    ----------
    A : numpy.ndarray
        companion matrix.
    Bh1 : float
        companion input gain.
    eigenvalues : array_like
        three desired closed-loop eigenvalues.

    Returns
    -------
    numpy.ndarray, shape (3,)
        ``(Q1, Q2, Q3)``.
    """
    Ah1, Ah2, Ah3 = _coeffs(A)
    lam = np.asarray(eigenvalues, dtype=complex)
    l1 = float(np.real(lam.sum()))
    l2 = float(np.real(lam[0] * lam[1] + lam[0] * lam[2] + lam[1] * lam[2]))
    l3 = float(np.real(lam.prod()))
    Q1 = (l3**2 - Ah3**2) / Bh1**2
    Q3 = (l1**2 - 2 * l2 - Ah2**2 - 2 * Ah1) / Bh1**2
    Q2 = (l2**2 - Ah1**2 + 2 * l1 * np.sqrt(Ah3**2 + Bh1**2 * Q1) + 2 * Ah2 * Ah3) / Bh1**2
    return np.array([Q1, Q2, Q3])


def memory_transform(
    A: np.ndarray, B_tilde: np.ndarray, T2: float = 1.0
) -> tuple[np.ndarray, float]:
    """Similarity ``T`` with ``T A T^-1 = A`` and ``T B~ = [0, 0, Bh1]``   # KTL Appendix

    Parameters
    ----------
    A : numpy.ndarray
        companion matrix.
    B_tilde : numpy.ndarray
        ``expm(-A tau) B``.
    T2 : float
        free non-zero parameter.

    Returns
    -------
    (T, Bh1)
    """
    if T2 == 0:
        raise ValueError("T2 must be non-zero")
    Ah1, Ah2, Ah3 = _coeffs(A)
    b1, b2, b3 = (float(x) for x in np.ravel(B_tilde))
    D1 = Ah3 * b1**2 / b2 + Ah1 * b1 + Ah2 * b2 - b3
    T1 = -T2 * (Ah3 * b1 + Ah1 * b1 * b3 / b2 + Ah2 * b3 - b3**2 / b2) / D1
    T3 = T2 * Ah1 + T2 * (Ah3 * b2 - Ah3 * b1 * b3 / b2) / D1
    T4 = T1 + Ah2 * T2
    T13 = (T3 - T2 * Ah1) / Ah3
    T11 = T1 - T13 * Ah1
    T12 = T2 - T13 * Ah2
    T = np.array([[T11, T12, T13], [T3 - T2 * Ah1, T1, T2], [T2 * Ah3, T3, T4]])
    Bh1 = T2 * Ah3 * b1 + T3 * b2 + T4 * b3
    return T, float(Bh1)


def predictor_kernel(A: np.ndarray, B: np.ndarray, tau: float, sigma) -> np.ndarray:
    """Kernel ``expm(-A (sigma + tau)) B`` of the predictor, ``sigma`` in [-tau, 0].

    ``h(t) = z(t) + int_{-tau}^0 expm(-A(sigma+tau)) B dp(t+sigma) dsigma``   # KTL §II-A
    Returns shape ``(len(sigma), 3)``.

    Parameters
    ----------
    A, B : numpy.ndarray
        companion model.
    tau : float
        delay, s.
    sigma : array_like
        points in [-tau, 0], s.

    Returns
    -------
    numpy.ndarray, shape (len(sigma), 3)
    """
    s = np.atleast_1d(np.asarray(sigma, dtype=float))
    return np.array([(expm(-A * (x + tau)) @ B).ravel() for x in s])


def predictor_weights(A: np.ndarray, B: np.ndarray, tau: float, Ts: float) -> np.ndarray:
    """Weights ``W[j]`` so that ``h(t) ~ z(t) + sum_j W[j] dp(t - (j+1) Ts)``.

    ``dp`` is held constant over each sampling interval (zero-order hold); ``W[j]`` integrates the
    kernel over ``sigma`` in ``[-(j+1) Ts, -j Ts]`` (KTL §II-A gives the integral in continuous
    time; a law keeps ``ceil(tau/Ts)`` past values).  Returns shape ``(ceil(tau/Ts), 3)``.

    Parameters
    ----------
    A, B : numpy.ndarray
        companion model.
    tau : float
        delay, s.
    Ts : float
        sampling period, s.

    Returns
    -------
    numpy.ndarray, shape (ceil(tau/Ts), 3)
    """
    n = int(np.ceil(tau / Ts - 1e-9))
    m = A.shape[0]
    Mx = np.zeros((m + 1, m + 1))
    Mx[:m, :m], Mx[:m, m:] = -A, B

    def integral(u: float) -> np.ndarray:  # int_0^u expm(-A v) B dv (Van Loan block)
        return expm(Mx * u)[:m, m]

    # sigma in [-(j+1) Ts, -j Ts]  <=>  v = sigma + tau in [tau - (j+1) Ts, tau - j Ts]
    edges = [integral(max(tau - j * Ts, 0.0)) for j in range(n + 1)]
    return np.array([edges[j] - edges[j + 1] for j in range(n)])


@dataclass(repr=False)
class PDLQDesign(Result):
    """Result of :func:`pd_lq_design`.

    Attributes
    ----------
    H : numpy.ndarray
        gains (H1 [1/pkt], H2 [s/pkt], H3 [s^2/pkt]); for the memory law they act on h.
    p_star : float
        operating-point probability to add to delta p.
    A, B : numpy.ndarray
        companion model (KTL eq. 5).
    Q : numpy.ndarray
        LQ weights for which H is optimal (Prop. 2 on the companion model seen by the law).
    lq_admissible : bool
        all Q >= 0.
    memory : bool
        memory (delay-compensating) design.
    B_tilde, T, Bh1 : numpy.ndarray, numpy.ndarray, float
        ``expm(-A tau) B``, the transformation and the transformed input gain (memory only;
        for memoryless designs ``B_tilde = B``, ``T = I``, ``Bh1 = P1 B1``).
    H_acker : numpy.ndarray
        the same eigenvalue assignment by ``control.acker`` (cross-check).
    ktl : KTLConstants
    p1, lam : float
    q_ref : float
        target queue b*, packets.
    capacity, n_flows : float
        the network the design is for: C in packets/s and N flows (the memory law's predictor
        needs both at run time).
    """

    H: np.ndarray
    p_star: float
    A: np.ndarray
    B: np.ndarray
    Q: np.ndarray
    lq_admissible: bool
    memory: bool
    B_tilde: np.ndarray
    T: np.ndarray
    Bh1: float
    H_acker: np.ndarray
    ktl: KTLConstants = field(repr=False)
    p1: float = 1.0
    lam: float = -1.0
    q_ref: float = 0.0
    capacity: float = 0.0
    n_flows: float = 0.0

    def to_dict(self) -> dict:
        """JSON-ready dictionary; ``H1``, ``H2``, ``H3``, ``p_star`` are the CLI contract.

        Returns
        -------
        dict
        """
        return {
            "H1": float(self.H[0]),
            "H2": float(self.H[1]),
            "H3": float(self.H[2]),
            "p_star": self.p_star,
            "tau": self.ktl.tau,
            "A1": self.ktl.A1,
            "A2": self.ktl.A2,
            "B1": self.ktl.B1,
            "Q": [float(q) for q in self.Q],
            "lq_admissible": self.lq_admissible,
            "memory": self.memory,
        }

    def to_aqm(self, t_update: float = 0.002) -> dict:
        """The AQM configuration of this design for the simulator's ``pdlq`` AQM.

        ``{"type": "pdlq", "h1", "h2", "h3", "p1", "q_ref", "p_offset", "t_update"}`` and, for
        the memory law, ``"memory": True``, ``"tau"`` (the predictor horizon, s), ``"capacity"``
        (packets/s) and ``"n_flows"``, which its predictor needs. Units: h1 1/packet,
        h2 s/packet, h3 s^2/packet, p1 1/s, q_ref packets, p_offset the operating-point
        probability ``p*`` added to ``delta p``, t_update s (``docs/aqm/pdlq.md``).

        Parameters
        ----------
        t_update : float
            update period of the law, s (KTL §III: 2 ms).

        Returns
        -------
        dict

        Examples
        --------
        >>> d = pd_lq_design(4000.0, 100, 0.15, 200.0)
        >>> sorted(d.to_aqm())
        ['h1', 'h2', 'h3', 'p1', 'p_offset', 'q_ref', 't_update', 'type']
        """
        t_update = check_real("t_update", t_update, positive=True)
        cfg = {
            "type": "pdlq",
            "h1": float(self.H[0]),
            "h2": float(self.H[1]),
            "h3": float(self.H[2]),
            "p1": float(self.p1),
            "q_ref": float(self.q_ref),
            "p_offset": float(self.p_star),
            "t_update": t_update,
        }
        if self.memory:
            cfg.update(
                memory=True,
                tau=float(self.ktl.tau),
                capacity=float(self.capacity),
                n_flows=float(self.n_flows),
            )
        return cfg

    def loop(self):
        """Open loop ``(G, delay)`` of the memoryless law on the delayed plant:
        ``G(s) = -H (sI - A)^-1 B`` (sign so that ``1 + G e^{-s tau} = 0`` is the closed loop).

        Returns
        -------
        tuple of (control.TransferFunction, float)
            ``(G, delay)``: the rational part of the open loop and its delay (s).
        """
        sys = control.ss(self.A, self.B, -self.H[None, :], 0)
        return control.tf(sys), self.ktl.tau

    def _figures(self) -> dict:
        return {
            "H1": float(self.H[0]),
            "H2": float(self.H[1]),
            "H3": float(self.H[2]),
            "p_star": self.p_star,
            "tau": self.ktl.tau,
            "lq_admissible": bool(self.lq_admissible),
            "memory": bool(self.memory),
        }

    def to_pandas(self):
        """One row per gain: ``H`` (the design), ``H_acker`` (the cross-check) and the LQ
        weight ``Q`` for which ``H`` is optimal; index ``H1``, ``H2``, ``H3``.

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame(
            {"H": self.H, "H_acker": np.ravel(self.H_acker), "Q": self.Q},
            index=pd.Index(["H1", "H2", "H3"], name="gain"),
        )

    def plot(self, ax=None):
        """Bode plot of the memoryless loop on the delayed plant (exact delay), with margins.

        Parameters
        ----------
        ax : pair of matplotlib Axes, optional
            Magnitude and phase panels; without it, a new Figure.

        Returns
        -------
        matplotlib Figure or Axes
            The Figure made, else ``ax``.
        """
        from aqmlab.design.margins import delayed_margins

        G, d = self.loop()
        return delayed_margins(G, d).plot(ax=ax)


def pd_lq_design(
    capacity: float,
    n_flows: float,
    prop_rtt: float,
    q_ref: float,
    p1: float = 1.0,
    lam: float = -3.75,
    memory: bool = False,
    T2: float = 1.0,
) -> PDLQDesign:
    """Equal-eigenvalue PD-LQ design of Kim, Tang and Low (docs/design/pd_lq.md).

    Parameters
    ----------
    capacity : float
        c, packets/s.
    n_flows : float
        N.
    prop_rtt : float
        propagation RTT d, s (tau = d + q_ref/c).
    q_ref : float
        target queue b*, packets.
    p1 : float
        RED filter cut-off P1, 1/s.
    lam : float
        common closed-loop eigenvalue, 1/s (< 0).
    memory : bool
        design the delay-compensating memory law (gain on the predictor state h).
    T2 : float
        free parameter of the memory transformation (the gain on h does not depend on it).

    Returns
    -------
    PDLQDesign

    Examples
    --------
    >>> d = pd_lq_design(4000.0, 100, 0.35, 200.0, memory=True)
    >>> [f"{h:.4g}" for h in d.H]
    ['0.0006093', '0.0005672', '0.0001308']
    """
    lam = check_real("lam", lam)
    if lam >= 0:
        raise ValueError(f"lam must be negative, got {lam!r}")
    if not isinstance(memory, bool | np.bool_):
        raise ValueError(f"memory must be True or False, got {memory!r}")
    T2 = check_real("T2", T2)
    if T2 == 0:
        raise ValueError("T2 must be non-zero, got 0")
    k = ktl_constants(capacity, n_flows, prop_rtt, q_ref)
    A, B = ktl_state_space(k, p1)
    eig = [lam, lam, lam]
    if memory:
        B_tilde = expm(-A * k.tau) @ B  # KTL §II-A
        T, Bh1 = memory_transform(A, B_tilde, T2)
        Hs = equal_eigenvalue_gains(A, Bh1, lam)  # gains on s = T h
        H = Hs @ T  # KTL: dp = H* T h
        H_acker = -np.asarray(control.acker(A, B_tilde, eig)).ravel()
    else:
        B_tilde, T, Bh1 = B.copy(), np.eye(3), float(B[2, 0])
        Hs = equal_eigenvalue_gains(A, Bh1, lam)
        H = Hs
        H_acker = -np.asarray(control.acker(A, B, eig)).ravel()
    Q = prop2_weights(A, Bh1, Hs)
    return PDLQDesign(
        H=H,
        p_star=k.p_star,
        A=A,
        B=B,
        Q=Q,
        lq_admissible=bool(np.all(Q >= 0)),
        memory=memory,
        B_tilde=B_tilde,
        T=T,
        Bh1=Bh1,
        H_acker=H_acker,
        ktl=k,
        p1=float(p1),
        lam=float(lam),
        q_ref=float(q_ref),
        capacity=float(capacity),
        n_flows=float(n_flows),
    )
