"""Evaluation: prompts out, predictions in, the papers' tables back.

Generic parts here (the predictions reader, resampling, bootstraps, the report shape); one
subpackage per dataset (`gsm_ic/`, `misleadqa/`, `pseudowords/`) with its options, prompts,
response parsing, statistics, scorer and renderings. `ctxrobust.registry` names them.
"""
