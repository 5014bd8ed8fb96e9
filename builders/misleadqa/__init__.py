"""MisleadQA: multiple-choice questions with gold (G), true out-of-scope (S) and false in-scope (F) contexts."""

from ctxrobust.builders.misleadqa.builder import MisleadQABuilder, MisleadQAConfig

__all__ = ["MisleadQABuilder", "MisleadQAConfig"]
