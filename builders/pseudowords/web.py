"""WEB contexts from a corpus the user supplies, e.g. a fineweb-edu download (Section 3.3).

A corpus is one file or a directory of files (searched recursively, in path order;
other files, such as a download's README.md, and hidden folders are ignored):
- `.txt`: one document;
- `.jsonl`: one document per line, `{"text": ...}` (other fields ignored);
- `.parquet`: one document per row of its `text` column (fineweb-edu's own format).
Its sha256 is recorded in the build notes: for a file, the file's sha256; for a
directory, the sha256 of its SHA256SUMS-style listing ("<sha256>  <relative path>\n"
per corpus file, sorted by path).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ctxrobust.builders.pseudowords.tokenizer import Tokenizer
from ctxrobust.canonical import iter_jsonl, sha256_file
from ctxrobust.errors import CtxRobustError

SEPARATOR = "\n\n"  # between concatenated documents
MAX_CUTS = 20  # prefix lengths tried when cutting a concatenation to an exact token count
SHAPE = (
    'a .txt file (one document), a .jsonl file of {"text": ...} records, a .parquet file with a "text" column, or a directory of such files'
)


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
        files = sorted((p for p in path.rglob("*") if _corpus_file(p, path)), key=lambda p: p.relative_to(path).as_posix())
        if not files:
            raise CtxRobustError(f"web_corpus {path}: no .txt, .jsonl or .parquet files in the directory; give {SHAPE}")
        documents = [text for file in files for text in _read(file)]
        listing = "".join(f"{sha256_file(file)}  {file.relative_to(path).as_posix()}\n" for file in files)
        digest, form = hashlib.sha256(listing.encode("utf-8")).hexdigest(), "directory"
    elif path.is_file() and path.suffix in READERS:
        documents, digest, form = _read(path), sha256_file(path), path.suffix[1:]
    elif path.is_file():
        raise CtxRobustError(f"web_corpus {path}: unknown file type {path.suffix or '(none)'}; give {SHAPE}")
    else:
        raise CtxRobustError(f"web_corpus {path}: not found; give {SHAPE}")
    if not documents:
        raise CtxRobustError(f"web_corpus {path}: no documents; give {SHAPE}")
    return Corpus(documents, {"name": path.name, "format": form, "sha256": digest, "documents": len(documents)})


def _corpus_file(file: Path, root: Path) -> bool:
    """A file of a known type, outside hidden folders (e.g. a download's .cache/)."""
    hidden = any(part.startswith(".") for part in file.relative_to(root).parts)
    return file.is_file() and file.suffix in READERS and not hidden


def _document(text, where: str) -> str:
    """A non-empty string that can be written as UTF-8 (JSON escapes may hold unpaired surrogates)."""
    if not isinstance(text, str):
        raise CtxRobustError(f'{where}: expected a "text" string; fix or remove it')
    if not text.strip():
        raise CtxRobustError(f"{where}: empty document; fill or remove it")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise CtxRobustError(f"{where}: the text holds an unpaired surrogate escape (not valid Unicode); fix or remove it") from None
    return text


def _read_txt(path: Path) -> list[str]:
    return [_document(path.read_text(encoding="utf-8"), str(path))]


def _read_jsonl(path: Path) -> list[str]:
    return [_document(record.get("text") if isinstance(record, dict) else None, f"{path}:{number}") for number, record in iter_jsonl(path)]


def _read_parquet(path: Path) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        texts = parquet.read(columns=["text"]).column("text") if "text" in names else None
    except (pa.ArrowException, OSError) as exc:
        raise CtxRobustError(f"web_corpus {path}: not readable as Parquet ({' '.join(str(exc).split())}); replace the file") from None
    if texts is None or not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
        raise CtxRobustError(f'web_corpus {path}: no "text" column of strings (columns: {", ".join(names)}); give {SHAPE}')
    return [_document(text, f"{path}: row {number}") for number, text in enumerate(texts.to_pylist(), start=1)]


READERS = {".txt": _read_txt, ".jsonl": _read_jsonl, ".parquet": _read_parquet}


def _read(path: Path) -> list[str]:
    try:
        return READERS[path.suffix](path)
    except UnicodeDecodeError:
        raise CtxRobustError(f"web_corpus {path}: not UTF-8 text; convert it to UTF-8 or remove it") from None


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
    raise CtxRobustError(
        f"web_corpus {corpus.source['name']}: no cut of {MAX_CUTS} document orders gives exactly {target} tokens; try another seed"
    )
