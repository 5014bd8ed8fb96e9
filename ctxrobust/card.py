"""The dataset card (README.md) of a release: a Hugging Face YAML header and a body.

Everything in the card comes from the release manifest and the project's own card text
(`cards.json` beside this module: descriptions, citations, field descriptions, licences,
known limits). No dates, no clocks, no data files: the same manifest gives the same bytes.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ctxrobust.errors import CtxRobustError

CARD_TEXT = Path(__file__).with_name("cards.json")
SPLIT = "test"  # every configuration is one evaluation split
LIST_LIMIT = 12  # build-note lists longer than this are summarised by their length
UNSTATED = "other"  # the Hub's licence id when none can be stated: datasets without card text


class _Text(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Licence(_Text):
    name: str
    url: str


class SourceText(_Text):
    prefix: str  # a snapshot name prefix ("fred/") or a user-source kind ("web_corpus")
    name: str
    licence: str
    imposes: Optional[str]  # the licence a release using this source must carry at least, or None


class Citation(_Text):
    text: str
    bibtex: str


class ConfigText(_Text):
    description: str
    fields: dict[str, str]  # top-level column, or dotted path to a nested field -> description
    same_fields_as: Optional[str] = None  # another configuration of the same dataset whose fields these are


class SettingLimit(_Text):
    """A known limit that applies when a build setting has a given value (e.g. an optional source not given)."""

    setting: str
    equals: Any
    text: str


class DatasetText(_Text):
    pretty_name: str
    summary: str
    description: list[str]
    construction: list[str]
    task_categories: list[str]
    task_ids: list[str]
    tags: list[str]
    language: list[str]
    default_config: str
    licence: str
    primary_citation: Optional[str]
    citations: list[str]
    configs: dict[str, ConfigText]
    limits: list[str]
    setting_limits: list[SettingLimit] = []


class CardText(_Text):
    licence_precedence: list[str]
    licences: dict[str, Licence]
    sources: list[SourceText]
    citations: dict[str, Citation]
    datasets: dict[str, DatasetText]

    @model_validator(mode="after")
    def _references(self) -> "CardText":
        if set(self.licence_precedence) != set(self.licences):
            raise ValueError("licence_precedence must list every licence of `licences` once")
        for source in self.sources:
            if source.imposes is not None and source.imposes not in self.licences:
                raise ValueError(f"source {source.prefix}: unknown licence {source.imposes}")
        for name, text in self.datasets.items():
            if text.licence not in self.licences:
                raise ValueError(f"dataset {name}: unknown licence {text.licence}")
            for key in [k for k in [text.primary_citation, *text.citations] if k is not None]:
                if key not in self.citations:
                    raise ValueError(f"dataset {name}: unknown citation {key}")
            if text.default_config not in text.configs:
                raise ValueError(f"dataset {name}: default_config {text.default_config} is not one of its configs")
            for config, described in text.configs.items():
                if described.same_fields_as is not None and described.same_fields_as not in text.configs:
                    raise ValueError(f"dataset {name}: config {config}: same_fields_as {described.same_fields_as} is not one of its configs")
        return self


@functools.cache
def card_text() -> CardText:
    try:
        return CardText.model_validate(json.loads(CARD_TEXT.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if not isinstance(exc, ValidationError) else _first_error(exc)
        raise CtxRobustError(f"{CARD_TEXT}: unusable card text ({first}); fix the file") from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc']) or '(top)'}: {error['msg']}"


def dataset_text(dataset: str) -> DatasetText:
    """The card text of a dataset; a dataset cards.json does not describe gets a bare card (and no licence claim)."""
    text = card_text().datasets.get(dataset)
    if text is not None:
        return text
    return DatasetText(
        pretty_name=dataset,
        summary=f"The {dataset} dataset, built by ctxrobust. No card text is recorded for it (ctxrobust/cards.json).",
        description=[], construction=[], task_categories=[], task_ids=[], tags=[], language=[],
        default_config="", licence=UNSTATED, primary_citation=None, citations=[], configs={}, limits=[],
    )


def licence_text(licence: str) -> Licence:
    known = card_text().licences.get(licence)
    return known if known is not None else Licence(name="not stated", url="https://huggingface.co/docs/hub/repositories-licenses")


# -- what the manifest says -----------------------------------------------------------------


def config_name(file_name: str) -> str:
    """One configuration per release data file, named by its stem: variants.parquet -> variants."""
    return file_name.rsplit(".", 1)[0]


def parquet_files(manifest: dict) -> list[dict]:
    """The Parquet copies of the release ({name, sha256, bytes, rows, from}), sorted by name."""
    return sorted(manifest.get("parquet", []), key=lambda f: f["name"])


def published_files(manifest: dict) -> list[dict]:
    """The Parquet files published as configurations: those with rows (an empty file has no columns to load)."""
    return [entry for entry in parquet_files(manifest) if entry.get("rows", 0) > 0]


def config_fields(text: DatasetText, name: str) -> dict[str, str]:
    described = text.configs.get(name)
    if described is None:
        return {}
    if described.same_fields_as is not None:
        return text.configs[described.same_fields_as].fields
    return described.fields


def hub_configs(manifest: dict) -> list[dict]:
    """The `configs` entries of the YAML header: one per non-empty Parquet file, a single `test` split each."""
    default = dataset_text(manifest["dataset"]).default_config
    configs = []
    for entry in published_files(manifest):
        name = config_name(entry["name"])
        config: dict[str, Any] = {"config_name": name, "data_files": [{"split": SPLIT, "path": entry["name"]}]}
        if name == default:
            config["default"] = True
        configs.append(config)
    return configs


def sources_used(manifest: dict) -> list[tuple[str, Optional[SourceText]]]:
    """(name, card text) for every source snapshot and every user-supplied source of the build."""
    known = card_text().sources
    names = [s["name"] for s in manifest.get("sources", [])]
    user = (manifest.get("build_notes") or {}).get("user_sources") or []
    # builders record user-supplied sources as a list of {"kind", ...} or as {kind: {...}}
    names += sorted(user) if isinstance(user, dict) else [u.get("kind", "user source") for u in user if isinstance(u, dict)]
    return [(name, next((s for s in known if name.startswith(s.prefix) or name == s.prefix.rstrip("/")), None)) for name in names]


def release_licence(manifest: dict) -> str:
    """The most restrictive licence among the dataset's own and those its sources impose (precedence in cards.json)."""
    text = card_text()
    if dataset_text(manifest["dataset"]).licence == UNSTATED:
        return UNSTATED
    wanted = {dataset_text(manifest["dataset"]).licence}
    wanted |= {source.imposes for _, source in sources_used(manifest) if source is not None and source.imposes}
    return next(licence for licence in text.licence_precedence if licence in wanted)


