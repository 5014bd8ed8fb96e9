"""The dataset card (README.md) of a release: a Hugging Face YAML header and a body.

Everything in the card comes from the release manifest and the project's own card text
(`card_text.json` beside this module: licences, sources, citations; and each dataset's own
`card.json` beside its builder, named in the registry: descriptions, field descriptions, known
limits, how a predictions line looks). Given the release folder, a card also reads its JSON Lines files: the first
row of each (the example rows, and the real ids of the predictions line) and the `source` of every row of a
configuration whose sources the card names. No dates, no clocks: the same manifest and files give the same bytes.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ctxrobust import registry
from ctxrobust.errors import CtxRobustError
from ctxrobust.manifest import Manifest, first_error, read_manifest

CARD_TEXT = Path(__file__).with_name("card_text.json")
SPLIT = "test"  # every configuration is one evaluation split
LIST_LIMIT = 12  # build-note lists longer than this are summarised by their length
UNSTATED = "other"  # the Hub's licence id when none can be stated: datasets without card text


# -- the card text (card_text.json and each dataset's card.json) -----------------------------------------------------------------


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
    citation: Optional[str] = None  # the key of the source's own citation


class Citation(_Text):
    text: str
    bibtex: str


class ConfigText(_Text):
    description: str
    fields: dict[str, str]  # top-level column, or dotted path to a nested field -> description
    same_fields_as: Optional[str] = None  # another configuration of the same dataset whose fields these are (plus `fields`)
    # the sources that may feed this configuration: source kind ("fred", the first part of a snapshot name or a
    # user-source kind) -> the name the card gives it; the card names those that fed the build's rows
    sources: dict[str, str] = {}
    # what one row is, singular and plural ("item", "items"): the card counts rows in these words
    unit: tuple[str, str] = ("row", "rows")
    # what the count is, after "464 items" (" to evaluate"; ": candidates left out, each with its reason"): whether
    # the rows are items to evaluate or not, so that no count mixes the two
    counted_as: str = ""
    # the build notes' `groups` ({"fred/time": {"items": n}, ...}) count this configuration's rows per source: the
    # card says so when it has no folder to count them in
    counted_in_groups: bool = False


class SettingLimit(_Text):
    """A known limit that applies when a build setting has a given value (e.g. an optional source not given)."""

    setting: str
    equals: Any
    text: str


PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")  # {field}: a value of the first row of a configuration


class PredictionsText(_Text):
    """How a predictions row of the dataset looks: one literal line, with real ids of the release."""

    config: str  # the configuration whose first row fills the example's {field} placeholders
    example: dict[str, Any]  # one predictions row; a string value may hold {field} placeholders
    answer: str  # where the model's answer goes: names the field that holds it
    note: str = ""  # what else a reader needs (where an id comes from), after `answer`
    prompts_flags: Optional[str] = None  # the flags `prompts` needs; default: one per required prompt option
    score_flags: str = ""  # the flags `score` needs to score rows like the example (e.g. the benchmark that grades them)
    flags_note: str = ""  # what the flags' values are


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
    licence_note: str  # why the release carries its licence
    primary_citation: Optional[str]
    citations: list[str]
    configs: dict[str, ConfigText]
    limits: list[str]
    setting_limits: list[SettingLimit] = []
    predictions: Optional[PredictionsText] = None
    other_files: list[str] = []  # what the files besides the configurations are (shown with them), paragraph by paragraph


class CardText(_Text):
    """The text every card shares (`card_text.json`): licences, sources and citations."""

    licence_precedence: list[str]  # most restrictive first
    licences: dict[str, Licence]
    sources: list[SourceText]
    citations: dict[str, Citation]

    @model_validator(mode="after")
    def _references(self) -> CardText:
        if sorted(self.licence_precedence) != sorted(self.licences):
            raise ValueError("licence_precedence must list every licence of `licences` once")
        for source in self.sources:
            if source.imposes is not None and source.imposes not in self.licences:
                raise ValueError(f"source {source.prefix}: unknown licence {source.imposes}")
            if source.citation is not None and source.citation not in self.citations:
                raise ValueError(f"source {source.prefix}: unknown citation {source.citation}")
        return self

    def check(self, text: DatasetText) -> None:
        """A dataset's card text refers only to licences, citations and sources this text defines."""
        if text.licence not in self.licences:
            raise ValueError(f"unknown licence {text.licence}")
        for key in [k for k in [text.primary_citation, *text.citations] if k is not None]:
            if key not in self.citations:
                raise ValueError(f"unknown citation {key}")
        if text.default_config not in text.configs:
            raise ValueError(f"default_config {text.default_config} is not one of its configs")
        for config, described in text.configs.items():
            if described.same_fields_as is not None and described.same_fields_as not in text.configs:
                raise ValueError(f"config {config}: same_fields_as {described.same_fields_as} is not one of its configs")
            for kind in described.sources:
                if not any(source.prefix.rstrip("/") == kind for source in self.sources):
                    raise ValueError(f"config {config}: source {kind} is not one of `sources`")
        predictions = text.predictions
        if predictions is not None:
            if predictions.config not in text.configs:
                raise ValueError(f"predictions: config {predictions.config} is not one of its configs")
            fields = config_fields(text, predictions.config)
            for value in predictions.example.values():
                for name in PLACEHOLDER.findall(value) if isinstance(value, str) else []:
                    if name not in fields:
                        raise ValueError(f"predictions: {{{name}}} is not a field of config {predictions.config}")


