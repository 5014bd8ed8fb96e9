"""The MisleadQA build configuration: every setting with its paper default (Appendix A.1, A.2, B.2)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ctxrobust.builders.base import BuildConfig
from ctxrobust.builders.misleadqa.audit import AUDIT_SEED, AUDIT_SIZES

MAX_ITEMS = 100_000  # items per source-scope group: bounds the work of one build


class MisleadQAConfig(BuildConfig):
    # items per source-scope group (Appendix A.2 candidate pool)
    fred_time_n: int = Field(200, ge=0, le=MAX_ITEMS)
    fred_location_n: int = Field(200, ge=0, le=MAX_ITEMS)
    situatedqa_time_n: int = Field(200, ge=0, le=MAX_ITEMS)
    situatedqa_location_n: int = Field(200, ge=0, le=MAX_ITEMS)
    ambigdocs_n: int = Field(200, ge=0, le=MAX_ITEMS)
    condambigqa_n: int = Field(100, ge=0, le=MAX_ITEMS)
    # caps per cluster (Appendix A.1 "Candidate selection")
    fred_per_jurisdiction: int = Field(6, ge=1)
    situatedqa_per_question: int = Field(2, ge=1)
    ambigdocs_per_question: int = Field(1, ge=1)
    condambigqa_per_question: int = Field(3, ge=1)
    # FRED fact pairs (Appendix A.1 "Fact pairs", "Sources")
    fred_max_gap_years: int = Field(8, ge=1)
    fred_first_year: int = 1990
    fred_last_year: int = 2024
    # only facts whose January 1 rate the series shows (the last year the source table records before
    # it, the year itself and the first recorded year from it on give the same value;
    # fred_items.january_rate_known): the paper leaves out changes within a year; false states FRED's
    # annual value as the January 1 rate for every year, as the paper's template reads it
    fred_known_january: bool = True
    # context comparability (Appendix A.1)
    comparability_max_ratio: float = Field(1.35, ge=1.0)
    comparability_max_diff: int = Field(25, ge=0)
    # audit sample (Appendix B.2)
    audit_seed: int = AUDIT_SEED
    audit_sizes: dict[str, int] = Field(default_factory=lambda: dict(AUDIT_SIZES))
    # user-supplied sources (not in the pinned mirror)
    ambigdocs_path: str | None = None
    # human adjudication of the screened candidates (Appendix B.1): "default" is the project's review
    # file beside the builder (review/adjudication.jsonl), "none" builds without review, else a path
    adjudication: str = "default"
    # the SituatedQA splits read from the pinned snapshots: the project's review covers candidates of
    # train and dev; the lock also pins test, which a build reads only when it is named here
    situatedqa_splits: tuple[Literal["train", "dev", "test"], ...] = Field(("train", "dev"), min_length=1)
    # another SituatedQA qa_data folder (temp.*.jsonl, geo.*.jsonl) instead of the pinned snapshots
    situatedqa_dir: str | None = None
    condambigqa_path: str | None = None
