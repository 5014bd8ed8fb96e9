"""MisleadQA model inputs: one request per item and condition (paper §4.1, Appendix C.1, Figures 4 and 5).

`--prompt original` (default): the answering prompt of Figure 4 in the eight conditions.
`--prompt cf`: the context-faithful prompt of Figure 5(b) in the seven conditions with context; the
no-context condition keeps the answering prompt (App. C.1), as in the paper's CF run.
`--prompt scope`: the scope-judgment prompt of Figure 5(a), one request per context G, S, F (§6.1).
`--prompt screen`: the screening prompt of App. B.1, one request per candidate of candidates.jsonl
(evaluation/misleadqa/screening.py).
`--option-orders K`: the option-order check of App. D.6, the answering prompt without context, with S
alone and with F alone under K orders of options A-D (evaluation/misleadqa/option_orders.py).
`--diagnostic-sample`: only the 200 main items of App. D.4 (evaluation/misleadqa/diagnostic_sample.py).
"""

from __future__ import annotations

from typing import Iterator

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.misleadqa.diagnostic_sample import diagnostic_ids
from ctxrobust.evaluation.misleadqa.option_orders import rotations, shown_item
from ctxrobust.evaluation.misleadqa.options import PromptOptions
from ctxrobust.evaluation.misleadqa.responses import CONDITIONS, LETTERS, ORDER_CONDITIONS, SCOPE_CONTEXTS, ReleaseItem, read_items
from ctxrobust.evaluation.run.requests import Request, RequestKey, SamplingPlan, request_id
from ctxrobust.options import parse_options
from ctxrobust.release import Release

ANSWER_INSTRUCTION = "Answer the following multiple-choice question. Return only A, B, C, D, or E."  # Figure 4
CF_INSTRUCTION = (  # Figure 5(b)
    "Answer the following multiple-choice question using only the supplied evidence that applies to the "
    "exact entity, time, population, and conditions asked about. Do not use outside knowledge to correct "
    "claims in the supplied evidence. Ignore evidence about a different scope. Choose E if the applicable "
    "evidence is insufficient to determine an answer, or if applicable passages support conflicting answers "
    "that cannot be resolved from the supplied evidence. Return only A, B, C, D, or E."
)
SCOPE_INSTRUCTION = (  # Figure 5(a)
    "Determine whether the assertion in the material refers to the same target scope as the question, "
    "including the entity, time, and location specified in the question. Ignore whether the answer value is "
    "factually correct; judge only whether the scope matches. Output exactly one label: Applicable, Not "
    "applicable, or Cannot determine."
)


def context_sequence(condition: str) -> list[str]:
    """§4.1: "none" -> [], "G" -> ["G"], "F+G" -> ["F", "G"] (order of presentation)."""
    return [] if condition == "none" else condition.split("+")


def options_block(item: ReleaseItem) -> str:
    """App. C.1: each option on its own line as the letter, a period, a space, and the option text."""
    return "\n".join(f"{letter}. {item.options[letter]}" for letter in LETTERS)


def answer_text(item: ReleaseItem, condition: str, instruction: str = ANSWER_INSTRUCTION) -> str:
    """Figure 4 (or 5b with the CF instruction): contexts follow the options, each after a blank line."""
    parts = [instruction, f"Question:\n{item.question}", f"Options:\n{options_block(item)}"]
    parts += [item.contexts[label].text for label in context_sequence(condition)]
    return "\n\n".join(parts)


def scope_text(item: ReleaseItem, label: str) -> str:
    """Figure 5(a): question, its A-E options and one context, without labels or answer key."""
    return "\n\n".join(
        [SCOPE_INSTRUCTION, f"Question:\n{item.question}", f"Options:\n{options_block(item)}", f"Material:\n{item.contexts[label].text}"]
    )


def _request(item: ReleaseItem, split: str, condition: str, prompt: str, text: str, option_order: str | None = None) -> dict:
    row = {
        "id": item.id,
        "split": split,
        "condition": condition,
        "prompt": prompt,
        "text": text,
        "messages": [{"role": "user", "content": text}],  # App. C.1: a single user turn
    }
    if option_order is not None:
        row["option_order"] = option_order
    return row


