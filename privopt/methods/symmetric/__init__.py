"""Exchangeable database priors: the exact single-letter reduction (see :mod:`.method`).

Importing the package registers the method; the names of its solving modules (which import
scipy.optimize and scipy.special) are imported on first use.
"""

from typing import TYPE_CHECKING

from privopt.methods.base import deferred_exports
from privopt.methods.symmetric.method import Symmetric

if TYPE_CHECKING:  # pragma: no cover
    from privopt.methods.symmetric.mechanism import SymmetricMechanism
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

__getattr__ = deferred_exports(
    __name__,
    {
        "SymmetricMechanism": "mechanism",
        "joint_types": "orbits",
        "orbit_count": "orbits",
        "rate_distortion_hamming": "single_letter",
        "single_row_lp": "single_letter",
        "verify_symmetric": "verification",
    },
)
