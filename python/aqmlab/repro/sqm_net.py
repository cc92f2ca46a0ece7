"""The SQM paper's ns network (Ye et al. 2022, §V and its Fig. 2).

Routers R1..R6; bottlenecks ``l23`` (R2->R3) and ``l34`` (R3->R4), 50 Mb/s each (4166
packets/s of 1500 B; §V-B). Fig. 2 is missing from the paper's text we have; §V only says that
the flows go from R1 to R4, from R5 to R6 or from R6 to R4 and that l23 and l34 are the
bottlenecks, so the attachment of R1, R5 and R6 is ours, the shortest one consistent with that:

* ``R1->R4``: R1-R2-R3-R4, both bottlenecks;
* ``R5->R6``: R5-R2-R3-R6, ``l23`` only;
* ``R6->R4``: R6-R3-R4, ``l34`` only.

The other router links run at 1 Gb/s (never a bottleneck). Each flow has its own sender host
attached to its entry router by a link whose delay sets the flow's two-way propagation delay
(the paper's RTTs, 80-180 ms); the flow ends at its exit router. Both bottlenecks run the case's
AQM; only they are monitored (10 ms samples: the delay samples of the paper's Fig. 4).

Cases (§V-B: "The target queueing delay is set to 5 ms for all algorithms"):

* ``sqm``: the ``sqm`` qdisc (K = 40 queues, 5 ms target) on both bottlenecks and SQM's online
  controller every 5 s (``[sqm] period``), which writes the per-flow weights from Algorithms 1
  and 2 on both links;
* ``codel``, ``pie`` (PIE with its auto-tuning, RFC 8033), ``sfq_codel``: 5 ms targets, other
  parameters at their defaults;
* ``sqm_ogd`` (a further case): as ``sqm``, but Algorithm 2 tunes for Algorithm 1's own
  decision (controller state ``ogd``) rather than for the NUM optimum of the present flows
  (state ``num``, the ``sqm`` case). Both write σ by the Reno delay rule (docs/online.md);
* ``sqm_theorem3`` (a further case): as ``sqm``, with σ from Theorem 3 (Algorithm 2 taken
  literally: σ in the fluid model's units, ~1e6-1e7 packets) written into the qdiscs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from aqmlab.repro._common import Job, Run, run_jobs

#: The paper all three SQM reproductions cite (report.md's first line).
REFERENCE = (
    'J. Ye, K. Cai, D. Lin, J. Li, J. He, J. C. S. Lui, "A Control-Theoretic and Online '
    'Learning Approach to Self-Tuning Queue Management", 2022'
)

CASES = ("sqm", "codel", "pie", "sfq_codel")
#: further cases: SQM with Algorithm 2 tuning for Algorithm 1's decision as written, and SQM
#: with Theorem 3's sigma written literally into the qdiscs
EXTRA = ("sqm_ogd", "sqm_theorem3")
#: SQM's controller: which rates Algorithm 2 tunes for (aqmlab.online.run_controller's state)
STATE = {"sqm": "num", "sqm_ogd": "ogd", "sqm_theorem3": "num"}
#: SQM's controller: Algorithm 2's sigma rule (docs/online.md)
SIGMA_RULE = {"sqm": "reno", "sqm_ogd": "reno", "sqm_theorem3": "theorem3"}
RATE_BPS = 50e6
PKT = 1500  # bytes: 50 Mb/s = 4166 packets/s (the paper's capacity)
CAPACITY_PPS = RATE_BPS / (8 * PKT)
BUFFER = 1000  # packets at each bottleneck (not given in the paper; 240 ms at 50 Mb/s)
K = 40  # SQM's elephant queues and the paper's largest number of flows
TARGET = 0.005  # s
PERIOD = 5.0  # s, SQM's control period
BOTTLENECK_DELAY = 0.005  # s one way, l23 and l34
ROUTER_DELAY = 0.002  # s one way, the other router links
ROUTERS = ("R1", "R2", "R3", "R4", "R5", "R6")
#: group -> (entry router, exit router, links crossed in order)
ROUTES = {
    "R1->R4": ("R1", "R4", ("R1->R2", "l23", "l34")),
    "R5->R6": ("R5", "R6", ("R5->R2", "l23", "R3->R6")),
    "R6->R4": ("R6", "R4", ("R6->R3", "l34")),
}
RTT_RANGE = (0.080, 0.180)  # s, the paper's RTTs


def path_delay(group: str) -> float:
    """One-way propagation delay of a group's router path (s).

    Parameters
    ----------
    group : str
        A key of :data:`ROUTES`.

    Returns
    -------
    float
    """
    return sum(BOTTLENECK_DELAY if n in ("l23", "l34") else ROUTER_DELAY for n in ROUTES[group][2])


def aqm(case: str) -> dict[str, Any]:
    """The ``aqm`` table of both bottlenecks for ``case``.

    Parameters
    ----------
    case : str
        A key of :data:`CASES` or :data:`EXTRA`.

    Returns
    -------
    dict
    """
    return {
        "sqm": {"type": "sqm", "queues": K, "target": TARGET},
        "sqm_ogd": {"type": "sqm", "queues": K, "target": TARGET},
        "sqm_theorem3": {"type": "sqm", "queues": K, "target": TARGET},
        "codel": {"type": "codel", "target": TARGET},
        "pie": {"type": "pie", "target": TARGET},
        "sfq_codel": {"type": "sfq_codel", "target": TARGET},
    }[case]


def draw_rtts(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` two-way propagation delays uniform in the paper's 80-180 ms.

    Parameters
    ----------
    rng : numpy.random.Generator
        The seeded generator.
    n : int
        How many.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Seconds.
    """
    return rng.uniform(*RTT_RANGE, size=n)


