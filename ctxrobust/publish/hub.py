"""Publishing a release on the Hugging Face Hub: stage the folder to upload, then one commit and a tag.

The staged folder holds, for a release `releases/<dataset>/<version>/`:
- one Parquet file per data file (one configuration each, split `test`, an empty one included), byte for byte the release's,
  and the canonical JSON Lines files they were made from, so that the release's SHA256SUMS checks every file it lists;
- README.md, the release's dataset card rendered again for this repository (its loading snippet names it), whose
  YAML header declares those configurations (every one with rows: `datasets` cannot load an empty split);
- the files its builder declares besides the data files (manifest `extra_files`, e.g. copies in another project's format);
- manifest.json, the release's own;
- croissant.json, Croissant 1.1 metadata describing every file and field;
- SHA256SUMS over every one of these files, so the downloaded folder validates as it is.

`push_release` uploads exactly that folder as one commit of the dataset repository (created
if absent) and tags it `v<version>`. A tag that already exists is compared file by file with
the staged folder: the same content is a no-op, different content is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import tempfile
import time
from collections import abc
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyarrow.parquet as pq
import yaml

from ctxrobust import release_files
from ctxrobust.build import check_version
from ctxrobust.canonical import dumps_pretty, sha256_file
from ctxrobust.errors import CtxRobustError, Interrupted
from ctxrobust.manifest import Manifest, ParquetEntry
from ctxrobust.output import release_folder_above
from ctxrobust.publish.card import hub_configs, render_card
from ctxrobust.publish.croissant import FILE_NAME as CROISSANT
from ctxrobust.publish.croissant import croissant
from ctxrobust.release import CARD, MANIFEST, SUMS, Release

DEFAULT_ENDPOINT = "https://huggingface.co"
REPO_TYPE = "dataset"
HUB_MANAGED = {".gitattributes"}  # written by the Hub into every new repository; not part of a release
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
REPO_ID = re.compile(rf"^{_PART}/{_PART}$")


# -- names, endpoint, token -------------------------------------------------------------------


def hub_name_problem(name: object) -> str | None:
    """Why a file name the Hub lists cannot be written inside the download folder, or None if it can."""
    shown = release_files.shown
    if not isinstance(name, str) or not name:
        return f"file name {shown(name)} is not a string"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return f"file name {shown(name)} is an absolute path, not a name inside the release folder"
    if "\\" in name:
        return f"file name {shown(name)} holds a backslash (a folder separator on Windows), not a name inside the release folder"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return f"file name {shown(name)} leads outside the release folder (a '..', '.' or empty part)"
    if not name.isprintable():
        return f"file name {shown(name)} holds control characters"
    return None


def check_repo_id(repo: str) -> str:
    """ORG/NAME as the Hub accepts it: letters, digits, '-', '_', '.', no '--' or '..', at most 96 characters each."""
    if not REPO_ID.match(repo or "") or "--" in repo or ".." in repo:
        raise CtxRobustError(
            f"--repo {repo!r} is not a Hub repository name; give ORG/NAME (letters, digits, '-', '_', '.'), e.g. my-org/gsm-ic"
        )
    return repo


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def dataset_url(repo_id: str, endpoint: str) -> str:
    return f"{endpoint}/datasets/{repo_id}"


def resolve_token() -> str:
    """HF_TOKEN, else the stored login; never printed or written anywhere."""
    from huggingface_hub import get_token

    token = (os.environ.get("HF_TOKEN") or "").strip() or get_token()
    if not token:
        raise CtxRobustError(
            "no Hugging Face token: set HF_TOKEN or log in with `hf auth login` (a token with write access), "
            "or stage the upload without pushing with --dry-run DIR"
        )
    return token


# -- staging ------------------------------------------------------------------------------------


def _front_matter(card: str) -> dict | None:
    if not card.startswith("---\n") or "\n---\n" not in card[3:]:
        return None
    try:
        data = yaml.safe_load(card[4 : card.index("\n---\n", 3)])
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _listed_sums(release: Release) -> dict[str, str]:
    path = release.path / SUMS
    if not release.has(SUMS):
        raise CtxRobustError(f"{path}: missing; the release is incomplete, rebuild it")
    listed = {}
    for number, line in enumerate(release_files.read_text(release.path, SUMS).splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise CtxRobustError(f"{path}:{number}: not a sha256sum line; the release is corrupted, rebuild it")
        problem = release_files.name_problem(name)
        if problem:
            raise CtxRobustError(f"{path}:{number}: {problem}; the release is corrupted, rebuild it")
        listed[name] = digest
    return listed


def _check_loadable(release: Release, entry: ParquetEntry) -> None:
    """A Parquet file `datasets` can load as a configuration: columns, the manifest's rows, and no empty row group."""
    path = release.file_path(entry.name)
    with release.open(entry.name) as handle:
        meta = pq.read_metadata(handle)
    if meta.num_columns == 0:
        raise CtxRobustError(f"{path}: has no columns, so it cannot be loaded as configuration `{entry.config}`; rebuild the release")
    if meta.num_rows != entry.rows:
        raise CtxRobustError(f"{path}: holds {meta.num_rows} rows, manifest.json says {entry.rows}; the release is corrupted, rebuild it")
    if meta.num_rows == 0 and meta.num_row_groups > 0:
        raise CtxRobustError(
            f"{path}: has no rows but an empty row group, which `datasets` cannot read; "
            "rebuild the release with a ctxrobust that writes an empty Parquet copy without row groups"
        )