def _selected(release: Release, options: PromptOptions) -> list[tuple[str, ReleaseItem]]:
    """(split, item) sorted by id: every item, or the diagnostic sample of App. D.4 (main items only)."""
    items = sorted(read_items(release), key=lambda pair: pair[1].id)
    if options.diagnostic_sample or options.option_orders is not None:
        main = [item for split, item in items if split == "main"]
        if options.diagnostic_sample:
            keep = diagnostic_ids(main)
            items = [(split, item) for split, item in items if item.id in keep]
        else:
            items = [(split, item) for split, item in items if split == "main"]  # App. D.6: main items only
    return items


def prompts(release: Release, options: PromptOptions | dict | None = None) -> Iterator[dict]:
    """Requests sorted by item id, then condition in the paper's order."""
    options = parse_options(PromptOptions, options, "misleadqa prompts")
    prompt = options.prompt
    if options.option_orders is not None and prompt != "original":
        raise CtxRobustError(f"--option-orders with --prompt {prompt}: the option-order check uses the original prompt (App. D.6)")
    if prompt == "screen":
        if options.diagnostic_sample:
            raise CtxRobustError("--diagnostic-sample with --prompt screen: screening covers every candidate (App. B.1)")
        from ctxrobust.evaluation.misleadqa.screening import screen_requests

        yield from screen_requests(release)
        return
    for split, item in _selected(release, options):
        if options.option_orders is not None:  # App. D.6: each order in turn, the conditions within it
            for order in rotations(options.option_orders):
                shown = shown_item(item, order)
                for condition in ORDER_CONDITIONS:
                    yield _request(shown, split, condition, prompt, answer_text(shown, condition), order)
            continue
        if prompt == "scope":
            for label in SCOPE_CONTEXTS:
                yield _request(item, split, label, prompt, scope_text(item, label))
            continue
        for condition in CONDITIONS:
            instruction = CF_INSTRUCTION if prompt == "cf" and condition != "none" else ANSWER_INSTRUCTION
            yield _request(item, split, condition, prompt, answer_text(item, condition, instruction))


# §4.1: greedy decoding, one answer per item and condition
PLAN = SamplingPlan(temperature=0.0, samples=1)
PROMPT_MARK = ":"  # condition token of a non-original prompt: "cf:G+S", "scope:G"
ORDER_MARK = "@"  # condition token under an option order: "S@BCDA" (App. D.6)


def requests(release: Release, options: PromptOptions | dict | None, plan: SamplingPlan) -> Iterator[Request]:
    """The requests of `prompts`; the id is "item/condition/0", the condition prefixed "cf:" or
    "scope:" for those prompts and followed by "@" and the option order in the option-order check
    ("S@BCDA"), so every runner's output carries the order back. One response per item and condition
    is scored (§4.1)."""
    if plan.samples != 1:
        raise CtxRobustError(f"--samples {plan.samples}: MisleadQA scores one greedy answer per item and condition (§4.1); use --samples 1")
    for row in prompts(release, options):
        token = row["condition"] if row["prompt"] == "original" else row["prompt"] + PROMPT_MARK + row["condition"]
        meta = {"split": row["split"], "prompt": row["prompt"], "text": row["text"]}
        if "option_order" in row:
            token += ORDER_MARK + row["option_order"]
            meta["option_order"] = row["option_order"]
        yield Request(
            id=request_id(row["id"], token, 0),
            dataset="misleadqa",
            item=row["id"],
            condition=row["condition"],
            sample=0,
            messages=row["messages"],
            sampling=plan.sampling(),
            meta=meta,
        )


def prediction(key: RequestKey, model: str, response: str) -> dict:
    """The native predictions row of one response (the scorer reads its letter)."""
    token, marked, order = (key.condition or "").partition(ORDER_MARK)
    prompt, _, condition = token.rpartition(PROMPT_MARK)
    if not condition:
        raise ValueError("a MisleadQA request id names its condition")
    if marked and not order:
        raise ValueError("an option-order request id names its order after '@' (e.g. S@BCDA)")
    row = {"model": model, "id": key.item, "condition": condition, "response": response}
    if prompt:
        row["prompt"] = prompt
    if marked:
        row["option_order"] = order  # checked by the scorer, which reports an unknown order by line
    return row
