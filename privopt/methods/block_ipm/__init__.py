"""The block-angular interior point (``block-ipm``): the linear notions' LPs solved column
block by column block, for any prior (no symmetry needed).

* :mod:`~privopt.methods.block_ipm.kernels` — each column's normal matrix and its inverse
  (dense for neighbour pairs, diagonal plus low rank for the output-law and auxiliary forms);
* :mod:`~privopt.methods.block_ipm.dense_inverse` — the dense columns' inverses and products,
  in place and on every core (LAPACK called without the interpreter lock);
* :mod:`~privopt.methods.block_ipm.interior_point` — Mehrotra's predictor–corrector with a
  Schur complement on the row sums and a certified Lagrangian bound;
* :mod:`~privopt.methods.block_ipm.polish` — each column's exact LP duals, to finish a stalled
  run's bound;
* :mod:`~privopt.methods.block_ipm.programs` — each notion's rows in block form;
* :mod:`~privopt.methods.block_ipm.method` — the registered method.
"""

from privopt.methods.block_ipm.method import BlockInteriorPoint

__all__ = ["BlockInteriorPoint"]