@functools.cache
def card_text() -> CardText:
    try:
        return CardText.model_validate(json.loads(CARD_TEXT.read_text(encoding="utf-8")))
    except ValidationError as exc:
        raise CtxRobustError(f"{CARD_TEXT}: unusable card text ({first_error(exc)}); fix the file") from None
    except (OSError, ValueError) as exc:
        raise CtxRobustError(f"{CARD_TEXT}: unusable card text ({str(exc).splitlines()[0]}); fix the file") from None


def bare_text(dataset: str) -> DatasetText:
    """The card text of a dataset whose registry entry names none: its name, no licence claim, no descriptions."""
    return DatasetText(
        pretty_name=dataset,
        summary=f"The `{dataset}` dataset (no card text is recorded for it).",
        description=[],
        construction=[],
        task_categories=[],
        task_ids=[],
        tags=[],
        language=[],
        default_config="",
        licence=UNSTATED,
        licence_note="",
        primary_citation=None,
        citations=[],
        configs={},
        limits=[],
    )


def dataset_text(dataset: str) -> DatasetText:
    """The card text a dataset's registry entry names (descriptions, fields, licence, limits)."""
    declared = registry.get(dataset)
    if not declared.card:
        return bare_text(dataset)
    try:
        text = DatasetText.model_validate(declared.card_text)
        card_text().check(text)
    except ValidationError as exc:
        raise CtxRobustError(f"{declared.card}: unusable card text for {dataset} ({first_error(exc)}); fix the file") from None
    except ValueError as exc:
        raise CtxRobustError(f"{declared.card}: card text for {dataset}: {exc}; fix the file") from None
    return text


def licence_text(licence: str) -> Licence:
    known = card_text().licences.get(licence)
    return known if known is not None else Licence(name="not stated", url="https://huggingface.co/docs/hub/repositories-licenses")


# -- what the manifest says -----------------------------------------------------------------


def config_fields(text: DatasetText, name: str) -> dict[str, str]:
    described = text.configs.get(name)
    if described is None:
        return {}
    if described.same_fields_as is not None:  # another configuration's fields, and any of its own besides
        return text.configs[described.same_fields_as].fields | described.fields
    return described.fields


def hub_configs(manifest: Manifest) -> list[dict]:
    """The `configs` entries of the YAML header: one per Parquet file with rows, a single `test` split each.
    An empty file is carried but not declared: `datasets.load_dataset` refuses a split with no data."""
    default = dataset_text(manifest.dataset).default_config
    configs = []
    for entry in manifest.published:
        if entry.rows == 0:
            continue
        config: dict[str, Any] = {"config_name": entry.config, "data_files": [{"split": SPLIT, "path": entry.name}]}
        if entry.config == default:
            config["default"] = True
        configs.append(config)
    return configs


def sources_used(manifest: Manifest) -> list[tuple[str, Optional[SourceText]]]:
    """(name, card text) for every source snapshot and every user-supplied source of the build."""
    known = card_text().sources
    names = [s.name for s in manifest.sources]
    user = manifest.build_notes.get("user_sources") or []
    # builders record user-supplied sources as a list of {"kind", ...} or as {kind: {...}}
    names += sorted(user) if isinstance(user, dict) else [u.get("kind", "user source") for u in user if isinstance(u, dict)]
    return [(name, next((s for s in known if name.startswith(s.prefix) or name == s.prefix.rstrip("/")), None)) for name in names]


