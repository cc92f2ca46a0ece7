"""Fluid (continuous-time) AQM laws that close the loop of the single-bottleneck models.

Each law is a small object with parameter arrays (scalars or shape ``(B,)``, broadcast against the
batch) and ``n_states`` internal states appended to the model's state vector. All probabilities
are clamped to [0, 1] (docs/fluid.md). Units: queue in packets, rates in packets/s,
time in s.

Interface used by the models (all vectorised over the batch):

* ``initial(q0)`` -> ``(B, n_states)`` law state at start;
* ``prob(q, z, rate, C)`` -> ``p`` of shape ``(B,)``: mark/drop probability given queue ``q``,
  law state ``z`` (``(B, n_states)``), arrival rate ``rate`` and capacity ``C``;
* ``deriv(q, z, rate, C, qdot)`` -> ``(B, n_states)``;
* ``setpoint`` (integral laws: the equilibrium queue) or ``static_prob(q, C)`` (the probability
  at rest as a function of the queue, used to find the closed-loop equilibrium);
* ``rest_state(q0, p0, C)`` -> law state at the equilibrium.

Example
-------
>>> from aqmlab.fluid.laws import PI
>>> law = PI.from_continuous(k_pi=9.64e-6, z=0.53, qref=200.0)
>>> round(float(law.a * 160), 6) > 0
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["FluidLaw", "RED", "PI", "REM", "PDLQ", "SFC", "make_law"]


def _p(value, name: str, *, positive: bool = False, nonneg: bool = False) -> np.ndarray:
    """A law parameter as a float array: finite, optionally > 0 or >= 0; the ValueError names
    the parameter and the value."""
    if isinstance(value, str | bytes) or value is None:
        raise ValueError(f"{name} must be a number or an array of numbers (got {value!r})")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a number or an array of numbers (got {value!r})"
        ) from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (got {value})")
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0 (got {value})")
    if nonneg and np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (got {value})")
    return arr


def _clip01(p):
    return np.clip(p, 0.0, 1.0)


class FluidLaw:
    """Base class. Subclasses set ``name``, ``state_names``, ``lower``, ``upper``."""

    name = "law"
    state_names: tuple = ()
    lower: tuple = ()
    upper: tuple = ()
    setpoint = None  # equilibrium queue of integral laws (packets), else None

    @property
    def n_states(self) -> int:
        """Number of the law's own states (``len(state_names)``)."""
        return len(self.state_names)

    def initial(self, q0):
        """The law's states at the start of a run.

        Parameters
        ----------
        q0 : numpy.ndarray, shape (B,)
            The initial queue (packets).

        Returns
        -------
        numpy.ndarray, shape (B, n_states)
        """
        return np.zeros((np.shape(q0)[0], self.n_states))

    def prob(self, q, z, rate, C):
        """The mark/drop probability.

        Parameters
        ----------
        q : numpy.ndarray, shape (B,)
            Queue (packets).
        z : numpy.ndarray, shape (B, n_states)
            The law's states.
        rate : numpy.ndarray, shape (B,)
            Arrival rate (packets/s).
        C : numpy.ndarray, shape (B,)
            Capacity (packets/s).

        Returns
        -------
        numpy.ndarray, shape (B,)
            In [0, 1].
        """
        raise NotImplementedError

    def deriv(self, q, z, rate, C, qdot):
        """Derivatives of the law's states.

        Parameters
        ----------
        q : numpy.ndarray, shape (B,)
            Queue (packets).
        z : numpy.ndarray, shape (B, n_states)
            The law's states.
        rate : numpy.ndarray, shape (B,)
            Arrival rate (packets/s).
        C : numpy.ndarray, shape (B,)
            Capacity (packets/s).
        qdot : numpy.ndarray, shape (B,)
            The projected queue derivative (packets/s).

        Returns
        -------
        numpy.ndarray, shape (B, n_states)
        """
        return np.zeros((q.shape[0], 0))

    def static_prob(self, q, C):
        """p as a function of the queue alone; only static (proportional) laws have one.

        Parameters
        ----------
        q : numpy.ndarray, shape (B,)
            Queue (packets).
        C : numpy.ndarray, shape (B,)
            Capacity (packets/s).

        Returns
        -------
        numpy.ndarray, shape (B,)

        Raises
        ------
        TypeError
            The law has dynamic state (PI, REM).
        """
        raise TypeError(f"the {self.name} law has dynamic state: it has no static p(q)")

    def rest_state(self, q0, p0, C):
        """The law's states at an equilibrium.

        Parameters
        ----------
        q0 : numpy.ndarray, shape (B,)
            Equilibrium queue (packets).
        p0 : numpy.ndarray, shape (B,)
            Equilibrium probability.
        C : numpy.ndarray, shape (B,)
            Capacity (packets/s).

        Returns
        -------
        numpy.ndarray, shape (B, n_states)
        """
        return np.zeros((np.shape(q0)[0], 0))

    def params(self) -> dict:
        """The law's parameters by name (their batch shapes set the model's).

        Returns
        -------
        dict
        """
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class RED(FluidLaw):
    """RED with its EWMA filter (docs/aqm/red.md, docs/fluid.md).

    ``d avg/dt = K (q - avg)``, ``K = -C ln(1 - w_q)`` (1/s; ``w_q`` per packet, ``C`` pkt/s,
    Hollot et al. 2001's low-pass form). ``p = max_p (avg - min_th)/(max_th - min_th)`` on
    ``[min_th, max_th)``; above ``max_th`` gentle RED ramps to 1 at ``2 max_th`` (``gentle=True``,
    ns-2 default) or jumps to 1 (classic). The count-based spreading of drops (docs/aqm/red.md)
    has no fluid counterpart and is not modelled.

    Parameters
    ----------
    min_th, max_th : float or array (packets)
    max_p : float or array
    w_q : float or array (per packet)
    gentle : bool
    """

    name = "red"
    state_names = ("avg",)
    lower = (0.0,)
    upper = (np.inf,)

    def __init__(self, min_th=150.0, max_th=300.0, max_p=0.1, w_q=0.00133, gentle=True):
        self.min_th = _p(min_th, "min_th", nonneg=True)
        self.max_th = _p(max_th, "max_th", positive=True)
        self.max_p, self.w_q = _p(max_p, "max_p", positive=True), _p(w_q, "w_q")
        if np.any(self.max_p > 1):
            raise ValueError(f"max_p must be in (0, 1] (got {max_p})")
        self.gentle = bool(gentle)
        if np.any(self.max_th <= self.min_th):
            raise ValueError(f"max_th must exceed min_th (got {max_th} <= {min_th})")
        if np.any((self.w_q <= 0) | (self.w_q >= 1)):
            raise ValueError(f"w_q must be in (0, 1) (got {w_q})")

    def curve(self, avg):
        """RED's static drop curve (docs/aqm/red.md).

        Parameters
        ----------
        avg : numpy.ndarray
            Average queue (packets).

        Returns
        -------
        numpy.ndarray
            Probability, same shape.
        """
        lin = self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        if self.gentle:
            above = self.max_p + (1 - self.max_p) * (avg - self.max_th) / self.max_th
        else:
            above = np.ones_like(avg)
        p = np.where(avg < self.min_th, 0.0, np.where(avg < self.max_th, lin, above))
        return _clip01(p)

    def initial(self, q0):
        return np.asarray(q0, float)[:, None].copy()

    def prob(self, q, z, rate, C):
        return self.curve(z[:, 0])

    def deriv(self, q, z, rate, C, qdot):
        K = -C * np.log1p(-self.w_q)  # Hollot et al. 2001: K = -C ln(1 - w_q)
        return (K * (q - z[:, 0]))[:, None]

    def static_prob(self, q, C):
        return self.curve(q)

    def rest_state(self, q0, p0, C):
        return np.asarray(q0, float)[:, None].copy()