# the checks that read every file of a release; the dataset checks that replay sources are `validate`'s
PUSH_CHECKS = ("contents", "hashes", "row_counts", "parquet_copies")


def publish_names(release: Release, manifest: Manifest) -> list[str]:
    """Every file the staged folder copies from the release, each a plain name inside it (checked here, first)."""
    names = [entry.name for entry in manifest.published] + [entry.copy_of for entry in manifest.published]
    names += [entry.name for entry in manifest.files] + [entry.name for entry in manifest.extra_files] + [CARD, MANIFEST, SUMS]
    for name in names:
        problem = release_files.name_problem(name)
        if problem:
            raise CtxRobustError(
                f"{release.path / MANIFEST}: {problem}; nothing was staged or pushed: the release is corrupted, rebuild it"
            )
    return list(dict.fromkeys(names))


def check_release(release: Release, manifest: Manifest) -> None:
    """The whole release is checked before anything is staged: every name a plain file inside it, every file
    a regular one with the hash SHA256SUMS and the manifest give it, the Parquet copies loadable and equal to
    their JSON Lines, and the card declaring one configuration per Parquet file."""
    from ctxrobust.validators.checks import run_checks

    names = publish_names(release, manifest)
    if not manifest.published:
        raise CtxRobustError(f"{release.path / MANIFEST}: lists no Parquet file; nothing to publish")
    sums_path = release.path / SUMS
    listed = _listed_sums(release)
    for name in names:
        if name == SUMS:
            continue
        if not release.has(name):
            raise CtxRobustError(f"{release.file_path(name)}: missing from the release; rebuild it")
        if name not in listed:
            raise CtxRobustError(f"{sums_path}: does not list {name}; the release is corrupted, rebuild it")
        if release.sha256(name) != listed[name]:
            raise CtxRobustError(
                f"{release.file_path(name)}: sha256 differs from SHA256SUMS; the file changed after the release was frozen, rebuild it"
            )
    for entry in manifest.published:
        if entry.sha256 != listed[entry.name]:
            raise CtxRobustError(
                f"{release.path / MANIFEST}: sha256 of {entry.name} differs from SHA256SUMS; the release is corrupted, rebuild it"
            )
        _check_loadable(release, entry)
    header = _front_matter(release_files.read_text(release.path, CARD))
    if header is None or header.get("configs") != hub_configs(manifest):
        raise CtxRobustError(
            f"{release.path / CARD}: its YAML header does not declare one Hub configuration per Parquet file "
            "(the card was written by an older ctxrobust); build the dataset again under a new version to publish it"
        )
    failures = [f for found in run_checks(release, only=PUSH_CHECKS).values() for f in found]
    if failures:
        first = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise CtxRobustError(
            f"{release.path}: {first.file or '-'}: {first.message}{more}; nothing was staged or pushed: run `validate {release.path}`"
        )


