"""Files in and out: problem files (:mod:`~privopt.io.files`, one module per section) and
batch results (:mod:`~privopt.io.batch_files`, ``privopt batch``).

``privopt.files`` stays an attribute of ``privopt``.
"""