class PI(FluidLaw):
    """Hollot's PI controller as a fluid law (docs/design/pi_hollot.md).

    The discrete law ``p(k) = p(k-1) + a e(k) - b e(k-1)``, ``e = q - q_ref``, sampled at ``fs``,
    is the Tustin image of ``C(s) = K_PI (s/z + 1)/s`` with ``K_PI = (a - b) fs`` and
    ``K_PI / z = (a + b) fs / 2``; the fluid law integrates it:
    ``dp/dt = fs (a - b) e + (a + b)/2 de/dt`` with ``de/dt = dq/dt`` (projected queue
    derivative). ``p`` is a state projected onto [0, 1] (anti-windup by projection).

    Parameters
    ----------
    a, b : float or array (1/packet)  -- ns-2 defaults 1.822e-5, 1.816e-5
    fs : float or array (Hz)          -- sampling frequency, 160 Hz in the paper
    qref : float or array (packets)
    """

    name = "pi"
    state_names = ("p",)
    lower = (0.0,)
    upper = (1.0,)

    def __init__(self, a=1.822e-5, b=1.816e-5, fs=160.0, qref=200.0):
        self.a, self.b = _p(a, "a"), _p(b, "b")
        self.fs, self.qref = _p(fs, "fs", positive=True), _p(qref, "qref", nonneg=True)

    @classmethod
    def from_continuous(cls, k_pi, z, qref=200.0, fs=160.0):
        """Build from Hollot's ``K_PI`` (1/(packet s)) and zero ``z`` (rad/s), Tustin at ``fs``.

        Parameters
        ----------
        k_pi : float or array
            ``K_PI``, 1/(packet s).
        z : float or array
            The PI zero, rad/s.
        qref : float or array
            Reference queue (packets).
        fs : float or array
            Sampling frequency (Hz).

        Returns
        -------
        PI
        """
        T = 1.0 / np.asarray(fs, float)
        k_pi, z = np.asarray(k_pi, float), np.asarray(z, float)
        return cls(a=k_pi * (1 / z + T / 2), b=k_pi * (1 / z - T / 2), fs=fs, qref=qref)

    @property
    def setpoint(self):
        """The equilibrium queue of the integral law: ``qref`` (packets)."""
        return self.qref

    def prob(self, q, z, rate, C):
        return _clip01(z[:, 0])

    def deriv(self, q, z, rate, C, qdot):
        e = q - self.qref
        return (self.fs * (self.a - self.b) * e + 0.5 * (self.a + self.b) * qdot)[:, None]

    def rest_state(self, q0, p0, C):
        return np.asarray(p0, float)[:, None].copy()


