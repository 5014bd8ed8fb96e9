"""The pseudowords release: a filtered pseudo-word vocabulary and banks of task-irrelevant contexts.

Paper: "The Illusion of Robustness" (Section 2, Section 3 "Experiment Details",
Section 3.3 "Context Type" / "Context Length", Appendix B). SQA contexts depend on
the benchmark being evaluated, so they are made by `ctxrobust prompts`, not here.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Literal, Optional

import numpy as np
import wordfreq
from pydantic import Field, field_validator, model_validator

from ctxrobust.builders.base import BuildConfig, Builder, BuildOutput, DataFile
from ctxrobust.builders.pseudowords import contexts, offensive, tokenizer, vocabulary, web

Kind = Literal["CHA", "TOK", "WEB"]
MAX_LENGTH = 100_000  # tokens: a bound against typos (the paper's longest contexts have 10,000)
WEB_NOT_BUILT = "no web_corpus given; build with --set web_corpus=PATH (" + web.SHAPE + ", e.g. a fineweb-edu download)"
TOK_POOL = (
    "TOK draws only tokens whose bytes are UTF-8 text that re-encodes to that same single token; the paper samples "
    "the whole vocabulary (Section 3.3), but a token holding part of a character cannot stand alone as text"
)
SQA = (
    "SQA histories depend on the benchmark, so `ctxrobust prompts RELEASE --benchmark FILE --kinds SQA` makes them: "
    "20 turns of other questions of the benchmark (Section 3.3), answered with the benchmark's reference answers where "
    "the paper has the model answer them, so the histories exist before any model is run"
)


MAX_VOCABULARY = 1_000_000  # bounds the work of one build (the paper's is 10,000)


class PseudowordsConfig(BuildConfig):
    seed: int = Field(0, ge=0, description="seed of the vocabulary draw and of every context")
    vocabulary_size: int = Field(10_000, ge=1, le=MAX_VOCABULARY, description="pseudo-words in the vocabulary [app. B]")
    min_word_length: int = Field(3, ge=1, le=32, description="fewest letters (a-z) of a pseudo-word [§2]")
    max_word_length: int = Field(8, ge=1, le=32, description="most letters (a-z) of a pseudo-word [§2]")
    zipf_threshold: float = Field(
        1.5, allow_inf_nan=False, description="refuse a candidate whose Zipf frequency in zipf_language is this or more [app. B]"
    )
    zipf_language: str = Field("en", description="the wordfreq language of the Zipf filter (the paper's: English [§2])")
    zipf_wordlist: Literal["best", "large", "small"] = Field("best", description="the wordfreq word list the Zipf filter reads")
    offensive_filter: bool = Field(
        True, description="refuse words holding an entry of better-profanity's word list (the project's rule, not the paper's)"
    )
    kinds: tuple[Kind, ...] = Field(
        ("CHA", "TOK", "WEB"),
        description="context kinds: CHA pseudo-words, TOK random tokens, WEB web text (built only with web_corpus) [§3.3 'Context Type']",
    )
    lengths: tuple[int, ...] = Field((10, 100, 1000, 10_000), description="context lengths in tokens [§3.3 'Context Length']")
    contexts_per_length: int = Field(10, ge=1, le=999, description="contexts per kind and length (the paper's M) [§3]")
    tokenizer: Literal["o200k_base", "cl100k_base"] = Field(
        "o200k_base", description="the encoding that counts context tokens; o200k_base is gpt-oss-120b's [§3]"
    )
    web_corpus: Optional[str] = Field(
        None, description="the WEB documents: a .txt, .jsonl or .parquet file or a folder of them, e.g. a fineweb-edu download [§3.3]"
    )

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("give at least one of CHA, TOK, WEB")
        return tuple(sorted(set(value)))

    @field_validator("lengths")
    @classmethod
    def _lengths(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or any(n < 1 or n > MAX_LENGTH for n in value):
            raise ValueError(f"give one or more token lengths between 1 and {MAX_LENGTH}")
        return tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _consistent(self) -> PseudowordsConfig:
        if self.min_word_length > self.max_word_length:
            raise ValueError("min_word_length is larger than max_word_length")
        if self.web_corpus is not None and "WEB" not in self.kinds:
            raise ValueError("web_corpus is set but kinds leaves out WEB; add WEB or drop web_corpus")
        if self.zipf_language not in wordfreq.available_languages(self.zipf_wordlist):
            raise ValueError(f"wordfreq has no {self.zipf_wordlist!r} word list for zipf_language {self.zipf_language!r}; use e.g. 'en'")
        return self


class PseudowordsBuilder(Builder):
    dataset = "pseudowords"
    Config = PseudowordsConfig

    def required_snapshots(self) -> list[str]:
        return []

    def build(self) -> BuildOutput:
        cfg: PseudowordsConfig = self.config
        corpus = web.read_corpus(Path(cfg.web_corpus)) if cfg.web_corpus is not None else None  # a bad path fails first
        tok = tokenizer.load(cfg.tokenizer)
        vocab = vocabulary.build_vocabulary(
            np.random.default_rng([cfg.seed, 0]),
            cfg.vocabulary_size,
            cfg.min_word_length,
            cfg.max_word_length,
            cfg.zipf_threshold,
            cfg.zipf_language,
            cfg.zipf_wordlist,
            offensive.load().part if cfg.offensive_filter else None,
        )
        rows: list[dict] = []
        seen: set[str] = set()
        built, not_built = [], {}
        for kind in cfg.kinds:
            make_text = _text_maker(kind, vocab, tok, corpus)
            if make_text is None:
                not_built[kind] = WEB_NOT_BUILT
                continue
            rows += contexts.bank(kind, cfg.lengths, cfg.contexts_per_length, cfg.seed, make_text, tok, seen)
            built.append(kind)
        notes = {
            "tokenizer": {"name": tok.name, "model": tokenizer.MODELS[tok.name], "package": tokenizer.package_version()},
            "wordfreq": f"wordfreq {metadata.version('wordfreq')}",
            "vocabulary": {
                "candidates_drawn": vocab.drawn,
                "rejected_zipf": vocab.rejected,
                "rejected_offensive": vocab.rejected_offensive,
                "duplicates": vocab.duplicates,
            },
            "kinds_built": built,
            "kinds_not_built": not_built,
            "sqa": SQA,
            "mean_chars": _mean_chars(rows),
            "user_sources": [{"kind": "web_corpus", **corpus.source}] if corpus is not None else [],
        }
        if cfg.offensive_filter:
            notes["offensive_list"] = offensive.load().source
        if "TOK" in built:
            notes["tok_pool"] = {"tokens": len(tok.round_trip_pool()), "of": tok.n_ordinary, "rule": TOK_POOL}
        return BuildOutput(
            files=[
                DataFile("vocabulary.jsonl", vocab.rows, schema="pseudowords.vocabulary"),
                DataFile("contexts.jsonl", rows, schema="pseudowords.contexts"),
            ],
            notes=notes,
        )


def _text_maker(kind: str, vocab: vocabulary.Vocabulary, tok: tokenizer.Tokenizer, corpus: Optional[web.Corpus]):
    """The function (rng, target tokens) -> text of one context of `kind`; None for WEB without a corpus."""
    if kind == "CHA":
        words = vocab.words
        first, rest = contexts.word_costs(words, tok)
        return lambda rng, n: contexts.cha_text(words, first, rest, n, rng)
    if kind == "TOK":
        pool = tok.round_trip_pool()
        return lambda rng, n: contexts.tok_text(tok, pool, n, rng)
    if corpus is None:
        return None
    return lambda rng, n: web.web_text(corpus, tok, n, rng)


def _mean_chars(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Mean characters per context, by kind and target length (Section 3: 21,129.9 for CHA at 10k tokens)."""
    groups: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        groups.setdefault((row["kind"], row["target_tokens"]), []).append(row["n_chars"])
    out: dict[str, dict[str, float]] = {}
    for (kind, length), chars in sorted(groups.items()):
        out.setdefault(kind, {})[str(length)] = round(sum(chars) / len(chars), 1)
    return out