def release_licence(manifest: Manifest) -> str:
    """The most restrictive licence among the dataset's own and those its sources impose (precedence in card_text.json)."""
    own = dataset_text(manifest.dataset).licence
    if own == UNSTATED:
        return UNSTATED
    wanted = {own} | {source.imposes for _, source in sources_used(manifest) if source is not None and source.imposes}
    return next(licence for licence in card_text().licence_precedence if licence in wanted)


def citation_keys(manifest: Manifest) -> list[str]:
    """The dataset's citations, then those of the sources it was built from, each once."""
    text = dataset_text(manifest.dataset)
    keys = [text.primary_citation, *text.citations, *(source.citation for _, source in sources_used(manifest) if source)]
    return list(dict.fromkeys(k for k in keys if k is not None))


def size_category(rows: int) -> str:
    """The Hub's size category for a total row count."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]
    return next((label for bound, label in bounds if rows < bound), "10M<n<100M")


def total_rows(manifest: Manifest) -> int:
    return sum(entry.rows for entry in manifest.published)


def front_matter(manifest: Manifest) -> dict:
    text = dataset_text(manifest.dataset)
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


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _cell(value: Any) -> str:
    """A value on one Markdown table line."""
    return _scalar(value).replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list[Any]], align: list[str] | None = None) -> list[str]:
    align = align or ["---"] * len(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _note_lines(value: dict, path: str, indent: str = "") -> list[str]:
    """Build notes as nested bullets; long lists are summarised by their length and location."""
    lines: list[str] = []
    for key in sorted(value):
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
            lines.append(f"{indent}- `{key}`: " + (", ".join(_cell(x) for x in item) if item else "none"))
        else:
            lines.append(f"{indent}- `{key}`: {_cell(item) if item != {} else 'none'}")
    return lines


EXCLUSION_MARKERS = ("exclu", "not_built", "skipped", "dropped", "deferred", "missing", "unavailable", "shortfall")


def _brief(value: Any) -> str:
    """A build-note value on one line: nested mappings in parentheses, long lists by their length."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: " + (f"({_brief(v)})" if isinstance(v, dict) else _brief(v)) for k, v in sorted(value.items()))
    if isinstance(value, list):
        return (
            f"{len(value)} entries"
            if len(value) > LIST_LIMIT
            else ", ".join(f"({_brief(x)})" if isinstance(x, dict) else _brief(x) for x in value)
        )
    return _cell(value)


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


def _empty_configs(manifest: Manifest) -> list[str]:
    return [entry.config for entry in manifest.published if entry.rows == 0]


def known_limits(manifest: Manifest, text: DatasetText) -> list[str]:
    """The dataset's standing limits, those its build settings imply, empty splits, and what the build notes say was left out."""
    limits = list(text.limits)
    limits += [s.text for s in text.setting_limits if s.setting in manifest.config and manifest.config[s.setting] == s.equals]
    limits += [
        f"`{name}` has no rows in this build: its files are carried with their columns, but it is not declared as a configuration."
        for name in _empty_configs(manifest)
    ]
    return limits + _noted_exclusions(manifest.build_notes)


PLACEHOLDER_REPO = "ORG/NAME"
EXAMPLE_TEXT_LIMIT = 160  # characters of a string value shown in an example row
EXAMPLE_LIST_LIMIT = 4  # items of a list value shown in an example row


def _repo_name(repo: Optional[str]) -> str:
    return repo or PLACEHOLDER_REPO


def _counted(described: Optional[ConfigText], rows: int) -> str:
    """'464 items to evaluate', '23,631 exclusions: candidates left out, ...', '1 row': a configuration's rows in its own words."""
    unit, counted_as = (described.unit, described.counted_as) if described is not None else (("row", "rows"), "")
    return f"{rows:,} {unit[0] if rows == 1 else unit[1]}{counted_as}"


def _contents_rows(manifest: Manifest, text: DatasetText) -> list[list[str]]:
    """One overview line per configuration, the default first: what its rows are and how many, so that items to evaluate
    are never added up with exclusions, candidates or samples."""
    entries = sorted(manifest.published, key=lambda e: e.config != text.default_config)
    return [
        [
            f"`{entry.config}`",
            _counted(text.configs.get(entry.config), entry.rows)
            if entry.rows
            else "none in this build (carried as files, not declared as a configuration)",
        ]
        for entry in entries
    ]


