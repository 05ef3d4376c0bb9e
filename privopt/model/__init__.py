"""The model layer: priors, alphabets, neighbour relations, distortions, mechanisms.

Nothing here imports a solver or a measure.
"""

from privopt.model.distortion import DISTORTION_KINDS, Distortion
from privopt.model.mechanism import Mechanism, as_matrix
from privopt.model.metric import Metric, MetricPairs
from privopt.model.neighbors import NEIGHBOR_KINDS, NeighborRelation, all_pairs, hamming_neighbors
from privopt.model.prior import DatabasePrior, JointPrior, Prior, as_prior, database_digits

__all__ = [
    "DISTORTION_KINDS",
    "NEIGHBOR_KINDS",
    "DatabasePrior",
    "Distortion",
    "JointPrior",
    "Mechanism",
    "Metric",
    "MetricPairs",
    "NeighborRelation",
    "Prior",
    "all_pairs",
    "as_matrix",
    "as_prior",
    "database_digits",
    "hamming_neighbors",
]
