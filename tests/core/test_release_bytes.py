"""Default releases are byte-identical to the recorded ones (tests/data/release_sha256.txt): a change
to the code's shape must not change a byte of any data file (or extra file a builder declares); only the manifest's code hash and
what shows it (README.md, SHA256SUMS) may differ."""

from __future__ import annotations

import pytest
from paths import DATA

from ctxrobust.build import build_release
from ctxrobust.canonical import sha256_file

RECORDED = DATA / "release_sha256.txt"


def recorded() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for line in RECORDED.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            digest, path = line.split(" ", 1)
            dataset, _, name = path.split("/")
            out.setdefault(dataset, {})[name] = digest
    return out


@pytest.mark.parametrize("dataset", sorted(recorded()))
def test_a_default_build_has_the_recorded_bytes(dataset, store, tmp_path):
    result = build_release(dataset, "1.0.0", {}, tmp_path, store)
    extra = {entry["name"] for entry in result.manifest["extra_files"]}  # files the builder declares besides its data files
    built = {p.name: sha256_file(p) for p in result.path.iterdir() if p.suffix in (".jsonl", ".parquet") or p.name in extra}
    assert built == recorded()[dataset]
