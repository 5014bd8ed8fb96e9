"""Offensive strings a pseudo-word must not contain (the vocabulary filter's second rule, Section 2).

The paper keeps random a-z strings whose English Zipf frequency is below the threshold
(Appendix B); a string such as "pornhand" passes that rule but reads as vulgar in a
published context. The list is better-profanity's maintained word list
(`profanity_wordlist.txt`), read as installed: each entry lower-cased, hyphens and
spaces removed ("blow job" -> "blowjob"), entries with other characters (leetspeak
such as "f4nny") dropped, since a pseudo-word holds only a-z. A word is refused when
it contains an entry of at least MIN_LETTERS letters anywhere in it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources

PACKAGE = "better_profanity"
DISTRIBUTION = "better-profanity"
WORDLIST = "profanity_wordlist.txt"
MIN_LETTERS = 3  # the list's shortest a-z entries ("ass", "cum", "fag") are still slurs inside a string


@dataclass(frozen=True)
class OffensiveList:
    entries: tuple[str, ...]  # normalised a-z entries, sorted
    source: dict  # {"package", "version", "file", "sha256", "entries"}

    @property
    def pattern(self) -> re.Pattern:
        return _pattern(self.entries)

    def part(self, word: str) -> str | None:
        """The first listed entry `word` contains (longest first at the leftmost place), or None."""
        match = self.pattern.search(word)
        return match.group(0) if match else None


@cache
def _pattern(entries: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(re.escape(e) for e in sorted(entries, key=lambda e: (-len(e), e))))


def normalise(lines: list[str]) -> tuple[str, ...]:
    """The a-z entries of the word list, as described in the module docstring."""
    entries = set()
    for line in lines:
        entry = re.sub(r"[\s-]+", "", line.strip().lower())
        if len(entry) >= MIN_LETTERS and re.fullmatch(r"[a-z]+", entry):
            entries.add(entry)
    return tuple(sorted(entries))


@cache
def load() -> OffensiveList:
    """better-profanity's word list as installed, with its version and the sha256 of the file read."""
    raw = resources.files(PACKAGE).joinpath(WORDLIST).read_bytes()
    entries = normalise(raw.decode("utf-8").splitlines())
    source = {
        "package": DISTRIBUTION,
        "version": metadata.version(DISTRIBUTION),
        "file": WORDLIST,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "entries": len(entries),
    }
    return OffensiveList(entries=entries, source=source)
