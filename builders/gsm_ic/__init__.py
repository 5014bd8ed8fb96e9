"""GSM-IC: GSM8K problems with one irrelevant sentence inserted (Shi et al., 2023)."""

from ctxrobust.builders.gsm_ic.builder import GsmIcBuilder, GsmIcConfig

__all__ = ["GsmIcBuilder", "GsmIcConfig"]
