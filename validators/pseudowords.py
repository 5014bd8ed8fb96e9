"""Pseudowords checks: the vocabulary filter, CHA words, exact token counts, distinct contexts.

Paper: "The Illusion of Robustness", Section 2 (vocabulary, contexts), Section 3.3
(context kinds and lengths), Appendix B (Zipf threshold 1.5, 10,000 words).
Rows whose fields have the wrong type are left to the `schema` check.
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import Iterable

import wordfreq

from ctxrobust.builders.pseudowords import offensive
from ctxrobust.builders.pseudowords.builder import PseudowordsConfig
from ctxrobust.builders.pseudowords.contexts import context_id
from ctxrobust.builders.pseudowords.tokenizer import load
from ctxrobust.errors import CtxRobustError
from ctxrobust.validators.checks import Failure, check

VOCABULARY = "vocabulary.jsonl"
CONTEXTS = "contexts.jsonl"


class _BadConfig(Exception):
    """The manifest's configuration is not a pseudowords build configuration."""


def _config(release) -> PseudowordsConfig:
    try:
        return release.config_as(PseudowordsConfig)
    except CtxRobustError as exc:
        raise _BadConfig(str(exc)) from None


def _rows(release, name: str, field: str) -> Iterable[dict]:
    """The rows of `name` that are objects whose id and `field` are strings."""
    return (row for row in release.iter_rows(name) if isinstance(row, dict) and all(isinstance(row.get(k), str) for k in ("id", field)))


def _words(release) -> Iterable[dict]:
    return _rows(release, VOCABULARY, "word")


def _texts(release) -> Iterable[dict]:
    return _rows(release, CONTEXTS, "text")


@check("pseudowords", "build_config")
def build_config(release) -> Iterable[Failure]:
    """The manifest's configuration is one the builder accepts (the other checks read it)."""
    try:
        _config(release)
    except _BadConfig as exc:
        yield Failure("manifest.json", None, str(exc))


@check("pseudowords", "zipf_replay")
def zipf_replay(release) -> Iterable[Failure]:
    """Appendix B: every word's Zipf frequency, recomputed with wordfreq, equals the recorded one and is below the threshold."""
    cfg = _config(release)
    built_with = release.manifest.get("build_notes", {}).get("wordfreq")
    installed = f"wordfreq {metadata.version('wordfreq')}"
    versions = "" if built_with in (None, installed) else f" (built with {built_with}, replayed with {installed})"
    for row in _words(release):
        actual = wordfreq.zipf_frequency(row["word"], cfg.zipf_language, cfg.zipf_wordlist)
        if actual != row.get("zipf"):
            yield Failure(VOCABULARY, row["id"], f"recorded zipf {row.get('zipf')} but wordfreq gives {actual}{versions}")
        if actual >= cfg.zipf_threshold:
            yield Failure(
                VOCABULARY, row["id"], f"English Zipf frequency {actual} is at or above the threshold {cfg.zipf_threshold}{versions}"
            )


@check("pseudowords", "vocabulary_offensive")
def vocabulary_offensive(release) -> Iterable[Failure]:
    """No word holds an entry of the offensive word list (offensive.py), for releases built with offensive_filter."""
    if release.manifest.get("config", {}).get("offensive_filter") is not True:
        return  # built before the filter existed, or with it turned off: nothing to replay
    listed = offensive.load()
    built_with = release.manifest.get("build_notes", {}).get("offensive_list", {}).get("sha256")
    versions = (
        ""
        if built_with in (None, listed.source["sha256"])
        else f" (built with another {offensive.WORDLIST}, replayed with {listed.source['version']})"
    )
    for row in _words(release):
        part = listed.part(row["word"])
        if part is not None:
            yield Failure(
                VOCABULARY, row["id"], f"word {row['word']!r} contains {part!r}, an entry of {offensive.DISTRIBUTION}'s list{versions}"
            )


