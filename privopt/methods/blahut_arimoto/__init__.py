"""Blahut–Arimoto for the mutual-information trade-off (see :mod:`.rate_distortion`)."""

from privopt.methods.blahut_arimoto.method import BlahutArimoto
from privopt.methods.blahut_arimoto.rate_distortion import (
    RateDistortionSolution,
    distortion_rate,
    rate_distortion,
)

__all__ = ["BlahutArimoto", "RateDistortionSolution", "distortion_rate", "rate_distortion"]