def stage(release: Release, repo_id: str, out: Path, endpoint: str | None = None) -> list[str]:
    """Write the folder to upload into `out` (new or empty), atomically; returns its file names, sorted.
    The release is checked as a whole first: nothing is written when any of it is wrong."""
    out = Path(out)
    if os.path.lexists(out) and (out.is_symlink() or not out.is_dir() or any(out.iterdir())):
        raise CtxRobustError(f"{out}: exists and is not an empty folder; give a new or empty folder to stage into")
    frozen = release.path if out.resolve().is_relative_to(release.path.resolve()) else release_folder_above(out.resolve())
    if frozen is not None:
        raise CtxRobustError(f"{out}: is inside the release folder {frozen}, which is frozen; give a folder outside it to stage into")
    manifest = release.model
    check_release(release, manifest)
    names = publish_names(release, manifest)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; the staged folder is an ordinary one
    try:
        from ctxrobust.build import write_sums

        # the JSON Lines files too: the published folder is the release, checkable with `ctxrobust validate`
        for name in names:
            if name not in (CARD, SUMS):  # both written anew below for the staged folder
                release_files.copy(release.path, name, tmp / name)
        (tmp / CARD).write_text(render_card(release.manifest, repo=repo_id, folder=tmp), encoding="utf-8", newline="\n")
        document = croissant(manifest, tmp, dataset_url(repo_id, endpoint or hub_endpoint()))
        (tmp / CROISSANT).write_text(dumps_pretty(document), encoding="utf-8", newline="\n")
        write_sums(tmp)  # every staged file, croissant.json and the card included
        for path in tmp.iterdir():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return sorted(p.name for p in out.iterdir())


# -- talking to the Hub -------------------------------------------------------------------------

TIMEOUT_ENV = "CTXROBUST_HUB_TIMEOUT"  # seconds the Hub has to answer one request (default 60)
DEFAULT_TIMEOUT = 60.0
CONNECT_TIMEOUT = 10.0
READ_ATTEMPTS = 3  # a read that fails for the network or a 5xx is tried this many times in all
RETRY_PAUSE = 0.5  # seconds before the second attempt; doubled before each further one


def hub_timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise CtxRobustError(f"{TIMEOUT_ENV}={raw!r}: give the seconds the Hub has to answer one request, more than 0 and at most 3600")
    return value


def use_timeouts(seconds: float) -> None:
    """Every request huggingface_hub makes gets a connect and a read timeout (its default client has none)."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import hf_request_event_hook

    timeout = httpx2.Timeout(seconds, connect=min(CONNECT_TIMEOUT, seconds))
    set_client_factory(lambda: httpx2.Client(event_hooks={"request": [hf_request_event_hook]}, follow_redirects=True, timeout=timeout))


def _first_line(text: object) -> str:
    line = next((line.strip() for line in str(text).splitlines() if line.strip()), "")
    return line if len(line) <= 300 else line[:300] + f"... ({len(line)} characters)"


def _is_transport_error(exc: BaseException) -> bool:
    """A connection-level failure, whichever HTTP client huggingface_hub uses (its classes differ across versions)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, (ConnectionError, TimeoutError)) or bool(
        names & {"TransportError", "ConnectError", "TimeoutException", "Timeout"}
    )


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _retryable(exc: BaseException) -> bool:
    status = _status(exc)
    return _is_transport_error(exc) or (status is not None and (status >= 500 or status == 429))


def read(call, *args, attempts: int = READ_ATTEMPTS, **kwargs):
    """A request that changes nothing on the Hub, tried up to `attempts` times on network errors and 5xx."""
    for attempt in range(attempts):
        try:
            result = call(*args, **kwargs)
            return list(result) if isinstance(result, abc.Iterator) else result  # a paged listing fails while read
        except Exception as exc:
            if attempt + 1 == attempts or not _retryable(exc):
                raise
            time.sleep(RETRY_PAUSE * 2**attempt)
    raise AssertionError("unreachable")


