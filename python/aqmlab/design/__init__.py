"""Controller design (placeholder, filled in below)."""
from aqmlab.design.margins import *  # noqa: F401,F403
from aqmlab.design.pi_hollot import *  # noqa: F401,F403
from aqmlab.design.plants import *  # noqa: F401,F403
