"""GSM-IC prompts: the paper's one-exemplar prompt formats (Section 4.2, Figure 2, Appendix C), one request
per base problem and per variant.

Formats (option `prompt`, see `options.PromptOptions`): "cot" (default: chain of thought, exemplar without irrelevant context),
"ltm" (least-to-most), "program" (a Python program; run it and submit its output as `answer`),
"0-cot" (zero-shot, no exemplar); "cot-ic", "ltm-ic", "program-ic" use the exemplar with the
irrelevant sentence "Liz has 4 peaches." (Section 4.2). Option `instruction` prepends the paper's
instruction (Section 4.3).
"""

from __future__ import annotations

from typing import Iterator

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.gsm_ic.options import PromptOptions
from ctxrobust.evaluation.gsm_ic.scorer import BASE_FILE, SUBSET_FILE, VARIANTS_FILE
from ctxrobust.evaluation.run.requests import Request, RequestKey, SamplingPlan, request_id
from ctxrobust.options import parse_options
from ctxrobust.release import Release

# Section 4.3, Appendix C
INSTRUCTION = "Solve grade school math problems. Feel free to ignore irrelevant information given in the questions."

# Section 4.2, Figure 2: the exemplar problem, without and with the irrelevant sentence
EXEMPLAR = "Elsa has 5 apples. Anna has 2 more apples than Elsa. How many apples do they have together?"
EXEMPLAR_IC = "Elsa has 5 apples. Anna has 2 more apples than Elsa. Liz has 4 peaches. How many apples do they have together?"

# Figure 2, Appendix C: per technique, the answer trigger, what follows it, and the exemplar solution
TECHNIQUES = {
    "cot": (
        "",
        "",
        "Anna has 2 more apples than Elsa, so Anna has 2 + 5 = 7 apples. Elsa and Anna have 5 + 7 = 12 apples together. The answer is 12.",
    ),
    "ltm": (
        "Let's break down this problem:",
        " ",
        "1. How many apples does Anna have? 2. How many apples do Elsa and Anna have together? "
        "1. Anna has 2 more apples than Elsa. So Anna has 2 + 5 = 7 apples. 2. Elsa and Anna have 5 + 7 = 12 apples together.",
    ),
    "program": (
        "Let's solve the problem by a Python program:",
        "\n",  # the program starts on its own line
        "Elsa_apples = 5\nAnna_apples = 2 + Elsa_apples\nElsa_Anna_apples = Elsa_apples + Anna_apples\nprint(Elsa_Anna_apples)",
    ),
}
ZERO_SHOT_TRIGGER = "Let's think step by step:"  # Section 4.1, Appendix C
IC_SUFFIX = "-ic"
DEFAULT_PROMPT = "cot"
PROMPTS = sorted([*TECHNIQUES, *(t + IC_SUFFIX for t in TECHNIQUES), "0-cot"])


def build_prompt(problem: str, prompt: str = DEFAULT_PROMPT, instruction: bool = False) -> tuple[str, list[dict]]:
    """(text, chat messages) for one problem. Text: [instruction] [exemplar Q/A] "Q: problem" "A:[ trigger]",
    blocks separated by a blank line (paper pseudocode: header + exemplar + "Q: " + problem + "\\nA:").
    Messages: the instruction as a system message, the exemplar as a user/assistant turn, and the problem
    (with the answer trigger, if the format has one) as the last user message."""
    if prompt not in PROMPTS:
        raise CtxRobustError(f"--prompt {prompt!r}: not a GSM-IC prompt format; choose one of {', '.join(PROMPTS)}")
    messages: list[dict] = []
    blocks: list[str] = []
    if instruction:
        blocks.append(INSTRUCTION)
        messages.append({"role": "system", "content": INSTRUCTION})
    if prompt == "0-cot":
        trigger = ZERO_SHOT_TRIGGER
    else:
        trigger, separator, solution = TECHNIQUES[prompt.removesuffix(IC_SUFFIX)]
        exemplar = EXEMPLAR_IC if prompt.endswith(IC_SUFFIX) else EXEMPLAR
        answer = f"A: {trigger}{separator}{solution}" if trigger else f"A: {solution}"
        blocks.append(f"Q: {exemplar}\n{answer}")
        messages.append({"role": "user", "content": f"Q: {exemplar}"})
        messages.append({"role": "assistant", "content": answer})
    question = f"Q: {problem}\nA: {trigger}" if trigger else f"Q: {problem}\nA:"
    blocks.append(question)
    messages.append({"role": "user", "content": question})
    return "\n\n".join(blocks), messages


def prompts(release: Release, options: PromptOptions | dict | None = None) -> Iterator[dict]:
    """One request per base problem (kind "base"), then one per variant (kind "variant"), each in id order.
    `in_4k` marks the variants of GSM-IC-4K (the paper's evaluation set); base problems are scored with
    any subset, so they carry true (null when the release has no GSM-IC-4K)."""
    options = parse_options(PromptOptions, options, "gsm-ic prompts")
    prompt, instruction = options.prompt, options.instruction
    build_prompt("", prompt, instruction)  # reject an unknown format before writing anything
    subset = None
    if release.file_path(SUBSET_FILE).exists():
        subset = {str(row.get("id")) for row in release.iter_rows(SUBSET_FILE)}
    elif options.subset == "4k":
        raise CtxRobustError(f"--subset 4k: {release.path} has no {SUBSET_FILE}; rebuild the release with GSM-IC-4K or drop --subset")
    for kind, name, field, base_field in (("base", BASE_FILE, "question", "id"), ("variant", VARIANTS_FILE, "new_question", "base_id")):
        for row in sorted(release.iter_rows(name), key=lambda r: str(r.get("id"))):
            for needed in ("id", field, base_field):
                if not isinstance(row.get(needed), str):
                    raise CtxRobustError(
                        f"{release.file_path(name)}: item {row.get('id')!r}: no {needed!r} text; the release is not a GSM-IC release as expected, rebuild it"
                    )
            if options.subset == "4k" and kind == "variant" and str(row["id"]) not in subset:
                continue
            text, messages = build_prompt(row[field], prompt, instruction)
            yield {
                "id": row["id"],
                "kind": kind,
                "base_id": row[base_field],
                "n_steps": row.get("n_steps"),
                "in_4k": None if subset is None else (kind == "base" or str(row["id"]) in subset),
                "prompt": prompt,
                "instruction": instruction,
                "text": text,
                "messages": messages,
            }


# Section 5: greedy decoding (temperature 0) for every run but self-consistency (20 samples at 0.7,
# `--samples 20 --temperature 0.7`)
PLAN = SamplingPlan(temperature=0.0, samples=1)


def requests(release: Release, options: PromptOptions | dict | None, plan: SamplingPlan) -> Iterator[Request]:
    """The requests of `prompts`, `plan.samples` per problem; the id is "problem/-/sample"."""
    for row in prompts(release, options):
        meta = {k: row[k] for k in ("kind", "base_id", "n_steps", "in_4k", "prompt", "instruction", "text")}
        for sample in range(plan.samples):
            yield Request(
                id=request_id(row["id"], None, sample),
                dataset="gsm-ic",
                item=row["id"],
                condition=None,
                sample=sample,
                messages=row["messages"],
                sampling=plan.sampling(),
                meta=meta,
            )


def prediction(key: RequestKey, model: str, response: str) -> dict:
    """The native predictions row of one response (the scorer extracts its final number)."""
    if key.condition is not None:
        raise ValueError(f"condition {key.condition!r}: GSM-IC requests have none")
    return {"model": model, "id": key.item, "response": response, "sample": key.sample}
