"""MisleadQA evaluation: prompts, response parsing, lure rates, scoring and rendering."""
