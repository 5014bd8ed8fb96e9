"""F from G by registered substitution (paper Section 3.3, Appendix A.1 and A.4).

F is derived from G by replacing every registered expression of the gold
answer (aliases and formats included) with the lure, leaving all other text
unchanged. Each edit is recorded as {start, end, old, new}: offsets into G
(Python string indices), the text replaced and its replacement.
"""

from __future__ import annotations

import re


class ReplayError(ValueError):
    """Recorded edits that cannot be applied to G."""


def _pattern(expressions: list[str]) -> re.Pattern:
    ordered = sorted(set(expressions), key=lambda e: (-len(e), e))
    body = "|".join(re.escape(e) for e in ordered)
    # no match inside a longer word or number: "4.25" is not found in "14.25" or "4.251"
    return re.compile(rf"(?<![\w.])(?:{body})(?![\w]|\.\d)", re.IGNORECASE)


def substitute(g_text: str, registered: list[tuple[str, str]]) -> tuple[str, list[dict]]:
    """(F, edits): every occurrence in G of a registered gold expression replaced by its lure form."""
    if not registered:
        return g_text, []
    forms = {}
    for old, new in registered:
        forms.setdefault(old.casefold(), new)
    edits = []
    for match in _pattern([old for old, _ in registered]).finditer(g_text):
        edits.append({"start": match.start(), "end": match.end(), "old": match.group(0), "new": forms[match.group(0).casefold()]})
    return replay(g_text, edits), edits


def replay(g_text: str, edits: list[dict]) -> str:
    """Apply recorded edits to G; text outside the edited spans is copied unchanged."""
    out, position = [], 0
    for number, edit in enumerate(edits):
        start, end, old, new = edit["start"], edit["end"], edit["old"], edit["new"]
        if not (isinstance(start, int) and isinstance(end, int)) or start < position or end < start or end > len(g_text):
            raise ReplayError(f"edit {number} spans [{start}, {end}), which is out of order, overlapping or outside G")
        if g_text[start:end] != old:
            raise ReplayError(f"edit {number}: G[{start}:{end}] is {g_text[start:end]!r}, the edit says {old!r}")
        out.append(g_text[position:start])
        out.append(new)
        position = end
    out.append(g_text[position:])
    return "".join(out)
