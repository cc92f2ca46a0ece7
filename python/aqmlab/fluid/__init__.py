"""Fluid (delay-differential) models of TCP/AQM and their solver."""

from aqmlab.fluid.edc import EDC
from aqmlab.fluid.gao_hou import GaoHou
from aqmlab.fluid.kelly import Kelly
from aqmlab.fluid.ktl import KTL
from aqmlab.fluid.laws import PDLQ, PI, RED, REM, SFC, FluidLaw, make_law
from aqmlab.fluid.misra import Misra
from aqmlab.fluid.result import Equilibrium, FluidResult, LinearizedModel
from aqmlab.fluid.solver import DDESolution, solve_dde
from aqmlab.fluid.sqm import SQM

__all__ = [
    "solve_dde",
    "DDESolution",
    "FluidResult",
    "Equilibrium",
    "LinearizedModel",
    "FluidLaw",
    "RED",
    "PI",
    "REM",
    "PDLQ",
    "SFC",
    "make_law",
    "Misra",
    "GaoHou",
    "KTL",
    "SQM",
    "Kelly",
    "EDC",
]
