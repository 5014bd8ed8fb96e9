"""Toy builder: sums of two small numbers, drawn from the seed."""

from __future__ import annotations

import numpy as np

from ctxrobust.builders.base import BuildConfig, Builder, BuildOutput, DataFile


class ToyConfig(BuildConfig):
    n: int = 6


class ToyBuilder(Builder):
    dataset = "toy"
    Config = ToyConfig

    def build(self) -> BuildOutput:
        rng = np.random.default_rng(self.config.seed)
        pairs = rng.integers(1, 10, size=(self.config.n, 2))
        rows = [{"id": f"toy-{i:02d}", "question": f"What is {a} + {b}?", "answer": int(a + b)} for i, (a, b) in enumerate(pairs)]
        return BuildOutput(files=[DataFile("items.jsonl", rows, schema="toy.item")], notes={"items": len(rows)})
