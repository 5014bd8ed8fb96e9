"""The papers' default resampling sizes, seeds and levels, apart from the statistics that use them, so the
option models (and every `--help` built from them) read them without importing numpy, scipy or numba."""

# Illusion of robustness (pseudowords)
QUESTION_BOOTSTRAP_REPLICATES = 1000  # Appendix B
NULL_EXPERIMENTS = 1000  # Appendix B: synthetic null experiments of the noise floor
SPLITS = 200  # Appendix B: symmetric splits of the split-sample WTD
MAX_SIMULATIONS = 10_000  # ceiling of the shift-null simulations

# MisleadQA
CLUSTER_BOOTSTRAP_REPLICATES = 10_000  # App. C.2
CLUSTER_BOOTSTRAP_SEED = 2027  # App. C.2
PRIMARY_LEVEL = 0.975  # Bonferroni-adjusted, for the two primary contrasts (§4.3)
LEVEL = 0.95  # every other interval
