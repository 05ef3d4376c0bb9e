"""The papers' results as code: their closed forms (:mod:`~privopt.papers.closed_forms`), the
checks of an answer against them that the solve layer reports
(:mod:`~privopt.papers.closed_form_checks`), and the papers' own programs written as they
state them (:mod:`~privopt.papers.paper_programs`). Cited by the bibliography's keys.

The modules stay attributes of ``privopt`` (``privopt.closed_forms``, …).
"""
