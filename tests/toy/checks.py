"""Toy checks: the answer is the sum the question asks for."""

from __future__ import annotations

import re

from ctxrobust.validators.checks import Failure, check


@check("toy", "answer_replay")
def answer_replay(release):
    for row in release.rows("items.jsonl"):
        a, b = map(int, re.findall(r"\d+", row["question"]))
        if a + b != row["answer"]:
            yield Failure("items.jsonl", row["id"], f"answer {row['answer']}, the question sums to {a + b}")