def local_path(manifest: Manifest) -> str:
    """Where `make release` writes the release, relative to a clone of ctxrobust: releases/<dataset>/<version>."""
    return f"releases/{manifest.dataset}/{manifest.version}"


def _overview(manifest: Manifest, text: DatasetText, licence: Licence, repo: Optional[str]) -> list[str]:
    names = [entry.config for entry in manifest.published if entry.rows]
    out = [f"# {text.pretty_name}", "", text.summary, ""]
    out += _table(
        ["", ""],
        [
            ["dataset", f"`{manifest.dataset}`"],
            ["version", f"`{manifest.version}` (Hub tag `v{manifest.version}`)"],
            *_contents_rows(manifest, text),
            ["licence", f"[{licence.name}]({licence.url})"],
            ["built by", f"ctxrobust {manifest.builder.package_version}, builder code sha256 `{manifest.builder.code_sha256}`"],
        ],
    )
    example = text.default_config if text.default_config in names else (names[0] if names else text.default_config)
    local = local_path(manifest)
    hub_call = f'load_dataset("{_repo_name(repo)}", "{example}", split="{SPLIT}", revision="v{manifest.version}")'
    local_call = f'load_dataset("{local}", "{example}", split="{SPLIT}")'
    width = max(len(hub_call), len(local_call)) + len("data = ")
    out += [
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f"{'data = ' + hub_call:<{width}}  # from the Hub",
        f"{'local = ' + local_call:<{width}}  # from a local copy of this folder",
        "```",
        "",
    ]
    if repo is None:
        out += [f"`{PLACEHOLDER_REPO}` stands for the Hub repository this release is pushed to (`ctxrobust push --repo ORG/NAME`).", ""]
    out += [
        f"`{local}` is where `make release` writes this release in a clone of ctxrobust; any folder holding this release's "
        "files (a download of the Hub repository too) loads the same way, by its path. "
        f"Every configuration has one split, `{SPLIT}`; the tag `v{manifest.version}` pins exactly these files. "
        + (
            "`croissant.json` describes every file and field in Croissant 1.1 (`mlcroissant` reads it)."
            if repo is not None
            else "`ctxrobust push` adds `croissant.json`, which describes every file and field in Croissant 1.1 (`mlcroissant` reads it)."
        ),
    ]
    for name in _empty_configs(manifest):
        out += [
            "",
            f"`{name}` has no rows in this build, so it is not declared as a configuration (`datasets` cannot load an empty split); "
            f"its files (`{name}.parquet`, `{name}.jsonl`) are carried with their columns.",
        ]
    return out + [""]


def _shortened(value: Any) -> Any:
    """An example value small enough to read: long strings cut, long lists cut, nested values likewise."""
    if isinstance(value, str) and len(value) > EXAMPLE_TEXT_LIMIT:
        return value[:EXAMPLE_TEXT_LIMIT] + f"… ({len(value):,} characters)"
    if isinstance(value, list):
        shown = [_shortened(v) for v in value[:EXAMPLE_LIST_LIMIT]]
        return shown + ([f"… ({len(value):,} items)"] if len(value) > EXAMPLE_LIST_LIMIT else [])
    if isinstance(value, dict):
        return {k: _shortened(v) for k, v in value.items()}
    return value


def _first_row(folder: Optional[Path], name: str) -> Optional[dict]:
    if folder is None or not (Path(folder) / name).is_file():
        return None
    with open(Path(folder) / name, encoding="utf-8") as handle:
        line = handle.readline()
    return json.loads(line) if line.strip() else None


EXAMPLE_OPEN_LINES = 40  # an example row longer than this is folded (<details>)


def _examples(manifest: Manifest, text: DatasetText, folder: Optional[Path]) -> list[str]:
    """One example row per configuration, from the JSON Lines file it copies (its first, by id); the default
    configuration first, long rows folded."""
    out = []
    entries = sorted(manifest.published, key=lambda e: (e.config != text.default_config, e.config))
    for entry in entries:
        row = _first_row(folder, entry.copy_of) if entry.rows else None
        if row is None:
            continue
        shown = json.dumps(_shortened(row), indent=2, sort_keys=True, ensure_ascii=False)
        title = f"`{entry.config}` ({entry.rows:,} rows), its first row (long texts and lists shortened)"
        block = ["```json", shown, "```", ""]
        if shown.count("\n") >= EXAMPLE_OPEN_LINES:
            out += [f"<details><summary>{title}</summary>", "", *block, "</details>", ""]
        else:
            out += [f"{title}:", "", *block]
    return (["## Example rows", ""] + out) if out else []


