"""`ctxrobust run`: send a release's requests to an OpenAI-compatible endpoint and write predictions."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ctxrobust.commands.common import (
    RELEASE_HELP,
    _add_option_flags,
    _add_quiet,
    _add_sampling_flags,
    _frozen_release,
    _input_paths,
    _release_path,
    _requests,
)
from ctxrobust.commands.prompts import add_subset_flags, items_input, selected, subset_asked
from ctxrobust.errors import CtxRobustError

HELP = "send a release's requests to an OpenAI-compatible endpoint and write predictions"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", help=RELEASE_HELP)
    p.add_argument("--base-url", required=True, help="the endpoint, e.g. http://localhost:8000/v1 (vLLM, SGLang, llama.cpp, OpenAI)")
    _add_option_flags(p, "prompts")
    _add_sampling_flags(p)
    p.add_argument("-o", "--output", required=True, help="the predictions JSONL to write; the run record goes beside it (.run.json)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="the environment variable holding the API key (default: %(default)s)")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight at once (default: %(default)s)")
    p.add_argument(
        "--retries", type=int, default=6, help="retries of a request after 429, 5xx, timeouts or malformed bodies (default: %(default)s)"
    )
    p.add_argument(
        "--retry-base",
        dest="retry_base",
        type=float,
        default=1.0,
        help="seconds before the first retry, doubling after (default: %(default)g)",
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one answer (default: %(default)g)")
    p.add_argument("--cache", help="the resumable cache file (default: beside -o, .cache.jsonl)")
    p.add_argument(
        "--max-requests-per-minute",
        dest="max_requests_per_minute",
        type=float,
        metavar="R",
        help="send at most R requests a minute, retries included, spaced evenly across --concurrency (default: no cap)",
    )
    p.add_argument(
        "--max-connection-failures",
        dest="max_connection_failures",
        type=int,
        default=10,
        metavar="N",
        help="stop after N attempts in a row that cannot connect to the endpoint, writing what was answered (default: %(default)s)",
    )
    add_subset_flags(p)
    _add_quiet(p)


def run(args) -> int:
    import math

    from ctxrobust import registry
    from ctxrobust.evaluation.run.cache import refuse_link
    from ctxrobust.evaluation.run.client import RetryPolicy, check_api_key, endpoint
    from ctxrobust.evaluation.run.pacing import Breaker, RateCap
    from ctxrobust.evaluation.run.runner import NO_KEY, default_cache, lock_path, record_path
    from ctxrobust.evaluation.run.runner import run as run_requests
    from ctxrobust.evaluation.run.subsets import record
    from ctxrobust.output import check_output

    if not args.model:
        raise CtxRobustError("run needs --model NAME, the model the endpoint serves")
    if (
        args.concurrency < 1
        or args.retries < 0
        or not math.isfinite(args.timeout)
        or args.timeout <= 0
        or not math.isfinite(args.retry_base)
        or args.retry_base < 0
    ):
        raise CtxRobustError("--concurrency must be at least 1, --retries and --retry-base at least 0, and --timeout positive")
    if args.max_requests_per_minute is not None:
        RateCap(args.max_requests_per_minute)  # one line for a cap that cannot be kept
    Breaker(args.max_connection_failures)
    endpoint(args.base_url)  # the endpoint and the key are checked before anything is read, opened or sent
    check_api_key(os.environ.get(args.api_key_env) or NO_KEY, args.api_key_env)
    release = _frozen_release(_release_path(args.release))
    dataset = registry.get(release.dataset)
    subset = subset_asked(args, dataset)
    module, options, plan, requests = _requests(args, release, dataset)
    inputs = [*_input_paths(options), *items_input(args)]
    target = check_output(args.output, "-o", inputs)
    requests, selection = selected(requests, subset)
    cache = Path(args.cache) if args.cache else default_cache(target)
    refuse_link(cache, "--cache")  # the cache is appended to in place: never through a link, given or default
    refuse_link(lock_path(target), "-o")
    cache = check_output(cache, "--cache", [*inputs, target])
    for beside in (record_path(target), lock_path(target)):
        check_output(beside, "-o", [*inputs, target, cache])
    record = run_requests(
        list(requests),
        module.prediction,
        dataset=dataset.name,
        release=str(release.path),
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        output=target,
        cache_path=cache,
        concurrency=args.concurrency,
        policy=RetryPolicy(retries=args.retries, base=args.retry_base, timeout=args.timeout),
        options=json.loads(options.model_dump_json()),
        plan=plan,
        quiet=bool(args.quiet),
        subset=record(selection),
        max_per_minute=args.max_requests_per_minute,
        max_connection_failures=args.max_connection_failures,
    )
    counts = record["counts"]
    print(
        f"wrote {counts['requests']} prediction(s) to {target} and the run record {record_path(target)} "
        f"({counts['cached']} cached, {counts['answered']} answered, {counts['failed']} failed)",
        file=sys.stderr,
    )
    if counts["failed"]:
        print(
            f"error: {counts['failed']} request(s) failed after retries (listed in the run record); they are written as invalid "
            "answers; rerun the same command to retry only them",
            file=sys.stderr,
        )
        return 1
    return 0
