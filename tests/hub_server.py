"""A local stand-in for the Hugging Face Hub: the HTTP endpoints huggingface_hub calls to publish a dataset.

It keeps repositories in memory as chains of commits (path -> bytes), with branches and
tags, and answers the calls `ctxrobust push` makes through huggingface_hub:

- POST /api/repos/create                                  create_repo
- GET  /api/datasets/{repo}[/revision/{rev}]              repo_info
- GET  /api/datasets/{repo}/refs                          list_repo_refs
- GET  /api/datasets/{repo}/tree/{rev}[/{path}]           list_repo_tree
- POST /api/validate-yaml                                 create_commit's README.md check
- POST /api/datasets/{repo}/preupload/{rev}               upload mode (always "regular") and remote oid
- POST /api/datasets/{repo}/commit/{rev}                  the NDJSON commit (regular base64 files, deletions)
- POST /api/datasets/{repo}/tag/{rev}                     create_tag
- GET/HEAD /datasets/{repo}/resolve/{rev}/{path}          hf_hub_download

Every request must carry `Authorization: Bearer <token>` with the server's token. Every
request is logged in `server.hub.requests` as (method, path) for the tests to assert on.

Faults: `server.hub.fail(route, action, when="before", times=1)` makes the next `times` requests of a
route (create, refs, tree, info, preupload, commit, tag, validate-yaml, resolve) go wrong, after letting
`skip` of them through:
- action "500": answer 500 ("before": without doing anything; "after": having done what was asked);
- action "malformed": answer 200 with a body that is not what the client expects;
- action "hang": answer nothing until `server.hub.release_hangs()` or the server stops (the request is
  logged first, and `server.hub.hanging` is set, so a test can act while a request is in flight).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_oid(data: bytes) -> str:
    """The git object id of a blob: sha1 of "blob <size>\\0" + content (what the Hub reports as a file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Commit:
    oid: str
    parent: str | None
    summary: str
    description: str
    files: dict[str, bytes]


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    tag_messages: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        revision = unquote(revision)
        for name in (revision, revision.removeprefix("refs/heads/"), revision.removeprefix("refs/tags/")):
            if name in self.branches:
                return self.commits[self.branches[name]]
            if name in self.tags:
                return self.commits[self.tags[name]]
        return self.commits.get(revision)

    def add_commit(self, parent: str | None, summary: str, description: str, files: dict[str, bytes]) -> Commit:
        digest = hashlib.sha1()
        digest.update((parent or "").encode() + b"\0" + summary.encode() + b"\0")
        for path in sorted(files):
            digest.update(path.encode() + b"\0" + git_blob_oid(files[path]).encode() + b"\0")
        commit = Commit(digest.hexdigest(), parent, summary, description, dict(files))
        self.commits[commit.oid] = commit
        return commit


@dataclass(frozen=True)
class Fault:
    action: str  # "500", "malformed" or "hang"
    when: str  # "before" or "after" the request is carried out


def route_name(method: str, parts: list[str]) -> str:
    """The name a fault is set on, from a request's path."""
    if parts[:3] == ["api", "repos", "create"]:
        return "create"
    if parts[:2] == ["api", "validate-yaml"]:
        return "validate-yaml"
    if len(parts) >= 4 and parts[0] == "api":
        rest = parts[4:]
        if not rest or rest[0] == "revision":
            return "info"
        return rest[0]  # refs, tree, preupload, commit, tag
    if len(parts) >= 4 and parts[3] == "resolve":
        return "resolve"
    return "other"


class Hub:
    """The in-memory state behind the server."""

    def __init__(self, token: str):
        self.token = token
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self.commit_payloads: list[list[dict]] = []  # the NDJSON lines of every commit received
        self.lock = threading.Lock()
        self.faults: dict[str, list[Fault]] = {}
        self.hanging = threading.Event()  # set when a request starts hanging
        self._release = threading.Event()

    def fail(self, route: str, action: str, when: str = "before", times: int = 1, skip: int = 0) -> None:
        """The `times` requests of `route` after the next `skip` ones go wrong as `action` says."""
        assert action in ("500", "malformed", "hang") and when in ("before", "after")
        with self.lock:
            self.faults.setdefault(route, []).extend([None] * skip + [Fault(action, when)] * times)

    def take_fault(self, route: str) -> Fault | None:
        with self.lock:
            queue = self.faults.get(route)
            return queue.pop(0) if queue else None

    def release_hangs(self) -> None:
        self._release.set()

    def hang(self, limit: float = 120.0) -> None:
        self.hanging.set()
        self._release.wait(limit)

    def repo(self, repo_type: str, repo_id: str) -> Repo | None:
        return self.repos.get((repo_type, repo_id))

    def create(self, repo_type: str, repo_id: str) -> Repo:
        repo = Repo(repo_type, repo_id)
        initial = repo.add_commit(None, "initial commit", "", {".gitattributes": GITATTRIBUTES})
        repo.branches["main"] = initial.oid
        self.repos[(repo_type, repo_id)] = repo
        return repo


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HubServer

    def log_message(self, format, *args):  # keep test output quiet
        pass

    # -- plumbing -----------------------------------------------------------------------------
    _muted = False

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None, content_type: str = "application/json"):
        if self._muted:
            return
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj, headers: dict[str, str] | None = None):
        self._send(status, json.dumps(obj).encode(), headers)

    def _error(self, status: int, message: str, code: str | None = None):
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._json(status, {"error": message}, headers)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {self.server.hub.token}":
            return True
        self._error(401, "Invalid credentials in Authorization header")
        return False

    def _dispatch(self, method: str):
        hub = self.server.hub
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        with hub.lock:
            hub.requests.append((method, path))
        if method in ("POST",):
            body = self._body()
        else:
            body = b""
        if not self._authorised():
            return
        fault = hub.take_fault(route_name(method, [p for p in path.split("/") if p]))
        if fault is not None and fault.action == "hang":
            hub.hang()
            self.close_connection = True
            return
        if fault is not None and fault.when == "before":
            return self._faulty(fault)
        if fault is not None:
            self._muted = True  # carry out the request, then answer as the fault says
            try:
                with hub.lock:
                    self._route(method, path, query, body)
            finally:
                self._muted = False
            return self._faulty(fault)
        with hub.lock:
            self._route(method, path, query, body)

    def _faulty(self, fault: Fault):
        if fault.action == "500":
            return self._error(500, "Internal Error - We're working hard to fix this as soon as possible!")
        return self._send(200, b'{"unexpected": [1, 2, 3]', content_type="application/json")  # truncated JSON of the wrong shape

    def do_GET(self):
        self._dispatch("GET")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def do_POST(self):
        self._dispatch("POST")

    # -- routes -------------------------------------------------------------------------------
    def _route(self, method: str, path: str, query: dict, body: bytes):
        hub = self.server.hub
        parts = [p for p in path.split("/") if p]
        if method == "POST" and parts == ["api", "repos", "create"]:
            return self._create_repo(json.loads(body))
        if method == "POST" and parts == ["api", "validate-yaml"]:
            return self._validate_yaml(json.loads(body))
        if len(parts) >= 4 and parts[0] == "api" and parts[1] in ("datasets", "models", "spaces"):
            repo_type = parts[1][:-1]
            repo_id = f"{parts[2]}/{parts[3]}"
            rest = parts[4:]
            repo = hub.repo(repo_type, repo_id)
            if repo is None:
                return self._error(404, "Repository not found", "RepoNotFound")
            if method == "GET" and not rest:
                return self._repo_info(repo, "main")
            if method == "GET" and rest[:1] == ["revision"] and len(rest) == 2:
                return self._repo_info(repo, rest[1])
            if method == "GET" and rest == ["refs"]:
                return self._refs(repo)
            if method == "GET" and rest[:1] == ["tree"] and len(rest) >= 2:
                return self._tree(repo, rest[1], "/".join(rest[2:]), query)
            if method == "POST" and rest[:1] == ["preupload"] and len(rest) == 2:
                return self._preupload(repo, rest[1], json.loads(body))
            if method == "POST" and rest[:1] == ["commit"] and len(rest) == 2:
                return self._commit(repo, rest[1], body)
            if method == "POST" and rest[:1] == ["tag"] and len(rest) == 2:
                return self._tag(repo, rest[1], json.loads(body))
        if method in ("GET", "HEAD") and len(parts) >= 6 and parts[0] == "datasets" and parts[3] == "resolve":
            repo = hub.repo("dataset", f"{parts[1]}/{parts[2]}")
            if repo is None:
                return self._error(404, "Repository not found", "RepoNotFound")
            return self._resolve(repo, parts[4], "/".join(parts[5:]))
        return self._error(404, f"no such endpoint in the test hub: {method} {path}")

    def _create_repo(self, payload: dict):
        hub = self.server.hub
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        url = f"{self.server.url}/{prefix}{repo_id}"
        if hub.repo(repo_type, repo_id) is not None:
            return self._json(409, {"error": "You already created this repo", "url": url})
        hub.create(repo_type, repo_id)
        return self._json(200, {"url": url, "name": repo_id})

    def _validate_yaml(self, payload: dict):
        content = payload.get("content", "")
        if content.startswith("---\n"):
            header = content[4:].split("\n---\n", 1)[0]
            try:
                data = yaml.safe_load(header)
            except yaml.YAMLError as exc:
                return self._json(400, {"errors": [{"message": f"invalid YAML: {exc}"}]})
            if not isinstance(data, dict):
                return self._json(400, {"errors": [{"message": "the YAML header is not a mapping"}]})
        return self._json(200, {"errors": [], "warnings": []})

    def _repo_info(self, repo: Repo, revision: str):
        commit = repo.resolve(revision)
        if commit is None:
            return self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return self._json(
            200,
            {
                "id": repo.repo_id,
                "sha": commit.oid,
                "private": False,
                "siblings": [{"rfilename": p} for p in sorted(commit.files)],
            },
        )

    def _refs(self, repo: Repo):
        def ref(kind: str, name: str, oid: str) -> dict:
            return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": oid}

        return self._json(
            200,
            {
                "branches": [ref("heads", n, o) for n, o in sorted(repo.branches.items())],
                "converts": [],
                "tags": [ref("tags", n, o) for n, o in sorted(repo.tags.items())],
            },
        )

    def _tree(self, repo: Repo, revision: str, prefix: str, query: dict):
        commit = repo.resolve(revision)
        if commit is None:
            return self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        recursive = query.get("recursive", ["False"])[0].lower() in ("1", "true")
        base = unquote(prefix).strip("/")
        entries, folders = [], set()
        for path in sorted(commit.files):
            if base and not path.startswith(base + "/"):
                continue
            rel = path[len(base) + 1 :] if base else path
            if "/" in rel and not recursive:
                folders.add((base + "/" if base else "") + rel.split("/", 1)[0])
                continue
            data = commit.files[path]
            entries.append({"type": "file", "oid": git_blob_oid(data), "size": len(data), "path": path})
        entries += [{"type": "directory", "oid": "0" * 40, "size": 0, "path": p} for p in sorted(folders)]
        return self._json(200, entries)

    def _preupload(self, repo: Repo, revision: str, payload: dict):
        commit = repo.resolve(revision)
        files = commit.files if commit is not None else {}
        answer = []
        for item in payload.get("files", []):
            existing = files.get(item["path"])
            answer.append(
                {
                    "path": item["path"],
                    "uploadMode": "regular",
                    "shouldIgnore": False,
                    "oid": git_blob_oid(existing) if existing is not None else None,
                }
            )
        return self._json(200, {"files": answer})

    def _commit(self, repo: Repo, revision: str, body: bytes):
        hub = self.server.hub
        branch = unquote(revision)
        if branch not in repo.branches:
            return self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        hub.commit_payloads.append(lines)
        header = next((line["value"] for line in lines if line["key"] == "header"), None)
        if header is None:
            return self._json(400, {"error": "missing header line"})
        head = repo.commits[repo.branches[branch]]
        parent = header.get("parentCommit")
        if parent is not None and parent != head.oid:
            return self._json(
                412, {"error": f"A commit has happened since. Please refresh and try again. (parent {parent} is not the head {head.oid})"}
            )
        files = dict(head.files)
        for line in lines:
            key, value = line["key"], line.get("value", {})
            if key == "file":
                if value.get("encoding") != "base64":
                    return self._json(400, {"error": f"unsupported encoding {value.get('encoding')}"})
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                if value["path"] not in files:
                    return self._error(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[value["path"]]
            elif key == "deletedFolder":
                folder = value["path"].rstrip("/") + "/"
                for path in [p for p in files if p.startswith(folder)]:
                    del files[path]
            elif key == "lfsFile":
                return self._json(400, {"error": "the test hub only accepts regular files"})
            elif key != "header":
                return self._json(400, {"error": f"unknown commit line {key}"})
        commit = repo.add_commit(head.oid, header.get("summary", ""), header.get("description", ""), files)
        repo.branches[branch] = commit.oid
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        return self._json(
            200,
            {
                "success": True,
                "commitOid": commit.oid,
                "commitUrl": f"{self.server.url}/{prefix}{repo.repo_id}/commit/{commit.oid}",
                "pullRequestUrl": None,
            },
        )

    def _tag(self, repo: Repo, revision: str, payload: dict):
        commit = repo.resolve(revision)
        if commit is None:
            return self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        tag = payload["tag"]
        if tag in repo.tags:
            return self._json(409, {"error": f"Tag {tag} already exists"})
        repo.tags[tag] = commit.oid
        repo.tag_messages[tag] = payload.get("message", "")
        return self._json(200, {})

    def _resolve(self, repo: Repo, revision: str, path: str):
        commit = repo.resolve(revision)
        if commit is None:
            return self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        data = commit.files.get(unquote(path))
        if data is None:
            return self._error(404, "Entry not found", "EntryNotFound")
        headers = {"X-Repo-Commit": commit.oid, "ETag": f'"{git_blob_oid(data)}"'}
        return self._send(200, data, headers, content_type="application/octet-stream")


class HubServer(ThreadingHTTPServer):
    """`with HubServer(token) as server:` serves on 127.0.0.1 at `server.url` until the block ends."""

    daemon_threads = True

    def __init__(self, token: str):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hub = Hub(token)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self._thread: threading.Thread | None = None

    def __enter__(self) -> HubServer:
        self._thread = threading.Thread(target=self.serve_forever, name="test-hub", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.hub.release_hangs()
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
