"""The MisleadQA build configuration: every setting with its paper default (Appendix A.1, A.2, B.2)
and a description, which `ctxrobust build misleadqa --help` shows (a description changes no value)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ctxrobust.builders.base import BuildConfig
from ctxrobust.builders.misleadqa.audit import AUDIT_SEED, AUDIT_SIZES

MAX_ITEMS = 100_000  # items per source-scope group: bounds the work of one build
SELECTION = "[app. A.1 'Candidate selection']"


class MisleadQAConfig(BuildConfig):
    seed: int = Field(0, description="seed of the order candidates are selected in, their distractors and their option positions")
    # items per source-scope group (Appendix A.2 candidate pool)
    fred_time_n: int = Field(
        200, ge=0, le=MAX_ITEMS, description="FRED time candidates to select (same jurisdiction, another date) [app. A.2]"
    )
    fred_location_n: int = Field(
        200, ge=0, le=MAX_ITEMS, description="FRED location candidates to select (same date, another jurisdiction) [app. A.2]"
    )
    situatedqa_time_n: int = Field(
        200, ge=0, le=MAX_ITEMS, description="SituatedQA time candidates to select (its temp.* questions) [app. A.2]"
    )
    situatedqa_location_n: int = Field(
        200, ge=0, le=MAX_ITEMS, description="SituatedQA location candidates to select (its geo.* questions) [app. A.2]"
    )
    ambigdocs_n: int = Field(
        200, ge=0, le=MAX_ITEMS, description="entity candidates to select (RAMDocs, or AmbigDocs with ambigdocs_path) [app. A.2]"
    )
    condambigqa_n: int = Field(
        100,
        ge=0,
        le=MAX_ITEMS,
        description="CondAmbigQA candidates of the condition supplement (the pinned mcaqa.json, or condambigqa_path) [app. A.2]",
    )
    # caps per cluster (Appendix A.1 "Candidate selection")
    fred_per_jurisdiction: int = Field(
        6, ge=1, description=f"cap on FRED candidates per target jurisdiction in each scope dimension {SELECTION}"
    )
    situatedqa_per_question: int = Field(
        2, ge=1, description=f"cap on SituatedQA candidates per upstream question in each scope dimension {SELECTION}"
    )
    situatedqa_per_type: int = Field(
        20,
        ge=1,
        description=f"cap on SituatedQA candidates per question type in each scope dimension (types: question_types.json) {SELECTION}",
    )
    ambigdocs_per_question: int = Field(1, ge=1, description=f"cap on entity candidates per upstream question {SELECTION}")
    condambigqa_per_question: int = Field(3, ge=1, description=f"cap on CondAmbigQA candidates per upstream question {SELECTION}")
    # FRED fact pairs (Appendix A.1 "Fact pairs", "Sources")
    fred_max_gap_years: int = Field(
        8, ge=1, description="largest gap in years between the gold and lure dates of a FRED time item [app. A.1 'Fact pairs']"
    )
    fred_first_year: int = Field(
        1990, description="first year of a FRED gold or lure fact (distractors may fall outside) [app. A.1 'Sources']"
    )
    fred_last_year: int = Field(
        2024, description="last year of a FRED gold or lure fact (distractors may fall outside) [app. A.1 'Sources']"
    )
    # only facts whose January 1 rate the series shows (the last year the source table records before
    # it, the year itself and the first recorded year from it on give the same value;
    # fred_items.january_rate_known): the paper leaves out changes within a year; false states FRED's
    # annual value as the January 1 rate for every year, as the paper's template reads it
    fred_known_january: bool = Field(
        True,
        description="use a FRED fact only where the series shows the January 1 rate (the paper leaves out changes within a year "
        "[app. A.1 'Sources']); false: the annual value stands as the January 1 rate of every year",
    )
    # context comparability (Appendix A.1)
    comparability_max_ratio: float = Field(
        1.35,
        ge=1.0,
        description="largest word-count ratio of the longest to the shortest of an item's G, S and F [app. A.1 'Context comparability']",
    )
    comparability_max_diff: int = Field(
        25,
        ge=0,
        description="largest word-count difference between the longest and the shortest of an item's G, S and F [app. A.1 'Context comparability']",
    )
    # audit sample (Appendix B.2)
    audit_seed: int = Field(AUDIT_SEED, description="seed of the SHA-256 ranking that draws the audit sample [app. B.2]")
    audit_sizes: dict[str, int] = Field(
        default_factory=lambda: dict(AUDIT_SIZES), description="audit sample size per stratum, source/scope -> items [app. B.2, Table 10]"
    )
    # user-supplied sources (not in the pinned mirror)
    ambigdocs_path: str | None = Field(
        None,
        description="an AmbigDocs JSON or JSON Lines file for the entity group (not in the pinned mirror; unset: the pinned RAMDocs test split); its sha256 goes to the manifest",
    )
    # human adjudication of the screened candidates (Appendix B.1): "default" is the project's review
    # file beside the builder (review/adjudication.jsonl), "none" builds without review, else a path
    adjudication: str = Field(
        "default",
        description='human review decisions on screened candidates [app. B.1]: "default" (the project\'s '
        'review/adjudication.jsonl), "none" (unreviewed) or the path of a JSONL or CSV file',
    )
    keep_unreviewed: bool = Field(
        False,
        description="release candidates without a current decision (counted as unreviewed in the manifest and card); "
        "by default they are excluded [app. B.1]",
    )
    restatements: str = Field(
        "default",
        description='restatements written by reviewers [app. A.1]: "default" (the project\'s review/restatements.jsonl), '
        '"none", or the path of a JSON Lines file',
    )
    # the SituatedQA splits read from the pinned snapshots (qa_data; raw_data for the answer timelines)
    situatedqa_splits: tuple[Literal["train", "dev", "test"], ...] = Field(
        ("train", "dev", "test"),
        min_length=1,
        description="the pinned SituatedQA splits read (qa_data, and raw_data for the answer timelines)",
    )
    # another SituatedQA qa_data folder (temp.*.jsonl, geo.*.jsonl) instead of the pinned snapshots
    situatedqa_dir: str | None = Field(
        None, description="a SituatedQA qa_data folder (temp.*.jsonl, geo.*.jsonl) to read instead of the pinned snapshots"
    )
    condambigqa_path: str | None = Field(
        None,
        description="another CondAmbigQA JSON or JSON Lines file (unset: the pinned 200-question mcaqa.json); its sha256 goes to the manifest",
    )
