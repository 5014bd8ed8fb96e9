"""The dataset card (README.md) of a release, generated from its manifest."""
from __future__ import annotations


def render_card(manifest: dict) -> str:
    lines = [
        f"# {manifest['dataset']} {manifest['version']}",
        "",
        f"Built by ctxrobust {manifest['builder']['package_version']} (builder code sha256 `{manifest['builder']['code_sha256'][:16]}`).",
        "",
        "## Files",
        "",
        "| file | rows | sha256 |",
        "|---|---:|---|",
    ]
    lines += [f"| {f['name']} | {f['rows']} | `{f['sha256'][:16]}` |" for f in manifest["files"]]
    lines += ["", "## Validators", "", "| check | result |", "|---|---|"]
    lines += [f"| {name} | {'passed' if r['passed'] else 'FAILED'} |" for name, r in sorted(manifest.get("validators", {}).items())]
    lines += ["", "## Sources", ""]
    lines += [f"- {s['name']} (`{s['sha256'][:16]}`)" for s in manifest.get("sources", [])] or ["- none"]
    return "\n".join(lines) + "\n"