def list_tree(api, repo_id: str, revision: str) -> list:
    """Every entry of the repository at `revision`; the client retries each page itself (a bounded backoff)."""
    return read(api.list_repo_tree, repo_id, revision=revision, recursive=True, repo_type=REPO_TYPE, attempts=1)


class Progress:
    """How far a push got: what it is doing, and what is on the Hub because of it (for every message)."""

    def __init__(self, tag: str):
        self.tag = tag
        self.step = "reading the repository's branches and tags"
        self.state = f"nothing was changed: no commit of this version and no tag {tag}"
        self.rerun = "rerun the same `ctxrobust push` command"

    def where(self) -> str:
        return f"while {self.step}; on the Hub: {self.state}; {self.rerun}"


@contextmanager
def hub_errors(endpoint: str, repo_id: str, token: str, progress: Progress | None = None) -> Iterator[None]:
    """Turn whatever the Hub client raises into one CtxRobustError line (with the token scrubbed) that says
    what is on the Hub and what to do."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    def fail(message: str) -> CtxRobustError:
        if progress is not None:
            message += f"; {progress.where()}"
        return CtxRobustError(message.replace(token, "***") if token else message)

    try:
        yield
    except CtxRobustError:
        raise
    except HfHubHTTPError as exc:
        status = _status(exc)
        detail = _first_line(getattr(exc, "server_message", None) or exc)
        hint = {
            401: "the Hub refused the token: check HF_TOKEN or log in again with `hf auth login`",
            403: f"the token may not write to {repo_id.split('/')[0]}: use a token with write access to it",
            404: f"check that {repo_id} is a dataset repository you can write to",
        }.get(status, "try again later, or stage the upload with --dry-run DIR")
        raise fail(f"{dataset_url(repo_id, endpoint)}: the Hub answered {status} ({detail}); {hint}") from None
    except OfflineModeIsEnabled:
        raise fail("HF_HUB_OFFLINE is set, so nothing can be pushed: unset it, or stage the upload with --dry-run DIR") from None
    except Exception as exc:
        if _is_timeout(exc):
            raise fail(
                f"the Hub at {endpoint} did not answer within {hub_timeout():g} s ({READ_ATTEMPTS} attempts for a read); "
                f"check the network and HF_ENDPOINT, or allow more time with {TIMEOUT_ENV}"
            ) from None
        if _is_transport_error(exc):
            raise fail(
                f"cannot reach the Hub at {endpoint} ({type(exc).__name__}: {_first_line(exc)}); "
                "check the network and HF_ENDPOINT, or stage the upload with --dry-run DIR"
            ) from None
        if isinstance(exc, (KeyError, TypeError, AttributeError, IndexError, json.JSONDecodeError, RecursionError)):
            raise fail(
                f"{dataset_url(repo_id, endpoint)}: the Hub's answer could not be read ({type(exc).__name__}: {_first_line(exc)}); "
                "check HF_ENDPOINT points at a Hugging Face Hub"
            ) from None
        if isinstance(exc, ValueError):  # the client's own checks, e.g. README metadata it refuses
            raise fail(f"{dataset_url(repo_id, endpoint)}: {_first_line(exc)}") from None
        raise


def git_blob_oid(path: Path) -> str:
    """The git object id of a file (sha1 of "blob <size>\\0" + bytes): what the Hub reports for a regular file."""
    digest = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def remote_differences(api, repo_id: str, revision: str, staged: Path) -> list[str]:
    """Files that differ between `staged` and the repository at `revision` (missing on either side, or other bytes)."""
    from huggingface_hub.hf_api import RepoFile

    local = {p.name: p for p in staged.iterdir() if p.is_file()}
    tree = list_tree(api, repo_id, revision)
    remote = {entry.path: entry for entry in tree if isinstance(entry, RepoFile) and entry.path not in HUB_MANAGED}
    differing = set(local) ^ set(remote)
    for name in set(local) & set(remote):
        entry = remote[name]
        if entry.lfs is not None:
            same = entry.lfs.sha256 == sha256_file(local[name])
        else:
            same = entry.blob_id == git_blob_oid(local[name])
        if not same or entry.size != local[name].stat().st_size:
            differing.add(name)
    return sorted(differing)


def _refs(api, repo_id: str) -> tuple[dict[str, str], str | None]:
    """(tag -> commit, head of main) of the repository."""
    refs = read(api.list_repo_refs, repo_id, repo_type=REPO_TYPE)
    tags = {ref.name: ref.target_commit for ref in refs.tags}
    head = next((ref.target_commit for ref in refs.branches if ref.name == "main"), None)
    if any(not isinstance(v, str) for v in tags.values()) or (head is not None and not isinstance(head, str)):
        raise TypeError("a branch or tag without a commit id")
    return tags, head


def _probe(api, repo_id: str, staged: Path) -> tuple[dict[str, str], str | None, bool] | None:
    """After a write failed: the refs, main's head and whether it holds exactly the staged files; None if unknown."""
    try:
        tags, head = _refs(api, repo_id)
        return tags, head, head is not None and not remote_differences(api, repo_id, head, staged)
    except Exception:
        return None