def size_category(rows: int) -> str:
    """The Hub's size category for a total row count."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]
    return next((label for bound, label in bounds if rows < bound), "10M<n<100M")


def total_rows(manifest: dict) -> int:
    return sum(int(f.get("rows", 0)) for f in manifest.get("files", []))


def front_matter(manifest: dict) -> dict:
    text = dataset_text(manifest["dataset"])
    header: dict[str, Any] = {
        "pretty_name": text.pretty_name,
        "license": release_licence(manifest),
        "language": list(text.language),
        "task_categories": list(text.task_categories),
    }
    if text.task_ids:
        header["task_ids"] = list(text.task_ids)
    header["size_categories"] = [size_category(total_rows(manifest))]
    header["tags"] = list(text.tags)
    header["configs"] = hub_configs(manifest)
    return header


# -- rendering --------------------------------------------------------------------------------


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list[Any]], align: list[str] | None = None) -> list[str]:
    align = align or ["---"] * len(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _note_lines(value: Any, path: str, indent: str = "") -> list[str]:
    """Build notes as nested bullets; long lists are summarised by their length and location."""
    lines: list[str] = []
    for key in sorted(value) if isinstance(value, dict) else []:
        item, where = value[key], f"{path}.{key}"
        if isinstance(item, dict) and item:
            lines.append(f"{indent}- `{key}`:")
            lines += _note_lines(item, where, indent + "  ")
        elif isinstance(item, list) and len(item) > LIST_LIMIT:
            lines.append(f"{indent}- `{key}`: {len(item)} entries (manifest.json `{where}`)")
        elif isinstance(item, list) and any(isinstance(x, (dict, list)) for x in item):
            lines.append(f"{indent}- `{key}`:")
            lines += [f"{indent}  - {_cell(x)}" for x in item]
        elif isinstance(item, list):
            lines.append(f"{indent}- `{key}`: " + (", ".join(_cell(_scalar(x)) for x in item) if item else "none"))
        else:
            lines.append(f"{indent}- `{key}`: {_cell(_scalar(item)) if item != {} else 'none'}")
    return lines


def known_limits(manifest: dict, text: DatasetText) -> list[str]:
    """The dataset's standing limits, those its build settings imply, empty files, and what the build notes say was left out."""
    config = manifest.get("config", {})
    limits = list(text.limits)
    limits += [limit.text for limit in text.setting_limits if limit.setting in config and config[limit.setting] == limit.equals]
    limits += [
        f"`{config_name(entry['name'])}` has no rows in this build, so it is not published as a configuration."
        for entry in parquet_files(manifest) if not entry.get("rows")
    ]
    return limits + _noted_exclusions(manifest.get("build_notes") or {})


