"""The card text of a test dataset: every field a card needs, empty where a test needs nothing."""

from __future__ import annotations


def minimal_card(name: str, summary: str, configs: dict) -> dict:
    return {
        "pretty_name": name,
        "summary": summary,
        "description": [],
        "construction": [],
        "task_categories": [],
        "task_ids": [],
        "tags": [],
        "language": ["en"],
        "default_config": next(iter(configs)),
        "licence": "cc0-1.0",
        "licence_note": "test data",
        "primary_citation": None,
        "citations": [],
        "configs": configs,
        "limits": [],
    }
