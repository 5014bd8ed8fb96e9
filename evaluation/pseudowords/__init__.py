"""Pseudowords evaluation: prompts, instability metrics, noise floors, scoring and rendering."""