def _filled(value: Any, row: Optional[dict], config: str) -> Any:
    """A value of the example predictions row with its {field} placeholders filled from `row` (the first row of `config`),
    or, with no row to read, named ('<id of a variants row>')."""
    if not isinstance(value, str):
        return value

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if row is not None and isinstance(row.get(name), (str, int, float)) and not isinstance(row.get(name), bool):
            return str(row[name])
        return f"<{name} of a {config} row>"

    return PLACEHOLDER.sub(fill, value)


def predictions_example(manifest: Manifest, text: DatasetText, folder: Optional[Path]) -> Optional[str]:
    """The card's literal predictions line: the card text's example, with real ids read from the release in `folder`."""
    predictions = text.predictions
    if predictions is None:
        return None
    entry = next((e for e in manifest.published if e.config == predictions.config), None)
    row = _first_row(folder, entry.copy_of) if entry is not None and entry.rows else None
    return json.dumps({k: _filled(v, row, predictions.config) for k, v in predictions.example.items()}, ensure_ascii=False)


def _schema_fields(schema: dict) -> str:
    """'`model`, `id` and either `response` or `answer`': the fields a predictions row must have."""
    required = [f"`{f}`" for f in schema.get("required") or []]
    options = [[f"`{f}`" for f in option.get("required", [])] for option in schema.get("oneOf", [])]
    options = [option for option in options if option]
    if not options:
        return _joined(required) if required else ""
    if all(len(option) == 1 for option in options):
        alternatives = "either " + _joined([option[0] for option in options], "or")
    else:
        alternatives = "one of: " + "; ".join(_joined(option) for option in options)
    return (", ".join(required) + " and " if required else "") + alternatives


def _evaluating(manifest: Manifest, text: DatasetText, repo: Optional[str], folder: Optional[Path]) -> list[str]:
    """How to install ctxrobust and evaluate a model: prompts, any runner, score (flags from the dataset's own models and
    card text), and one literal predictions line with real ids, naming the field that holds the answer."""
    from ctxrobust.schemas import load_schema

    declared = registry.get(manifest.dataset)
    predictions = text.predictions
    if predictions is not None and predictions.prompts_flags is not None:
        prompts_flags = f" {predictions.prompts_flags}" if predictions.prompts_flags else ""
    else:
        try:
            prompt_model = declared.load("prompt_options")
            prompts_flags = "".join(
                f" --{name.replace('_', '-')} {name.upper()}" for name, info in prompt_model.model_fields.items() if info.is_required()
            )
        except CtxRobustError:
            prompts_flags = ""
    score_flags = f" {predictions.score_flags}" if predictions is not None and predictions.score_flags else ""
    release = f"hf://datasets/{_repo_name(repo)}@v{manifest.version}"
    out = [
        "## Evaluating a model",
        "",
        "ctxrobust is installed from a clone of the ctxrobust repository (Python 3.10 or later): `make install`, then "
        "`source .venv/bin/activate`. It is not on the Python package index.",
        "",
        "```sh",
        "make install                 # in a clone of the ctxrobust repository: creates .venv/ and installs ctxrobust into it",
        "source .venv/bin/activate    # puts `ctxrobust` on PATH",
        f"ctxrobust prompts {release}{prompts_flags} -o requests.jsonl",
        "# run requests.jsonl through any model (an OpenAI-compatible endpoint, vLLM, `ctxrobust run`, ...): one predictions row per response,",
        "# its id the request's `item` (not the request id) and its other fields as below",
        f"ctxrobust score {release} predictions.jsonl{score_flags} -o report.md   # or report.json, report.csv, report.html",
        "```",
        "",
    ]
    if predictions is not None and predictions.flags_note:
        out += [predictions.flags_note, ""]
    out += [f"Each command also takes the release as the path of a local copy (`{local_path(manifest)}`).", ""]
    line = predictions_example(manifest, text, folder)
    if line is not None:
        out += ["`predictions.jsonl` holds one JSON object per line, one per model response. A predictions line:", ""]
        out += ["```json", line, "```", ""]
        out += [" ".join(part for part in (predictions.answer, predictions.note) if part), ""]
    schema_name = next((name for name in declared.schemas if name.startswith("predictions.")), None)
    if schema_name:
        try:
            schema = load_schema(schema_name)
        except Exception:  # a card is still written without the schema's summary
            schema = {}
        fields = _schema_fields(schema)
        if fields:
            out += [
                f"A predictions row is a JSON object with {fields} "
                f"(JSON Schema `schemas/{schema_name}.schema.json` in ctxrobust); `ctxrobust score` lists every bad row "
                "by line and scores the rest (`--strict` refuses the file).",
                "",
            ]
    return out


