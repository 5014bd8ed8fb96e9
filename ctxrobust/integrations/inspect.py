"""The Inspect AI task over a release's requests:

    inspect eval ctxrobust/integrations/inspect.py --model openai-api/local/NAME --model-base-url URL -T release=PATH

One Sample per request of `ctxrobust prompts` (the id its request id, the input its messages as they are,
the metadata its item, condition, sample and the dataset's fields), answered by `generate()` with the
dataset's sampling plan: greedy for gsm-ic (GSM-IC Section 5) and misleadqa (MisleadQA §4.1), temperature
1.0 for pseudowords, 20 no-context samples and 2 per context (Section 2), no token limit unless asked, as
`ctxrobust run` sends them. The log has no scores of its own: `ctxrobust score RELEASE LOG` reads it back
by sample id. Task arguments: `release`, `dataset` (refuse a release of another dataset), the sampling
settings `temperature`, `top_p`, `max_tokens`, `samples`, `baseline_samples`, and the dataset's prompt
options as `prompts` takes them (`prompt`, `instruction`, `subset`, `benchmark`, `kinds`, ...). A
relative path is taken from the folder `inspect eval` was started in. Installed, the task is also
`inspect eval ctxrobust/ctxrobust -T release=PATH` (the `inspect_ai` entry point in pyproject.toml).

Only this module imports inspect_ai; nothing of the core imports it.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.solver import generate

from ctxrobust.errors import CtxRobustError
from ctxrobust.integrations.release_requests import load_release, release_requests

ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def to_sample(request) -> Sample:
    """The Sample of one request: its id, its messages, and what it asks about as metadata."""
    messages = []
    for message in request.messages:
        role = ROLES.get(message.get("role"))
        if role is None or not isinstance(message.get("content"), str):
            raise CtxRobustError(f"request {request.id}: a message of role {message.get('role')!r} is not text for a chat model")
        messages.append(role(content=message["content"]))
    metadata = {"dataset": request.dataset, "item": request.item, "condition": request.condition, "sample": request.sample, **request.meta}
    return Sample(id=request.id, input=messages, metadata=metadata)


def generate_config(sampling: dict) -> GenerateConfig:
    """The request's sampling parameters as Inspect's generation settings (unset ones left to the model)."""
    return GenerateConfig(temperature=sampling.get("temperature"), top_p=sampling.get("top_p"), max_tokens=sampling.get("max_tokens"))


@task
def ctxrobust(
    release: str,
    dataset: str | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    samples: int | None = None,
    baseline_samples: int | None = None,
    **options,
) -> Task:
    """Every request of `release` (a release folder or hf://datasets/ORG/NAME@vX.Y.Z), answered once each."""
    loaded = load_release(release, dataset)
    sampling = {
        "temperature": temperature,
        "top_p": top_p,
        "max_tokens": max_tokens,
        "samples": samples,
        "baseline_samples": baseline_samples,
    }
    name, requests = release_requests(loaded, options, sampling)
    requests = list(requests)
    if len({r.id for r in requests}) != len(requests):
        raise CtxRobustError(f"{loaded.path}: two requests share an id; the release or benchmark has two items with one id")
    if not requests:
        raise CtxRobustError(f"{loaded.path}: no requests to evaluate; check the prompt options")
    mixed = next((r for r in requests if r.sampling != requests[0].sampling), None)
    if mixed is not None:  # one GenerateConfig for the task: as the lm-eval export, one sampling plan
        raise CtxRobustError(f"request {mixed.id}: its sampling differs from the others'; one task has one sampling plan")
    return Task(
        dataset=MemoryDataset([to_sample(r) for r in requests], name=f"{name} {loaded.version}", location=str(loaded.path)),
        solver=generate(),
        config=generate_config(requests[0].sampling),
        name=f"ctxrobust_{name.replace('-', '_')}",
        metadata={"ctxrobust_dataset": name, "ctxrobust_version": loaded.version},
    )
