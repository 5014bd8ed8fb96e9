"""Tasks for the evaluation runners researchers use (lm-evaluation-harness, Inspect AI), built from a release."""