def upload(staged: Path, manifest: Manifest, repo_id: str, token: str, endpoint: str, progress: Progress | None = None) -> str:
    """One commit with every staged file (and deletions of files the previous version had), then the tag.

    Every step is resumable: a commit on main that already holds exactly these files (an earlier push
    stopped before tagging it) is tagged instead of committed again; a tag that exists with these files is
    a no-op. A failed write is followed by a look at the repository, so the message says what is there."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import RepositoryNotFoundError
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=endpoint, token=token)
    tag = f"v{manifest.version}"
    title = f"{manifest.dataset} {manifest.version}"
    url = dataset_url(repo_id, endpoint)
    progress = progress or Progress(tag)
    names = sorted(p.name for p in staged.iterdir() if p.is_file())
    progress.step = "reading the repository's branches and tags"
    with hub_errors(endpoint, repo_id, token, progress):
        try:
            tags, head = _refs(api, repo_id)
        except RepositoryNotFoundError:
            progress.step = f"creating the dataset repository {repo_id}"
            api.create_repo(repo_id, repo_type=REPO_TYPE, exist_ok=True)
            tags, head = _refs(api, repo_id)
        if tag in tags:
            progress.step, progress.state = f"comparing the files of {tag} with the staged ones", f"{tag} exists at commit {tags[tag][:12]}"
            differing = remote_differences(api, repo_id, tags[tag], staged)
            if differing:
                raise CtxRobustError(
                    f"{url}: tag {tag} already exists with different content ({', '.join(differing)}); "
                    f"a published version is never replaced: build and push a new version"
                )
            return f"{url} already has {tag} with exactly these files (commit {tags[tag][:12]}); nothing pushed"
        progress.step = "comparing main with the staged files"
        resumed = head is not None and not remote_differences(api, repo_id, head, staged)
        if resumed:
            oid = head  # an earlier push committed these files and stopped before tagging them
        else:
            operations: list = [CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(staged / name)) for name in names]
            if head is not None:
                tree = list_tree(api, repo_id, head)
                leftover = sorted(
                    entry.path
                    for entry in tree
                    if isinstance(entry, RepoFile) and entry.path not in HUB_MANAGED and entry.path not in names
                )
                unsafe = [(path, problem) for path in leftover if (problem := hub_name_problem(path)) is not None]
                if unsafe:
                    raise CtxRobustError(
                        f"{url}: main holds a file the Hub client cannot delete ({unsafe[0][1]}); "
                        "remove or rename it on the Hub, then push again"
                    )
                operations += [CommitOperationDelete(path_in_repo=path) for path in leftover]
            manifest_sha = sha256_file(staged / MANIFEST)
            progress.step = f"committing {len(names)} files to main"
            progress.state = (
                f"unknown whether the commit reached main (no tag {tag}); a rerun looks first and commits only "
                "if main does not already hold these files"
            )
            try:
                info = api.create_commit(
                    repo_id,
                    operations,
                    commit_message=title,
                    commit_description=f"ctxrobust release {title}: {len(names)} files; manifest.json sha256 {manifest_sha}",
                    repo_type=REPO_TYPE,
                    parent_commit=head,
                )
                oid = info.oid
                if not isinstance(oid, str) or not oid:
                    raise TypeError("the commit's answer names no commit id")
            except Exception:
                probed = _probe(api, repo_id, staged)
                if probed is None:
                    raise
                _, new_head, holds = probed
                if not holds:
                    progress.state = f"no commit of this version reached main and there is no tag {tag}"
                    raise
                oid = new_head  # the commit went through although its answer was lost or malformed
        progress.step = f"tagging commit {oid[:12]} as {tag}"
        progress.state = f"commit {oid[:12]} on main holds every file but is not tagged {tag}"
        progress.rerun = "rerun the same `ctxrobust push` command to tag it (nothing is uploaded again)"
        try:
            api.create_tag(repo_id, tag=tag, revision=oid, tag_message=title, repo_type=REPO_TYPE)
        except Exception:
            probed = _probe(api, repo_id, staged)
            if probed is None or probed[0].get(tag) != oid:
                raise  # the state above stands: committed, not tagged
        progress.step = f"checking the files of {tag}"
        progress.state = f"{tag} is tagged at commit {oid[:12]}"
        progress.rerun = "rerun the same `ctxrobust push` command to check its files again (nothing is uploaded again)"
        differing = remote_differences(api, repo_id, tag, staged)
        if differing:
            raise CtxRobustError(
                f"{url}: after pushing, {tag} differs from the staged files ({', '.join(differing)}); check the repository"
            )
    how = "commit already on main from an earlier push" if resumed else "in commit"
    return f"pushed {title} to {url}: {len(names)} files {how} {oid[:12]}, tagged {tag}"


class _Signalled(BaseException):
    """Raised from a SIGTERM/SIGINT handler: passes through the Hub client's own `except Exception`."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextmanager
