"""Releases named on the Hub: `hf://datasets/ORG/NAME@vX.Y.Z` fetched with huggingface_hub into a
local folder, which `validate`, `prompts` and `score` then read like any release folder.

The folder is `<cache>/hub/datasets--ORG--NAME/<revision>/` (the cache is $CTXROBUST_CACHE, else the source
cache), written by `snapshot_download(local_dir=...)`: regular files, no links into a blob store.
A tag pins the files; `validate` checks them against the SHA256SUMS they carry. A file the Hub lists
under a name that would land outside the folder (absolute, with a `..` part, a backslash or a control
character) is not downloaded: one warning line names it, and the other files are fetched as usual.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from pathlib import Path

from ctxrobust.errors import CtxRobustError

SCHEME = "hf://"
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_URL = re.compile(rf"^hf://datasets/(?P<repo>{_PART}/{_PART})@(?P<revision>[A-Za-z0-9][A-Za-z0-9._+-]{{0,127}})$")
MALFORMED = (KeyError, TypeError, AttributeError, IndexError, ValueError, RecursionError)  # an answer of the wrong shape or depth
ETAG_TIMEOUT = 10.0  # seconds per metadata request; huggingface_hub bounds the file transfers itself


def is_hub_url(text: str) -> bool:
    return str(text).startswith(SCHEME)


def parse_hub_url(text: str) -> tuple[str, str]:
    """(ORG/NAME, revision) of `hf://datasets/ORG/NAME@REVISION`; anything else is one line naming the form."""
    found = HUB_URL.match(text)
    if not found or "--" in found["repo"] or ".." in found["repo"] or ".." in found["revision"]:
        raise CtxRobustError(f"{text}: not a Hub release name; give hf://datasets/ORG/NAME@vX.Y.Z (the tag `ctxrobust push` made)")
    return found["repo"], found["revision"]


def hub_folder(repo_id: str, revision: str) -> Path:
    from ctxrobust.sources.store import CACHE_ENV, DEFAULT_CACHE_DIR

    root = Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)
    org, name = repo_id.split("/")
    # "datasets--ORG--NAME" (the Hub cache's naming) is never a dataset name, so the folder is not taken for a
    # releases/<dataset>/<version>/ tree even when the repository is named after its dataset
    return root / "hub" / f"datasets--{org}--{name}" / revision


def _token() -> str | None:
    """HF_TOKEN or the stored login when there is one (private repositories); public ones need none."""
    from huggingface_hub import get_token

    return (os.environ.get("HF_TOKEN") or "").strip() or get_token() or None


def fetch_release(text: str) -> Path:
    """The local folder holding the release `hf://datasets/ORG/NAME@REVISION`, downloaded if needed."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    from ctxrobust.publish.hub import _first_line, _is_transport_error, hub_endpoint

    repo_id, revision = parse_hub_url(text)
    endpoint = hub_endpoint()
    folder = hub_folder(repo_id, revision)
    folder.parent.mkdir(parents=True, exist_ok=True)
    token = _token()

    def fail(message: str) -> CtxRobustError:
        return CtxRobustError(_clean(message, token))

    try:
        commit, names = _listing(repo_id, revision, endpoint, token)
        for problem in names.values():
            if problem is not None:
                print(_clean(f"warning: {text}: {problem}; not downloaded, the other files are", token), file=sys.stderr)
        snapshot_download(
            repo_id,
            repo_type="dataset",
            revision=commit,
            allow_patterns=[glob.escape(name) for name, problem in names.items() if problem is None] or ["\0"],
            local_dir=str(folder),
            endpoint=endpoint,
            token=token or False,
            etag_timeout=ETAG_TIMEOUT,
            max_workers=4,
            tqdm_class=None,
        )
    except RevisionNotFoundError:
        raise fail(f"{text}: {repo_id} has no revision {revision} at {endpoint}; give a tag it has (e.g. v1.0.0)") from None
    except RepositoryNotFoundError:
        raise fail(f"{text}: no dataset repository {repo_id} at {endpoint} (or it is private: set HF_TOKEN)") from None
    except (EntryNotFoundError, LocalEntryNotFoundError) as exc:
        raise fail(f"{text}: cannot download from {endpoint} ({_first_line(exc)}); check the network and HF_ENDPOINT") from None
    except OfflineModeIsEnabled:
        raise fail(f"{text}: HF_HUB_OFFLINE is set, so nothing can be downloaded; unset it") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if getattr(exc, "response", None) is not None else None
        raise fail(f"{text}: the Hub at {endpoint} answered {status} ({_first_line(exc)})") from None
    except Exception as exc:
        if _is_transport_error(exc):
            raise fail(
                f"{text}: cannot reach the Hub at {endpoint} ({type(exc).__name__}: {_first_line(exc)}); check the network and HF_ENDPOINT"
            ) from None
        if isinstance(exc, MALFORMED):
            raise fail(
                f"{text}: the Hub's answer could not be read ({type(exc).__name__}: {_first_line(exc)}); "
                "check HF_ENDPOINT points at a Hugging Face Hub"
            ) from None
        raise
    return folder


def _clean(message: str, token: str | None) -> str:
    return message.replace(token, "***") if token else message


def _listing(repo_id: str, revision: str, endpoint: str, token: str | None) -> tuple[str, dict[str, str | None]]:
    """(the commit `revision` names, file name -> why it cannot be downloaded or None) from one Hub answer."""
    from huggingface_hub import HfApi

    from ctxrobust.publish.hub import hub_name_problem

    info = HfApi(endpoint=endpoint, token=token or False).dataset_info(repo_id, revision=revision)
    commit = info.sha
    if not isinstance(commit, str) or not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise TypeError(f"the Hub named no commit for {revision}")
    names = [getattr(sibling, "rfilename", None) for sibling in info.siblings or []]
    return commit, {name: hub_name_problem(name) for name in names}


def release_path(text: str) -> Path:
    """A release folder as the command line names it: a path, or an hf:// release name (downloaded)."""
    return fetch_release(text) if is_hub_url(text) else Path(text)
