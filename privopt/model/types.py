"""What the public functions accept where they convert, as type aliases for annotations.

A prior may be given as a :class:`~privopt.model.Prior`, :class:`~privopt.model.JointPrior`
or :class:`~privopt.model.DatabasePrior`, or as a plain pmf (read as a single secret); a
distortion as a :class:`~privopt.model.Distortion`, a matrix or a name; neighbours as a
:class:`~privopt.model.NeighborRelation`, a name or a list of pairs.
"""

from __future__ import annotations

__all__ = ["PriorLike", "DistortionLike", "NeighborsLike"]

from collections.abc import Sequence

from numpy.typing import ArrayLike

from privopt.model.distortion import Distortion
from privopt.model.neighbors import NeighborRelation
from privopt.model.prior import DatabasePrior, JointPrior, Prior

#: A prior object, or a pmf read as a single secret.
PriorLike = Prior | JointPrior | DatabasePrior | ArrayLike
#: A distortion object, a matrix ``d[y, u]``, or "hamming" / "absolute" / "squared".
DistortionLike = Distortion | ArrayLike | str
#: A neighbour relation, "hamming" / "all", a list of pairs, or ``None`` (the default).
NeighborsLike = NeighborRelation | str | Sequence[tuple[int, int]] | None