class REM(FluidLaw):
    """REM's price law (docs/aqm/rem.md), continuous-time.

    ``pi(k+1) = [pi(k) + gamma (alpha_q (q - q*) + x - c)]^+`` per update interval ``T_u`` with
    ``x - c = (rate - C) T_u`` packets becomes
    ``d pi/dt = (gamma / T_u) (alpha_q (q - q*) + (rate - C) T_u)``, projected to ``pi >= 0``;
    ``p = 1 - phi^(-pi)``.

    Parameters
    ----------
    gamma, phi, alpha_q : float or array
        REM's step, base and queue weight (ns-2 defaults 0.001, 1.001, 0.1).
    qref : float or array
        ``q*`` (packets; ns-2: 20).
    t_u : float or array
        Update interval (s; ns-2: 0.002).
    """

    name = "rem"
    state_names = ("price",)
    lower = (0.0,)
    upper = (np.inf,)

    def __init__(self, gamma=0.001, phi=1.001, alpha_q=0.1, qref=20.0, t_u=0.002):
        self.gamma, self.phi = _p(gamma, "gamma", positive=True), _p(phi, "phi")
        self.alpha_q, self.qref = _p(alpha_q, "alpha_q"), _p(qref, "qref", nonneg=True)
        self.t_u = _p(t_u, "t_u", positive=True)
        if np.any(self.phi <= 1):
            raise ValueError(f"phi must be > 1 (got {phi})")

    @property
    def setpoint(self):
        """The equilibrium queue of the integral law: ``qref`` (packets)."""
        return self.qref

    def prob(self, q, z, rate, C):
        return _clip01(1.0 - self.phi ** (-z[:, 0]))

    def deriv(self, q, z, rate, C, qdot):
        g = self.gamma / self.t_u * (self.alpha_q * (q - self.qref) + (rate - C) * self.t_u)
        return g[:, None]

    def rest_state(self, q0, p0, C):
        return (-np.log1p(-np.asarray(p0, float)) / np.log(self.phi))[:, None]


