"""Pseudo-word vocabulary (paper Section 2, Appendix B)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import wordfreq

from ctxrobust.builders.pseudowords import offensive
from ctxrobust.builders.pseudowords.vocabulary import build_vocabulary, candidates, zipf
from ctxrobust.errors import CtxRobustError


def test_candidates_are_lowercase_strings_of_the_configured_lengths():
    words = candidates(np.random.default_rng(1), 5000, 3, 8)
    assert len(words) == 5000
    assert all(re.fullmatch(r"[a-z]{3,8}", w) for w in words)
    lengths = np.bincount([len(w) for w in words], minlength=9)[3:]
    # uniform over 3..8: each length near 5000/6
    assert lengths.min() > 700 and lengths.max() < 970
    letters = np.bincount([ord(c) - 97 for w in words for c in w], minlength=26)
    assert letters.min() > 0.8 * letters.mean()


def test_vocabulary_rejects_frequent_strings_and_records_wordfreq_zipf():
    vocab = build_vocabulary(np.random.default_rng(7), 600, 3, 8, 1.5)
    words = vocab.words
    assert len(words) == 600 == len(set(words))
    assert words == sorted(words)
    for row in vocab.rows:
        assert row["id"] == row["word"]
        assert row["zipf"] == wordfreq.zipf_frequency(row["word"], "en") < 1.5
    assert vocab.rejected > 0  # short random strings hit real words and acronyms
    assert vocab.drawn == 600 + vocab.rejected + vocab.duplicates


def test_offensive_list_is_better_profanitys_a_z_entries():
    listed = offensive.load()
    assert {"porn", "ass", "fag", "blowjob"} <= set(listed.entries)  # "blow job" joined; hyphens and spaces removed
    assert all(re.fullmatch(r"[a-z]{3,}", e) for e in listed.entries)  # leetspeak ("f4nny") cannot occur in a-z words
    assert listed.source["package"] == "better-profanity" and len(listed.source["sha256"]) == 64
    assert listed.part("pornhand") == "porn" and listed.part("qxzvb") is None
    assert offensive.normalise(["Blow Job", "f4nny", "ab", "gang-bang"]) == ("blowjob", "gangbang")


def test_offensive_filter_refuses_words_and_counts_them():
    plain = build_vocabulary(np.random.default_rng(11), 3000, 3, 8, 1.5)
    listed = offensive.load()
    assert any(listed.part(w) for w in plain.words)  # random strings do hit the list (about 1 in 100)
    filtered = build_vocabulary(np.random.default_rng(11), 3000, 3, 8, 1.5, offensive=listed.part)
    assert not any(listed.part(w) for w in filtered.words)
    assert filtered.rejected_offensive > 0 and plain.rejected_offensive == 0
    assert filtered.drawn == 3000 + filtered.rejected + filtered.rejected_offensive + filtered.duplicates
    assert set(plain.words) - set(filtered.words) <= {w for w in plain.words if listed.part(w)}


def test_threshold_is_respected_for_a_lower_threshold():
    vocab = build_vocabulary(np.random.default_rng(3), 300, 3, 4, 0.5)
    assert all(row["zipf"] < 0.5 for row in vocab.rows)
    assert "the" not in vocab.words


def test_same_seed_same_vocabulary_other_seed_other_vocabulary():
    a = build_vocabulary(np.random.default_rng([5, 0]), 200, 3, 8, 1.5)
    b = build_vocabulary(np.random.default_rng([5, 0]), 200, 3, 8, 1.5)
    c = build_vocabulary(np.random.default_rng([6, 0]), 200, 3, 8, 1.5)
    assert a.rows == b.rows
    assert a.words != c.words


def test_impossible_vocabulary_is_one_clear_error():
    with pytest.raises(CtxRobustError, match="only .* of 100 words"):
        build_vocabulary(np.random.default_rng(0), 100, 1, 1, 1.5)


def test_zipf_of_unseen_string_is_positive_zero_and_known_word_is_high():
    assert zipf("qxzvb") == 0.0 and str(zipf("qxzvb")) == "0.0"
    assert zipf("the") > 7
