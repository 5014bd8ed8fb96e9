"""Units of the MisleadQA figures (Sections 4.2, 4.3, App. C.2, D): counts are sizes, undefined
replicates and responses; rates are fractions; contrasts are differences of fractions."""

from __future__ import annotations

import re

from ctxrobust.evaluation.report import COUNT, DIFFERENCE, FRACTION, INDICATOR

COUNTS = re.compile(
    r"(^|\.)(size\.[^.]+|bootstrap\.(undefined|units)\..*|inference\.A\.clusters|inference\.models|"
    r"responses\.(rows|invalid\.count|missing_original|lenient_forms)|option_order\.(orders|models)|"
    r"scope\.([GSF]\.count|H\.count|H\.lure_count)\.[^.]+|scope\.(linked\.)?models)$"
)
DIFFERENCES = re.compile(r"(^|\.)(delta\.|order_effect\.|reduction\.)")


def unit_of(name: str) -> str:
    if COUNTS.search(name):
        return COUNT
    if name.endswith("inference.eligible"):
        return INDICATOR
    if DIFFERENCES.search(name):
        return DIFFERENCE
    return FRACTION
