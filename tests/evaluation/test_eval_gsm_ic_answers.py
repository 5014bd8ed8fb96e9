"""GSM-IC final-answer extraction and numeric normalisation."""

from __future__ import annotations

import pytest

from ctxrobust.evaluation.gsm_ic.answers import answer_value, extract_answer, gold_value, response_answer


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The answer is 1,250.", "1250"),
        ("$12.50", "25/2"),
        ("They pay $12.50 in total", "25/2"),
        ("Natalia sold 48 + 24 = 72 clips.\n#### 72", "72"),
        ("So the total is \\boxed{7}.", "7"),
        ("\\boxed{\\frac{1}{2}}", "1/2"),
        ("The final answer is $\\boxed{\\$1,250}$", "1250"),
        ("-3", "-3"),
        ("The answer is -3.", "-3"),
        ("The temperature fell to −4 degrees.", "-4"),
        ("1/2", "1/2"),
        ("It is 12.", "12"),
        ("It is 12.0.", "12"),
        ("x = 5-3 = 2", "2"),  # a hyphen between numbers is no minus sign
        ("The answer is 80%.", "80"),
        ("answer: 0.5", "1/2"),
        ("The answer is 24. Twenty years ago he was 4.", "24"),  # the marker wins over the last number
        ("3 + 4 = 7. Then 7 * 2 = 14", "14"),  # no marker: the last number
        ("The answer is: 1,000,000", "1000000"),
        ("I cannot tell.", None),
        ("", None),
        ("The answer is unknown.", None),
    ],
)
def test_extract_answer(text, expected):
    assert extract_answer(text) == expected


def test_response_stops_at_the_next_problem():
    # a model continuing the few-shot format writes the next "Q:" with its own answer
    response = "Anna has 7 apples. The answer is 12.\n\nQ: Tom has 3 cars. How many?\nA: The answer is 3."
    assert response_answer(response) == "12"
    assert extract_answer(response) == "3"


@pytest.mark.parametrize(
    "answer, expected",
    [
        (12, "12"),
        (12.5, "25/2"),
        (0.1, "1/10"),
        (-3, "-3"),
        ("$1,250", "1250"),
        ("7.50", "15/2"),
        (None, None),
        (True, None),
        ("none", None),
        (float("nan"), None),
    ],
)
def test_answer_value(answer, expected):
    assert answer_value(answer) == expected


@pytest.mark.parametrize(
    "gold, expected",
    [("1250", "1250"), ("12.5", "25/2"), ("-3", "-3"), ("1,000", "1000"), ("0.50", "1/2"), ("12 apples", None), ("", None)],
)
def test_gold_value(gold, expected):
    assert gold_value(gold) == expected


def test_equal_numbers_written_differently_compare_equal():
    forms = ["1250", "1,250", "$1,250.00", "The answer is 1,250.", "\\boxed{1250}", "#### 1250"]
    assert {extract_answer(f) for f in forms} == {gold_value("1250")}
    assert extract_answer("1/2") == extract_answer("0.5") == answer_value(0.5)
