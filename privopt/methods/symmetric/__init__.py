"""Exchangeable database priors: the exact single-letter reduction (see :mod:`.method`)."""

from privopt.methods.symmetric.mechanism import SymmetricMechanism
from privopt.methods.symmetric.method import Symmetric
from privopt.methods.symmetric.orbits import joint_types, orbit_count
from privopt.methods.symmetric.single_letter import rate_distortion_hamming, single_row_lp
from privopt.methods.symmetric.verification import verify_symmetric

__all__ = [
    "Symmetric",
    "SymmetricMechanism",
    "joint_types",
    "orbit_count",
    "rate_distortion_hamming",
    "single_row_lp",
    "verify_symmetric",
]
