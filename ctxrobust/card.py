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
    primary_citation: str
    citations: list[str]
    configs: dict[str, ConfigText]
    limits: list[str]


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
            for key in [text.primary_citation, *text.citations]:
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
    text = card_text().datasets.get(dataset)
    if text is None:
        raise CtxRobustError(f"{CARD_TEXT}: no card text for dataset {dataset!r}; add a `datasets.{dataset}` entry")
    return text


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


def _noted_exclusions(notes: dict) -> list[str]:
    """Build notes that record what was left out (keys naming exclusions, skips or unbuilt parts)."""
    markers = ("exclu", "not_built", "skipped", "dropped", "deferred", "missing", "unavailable")
    found = []
    for key in sorted(notes):
        value = notes[key]
        if any(m in key.lower() for m in markers) and value not in (None, {}, [], 0, ""):
            summary = f"{len(value)} entries" if isinstance(value, list) and len(value) > LIST_LIMIT else _cell(_scalar(value))
            found.append(f"This build left something out (build note `{key}`): {summary}.")
    return found


def render_card(manifest: dict) -> str:
    """The README.md of a release: YAML header for the Hub, then what the data is, how it was built, checks, limits."""
    text = dataset_text(manifest["dataset"])
    cards = card_text()
    dataset, version = manifest["dataset"], manifest["version"]
    licence = cards.licences[release_licence(manifest)]
    parquet = parquet_files(manifest)
    jsonl = {f["name"]: f for f in manifest.get("files", [])}
    notes = manifest.get("build_notes", {}) or {}
    validators = manifest.get("validators", {}) or {}
    builder = manifest.get("builder", {})
    default = text.default_config
    example = default if any(config_name(p["name"]) == default for p in parquet) else (config_name(parquet[0]["name"]) if parquet else default)

    header = yaml.safe_dump(front_matter(manifest), sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    out: list[str] = ["---", header.rstrip("\n"), "---", "", f"# {text.pretty_name}", "", text.summary, ""]
    out += _table(["", ""], [
        ["dataset", f"`{dataset}`"],
        ["version", f"`{version}` (Hub tag `v{version}`)"],
        ["configurations", ", ".join(f"`{config_name(p['name'])}`" for p in parquet) or "none"],
        ["rows", f"{total_rows(manifest):,}"],
        ["licence", f"[{licence.name}]({licence.url})"],
        ["built by", f"ctxrobust {builder.get('package_version', '?')}, builder code sha256 `{builder.get('code_sha256', '?')}`"],
    ])
    out += [
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'data = load_dataset(REPO, "{example}", split="{SPLIT}", revision="v{version}")',
        "```",
        "",
        f"`REPO` is the Hub id of this repository. Every configuration has one split, `{SPLIT}`; the tag `v{version}` pins exactly these files. "
        "`croissant.json` describes every file and field in Croissant 1.1 (`mlcroissant` reads it).",
        "",
        "## About the data",
        "",
    ]
    for paragraph in text.description:
        out += [paragraph, ""]

    out += ["## Configurations", ""]
    rows = []
    for entry in parquet:
        name = config_name(entry["name"])
        described = text.configs.get(name)
        rows.append([f"`{name}`", SPLIT, entry["name"], f"{entry['rows']:,}", f"`{entry['sha256']}`", described.description if described else "no description recorded"])
    out += _table(["configuration", "split", "file", "rows", "sha256", "contents"], rows, ["---", "---", "---", "---:", "---", "---"])
    out += ["", f"Each Parquet file is a copy of the release's canonical JSON Lines file of the same name (`.jsonl`), row for row, sorted by `id`.", ""]

    out += ["## Fields", ""]
    for entry in parquet:
        name = config_name(entry["name"])
        described = text.configs.get(name)
        schema = jsonl.get(entry.get("from", ""), {}).get("schema")
        out += [f"### `{name}`", ""]
        if described and described.fields:
            out += _table(["field", "description"], [[f"`{k}`", v] for k, v in described.fields.items()])
        else:
            out += ["No field descriptions are recorded for this configuration."]
        if schema:
            out += ["", f"JSON Schema: `schemas/{schema}.schema.json` in the ctxrobust package."]
        out += [""]

    out += ["## How it was built", ""]
    out += [f"- {line}" for line in text.construction]
    out += ["", "### Build configuration", ""]
    config = manifest.get("config", {})
    out += _table(["setting", "value"], [[f"`{k}`", f"`{_scalar(config[k])}`"] for k in sorted(config)]) if config else ["No configuration recorded."]
    out += ["", "### Build notes", ""]
    out += _note_lines(notes, "build_notes") or ["No build notes recorded."]
    out += ["", "### Sources", ""]
    used = sources_used(manifest)
    if used:
        digests = {s["name"]: s.get("sha256", "") for s in manifest.get("sources", [])}
        out += _table(["source", "sha256", "what it is", "licence"], [
            [f"`{name}`", f"`{digests[name]}`" if name in digests else "see build notes", source.name if source else "not described", source.licence if source else "not recorded"]
            for name, source in used
        ])
    else:
        out += ["No third-party source data: every row was generated by the builder from its configuration and seed."]

    passed = sum(1 for r in validators.values() if r.get("passed"))
    out += ["", "## Validation", "", f"{passed} of {len(validators)} checks passed when the release was frozen (`ctxrobust validate` reruns them and recomputes every hash).", ""]
    out += _table(["check", "result", "failures"], [[f"`{k}`", "passed" if r.get("passed") else "FAILED", r.get("failures", 0)] for k, r in sorted(validators.items())], ["---", "---", "---:"])

    out += ["", "## Licence", "", f"This release is distributed under [{licence.name}]({licence.url}). "
            f"It carries the most restrictive licence among the dataset's own ({cards.licences[text.licence].name}) and those its sources require, "
            f"in the order {' > '.join(cards.licences[k].name for k in cards.licence_precedence)}.", ""]
    for name, source in used:
        out.append(f"- `{name}`: {source.licence if source else 'licence not recorded'}")
    if used:
        out.append("")

    out += ["## Known limits", ""]
    out += [f"- {line}" for line in text.limits + _noted_exclusions(notes)]

    out += ["", "## Verifying", "", "```sh", "sha256sum -c --ignore-missing SHA256SUMS", "```", "",
            "`SHA256SUMS` and `manifest.json` are the release's own: they hash every file of the release, including the JSON Lines files "
            "this repository does not carry, and record the full build configuration and source snapshots. "
            "`ctxrobust validate RELEASE_DIR` reruns every check on a release folder built with `ctxrobust build`.", ""]

    out += ["## Citation", "", "```bibtex"]
    keys = [text.primary_citation] + [k for k in text.citations if k != text.primary_citation]
    out += ["\n\n".join(cards.citations[key].bibtex for key in keys)]
    out += ["```", ""]
    for key in text.citations:
        out.append(f"- {cards.citations[key].text}")
    return "\n".join(out).rstrip("\n") + "\n"
