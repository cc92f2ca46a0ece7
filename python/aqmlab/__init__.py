"""aqmlab: a laboratory for Active Queue Management.

Subpackages by concern: ``fluid`` (fluid models), ``design`` (controller design), ``mdp`` (PAQMAN),
``online`` (SQM's online tuning),
``scenario``/``sim`` (packet simulator front end), ``cli``.
"""

__version__ = "0.1.0"