class PDLQ(FluidLaw):
    """Memoryless PD-LQ law on RED's filtered queue (docs/design/pd_lq.md, KTL eqs. 3 and 6).

    ``d bh/dt = P1 (q - bh)``;
    ``p = p_offset + H1 (bh - qref) + H2 bh' + H3 bh''`` with ``bh' = P1 (q - bh)`` and
    ``bh'' = P1 (qdot - bh')``, ``qdot = rate - C`` (the filter identity of KTL eq. 3 with the
    input rate minus capacity, as the packet-level law: docs/aqm/pdlq.md). ``p_offset`` is the
    operating-point offset ``p*`` (the law is on ``delta p = p - p*``, KTL eq. 2; pass 0 to
    switch it off). The memory (predictor) law is not implemented here. ``H2 = H3 = 0`` is the
    "RED-like" comparator (KTL §III).

    Parameters
    ----------
    h1, h2, h3 : float or array
        Gains (1/packet, s/packet, s^2/packet).
    p1 : float or array
        Filter cut-off (1/s; default 1: docs/aqm/pdlq.md).
    qref : float or array
        Reference queue (packets).
    p_offset : float or array
        Operating-point probability ``p*``.
    """

    name = "pd-lq"
    state_names = ("bhat",)
    lower = (0.0,)
    upper = (np.inf,)

    def __init__(self, h1=5.657e-4, h2=3.626e-4, h3=4.894e-5, p1=1.0, qref=200.0, p_offset=0.0):
        self.h1, self.h2, self.h3 = _p(h1, "h1"), _p(h2, "h2"), _p(h3, "h3")
        self.p1, self.qref = _p(p1, "p1", positive=True), _p(qref, "qref", nonneg=True)
        self.p_offset = _p(p_offset, "p_offset")

    def initial(self, q0):
        return np.asarray(q0, float)[:, None].copy()

    def prob(self, q, z, rate, C):
        bh = z[:, 0]
        d1 = self.p1 * (q - bh)
        d2 = self.p1 * ((rate - C) - d1)
        return _clip01(self.p_offset + self.h1 * (bh - self.qref) + self.h2 * d1 + self.h3 * d2)

    def deriv(self, q, z, rate, C, qdot):
        return (self.p1 * (q - z[:, 0]))[:, None]

    def static_prob(self, q, C):
        return _clip01(self.p_offset + self.h1 * (q - self.qref))

    def rest_state(self, q0, p0, C):
        return np.asarray(q0, float)[:, None].copy()


class SFC(FluidLaw):
    """Gao-Hou state-feedback law (docs/design/sfc.md, SFC Fig. 5).

    ``p = p_offset + k1 (q - qref) + (k2 / C0) (rate - C0)``, clamped to [0, 1]. The router's rate
    estimator (Fig. 5's unspecified ``R_estimate()``) is idealised: ``rate`` is the fluid arrival
    rate. ``C0`` defaults to the model's capacity. ``p_offset`` defaults to 0: the paper's Fig. 5
    has no offset, so the queue settles above ``qref``.

    Parameters
    ----------
    k1 : float or array
        Queue gain (1/packet).
    k2 : float or array
        Rate gain (dimensionless).
    qref : float or array
        Target queue (packets).
    c0 : float or array, optional
        ``C0`` (packets/s; default the model's capacity).
    p_offset : float or array
        Probability offset.
    """

    name = "sfc"

    def __init__(self, k1=0.0005, k2=0.2, qref=50.0, c0=None, p_offset=0.0):
        self.k1, self.k2 = _p(k1, "k1"), _p(k2, "k2")
        self.qref, self.p_offset = _p(qref, "qref", nonneg=True), _p(p_offset, "p_offset")
        self.c0 = None if c0 is None else _p(c0, "c0", positive=True)

    def prob(self, q, z, rate, C):
        c0 = C if self.c0 is None else self.c0
        return _clip01(self.p_offset + self.k1 * (q - self.qref) + self.k2 / c0 * (rate - c0))

    def static_prob(self, q, C):
        c0 = C if self.c0 is None else self.c0
        return _clip01(self.p_offset + self.k1 * (q - self.qref) + self.k2 / c0 * (C - c0))


_LAWS = {"red": RED, "pi": PI, "rem": REM, "pd-lq": PDLQ, "pdlq": PDLQ, "sfc": SFC}


def make_law(name: str, **params) -> FluidLaw:
    """Construct a law by name (``red``, ``pi``, ``rem``, ``pd-lq``, ``sfc``).

    Parameters
    ----------
    name : str
        The law (case-insensitive; ``pdlq`` is ``pd-lq``).
    **params
        The law's parameters.

    Returns
    -------
    FluidLaw

    Raises
    ------
    ValueError
        Unknown name.
    """
    try:
        cls = _LAWS[name.lower()]
    except KeyError:
        raise ValueError(f"unknown law {name!r}; choose from red, pi, rem, pd-lq, sfc") from None
    return cls(**params)
