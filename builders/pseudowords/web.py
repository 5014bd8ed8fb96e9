"""WEB contexts from a corpus the user supplies, e.g. a fineweb-edu download (Section 3.3).

A corpus is a directory of .txt files (one document each, searched recursively,
in path order) or a JSON Lines file of {"text": ...} records (other fields ignored).
Its sha256 is recorded in the build notes: for a JSONL file, the file's sha256; for a
directory, the sha256 of its SHA256SUMS-style listing ("<sha256>  <relative path>\n"
per file, sorted by path).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from builders.pseudowords.tokenizer import Tokenizer
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError

SEPARATOR = "\n\n"  # between concatenated documents
MAX_CUTS = 20  # prefix lengths tried when cutting a concatenation to an exact token count


@dataclass
class Corpus:
    documents: list[str]
    source: dict  # {"name", "format", "sha256", "documents"}: goes to notes["user_sources"]
    _counts: dict[int, int] = field(default_factory=dict)

    def tokens(self, index: int, tokenizer: Tokenizer) -> int:
        if index not in self._counts:
            self._counts[index] = tokenizer.count(self.documents[index])
        return self._counts[index]


def read_corpus(path: Path) -> Corpus:
    path = Path(path)
    if path.is_dir():
        return _read_directory(path)
    if path.is_file():
        return _read_jsonl(path)
    raise CtxRobustError(f"web_corpus {path}: not found; give a directory of .txt files or a .jsonl file of {{\"text\": ...}} records")


def _read_directory(path: Path) -> Corpus:
    files = sorted((p for p in path.rglob("*.txt") if p.is_file()), key=lambda p: p.relative_to(path).as_posix())
    if not files:
        raise CtxRobustError(f"web_corpus {path}: no .txt files in the directory; add documents as .txt files")
    documents, listing = [], []
    for file in files:
        relative = file.relative_to(path).as_posix()
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise CtxRobustError(f"web_corpus {file}: not UTF-8 text; convert or remove it") from None
        if not text.strip():
            raise CtxRobustError(f"web_corpus {file}: empty document; remove it")
        documents.append(text)
        listing.append(f"{sha256_file(file)}  {relative}\n")
    digest = hashlib.sha256("".join(listing).encode("utf-8")).hexdigest()
    return Corpus(documents, {"name": path.name, "format": "txt-directory", "sha256": digest, "documents": len(documents)})


def _read_jsonl(path: Path) -> Corpus:
    documents = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CtxRobustError(f"{path}:{number}: not valid JSON ({exc.msg}); fix or remove the line") from None
            text = record.get("text") if isinstance(record, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise CtxRobustError(f'{path}:{number}: expected an object with a non-empty "text" string; fix or remove the line')
            documents.append(text)
    if not documents:
        raise CtxRobustError(f"web_corpus {path}: no documents; add lines of {{\"text\": ...}}")
    return Corpus(documents, {"name": path.name, "format": "jsonl", "sha256": sha256_file(path), "documents": len(documents)})


def cut_to_tokens(tokenizer: Tokenizer, tokens: list[int], target: int) -> str | None:
    """The text of the first k tokens, with k moved until it re-tokenises to exactly `target`; None if no k does."""
    k, tried = target, set()
    while 1 <= k <= len(tokens) and k not in tried and len(tried) < MAX_CUTS:
        tried.add(k)
        try:
            text = tokenizer.decode(tokens[:k])
        except UnicodeDecodeError:  # cut inside a character: step back to its start
            k -= 1
            continue
        count = tokenizer.count(text)
        if count == target:
            return text
        k += target - count
    return None


def web_text(corpus: Corpus, tokenizer: Tokenizer, target: int, rng: np.random.Generator) -> str:
    """Section 3.3 WEB: documents in a random order, joined by blank lines, cut to exactly `target` tokens.

    If no cut of this order re-tokenises to exactly `target`, the documents are shuffled again.
    """
    for _ in range(MAX_CUTS):
        order = rng.permutation(len(corpus.documents)).tolist()
        parts, approx, tokens = [], 0, []
        for position, index in enumerate(order, start=1):
            parts.append(corpus.documents[index])
            approx += corpus.tokens(index, tokenizer) + 1
            if approx > target + 8 or position == len(order):
                tokens = tokenizer.encode(SEPARATOR.join(parts))
                if len(tokens) >= target:
                    break
        if len(tokens) < target:
            raise CtxRobustError(
                f"web_corpus {corpus.source['name']}: all {len(corpus.documents)} documents together have {len(tokens)} tokens, "
                f"fewer than a {target}-token WEB context needs; add documents or lower lengths"
            )
        text = cut_to_tokens(tokenizer, tokens, target)
        if text is not None:
            return text
    raise CtxRobustError(f"web_corpus {corpus.source['name']}: no cut of {MAX_CUTS} document orders gives exactly {target} tokens; try another seed")