EXCLUSION_MARKERS = ("exclu", "not_built", "skipped", "dropped", "deferred", "missing", "unavailable", "shortfall")


def _brief(value: Any) -> str:
    """A build-note value on one line: nested mappings in parentheses, long lists by their length."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: " + (f"({_brief(v)})" if isinstance(v, dict) else _brief(v)) for k, v in sorted(value.items()))
    if isinstance(value, list):
        return f"{len(value)} entries" if len(value) > LIST_LIMIT else ", ".join(f"({_brief(x)})" if isinstance(x, dict) else _brief(x) for x in value)
    return _cell(_scalar(value))


def _noted_exclusions(notes: dict, path: str = "") -> list[str]:
    """Build notes, at any depth, whose key says something was left out and whose value is not empty or zero."""
    found = []
    for key in sorted(notes):
        value, where = notes[key], f"{path}{key}"
        if any(m in key.lower() for m in EXCLUSION_MARKERS):
            if value not in (None, {}, [], 0, ""):
                found.append(f"This build left something out (build note `{where}`): {_brief(value)}.")
        elif isinstance(value, dict):
            found += _noted_exclusions(value, f"{where}.")
    return found


def _overview(manifest: dict, text: DatasetText, licence: Licence) -> list[str]:
    builder = manifest.get("builder", {})
    published = [config_name(p["name"]) for p in published_files(manifest)]
    out = [f"# {text.pretty_name}", "", text.summary, ""]
    out += _table(["", ""], [
        ["dataset", f"`{manifest['dataset']}`"],
        ["version", f"`{manifest['version']}` (Hub tag `v{manifest['version']}`)"],
        ["configurations", ", ".join(f"`{name}`" for name in published) or "none"],
        ["rows", f"{total_rows(manifest):,}"],
        ["licence", f"[{licence.name}]({licence.url})"],
        ["built by", f"ctxrobust {builder.get('package_version', '?')}, builder code sha256 `{builder.get('code_sha256', '?')}`"],
    ])
    example = text.default_config if text.default_config in published else (published[0] if published else text.default_config)
    out += [
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'data = load_dataset(REPO, "{example}", split="{SPLIT}", revision="v{manifest["version"]}")',
        "```",
        "",
        f"`REPO` is the Hub id of this repository. Every configuration has one split, `{SPLIT}`; the tag `v{manifest['version']}` pins exactly these files. "
        "`croissant.json` describes every file and field in Croissant 1.1 (`mlcroissant` reads it).",
        "",
        "## About the data",
        "",
    ]
    for paragraph in text.description:
        out += [paragraph, ""]
    return out


def _configurations(manifest: dict, text: DatasetText) -> list[str]:
    rows = []
    for entry in parquet_files(manifest):
        name = config_name(entry["name"])
        described = text.configs.get(name)
        contents = described.description if described else "no description recorded"
        if not entry.get("rows"):
            contents += " Not published as a configuration: this build has no rows for it."
        rows.append([f"`{name}`", SPLIT, entry["name"], f"{entry['rows']:,}", f"`{entry['sha256']}`", contents])
    out = ["## Configurations", ""]
    out += _table(["configuration", "split", "file", "rows", "sha256", "contents"], rows, ["---", "---", "---", "---:", "---", "---"])
    out += ["", "Each Parquet file is a copy of the release's canonical JSON Lines file of the same name (`.jsonl`), row for row, sorted by `id`.", ""]
    out += ["## Fields", ""]
    schemas = {f["name"]: f.get("schema") for f in manifest.get("files", [])}
    for entry in published_files(manifest):
        name = config_name(entry["name"])
        fields = config_fields(text, name)
        out += [f"### `{name}`", ""]
        out += _table(["field", "description"], [[f"`{k}`", v] for k, v in fields.items()]) if fields else ["No field descriptions are recorded for this configuration."]
        if schemas.get(entry.get("from", "")):
            out += ["", f"JSON Schema: `schemas/{schemas[entry['from']]}.schema.json` in the ctxrobust package."]
        out += [""]
    return out


def _construction(manifest: dict, text: DatasetText) -> list[str]:
    out = ["## How it was built", ""]
    out += [f"- {line}" for line in text.construction]
    out += ["", "### Build configuration", ""]
    config = manifest.get("config", {})
    out += _table(["setting", "value"], [[f"`{k}`", f"`{_scalar(config[k])}`"] for k in sorted(config)]) if config else ["No configuration recorded."]
    out += ["", "### Build notes", ""]
    out += _note_lines(manifest.get("build_notes") or {}, "build_notes") or ["No build notes recorded."]
    out += ["", "### Sources", ""]
    used = sources_used(manifest)
    if not used:
        return out + ["No third-party source data: every row was generated by the builder from its configuration and seed.", ""]
    groups: dict[str, list[str]] = {}
    described = {}
    for name, source in used:
        key = source.prefix if source else name
        groups.setdefault(key, []).append(name)
        described[key] = source
    out += _table(["source", "files", "what it is", "licence"], [
        [f"`{key}`", len(names), described[key].name if described[key] else "not described", described[key].licence if described[key] else "not recorded"]
        for key, names in sorted(groups.items())
    ], ["---", "---:", "---", "---"])
    snapshots = manifest.get("sources", [])
    if snapshots:
        out += ["", f"<details><summary>Source snapshots ({len(snapshots)}), pinned by sha256</summary>", ""]
        out += _table(["snapshot", "sha256"], [[f"`{s['name']}`", f"`{s.get('sha256', '')}`"] for s in snapshots])
        out += ["", "</details>"]
    if any(source is None or source.prefix.rstrip("/") == name for name, source in used if name not in {s["name"] for s in snapshots}):
        out += ["", "Sources given at build time (not pinned snapshots) are recorded with their sha256 under `user_sources` in the build notes."]
    return out + [""]


def _validation(manifest: dict) -> list[str]:
    validators = manifest.get("validators", {}) or {}
    passed = sum(1 for r in validators.values() if r.get("passed"))
    out = ["## Validation", "", f"{passed} of {len(validators)} checks passed when the release was frozen (`ctxrobust validate` reruns them and recomputes every hash).", ""]
    out += _table(["check", "result", "failures"], [[f"`{k}`", "passed" if r.get("passed") else "FAILED", r.get("failures", 0)] for k, r in sorted(validators.items())], ["---", "---", "---:"])
    return out + [""]


def _licence(manifest: dict, text: DatasetText, cards: CardText, licence: Licence) -> list[str]:
    if release_licence(manifest) == UNSTATED:
        return ["## Licence", "", "No licence is stated for this dataset: ctxrobust/cards.json has no card text for it.", ""]
    out = ["## Licence", "", f"This release is distributed under [{licence.name}]({licence.url}). "
           f"It carries the most restrictive licence among the dataset's own ({licence_text(text.licence).name}) and those its sources require, "
           f"in the order {' > '.join(cards.licences[k].name for k in cards.licence_precedence)}.", ""]
    seen = set()
    for name, source in sources_used(manifest):
        key = source.prefix if source else name
        if key not in seen:
            seen.add(key)
            out.append(f"- `{key}`: {source.licence if source else 'licence not recorded'}")
    return out + ([""] if seen else [])


def _closing(manifest: dict, text: DatasetText, cards: CardText) -> list[str]:
    out = ["## Known limits", ""]
    out += [f"- {line}" for line in known_limits(manifest, text)]
    out += ["", "## Verifying", "", "```sh", "sha256sum -c --ignore-missing SHA256SUMS", "```", "",
            "`SHA256SUMS` and `manifest.json` are the release's own: they hash every file of the release, including the JSON Lines files "
            "this repository does not carry, and record the full build configuration and source snapshots. "
            "`ctxrobust validate RELEASE_DIR` reruns every check on a release folder built with `ctxrobust build`.", ""]
    keys = [k for k in [text.primary_citation, *text.citations] if k is not None]
    keys = [k for i, k in enumerate(keys) if k not in keys[:i]]
    if keys:
        out += ["## Citation", "", "```bibtex", "\n\n".join(cards.citations[key].bibtex for key in keys), "```", ""]
        out += [f"- {cards.citations[key].text}" for key in keys]
    return out


def render_card(manifest: dict) -> str:
    """The README.md of a release: YAML header for the Hub, then what the data is, how it was built, checks, limits."""
    text, cards = dataset_text(manifest["dataset"]), card_text()
    licence = licence_text(release_licence(manifest))
    header = yaml.safe_dump(front_matter(manifest), sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    out = ["---", header.rstrip("\n"), "---", ""]
    out += _overview(manifest, text, licence)
    out += _configurations(manifest, text)
    out += _construction(manifest, text)
    out += _validation(manifest)
    out += _licence(manifest, text, cards, licence)
    out += _closing(manifest, text, cards)
    return "\n".join(out).rstrip("\n") + "\n"
