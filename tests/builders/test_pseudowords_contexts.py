"""Context banks of exact token lengths: CHA, TOK, WEB (paper Sections 2, 3, 3.3)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import regex
from paths import FIXTURES

from ctxrobust.builders.pseudowords import contexts, tokenizer, web
from ctxrobust.builders.pseudowords.vocabulary import build_vocabulary
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError


@pytest.fixture(scope="module")
def tok():
    return tokenizer.load("o200k_base")


@pytest.fixture(scope="module")
def vocab_words():
    return build_vocabulary(np.random.default_rng([0, 0]), 2000, 3, 8, 1.5).words


def reference_count(text: str) -> int:
    """o200k in plain Python: regex pre-tokenisation, then lowest-rank-first byte-pair merges (tiktoken's algorithm)."""
    from bpe_openai import registry

    meta = registry.o200k_base()
    ranks = meta["mergeable_ranks"]
    total = 0
    for piece in regex.findall(meta["pat_str"], text):
        parts = [bytes([b]) for b in piece.encode("utf-8")]
        while len(parts) > 1:
            ranked = [(ranks.get(parts[i] + parts[i + 1]), i) for i in range(len(parts) - 1)]
            ranked = [(r, i) for r, i in ranked if r is not None]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        total += len(parts)
    return total


def test_tokenizer_is_offline_o200k_and_agrees_with_a_reference_implementation(tok, vocab_words):
    assert tok.name == "o200k_base"
    assert tok.encode("hello world") == [24912, 2375]  # o200k ids
    rng = np.random.default_rng(0)
    cha = contexts.cha_text(vocab_words, *contexts.word_costs(vocab_words, tok), 200, rng)
    tok_text = contexts.tok_text(tok, tok.round_trip_pool(), 200, rng)
    for text in (cha, tok_text, "Tabs\tand  double  spaces \n\n new lines, émigré 123456 ok?!"):
        assert tok.count(text) == reference_count(text)


def test_unknown_tokenizer_is_a_clear_error():
    with pytest.raises(CtxRobustError, match="not available offline"):
        tokenizer.load("llama3")


def test_round_trip_pool_tokens_decode_and_reencode_alone(tok):
    pool = tok.round_trip_pool()
    assert 190_000 < len(pool) < tok.n_ordinary and np.all(np.diff(pool) > 0)
    for token in np.random.default_rng(1).choice(pool, 300).tolist():
        assert tok.encode(tok.decode([token])) == [token]


@pytest.mark.parametrize("target", [1, 2, 10, 100, 1000, 10_000])
def test_cha_text_hits_the_target_exactly_with_vocabulary_words(tok, vocab_words, target):
    first, rest = contexts.word_costs(vocab_words, tok)
    text = contexts.cha_text(vocab_words, first, rest, target, np.random.default_rng(target))
    assert tok.count(text) == target
    allowed = set(vocab_words)
    assert all(w in allowed for w in text.split(" "))


def test_cha_words_are_drawn_uniformly(tok, vocab_words):
    first, rest = contexts.word_costs(vocab_words, tok)
    text = contexts.cha_text(vocab_words, first, rest, 10_000, np.random.default_rng(2))
    lengths = np.array([len(w) for w in text.split(" ")])
    vocab_lengths = np.array([len(w) for w in vocab_words])
    assert abs(lengths.mean() - vocab_lengths.mean()) < 0.15


@pytest.mark.parametrize("target", [1, 10, 100, 1000, 10_000])
def test_tok_text_hits_the_target_exactly(tok, target):
    text = contexts.tok_text(tok, tok.round_trip_pool(), target, np.random.default_rng(target))
    assert tok.count(text) == target
    assert text == tok.decode(tok.encode(text))


def test_bank_is_deterministic_distinct_and_independent_of_other_lengths(tok, vocab_words):
    first, rest = contexts.word_costs(vocab_words, tok)

    def make(rng, n):
        return contexts.cha_text(vocab_words, first, rest, n, rng)

    a = contexts.bank("CHA", (10, 100), 5, 3, make, tok, set())
    b = contexts.bank("CHA", (10, 100), 5, 3, make, tok, set())
    c = contexts.bank("CHA", (100,), 5, 3, make, tok, set())
    assert a == b
    assert [r for r in a if r["target_tokens"] == 100] == c
    assert len({r["text"] for r in a}) == len(a) == 10
    assert [r["id"] for r in a][:2] == ["CHA-000010-000", "CHA-000010-001"]
    for row in a:
        assert row["n_tokens"] == row["target_tokens"] and row["n_chars"] == len(row["text"])


def test_bank_redraws_duplicates_and_fails_clearly_when_it_cannot(tok):
    words = ["cat", "dog"]  # one token each: only two distinct 1-token contexts exist
    first, rest = contexts.word_costs(words, tok)

    def make(rng, n):
        return contexts.cha_text(words, first, rest, n, rng)

    seen: set[str] = set()
    rows = contexts.bank("CHA", (1,), 2, 0, make, tok, seen)
    assert sorted(r["text"] for r in rows) == ["cat", "dog"]
    with pytest.raises(CtxRobustError, match="CHA-000001-000: no context distinct"):
        contexts.bank("CHA", (1,), 1, 0, make, tok, seen)


def test_cha_fails_clearly_when_no_word_fits_the_remainder(tok):
    words = ["qxzvbk", "zzkqwj"]  # several tokens each
    first, rest = contexts.word_costs(words, tok)
    assert first.min() > 1
    with pytest.raises(CtxRobustError, match="no vocabulary word fits the last 1 token"):
        contexts.cha_text(words, first, rest, 1, np.random.default_rng(0))


def copy_tree(source: Path, target: Path) -> Path:
    for path in source.rglob("*.txt"):
        (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
        (target / path.relative_to(source)).write_bytes(path.read_bytes())
    return target


def test_web_corpus_directory_is_read_in_path_order_and_hashed(tmp_path):
    corpus = web.read_corpus(FIXTURES / "web_corpus")
    assert corpus.source["format"] == "directory"
    assert corpus.source["documents"] == len(corpus.documents) == 6
    assert corpus.documents[0].startswith("How Bridges Carry Loads")
    assert corpus.documents[-1] == (FIXTURES / "web_corpus" / "water-cycle.txt").read_text(encoding="utf-8")
    # the recorded sha256 is that of the SHA256SUMS-style listing, and changes when any document changes
    listing = "".join(
        f"{sha256_file(FIXTURES / 'web_corpus' / name)}  {name}\n"
        for name in ["bridges.txt", "maps.txt", "printing.txt", "science/photosynthesis.txt", "science/vaccines.txt", "water-cycle.txt"]
    )
    assert corpus.source["sha256"] == hashlib.sha256(listing.encode()).hexdigest()
    copy = copy_tree(FIXTURES / "web_corpus", tmp_path / "corpus")
    (copy / "README.md").write_text("not a document", encoding="utf-8")
    (copy / ".cache").mkdir()
    (copy / ".cache" / "partial.txt").write_text("a hidden download file", encoding="utf-8")
    assert web.read_corpus(copy).source["sha256"] == corpus.source["sha256"]
    (copy / "maps.txt").write_text("Changed.", encoding="utf-8")
    assert web.read_corpus(copy).source["sha256"] != corpus.source["sha256"]


def test_web_corpus_jsonl_records_file_hash():
    path = FIXTURES / "web_corpus.jsonl"
    corpus = web.read_corpus(path)
    assert corpus.source == {"name": "web_corpus.jsonl", "format": "jsonl", "sha256": sha256_file(path), "documents": 4}


def test_web_corpus_parquet_like_a_fineweb_edu_download(tmp_path):
    documents = web.read_corpus(FIXTURES / "web_corpus.jsonl").documents
    folder = tmp_path / "fineweb-edu" / "sample"
    folder.mkdir(parents=True)
    table = pa.table({"text": documents[:3], "url": ["https://example.org/a", "https://example.org/b", "https://example.org/c"]})
    pq.write_table(table, folder / "000_00000.parquet")
    pq.write_table(pa.table({"text": documents[3:]}), folder / "001_00000.parquet")
    single = web.read_corpus(folder / "000_00000.parquet")
    assert single.documents == documents[:3]
    assert single.source == {
        "name": "000_00000.parquet",
        "format": "parquet",
        "sha256": sha256_file(folder / "000_00000.parquet"),
        "documents": 3,
    }
    mixed = web.read_corpus(tmp_path / "fineweb-edu")
    assert mixed.documents == documents and mixed.source["format"] == "directory"


def test_bad_corpus_files_name_file_and_line(tmp_path):
    bad = tmp_path / "c.jsonl"
    bad.write_text(json.dumps({"text": "fine"}) + "\n" + json.dumps({"body": "no text"}) + "\n", encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r'c\.jsonl:2: expected a "text" string'):
        web.read_corpus(bad)
    bad.write_text(json.dumps({"text": "fine"}) + "\n" + json.dumps({"text": "  "}) + "\n", encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"c\.jsonl:2: empty document"):
        web.read_corpus(bad)
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"c\.jsonl:1: not valid JSON"):
        web.read_corpus(bad)
    bad.write_text('{"text": "half a pair \\ud800 of surrogates"}\n', encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"c\.jsonl:1: the text holds an unpaired surrogate"):
        web.read_corpus(bad)
    bad.write_bytes(b'{"text": "caf\xe9"}\n')
    with pytest.raises(CtxRobustError, match=r"c\.jsonl:1: not UTF-8"):
        web.read_corpus(bad)
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "p.parquet")
    with pytest.raises(CtxRobustError, match=r'p\.parquet: no "text" column of strings \(columns: body\)'):
        web.read_corpus(tmp_path / "p.parquet")
    pq.write_table(pa.table({"text": ["fine", None]}), tmp_path / "p.parquet")
    with pytest.raises(CtxRobustError, match=r'p\.parquet: row 2: expected a "text" string'):
        web.read_corpus(tmp_path / "p.parquet")
    (tmp_path / "p.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(CtxRobustError, match=r"p\.parquet: not readable as Parquet"):
        web.read_corpus(tmp_path / "p.parquet")
    (tmp_path / "c.csv").write_text("text\nx\n", encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"c\.csv: unknown file type \.csv"):
        web.read_corpus(tmp_path / "c.csv")
    with pytest.raises(CtxRobustError, match="not found"):
        web.read_corpus(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CtxRobustError, match=r"no \.txt, \.jsonl or \.parquet files"):
        web.read_corpus(tmp_path / "empty")


@pytest.mark.parametrize("target", [1, 7, 100, 1000])
def test_web_text_is_documents_cut_to_exactly_the_target(tok, target):
    corpus = web.read_corpus(FIXTURES / "web_corpus")
    text = web.web_text(corpus, tok, target, np.random.default_rng(target))
    assert tok.count(text) == target
    assert any(doc.startswith(text[:40]) for doc in corpus.documents)


def test_web_text_refuses_a_corpus_too_small(tok):
    corpus = web.read_corpus(FIXTURES / "web_corpus.jsonl")
    with pytest.raises(CtxRobustError, match="fewer than a 5000-token WEB context"):
        web.web_text(corpus, tok, 5000, np.random.default_rng(0))


def test_cut_to_tokens_steps_back_out_of_a_split_character(tok):
    tokens = tok.encode("ab 😀😀😀 cd")
    for target in range(1, len(tokens) + 1):
        text = web.cut_to_tokens(tok, tokens, target)
        if text is not None:
            assert tok.count(text) == target