def scenario(
    name: str,
    case: str,
    flows: list[dict[str, Any]],
    duration: float,
    warmup: float,
    seed: int = 1,
) -> dict[str, Any]:
    """The scenario: the network, ``case`` on both bottlenecks, one host per flow.

    ``flows``: one dict per flow with ``group`` (a key of :data:`ROUTES`), ``rtt`` (s),
    ``cc``, ``start`` (s) and optionally ``stop`` (s). Each becomes its own flow group (count 1)
    named ``GROUP#i`` so that it has its own RTT; flow numbers follow the list's order.

    Parameters
    ----------
    name : str
        Scenario name.
    case : str
        The AQM case (:func:`aqm`).
    flows : list of dict
        The flows.
    duration, warmup : float
        Run length and warm-up (s).
    seed : int
        The scenario's seed.

    Returns
    -------
    dict
    """
    nodes = [{"name": r} for r in ROUTERS]
    fast = {"rate": "1Gbps", "delay": ROUTER_DELAY, "buffer": 10000, "monitor": False}
    links: list[dict[str, Any]] = [
        {"src": "R1", "dst": "R2", **fast},
        {"src": "R5", "dst": "R2", **fast},
        {"src": "R3", "dst": "R6", **fast},
    ]
    for lname, src, dst in (("l23", "R2", "R3"), ("l34", "R3", "R4")):
        links.append(
            {
                "name": lname,
                "src": src,
                "dst": dst,
                "rate": RATE_BPS,
                "delay": BOTTLENECK_DELAY,
                "buffer": BUFFER,
                "aqm": aqm(case),
            }
        )
    groups = []
    for i, f in enumerate(flows):
        entry, exit_, _ = ROUTES[f["group"]]
        access = f["rtt"] / 2 - path_delay(f["group"])
        if access <= 0:
            raise ValueError(f"flows[{i}].rtt = {f['rtt']}: shorter than the path's delay")
        host = f"h{i}"
        nodes.append({"name": host})
        links.append(
            {
                "src": host,
                "dst": entry,
                "rate": "1Gbps",
                "delay": round(access, 9),
                "buffer": 10000,
                "monitor": False,
            }
        )
        g = {
            "name": f"{f['group']}#{i}",
            "kind": "tcp",
            "count": 1,
            "cc": f["cc"],
            "src": host,
            "dst": exit_,
            "start": round(float(f["start"]), 6),
            "packet_size": PKT,
        }
        if f.get("stop") is not None:
            g["stop"] = round(float(f["stop"]), 6)
        groups.append(g)
    sc: dict[str, Any] = {
        "name": name,
        "seed": seed,
        # TCP pinned to the classic profile, the model this reproduction was validated with
        "profile": "classic",
        "duration": duration,
        "warmup": warmup,
        "sample_interval": 0.01,
        "nodes": nodes,
        "links": links,
        "flows": groups,
    }
    if case in STATE:
        # Algorithm 2 tunes for the NUM optimum of the present flows ("num"), or for
        # Algorithm 1's own decision as written ("ogd"); sigma by the Reno delay rule or
        # Theorem 3
        sc["sqm"] = {"period": PERIOD, "sigma_rule": SIGMA_RULE[case], "state": STATE[case]}
    return sc


def groups_of(flows: list[dict[str, Any]]) -> list[str]:
    """The route group of each flow, in flow order.

    Parameters
    ----------
    flows : list of dict
        The flows (see :func:`scenario`).

    Returns
    -------
    list of str
    """
    return [f["group"] for f in flows]


def routing(flows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Routing matrix over (l23, l34) and capacities (packets/s) for the NUM optimum.

    Parameters
    ----------
    flows : list of dict
        The flows (see :func:`scenario`).

    Returns
    -------
    tuple of numpy.ndarray
        ``(R, capacity)``: the (flows, 2) 0/1 matrix and the two capacities.
    """
    R = np.zeros((len(flows), 2))
    for i, f in enumerate(flows):
        crossed = ROUTES[f["group"]][2]
        R[i, 0] = "l23" in crossed
        R[i, 1] = "l34" in crossed
    return R, np.array([CAPACITY_PPS, CAPACITY_PPS])


def run_cases(
    paper: str, flows: dict[int, list[dict[str, Any]]], duration: float, warmup: float
) -> tuple[dict[str, list[Run]], dict[str, dict[str, Any]]]:
    """Run every case (:data:`CASES` and :data:`EXTRA`) for every seed of ``flows`` ({seed:
    flow list}); returns the runs by case and the scenarios by ``CASE-seedN``.

    Parameters
    ----------
    paper : str
        The reproduction's name (scenario names).
    flows : dict
        ``{seed: flow list}``.
    duration, warmup : float
        Run length and warm-up (s).

    Returns
    -------
    tuple of dict
        The runs by case and the scenarios by ``CASE-seedN``.
    """
    jobs, scen = [], {}
    for case in CASES + EXTRA:
        for s, fl in flows.items():
            sc = scenario(f"{paper}-{case}-seed{s}", case, fl, duration, warmup, seed=s)
            jobs.append(Job(case, s, sc))
            scen[f"{case}-seed{s}"] = sc
    return run_jobs(jobs, paper), scen