def _cleanup_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT unwind the push like an error, so every temporary folder is removed."""

    def handler(signum, frame):
        raise _Signalled(signum)

    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            previous[signum] = signal.signal(signum, handler)
        except ValueError:  # not the main thread: leave signals as they are
            pass
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def push_release(release_dir: Path, repo: str, dry_run: Path | None) -> int:
    """`ctxrobust push`: stage the release for the Hub; with dry_run, stop there, else upload it and tag it."""
    repo_id = check_repo_id(repo)
    release = Release(Path(release_dir))
    manifest = release.model
    try:
        check_version(manifest.version)
    except CtxRobustError as exc:
        raise CtxRobustError(f"{release.path / MANIFEST}: {exc}; nothing was staged or pushed") from None
    endpoint = hub_endpoint()
    title = f"{manifest.dataset} {manifest.version}"
    progress = Progress(f"v{manifest.version}")
    try:
        with _cleanup_on_signals():
            if dry_run is not None:
                progress.step, progress.state = f"staging into {dry_run}", "nothing (a dry run uploads nothing)"
                names = stage(release, repo_id, Path(dry_run), endpoint)
                print(f"staged {title} for {dataset_url(repo_id, endpoint)} in {dry_run}: {', '.join(names)} (nothing uploaded)")
                return 0
            token = resolve_token()
            use_timeouts(hub_timeout())
            with tempfile.TemporaryDirectory(prefix="ctxrobust-push-") as tmp:
                staged = Path(tmp) / "stage"
                progress.step = "staging the files to upload"
                stage(release, repo_id, staged, endpoint)
                message = upload(staged, manifest, repo_id, token, endpoint, progress)
    except _Signalled as exc:
        name = signal.Signals(exc.signum).name
        raise Interrupted(f"interrupted by {name} {progress.where()}; the staged copy was removed", 128 + exc.signum) from None
    print(message)
    return 0
