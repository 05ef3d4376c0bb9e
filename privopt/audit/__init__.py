"""Auditing a mechanism beside the measures (numpy only): f-information and the guarantees
between notions (:mod:`~privopt.audit.f_information`, :mod:`~privopt.audit.guarantees`), the
gain-function view (:mod:`~privopt.audit.gain`), disclosure and singling out
(:mod:`~privopt.audit.disclosure`), counting queries and the Laplace counting mechanism
(:mod:`~privopt.audit.counting`), probabilistic DP and the persuasion scores
(:mod:`~privopt.audit.persuasive`).

The modules are importable as ``privopt.audit.<name>`` and, as before, as attributes of
``privopt`` (``privopt.f_information``, …).
"""
