"""PAQMAN: optimal drop policies from a semi-Markov decision process (docs/paqman.md).

Functions compute and return result objects (python-control style):

* :func:`negligible_rtt_model` / :func:`rtt_model` build the SMDP (PAQ §III, §V-A),
  :func:`solve` runs relative value iteration and returns a :class:`PaqmanPolicy`
  (``.plot()``, ``.to_pandas()``, ``.save()``); :func:`solve_lp` is the LP cross-check.
* :mod:`aqmlab.mdp.multiflow` simulates the multi-flow model (PAQ §V-B) and fits a Q-function.
* :mod:`aqmlab.mdp.inference` estimates gamma shape and rates from interarrival times (PAQ §IV).
* :mod:`aqmlab.mdp.evaluate` runs the model-level comparison with CoDel and drop-tail (PAQ §VI).

Examples
--------
>>> from aqmlab.mdp import negligible_rtt_model, solve
>>> pol = solve(negligible_rtt_model(service_pps=833.3, target_s=0.005, buffer=50, grid=10))
>>> pol.gain > 0
True
"""

from aqmlab.mdp.model import (
    ADMIT,
    DROP,
    RateGrid,
    Smdp,
    lemma_iii1,
    negligible_rtt_model,
    reward_table,
    served_pmf,
)
from aqmlab.mdp.policy_io import PaqmanPolicy, load_policy
from aqmlab.mdp.rtt import interval_kernel, rtt_model
from aqmlab.mdp.solver import policy_gain, solve, solve_lp, transform

__all__ = [
    "ADMIT",
    "DROP",
    "RateGrid",
    "Smdp",
    "PaqmanPolicy",
    "lemma_iii1",
    "served_pmf",
    "reward_table",
    "negligible_rtt_model",
    "rtt_model",
    "interval_kernel",
    "solve",
    "solve_lp",
    "policy_gain",
    "transform",
    "load_policy",
]