def _about(text: DatasetText) -> list[str]:
    out = ["## About the data", ""]
    for paragraph in text.description:
        out += [paragraph, ""]
    return out


def _source_kind(name: str) -> str:
    """'fred/STTMINWGNE.csv' -> 'fred'; a user-source kind ('ambigdocs') is its own kind."""
    return name.split("/", 1)[0]


def source_counts(folder: Optional[Path], name: str) -> Optional[dict[str, int]]:
    """Rows per `source` of a configuration's JSON Lines file in `folder`, or None when there is no folder, no file, or a
    row without a `source`."""
    if folder is None or not (Path(folder) / name).is_file():
        return None
    counts: dict[str, int] = {}
    with open(Path(folder) / name, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            source = json.loads(line).get("source")
            if not isinstance(source, str):
                return None
            counts[source] = counts.get(source, 0) + 1
    return counts


def config_sources(
    manifest: Manifest, described: ConfigText, counted: Optional[dict[str, int]] = None
) -> Optional[tuple[list[tuple[str, Optional[int]]], list[str]]]:
    """(sources that fed the configuration, each with its row count where it is known; sources that did not) among
    those the card text names for it, or None when it names none.

    The counts are those of `counted` (rows per source kind, from the configuration's own file) when given; else,
    for a configuration `counted_in_groups`, those of the build notes' source-scope groups (`groups`: {"fred/time":
    {"items": n}, ...}); otherwise the configuration is said to come from the sources the build used (snapshots and
    user-supplied sources), with no count."""
    if not described.sources:
        return None
    groups = manifest.build_notes.get("groups")
    counts: dict[str, Optional[int]] = {}
    if counted is not None:
        counts = {kind: n for kind, n in counted.items() if n > 0}
    elif described.counted_in_groups and isinstance(groups, dict) and groups:
        for key, group in groups.items():
            items = group.get("items") if isinstance(group, dict) else None
            if isinstance(items, int) and not isinstance(items, bool) and items > 0:
                kind = _source_kind(key)
                counts[kind] = (counts.get(kind) or 0) + items
    else:
        counts = {_source_kind(name): None for name, _ in sources_used(manifest)}
    used = [(name, counts[kind]) for kind, name in described.sources.items() if kind in counts]
    unused = [name for kind, name in described.sources.items() if kind not in counts]
    return used, unused


def _joined(names: list[str], word: str = "and") -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {word} " + names[-1]


def _sources_sentence(manifest: Manifest, described: ConfigText, counted: Optional[dict[str, int]] = None) -> str:
    """' In this build: 400 items from FRED and 64 from SituatedQA; none from AmbigDocs.' ("" when the card text
    names no sources for the configuration, or none of them fed it). Rows are counted in the configuration's unit."""
    found = config_sources(manifest, described, counted)
    if found is None:
        return ""
    used, unused = found
    if not used:
        return ""  # rows the build notes do not attribute to a source: say nothing rather than guess
    singular, plural = described.unit
    if all(count is not None for _, count in used):
        first, first_count = used[0]
        parts = [f"{first_count:,} {singular if first_count == 1 else plural} from {first}"]
        parts += [f"{count:,} from {name}" for name, count in used[1:]]
    else:
        parts = [f"{plural} from {used[0][0]}"] + [name for name, _ in used[1:]]
    return f" In this build: {_joined(parts)}" + (f"; none from {_joined(unused, 'or')}." if unused else ".")


def _configurations(manifest: Manifest, text: DatasetText, folder: Optional[Path] = None) -> list[str]:
    rows = []
    for entry in manifest.published:
        described = text.configs.get(entry.config)
        contents = described.description if described else "no description recorded"
        if entry.rows == 0:
            contents += " Empty in this build: carried as files, not declared as a configuration."
        elif described is not None:
            counted = source_counts(folder, entry.copy_of) if described.sources else None
            contents += _sources_sentence(manifest, described, counted)
        rows.append([f"`{entry.config}`", SPLIT, entry.name, f"{entry.rows:,}", f"`{entry.sha256}`", contents])
    out = ["## Configurations", ""]
    out += _table(["configuration", "split", "file", "rows", "sha256", "contents"], rows, ["---", "---", "---", "---:", "---", "---"])
    out += [
        "",
        "Each Parquet file is a copy of the release's canonical JSON Lines file of the same name (`.jsonl`), row for row, sorted by `id`.",
        "",
    ]
    return out + _extra_files(manifest, text) + _examples(manifest, text, folder)


def _extra_files(manifest: Manifest, text: DatasetText) -> list[str]:
    """The files the builder declares besides the configurations (e.g. copies in another project's format), and what
    the card text says they are."""
    if not manifest.extra_files:
        return []
    rows = [
        [f"`{e.name}`", e.format, f"{e.rows:,}" if e.rows is not None else "", f"`{e.sha256}`", e.description]
        for e in sorted(manifest.extra_files, key=lambda e: e.name)
    ]
    out = ["## Other files", ""]
    out += _table(["file", "format", "records", "sha256", "contents"], rows, ["---", "---", "---:", "---", "---"])
    out += [""]
    for paragraph in text.other_files:
        out += [paragraph, ""]
    out += ["These files are not configurations: download them from the repository and read them with any JSON reader.", ""]
    return out


def _fields(manifest: Manifest, text: DatasetText) -> list[str]:
    out = ["## Fields", ""]
    schemas = {f.name: f.schema_name for f in manifest.files}
    for entry in manifest.published:
        fields = config_fields(text, entry.config)
        out += [f"### `{entry.config}`", ""]
        out += (
            _table(["field", "description"], [[f"`{k}`", v] for k, v in fields.items()])
            if fields
            else ["No field descriptions are recorded for this configuration."]
        )
        if schemas.get(entry.copy_of):
            out += ["", f"JSON Schema: `schemas/{schemas[entry.copy_of]}.schema.json` in the ctxrobust package."]
        out += [""]
    return out


def _sources(manifest: Manifest) -> list[str]:
    out = ["### Sources", ""]
    used = sources_used(manifest)
    if not used:
        return out + ["No third-party source data: every row was generated by the builder from its configuration and seed.", ""]
    groups: dict[str, tuple[Optional[SourceText], list[str]]] = {}
    for name, source in used:
        groups.setdefault(source.prefix if source else name, (source, []))[1].append(name)
    out += _table(
        ["source", "files", "what it is", "licence"],
        [
            [f"`{key}`", len(names), source.name if source else "not described", source.licence if source else "not recorded"]
            for key, (source, names) in sorted(groups.items())
        ],
        ["---", "---:", "---", "---"],
    )
    if manifest.sources:
        out += ["", f"<details><summary>Source snapshots ({len(manifest.sources)}), pinned by sha256</summary>", ""]
        out += _table(["snapshot", "sha256"], [[f"`{s.name}`", f"`{s.sha256}`"] for s in manifest.sources])
        out += ["", "</details>"]
    if len(used) > len(manifest.sources):
        out += [
            "",
            "Sources given at build time (not pinned snapshots) are recorded with their sha256 under `user_sources` in the build notes.",
        ]
    return out + [""]


def _construction(manifest: Manifest, text: DatasetText) -> list[str]:
    out = ["## How it was built", ""]
    out += [f"- {line}" for line in text.construction]
    out += ["", "### Build configuration", ""]
    config = manifest.config
    out += (
        _table(["setting", "value"], [[f"`{k}`", f"`{_scalar(config[k])}`"] for k in sorted(config)])
        if config
        else ["No configuration recorded."]
    )
    out += ["", "### Build notes", ""]
    out += _note_lines(manifest.build_notes, "build_notes") or ["No build notes recorded."]
    return out + [""] + _sources(manifest)


def _validation(manifest: Manifest) -> list[str]:
    """The checks `validate` runs on this release: those recorded when it was frozen, then those of the frozen folder."""
    from ctxrobust.validators.checks import checks_for
    from ctxrobust.validators.integrity import FROZEN_ONLY

    checks = manifest.validators
    try:
        runs = list(checks_for(manifest.dataset))
    except CtxRobustError:
        runs = []
    names = list(dict.fromkeys([*runs, *sorted(checks)]))
    passed = sum(1 for r in checks.values() if r.passed)
    frozen = [name for name in names if name in FROZEN_ONLY and name not in checks]
    out = [
        "## Validation",
        "",
        f"`ctxrobust validate` runs {len(names)} checks on this release: {passed} of the {len(checks)} run when the "
        f"release was frozen passed"
        + (
            f", and {' and '.join(f'`{n}`' for n in frozen)} check the frozen folder itself "
            "(every file against `SHA256SUMS` and `manifest.json`; the folder name)"
            if frozen
            else ""
        )
        + ".",
        "",
    ]
    rows = []
    for name in names:
        if name in checks:
            rows.append([f"`{name}`", "passed" if checks[name].passed else "FAILED", checks[name].failures])
        elif name in FROZEN_ONLY:
            rows.append([f"`{name}`", "run by `validate` on the frozen folder", ""])
        else:
            rows.append([f"`{name}`", "not recorded at build time", ""])
    out += _table(["check", "result", "failures"], rows, ["---", "---", "---:"])
    return out + [""]


def _licence(manifest: Manifest, text: DatasetText, licence: Licence) -> list[str]:
    if release_licence(manifest) == UNSTATED:
        return ["## Licence", "", "No licence is stated for this dataset: its registry entry names no card text.", ""]
    cards = card_text()
    out = [
        "## Licence",
        "",
        f"This release is distributed under [{licence.name}]({licence.url}). {text.licence_note} "
        f"A release carries the most restrictive licence among the dataset's own ({licence_text(text.licence).name}) and those its sources require, "
        f"in the order {' > '.join(cards.licences[k].name for k in cards.licence_precedence)}. The sources of this build:",
        "",
    ]
    seen: dict[str, Optional[SourceText]] = {}
    for name, source in sources_used(manifest):
        seen.setdefault(source.prefix if source else name, source)
    out += [f"- `{key}`: {source.licence if source else 'licence not recorded'}" for key, source in seen.items()] or [
        "- none: every row was generated by the builder."
    ]
    return out + [""]


def _closing(manifest: Manifest, text: DatasetText, repo: Optional[str]) -> list[str]:
    out = ["## Known limits", ""]
    out += [f"- {line}" for line in known_limits(manifest, text)]
    out += [
        "",
        "## Verifying",
        "",
        "```sh",
        "sha256sum -c SHA256SUMS",
        f"ctxrobust validate hf://datasets/{_repo_name(repo)}@v{manifest.version}   # or a downloaded folder",
        "```",
        "",
        "`SHA256SUMS` lists every file of this folder: the Parquet files, the canonical JSON Lines files they copy"
        + (", the other files" if manifest.extra_files else "")
        + (", the card, `manifest.json` and `croissant.json`. " if repo is not None else ", the card and `manifest.json`. ")
        + "`manifest.json` records the hashes of the data files, the full build configuration "
        "and the source snapshots; `ctxrobust validate` recomputes every hash and reruns every check on a downloaded folder, "
        "whatever its name (the provenance checks re-read the pinned source snapshots).",
        "",
    ]
    keys = citation_keys(manifest)
    if keys:
        citations = card_text().citations
        out += ["## Citation", "", "```bibtex", "\n\n".join(citations[key].bibtex for key in keys), "```", ""]
        out += [f"- {citations[key].text}" for key in keys]
    return out


def render_card(manifest: dict | Manifest, repo: Optional[str] = None, folder: Optional[Path] = None) -> str:
    """The README.md of a release: YAML header for the Hub; then what it is and what each configuration's rows are,
    how to load it (from `repo` when it is known, and from a local folder), one example row per configuration (read
    from `folder`), how to install ctxrobust and evaluate a model (with one predictions line whose ids are read from
    `folder`), its fields, checks, licence and limits; how it was built last."""
    manifest = read_manifest(manifest)
    text = dataset_text(manifest.dataset)
    licence = licence_text(release_licence(manifest))
    header = yaml.safe_dump(front_matter(manifest), sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    out = ["---", header.rstrip("\n"), "---", ""]
    out += _overview(manifest, text, licence, repo)
    out += _configurations(manifest, text, folder)
    out += _evaluating(manifest, text, repo, folder)
    out += _about(text)
    out += _fields(manifest, text)
    out += _validation(manifest)
    out += _licence(manifest, text, licence)
    out += _closing(manifest, text, repo)
    out += [""] + _construction(manifest, text)
    return "\n".join(out).rstrip("\n") + "\n"
