"""Subsets of a release's requests for pilots: the first N units, N units drawn with a seed, or the
items named in a file. A subset selects the dataset's unit of analysis, never single requests, so a
pilot is scored like the full run:

- gsm-ic: the base problem, with its own request and the requests of every variant of it (micro, macro,
  accuracy.base and the normalised figures all need both; a variant's request names its base in
  `meta.base_id`);
- misleadqa and pseudowords: the item (a question with all its conditions, contexts and samples; the
  scorers pair conditions within an item and resample items or their source clusters).

`--items FILE` keeps exactly the items it names (item ids, or request ids standing for their item).

The draw ranks each unit by the sha256 of the seed and its id and keeps the N lowest: uniform without
replacement, the same in `prompts` and `run` (and on any machine or Python) for the same seed and
release, and a draw of N units holds the draw of fewer units with the same seed. The selected requests
keep their release order. `record` is what the run record keeps of the selection.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust import jsontext
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.run.requests import HASHED, SEPARATOR, Request, decode, item_token

MAX_ITEMS_FILE = 256 * 1024 * 1024  # the largest --items file read (bytes)
MAX_ID_CHARS = 4096  # the longest item id read from an --items file
SHOWN = 3  # unknown ids named in the error
ITEM = "item"
BASE_PROBLEM = "base problem"
UNITS = {"gsm-ic": BASE_PROBLEM}  # dataset -> its unit of analysis when it is not the item


def unit_name(dataset: str) -> str:
    """What --limit and --sample count for a dataset: "base problem" (gsm-ic) or "item"."""
    return UNITS.get(dataset, ITEM)


def unit_of(request: Request) -> str:
    """The id of the unit a request belongs to: the base problem of a gsm-ic request, else its item."""
    if request.dataset in UNITS:
        base = request.meta.get("base_id")
        if isinstance(base, str) and base:
            return base
    return request.item


class Subset(BaseModel):
    """Which items to keep: `kind` limit (the first `n`), sample (`n` drawn with `seed`) or items (those
    listed in `file`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["limit", "sample", "items"]
    n: Optional[int] = Field(None, ge=1)
    seed: Optional[int] = Field(None, ge=0)
    file: Optional[str] = None


@dataclass(frozen=True)
class Selection:
    """The requests kept (in their order), the items and units kept (in release order) and the release's
    counts of each; `unit` names what --limit and --sample count ("item" for --items)."""

    subset: Subset
    requests: list[Request]
    items: list[str]
    of_items: int
    of_requests: int
    unit: str = ITEM
    units: tuple[str, ...] = ()
    of_units: int = 0


def subset_of(limit: int | None, sample: int | None, items: str | None, seed: int | None) -> Subset | None:
    """The subset the flags ask for (None: every item), each misuse refused with one line."""
    if seed is not None and sample is None:
        raise CtxRobustError("--sample-seed S seeds --sample N; give --sample N too, or leave the seed out")
    if seed is not None and seed < 0:
        raise CtxRobustError(f"--sample-seed {seed}: give a seed of 0 or more")
    for flag, value in (("--limit", limit), ("--sample", sample)):
        if value is not None and value < 1:
            raise CtxRobustError(f"{flag} {value}: give a number of items, 1 or more")
    if limit is not None:
        return Subset(kind="limit", n=limit)
    if sample is not None:
        return Subset(kind="sample", n=sample, seed=seed if seed is not None else 0)
    if items is not None:
        return Subset(kind="items", file=items)
    return None


def from_args(args: argparse.Namespace, seeded_prompts: bool) -> Subset | None:
    """The subset of the parsed flags. `--seed S` seeds `--sample` for a dataset whose prompts take no
    seed of their own (`seeded_prompts` False; the flag is then taken off `args`); where the prompts do
    take one, the draw's seed must be given as --sample-seed, so the two are never confused."""
    sample, seed = getattr(args, "sample", None), getattr(args, "sample_seed", None)
    if sample is not None and seed is None and getattr(args, "seed", None) is not None:
        if seeded_prompts:
            raise CtxRobustError(
                f"--seed {args.seed} seeds this dataset's prompts, not the draw of --sample; "
                "give the draw's seed as --sample-seed S (and keep --seed only to change the prompts)"
            )
        seed, args.seed = args.seed, None
    return subset_of(getattr(args, "limit", None), sample, getattr(args, "items", None), seed)


def summary(selection: Selection) -> str:
    """The line a command prints about its selection."""
    subset, unit = selection.subset, selection.unit
    if subset.kind == "limit":
        asked = f"--limit {subset.n}"
        if subset.n > selection.of_units:
            asked += f", more than the release's {selection.of_units}: every {unit}"
    elif subset.kind == "sample":
        asked = f"--sample {subset.n} --sample-seed {subset.seed}"
    else:
        asked = f"--items {_shown(Path(subset.file))}"
    line = f"selected {len(selection.units)} of {selection.of_units} {unit}(s) ({asked}): "
    if unit != ITEM:
        line += f"{len(selection.items)} of {selection.of_items} item(s), "
    return line + f"{len(selection.requests)} of {selection.of_requests} request(s), every request of each {unit}"


def rank(item: str, seed: int) -> bytes:
    """The item's place in the seeded draw: the lowest ranks are drawn."""
    return hashlib.sha256(f"{seed}\0{item}".encode("utf-8", "surrogatepass")).digest()


def select(requests: Iterable[Request], subset: Subset | None) -> Selection | None:
    """The requests of the subset's units (items for --items), in their order (None when there is no
    subset). One pass over the requests, holding only those of units still in the running: the release's requests are
    never all in memory (a pseudowords release with a large benchmark has millions)."""
    if subset is None:
        return None
    if subset.kind == "sample":
        return _draw(requests, subset)
    if subset.kind == "items":
        return _listed(requests, subset)
    units: dict[str, int] = {}  # unit -> its place in release order
    items: dict[str, bool] = {}  # item -> kept
    kept: list[Request] = []
    total, unit = 0, ITEM
    for r in requests:
        total += 1
        unit = unit_name(r.dataset)
        place = units.setdefault(unit_of(r), len(units))
        if place < subset.n:
            kept.append(r)
            items[r.item] = True
        else:
            items.setdefault(r.item, False)
    chosen = tuple(units)[: subset.n]
    return Selection(subset, kept, [i for i, k in items.items() if k], len(items), total, unit, chosen, len(units))


def _listed(requests: Iterable[Request], subset: Subset) -> Selection:
    """--items: every request of the items the file names; a request id names its item (a request id is
    accepted wherever an item id is)."""
    listed = read_items(Path(subset.file))
    wanted = set(listed)
    via: dict[str, list[str]] = {}  # item (or the hashed token of a long one) -> listed ids that may be its requests
    for name in listed:
        head = name.rsplit(SEPARATOR, 2)
        if len(head) == 3 and head[0].startswith(HASHED) and head[2].isdigit():
            via.setdefault(head[0], []).append(name)
        elif (key := decode(name)) is not None:
            via.setdefault(key.item, []).append(name)
    hashed = any(k.startswith(HASHED) for k in via)
    found: set[str] = set()  # listed ids met as an item or a request id
    seen: dict[str, list[str]] = {}  # item -> the listed ids that may select it
    kept: list[Request] = []
    total = 0
    for r in requests:
        total += 1
        names = seen.get(r.item)
        if names is None:
            names = seen[r.item] = [r.item] if r.item in wanted else []
            names += via.get(r.item, []) + (via.get(item_token(r.item), []) if hashed else [])
        if r.item in wanted:
            found.add(r.item)
        if r.id in wanted:
            found.add(r.id)
        if names:
            kept.append(r)
    _check_listed(listed, found, subset)
    chosen = [item for item, names in seen.items() if any(n in found and (n == item or n not in seen) for n in names)]
    keep = set(chosen)
    return Selection(subset, [r for r in kept if r.item in keep], chosen, len(seen), total, ITEM, tuple(chosen), len(seen))


def _draw(requests: Iterable[Request], subset: Subset) -> Selection:
    """--sample: the units of the N lowest ranks, found in one pass. Held: the requests of the N units
    ranked lowest so far; a unit ranked above the N-th lowest seen is out for good (that bound only
    falls), so its later requests are dropped as they come."""
    import heapq

    held: dict[str, list[tuple[int, Request]]] = {}  # unit -> its (position, request) so far
    highest: list[tuple[bytes, str]] = []  # max-heap (negated ranks) of the held units
    seen: dict[str, None] = {}
    items: dict[str, None] = {}
    total, unit = 0, ITEM
    for position, r in enumerate(requests):
        total += 1
        unit = unit_name(r.dataset)
        items.setdefault(r.item, None)
        item = unit_of(r)
        if item not in seen:
            seen[item] = None
            score = rank(item, subset.seed)
            if len(highest) < subset.n:
                heapq.heappush(highest, (_negated(score), item))
                held[item] = []
            elif score < _negated(highest[0][0]):
                _, dropped = heapq.heapreplace(highest, (_negated(score), item))
                del held[dropped]
                held[item] = []
        if item in held:
            held[item].append((position, r))
    if subset.n > len(seen):
        raise CtxRobustError(
            f"--sample {subset.n}: the release (with these options) has {len(seen)} {unit}(s); "
            f"draw at most {len(seen)} or leave --sample out to ask every {unit}"
        )
    kept = [r for _, r in sorted((pair for pairs in held.values() for pair in pairs), key=lambda pair: pair[0])]
    chosen = tuple(u for u in seen if u in held)
    return Selection(subset, kept, list(dict.fromkeys(r.item for r in kept)), len(items), total, unit, chosen, len(seen))


def _negated(score: bytes) -> bytes:
    """The rank with every byte inverted: the lowest ranks come last in heapq's min-heap order."""
    return bytes(255 - b for b in score)


def _check_listed(listed: list[str], found: set[str], subset: Subset) -> None:
    unknown = [item for item in listed if item not in found]
    if unknown:
        from ctxrobust.release_files import shown

        raise CtxRobustError(
            f"--items {_shown(Path(subset.file))}: {len(unknown)} of its {len(listed)} id(s) are neither items nor request ids "
            f"of the release with these options ({', '.join(shown(i) for i in unknown[:SHOWN])}{', ...' if len(unknown) > SHOWN else ''}); "
            "list item ids (a request's `item`) or request ids (its `id`)"
        )


def items_digest(items: Iterable[str]) -> str:
    """sha256 of the sorted item ids, one per line: the same set of items gives the same digest."""
    return hashlib.sha256("".join(f"{i}\n" for i in sorted(items)).encode("utf-8", "surrogatepass")).hexdigest()


def record(selection: Selection | None) -> dict | None:
    """What the run record keeps of a selection: the subset asked for, the unit it counts and the units
    and items it gave (`item_ids`: every item asked, variants and base problems alike)."""
    if selection is None:
        return None
    subset = selection.subset
    return {
        "kind": subset.kind,
        "n": subset.n,
        "seed": subset.seed,
        "file": subset.file,
        "unit": selection.unit,
        "units": len(selection.units),
        "of_units": selection.of_units,
        "unit_ids": list(selection.units),
        "items": len(selection.items),
        "of_items": selection.of_items,
        "requests": len(selection.requests),
        "of_requests": selection.of_requests,
        "items_sha256": items_digest(selection.items),
        "item_ids": selection.items,
    }


def _shown(path: Path) -> str:
    from ctxrobust.release_files import printable

    return printable(str(path), limit=200)


def _read_bounded(path: Path) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise CtxRobustError(f"--items {_shown(path)}: cannot be read ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CtxRobustError(f"--items {_shown(path)}: is not a regular file (a folder, FIFO or device); name a file of item ids")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_ITEMS_FILE + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_ITEMS_FILE:
        raise CtxRobustError(f"--items {_shown(path)}: longer than {MAX_ITEMS_FILE // (1024 * 1024)} MB; list item ids, one a line")
    return data


def read_items(path: Path) -> list[str]:
    """The item ids of an --items file, in its order, each once: one id per line, or JSON object lines
    whose `item` (a `prompts` request line) or `id` (a predictions row) names the item; blank lines skipped."""
    data = _read_bounded(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CtxRobustError(f"--items {_shown(path)}: not UTF-8 text (byte {exc.start}); list item ids, one a line") from None
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
    items: dict[str, None] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                row = jsontext.loads(line)
            except ValueError as exc:
                raise CtxRobustError(f"--items {_shown(path)}:{number}: not a JSON line ({exc})") from None
            item = row.get("item", row.get("id")) if isinstance(row, dict) else None
            if not isinstance(item, str) or not item:
                raise CtxRobustError(f"--items {_shown(path)}:{number}: a JSON line without an `item` or `id` string")
            line = item
        if len(line) > MAX_ID_CHARS:
            raise CtxRobustError(f"--items {_shown(path)}:{number}: an id longer than {MAX_ID_CHARS} characters")
        items[line] = None
    if not items:
        raise CtxRobustError(f"--items {_shown(path)}: names no item; list item ids, one a line")
    return list(items)
