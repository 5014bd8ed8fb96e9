"""Pseudowords checks: the vocabulary filter, CHA words, exact token counts, distinct contexts.

Paper: "The Illusion of Robustness", Section 2 (vocabulary, contexts), Section 3.3
(context kinds and lengths), Appendix B (Zipf threshold 1.5, 10,000 words).
"""
from __future__ import annotations

import re
from typing import Iterable

import wordfreq

from builders.pseudowords.contexts import context_id
from builders.pseudowords.tokenizer import SUPPORTED, load
from validators.registry import Failure, check

VOCABULARY = "vocabulary.jsonl"
CONTEXTS = "contexts.jsonl"
DEFAULTS = {
    "vocabulary_size": 10_000,
    "min_word_length": 3,
    "max_word_length": 8,
    "zipf_threshold": 1.5,
    "zipf_language": "en",
    "zipf_wordlist": "best",
    "tokenizer": "o200k_base",
    "contexts_per_length": 10,
}


def _config(release, key):
    return release.config.get(key, DEFAULTS[key])


@check("pseudowords", "zipf_replay")
def zipf_replay(release) -> Iterable[Failure]:
    """Appendix B: every word's Zipf frequency, recomputed with wordfreq, equals the recorded one and is below the threshold."""
    threshold = _config(release, "zipf_threshold")
    language, wordlist = _config(release, "zipf_language"), _config(release, "zipf_wordlist")
    for row in release.iter_rows(VOCABULARY):
        actual = wordfreq.zipf_frequency(str(row["word"]), language, wordlist)
        if actual != row["zipf"]:
            yield Failure(VOCABULARY, row["id"], f"recorded zipf {row['zipf']} but wordfreq gives {actual}")
        if actual >= threshold:
            yield Failure(VOCABULARY, row["id"], f"English Zipf frequency {actual} is at or above the threshold {threshold}")


@check("pseudowords", "vocabulary_alphabet")
def vocabulary_alphabet(release) -> Iterable[Failure]:
    """Section 2: lowercase a-z strings of min_word_length to max_word_length letters; the id is the word."""
    low, high = _config(release, "min_word_length"), _config(release, "max_word_length")
    pattern = re.compile(rf"[a-z]{{{low},{high}}}")
    for row in release.iter_rows(VOCABULARY):
        word = row["word"]
        if not isinstance(word, str) or not pattern.fullmatch(word):
            yield Failure(VOCABULARY, row["id"], f"word {word!r} is not {low} to {high} letters a-z")
        if row["id"] != word:
            yield Failure(VOCABULARY, row["id"], f"id differs from the word {word!r}")


@check("pseudowords", "vocabulary_unique")
def vocabulary_unique(release) -> Iterable[Failure]:
    seen: set[str] = set()
    for row in release.iter_rows(VOCABULARY):
        if row["word"] in seen:
            yield Failure(VOCABULARY, row["id"], f"word {row['word']!r} occurs more than once")
        seen.add(row["word"])


@check("pseudowords", "vocabulary_size")
def vocabulary_size(release) -> Iterable[Failure]:
    """Appendix B: the vocabulary has vocabulary_size words (10,000 by default)."""
    expected = _config(release, "vocabulary_size")
    found = sum(1 for _ in release.iter_rows(VOCABULARY))
    if found != expected:
        yield Failure(VOCABULARY, None, f"{found} words, expected vocabulary_size {expected}")


@check("pseudowords", "cha_vocabulary")
def cha_vocabulary(release) -> Iterable[Failure]:
    """Section 2: a CHA context is vocabulary words joined by single spaces, nothing else."""
    words = {row["word"] for row in release.iter_rows(VOCABULARY)}
    for row in release.iter_rows(CONTEXTS):
        if row["kind"] != "CHA":
            continue
        outside = sorted({w for w in row["text"].split(" ") if w not in words})
        if outside:
            shown = ", ".join(repr(w) for w in outside[:5])
            yield Failure(CONTEXTS, row["id"], f"{len(outside)} word(s) not in the vocabulary (or extra spaces): {shown}")


@check("pseudowords", "token_count_replay")
def token_count_replay(release) -> Iterable[Failure]:
    """Section 3: every context re-tokenises (same tokenizer) to exactly target_tokens; n_chars is len(text)."""
    expected_tokenizer = _config(release, "tokenizer")
    for row in release.iter_rows(CONTEXTS):
        name = row["tokenizer"]
        if name != expected_tokenizer or name not in SUPPORTED:
            yield Failure(CONTEXTS, row["id"], f"tokenizer {name!r}, but the build used {expected_tokenizer!r}")
            continue
        text = row["text"]
        actual = load(name).count(text)
        if not actual == row["n_tokens"] == row["target_tokens"]:
            yield Failure(CONTEXTS, row["id"], f"text has {actual} tokens; recorded n_tokens {row['n_tokens']}, target_tokens {row['target_tokens']}")
        if row["n_chars"] != len(text):
            yield Failure(CONTEXTS, row["id"], f"n_chars {row['n_chars']} but the text has {len(text)} characters")


@check("pseudowords", "contexts_distinct")
def contexts_distinct(release) -> Iterable[Failure]:
    first_with: dict[str, str] = {}
    for row in release.iter_rows(CONTEXTS):
        earlier = first_with.setdefault(row["text"], row["id"])
        if earlier != row["id"]:
            yield Failure(CONTEXTS, row["id"], f"same text as {earlier}")


@check("pseudowords", "context_bank")
def context_bank(release) -> Iterable[Failure]:
    """Section 3 / 3.3: M contexts of each built kind at each length (WEB only when a web corpus was given)."""
    config = release.config
    kinds = [k for k in config.get("kinds", ["CHA", "TOK", "WEB"]) if k != "WEB" or config.get("web_corpus")]
    per_length = _config(release, "contexts_per_length")
    expected = {context_id(k, n, i): (k, n) for k in kinds for n in config.get("lengths", []) for i in range(per_length)}
    found = set()
    for row in release.iter_rows(CONTEXTS):
        found.add(row["id"])
        if row["id"] not in expected:
            yield Failure(CONTEXTS, row["id"], "not a context this configuration builds (kind, length or index out of range)")
        elif expected[row["id"]] != (row["kind"], row["target_tokens"]):
            yield Failure(CONTEXTS, row["id"], f"kind {row['kind']} / target_tokens {row['target_tokens']} disagree with the id")
    for missing in sorted(set(expected) - found):
        yield Failure(CONTEXTS, missing, "missing from the bank")
