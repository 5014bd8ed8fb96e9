"""RAMDocs (Wang et al., 2025) test split -> AmbigDocs-shaped entity records.

Format (JSON Lines): `{question, documents: [{text, type, answer}], disambig_entity,
gold_answers, wrong_answers}`; `type` is `correct` (true), `misinfo` (deliberately
false) or `noise` (irrelevant). There are no passage ids, titles or shared name.

A record keeps only the `correct` documents that begin with one of the question's
disambiguated titles (DPR style, "Title Text..."): title = that entity, text = the
rest, pid = `<line>.<document index>`. The shared name is derived from the question
and the titles (`shared_name`); a question where it cannot be decided yields no
record, and a title that does not bear the name is left out. `misinfo` and `noise` documents and `wrong_answers` are never read.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.ambigdocs import AmbigDocsRecord, Document
from ctxrobust.sources.records import object_list, read_records, text_field

EXPECTED = "the RAMDocs test file (JSON Lines of question, documents, disambig_entity)"
TRUE_TYPE = "correct"
TYPES = ("correct", "misinfo", "noise")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201d]+)[\"\u201d]")
_NAME_RUN = re.compile(r"[A-Z0-9][\w'.\-&]*(?:\s+(?:(?:of|the|de|du|la|le|von|van|and|for|in|on)\s+)*[A-Z0-9][\w'.\-&]*)*")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# words a question may put before a name the title does not carry ('Judge Howe' -> 'James Henry Howe')
HONORIFICS = frozenset(
    "judge general admiral captain sir lord lady saint st dr president senator governor king queen prince princess "
    "bishop cardinal colonel major lieutenant mr mrs the".split()
)


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _contains(haystack: str, needle: str) -> bool:
    """The needle's words occur contiguously among the haystack's (case-insensitive)."""
    have, want = _words(haystack), _words(needle)
    return bool(want) and any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def base_title(title: str) -> str:
    """'Beyond Measure (Jeremy Camp album)' -> 'Beyond Measure'; 'Pinehurst, Orange County, Texas' -> 'Pinehurst'."""
    return _PARENTHETICAL.sub("", title).split(",")[0].strip()


def _question_span(question: str, name: str) -> str | None:
    """The question's own spelling of `name`, when it states it."""
    match = re.search(r"(?<![\w])" + r"\W+".join(re.escape(w) for w in _WORD.findall(name)) + r"(?![\w])", question, re.IGNORECASE)
    return match.group(0) if match else None


def shared_name(question: str, titles: list[str]) -> tuple[str, list[str]] | None:
    """(name, titles bearing it): the name the question asks about and the entities sharing it (Section 3.2).
    The titles' common base as the question spells it; else the quoted or capitalised span of the
    question whose words (honorifics aside) all of two or more titles hold (a title without them is
    another name, left out); None when that is not one span."""
    bases = {base_title(t).casefold() for t in titles}
    if len(bases) == 1:
        span = _question_span(question, base_title(titles[0]))
        if span is not None:
            return span, list(titles)
    quoted = [q.strip() for q in _QUOTED.findall(question)]
    runs = quoted or [m.group(0) for m in _NAME_RUN.finditer(question) if m.start() > 0]
    found = []
    for run in runs:
        run = re.sub(r"'s$", "", run.strip(" ?.,")).strip()
        words = set(_words(run)) - HONORIFICS
        bearing = [t for t in titles if words and words <= set(_words(t))]
        if len(bearing) >= min(2, len(titles)):
            found.append((run, bearing))
    return found[0] if len(found) == 1 else None


def read_file(path: Path, snapshot: str | None = None, sha256: str | None = None) -> list[AmbigDocsRecord]:
    """One record per RAMDocs question whose shared name can be decided; errors name the file and line."""
    out = []
    for located, where, obj in read_records(path, snapshot, sha256, EXPECTED):
        question = text_field(obj, "question", where)
        titles = obj.get("disambig_entity")
        if not isinstance(titles, list) or not titles or not all(isinstance(t, str) and t.strip() for t in titles):
            raise CtxRobustError(f"{where}: field 'disambig_entity' must be a non-empty list of names (not a RAMDocs record?)")
        titles = [t.strip() for t in titles]
        shared = shared_name(question, titles)
        if shared is None:
            continue  # which name the question asks about cannot be decided
        name, titles = shared
        documents = []
        for position, doc_where, doc in object_list(obj, "documents", where, "{text, type, answer} (not a RAMDocs record?)"):
            kind = text_field(doc, "type", doc_where)
            if kind not in TYPES:
                raise CtxRobustError(f"{doc_where}: field 'type' is {kind!r}, expected one of {', '.join(TYPES)}")
            if kind != TRUE_TYPE:
                continue  # misinfo and noise documents are never used
            text = text_field(doc, "text", doc_where)
            title = next((t for t in sorted(titles, key=len, reverse=True) if text.startswith(t + " ")), None)
            if title is None:
                continue  # a chunk from inside an article: its entity is not stated
            documents.append(
                Document(
                    position=position,
                    title=title,
                    text=text[len(title) :].strip(),
                    pid=f"{located.line}.{position}",
                    answer=text_field(doc, "answer", doc_where),
                )
            )
        out.append(
            AmbigDocsRecord(
                **located.model_dump(),
                qid=f"q{located.line}",
                question=question,
                ambiguous_entity=name,
                documents=tuple(documents),
            )
        )
    return out
