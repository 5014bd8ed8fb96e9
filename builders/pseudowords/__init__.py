"""Pseudowords: task-irrelevant context banks (CHA, TOK, WEB) of exact token lengths."""

from ctxrobust.builders.pseudowords.builder import PseudowordsBuilder, PseudowordsConfig

__all__ = ["PseudowordsBuilder", "PseudowordsConfig"]