@check("pseudowords", "vocabulary_alphabet")
def vocabulary_alphabet(release) -> Iterable[Failure]:
    """Section 2: lowercase a-z strings of min_word_length to max_word_length letters; the id is the word."""
    cfg = _config(release)
    low, high = cfg.min_word_length, cfg.max_word_length
    pattern = re.compile(rf"[a-z]{{{low},{high}}}")
    for row in _rows(release, VOCABULARY, "id"):
        word = row.get("word")
        if not isinstance(word, str) or not pattern.fullmatch(word):
            yield Failure(VOCABULARY, row["id"], f"word {word!r} is not {low} to {high} letters a-z")
        if row["id"] != word:
            yield Failure(VOCABULARY, row["id"], f"id differs from the word {word!r}")


@check("pseudowords", "vocabulary_unique")
def vocabulary_unique(release) -> Iterable[Failure]:
    seen: set[str] = set()
    for row in _words(release):
        if row["word"] in seen:
            yield Failure(VOCABULARY, row["id"], f"word {row['word']!r} occurs more than once")
        seen.add(row["word"])


@check("pseudowords", "vocabulary_size")
def vocabulary_size(release) -> Iterable[Failure]:
    """Appendix B: the vocabulary has vocabulary_size words (10,000 by default)."""
    expected = _config(release).vocabulary_size
    found = sum(1 for _ in release.iter_rows(VOCABULARY))
    if found != expected:
        yield Failure(VOCABULARY, None, f"{found} words, expected vocabulary_size {expected}")


@check("pseudowords", "cha_vocabulary")
def cha_vocabulary(release) -> Iterable[Failure]:
    """Section 2: a CHA context is vocabulary words joined by single spaces, nothing else."""
    words = {row["word"] for row in _words(release)}
    for row in _texts(release):
        if row.get("kind") != "CHA":
            continue
        outside = sorted({w for w in row["text"].split(" ") if w not in words})
        if outside:
            shown = ", ".join(repr(w) for w in outside[:5])
            yield Failure(CONTEXTS, row["id"], f"{len(outside)} word(s) not in the vocabulary (or extra spaces): {shown}")


@check("pseudowords", "token_count_replay")
def token_count_replay(release) -> Iterable[Failure]:
    """Section 3: every context re-tokenises (same tokenizer) to exactly target_tokens; n_chars is len(text)."""
    expected = _config(release).tokenizer
    tok = load(expected)
    for row in _texts(release):
        if row.get("tokenizer") != expected:
            yield Failure(CONTEXTS, row["id"], f"tokenizer {row.get('tokenizer')!r}, but the build used {expected!r}")
            continue
        text = row["text"]
        actual = tok.count(text)
        if not actual == row.get("n_tokens") == row.get("target_tokens"):
            yield Failure(
                CONTEXTS,
                row["id"],
                f"text has {actual} tokens; recorded n_tokens {row.get('n_tokens')}, target_tokens {row.get('target_tokens')}",
            )
        if row.get("n_chars") != len(text):
            yield Failure(CONTEXTS, row["id"], f"n_chars {row.get('n_chars')} but the text has {len(text)} characters")


@check("pseudowords", "contexts_distinct")
def contexts_distinct(release) -> Iterable[Failure]:
    first_with: dict[str, str] = {}
    for row in _texts(release):
        earlier = first_with.setdefault(row["text"], row["id"])
        if earlier != row["id"]:
            yield Failure(CONTEXTS, row["id"], f"same text as {earlier}")


@check("pseudowords", "context_bank")
def context_bank(release) -> Iterable[Failure]:
    """Section 3 / 3.3: M contexts of each built kind at each length (WEB only when a web corpus was given)."""
    cfg = _config(release)
    kinds = [k for k in cfg.kinds if k != "WEB" or cfg.web_corpus]
    expected = {context_id(k, n, i): (k, n) for k in kinds for n in cfg.lengths for i in range(cfg.contexts_per_length)}
    found = set()
    for row in _rows(release, CONTEXTS, "id"):
        found.add(row["id"])
        if row["id"] not in expected:
            yield Failure(CONTEXTS, row["id"], "not a context this configuration builds (kind, length or index out of range)")
        elif expected[row["id"]] != (row.get("kind"), row.get("target_tokens")):
            yield Failure(CONTEXTS, row["id"], f"kind {row.get('kind')} / target_tokens {row.get('target_tokens')} disagree with the id")
    for missing in sorted(set(expected) - found):
        yield Failure(CONTEXTS, missing, "missing from the bank")
