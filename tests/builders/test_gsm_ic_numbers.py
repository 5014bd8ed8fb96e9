"""Number reading and the GSM-IC number rule (paper §3.1), on cases written for these tests."""

from fractions import Fraction

import numpy as np
import pytest

from ctxrobust.builders.gsm_ic.numbers import (
    NumberDraw,
    candidate_intervals,
    find_numbers,
    format_money,
    format_number,
    is_in_range,
    known_numbers,
    number_label,
    number_style,
    numbers_in,
    parse_answer,
    problem_numbers,
    readable,
    solution_text,
)


def values(text):
    return [m.value for m in find_numbers(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The town has 482,653 people.", [482653]),
        ("A car costs $13,380 and a house $1,000,000.", [13380, 1000000]),
        ("Pens cost $3.50 each and erasers $.75.", [Fraction(7, 2), Fraction(3, 4)]),
        ("She got 80% of the 40 questions right.", [80, 40]),
        ("The movie starts at 6:15 PM and ends at 8:00.", [6, 15, 8]),
        ("It is his 10th birthday and her 21st; the 2nd and 3rd runners tied.", [10, 21, 2, 3]),
        ("He ate 3/4 of a pie and 2 1/2 sandwiches.", [Fraction(3, 4), Fraction(5, 2)]),
        ("The film made $1.2 million.", [1200000]),
        ("Four friends share twenty-five apples and a dozen eggs.", [4, 25, 12]),
        ("Three hundred people came, and a thousand more watched.", [300, 1000]),
        ("The 5-year-old ran laps 5-7 times a day.", [5, 5, 7]),
        ("It costs $5.", [5]),
        ("Each box holds 100mm of tape.", [100]),
        ("Weng earns 12/60 = $0.2 per minute.", [Fraction(1, 5), Fraction(1, 5)]),
        ("Nathalie eats one-eighth of the cake and Rob reads for three-quarters of an hour.", [Fraction(1, 8), Fraction(3, 4)]),
        ("She bought 3 dozen eggs, two dozen rolls and a dozen pies.", [36, 24, 12]),
        ("Steve is 5'6\". Children 6–11 years old watch 1800cm³ of water in 2008.", [5, 6, 6, 11, 1800, 2008]),
    ],
)
def test_numbers_read_as_people_write_them(text, expected):
    assert values(text) == [Fraction(v) for v in expected]


def test_half_and_ordinal_words_are_not_numbers():
    assert values("She ate half of the cake on the first day, twice as much as someone else.") == []


def test_thousands_group_is_one_number_but_a_bare_list_is_several():
    assert values("482,653") == [482653]
    assert values("1,2,3") == [1, 2, 3]


def test_percent_and_ordinal_kinds_are_recorded():
    kinds = [m.kind for m in find_numbers("15% of the 3rd batch, 7 boxes, 1/2 cup, 9:30, seven")]
    assert kinds == ["percent", "ordinal", "digits", "fraction", "time", "time", "word"]


def test_solution_annotations_are_removed_before_reading():
    worked = "He sold 48/2 = <<48/2=24>>24 clips.\n#### 24"
    assert solution_text(worked) == "He sold 48/2 = 24 clips.\n#### 24"
    # both numbers of an a/b of the solution count, as well as its value (and the annotations' numbers)
    assert known_numbers("Natalie sold 48 clips.", worked) == [Fraction(2), Fraction(24), Fraction(48)]
    assert Fraction(2) in problem_numbers("Natalie sold 48 clips.", "She sold 60/2 clips.\n#### 30")


def test_answer_strings_parse():
    assert parse_answer("2,500") == 2500
    assert parse_answer("7.5") == Fraction(15, 2)
    assert parse_answer("-3") == -3


# Number rule, §3.1: a is in range iff some b has 1/10 <= a/b <= 10.
def test_number_rule_boundaries_are_inclusive_and_exact():
    known = [Fraction(3, 10)]  # 0.3: float division would put 3/0.3 just above 10
    assert is_in_range(3, known)
    assert is_in_range(Fraction(3, 100), known)
    assert not is_in_range(4, known)
    assert not is_in_range(Fraction(29, 1000), known)


def test_number_rule_any_known_number_suffices():
    known = [Fraction(2), Fraction(1000)]
    assert number_label(20, known) == "in_range"  # 20/2 = 10
    assert number_label(21, known) == "out_range"  # 10.5 times 2, 1/47.6 of 1000
    assert number_label(100, known) == "in_range"  # 1000/100 = 10
    assert number_label(50, known) == "out_range"  # the gap between the two clusters
    assert number_label(10001, known) == "out_range"


def test_number_rule_ignores_non_positive_known_numbers():
    assert not is_in_range(5, [Fraction(0)])


def test_candidate_intervals_respect_the_rule():
    known = [Fraction(2), Fraction(1000)]
    for label in ("in_range", "out_range"):
        for lo, hi in candidate_intervals(known, label):
            for a in {lo, hi, (lo + hi) // 2}:
                assert number_label(a, known) == label, (label, lo, hi, a)
    # out of range: outside the whole range [l/10, 10r], never in the gap between clusters; above it two decades
    assert candidate_intervals(known, "out_range") == [(10001, 1000100)]
    assert candidate_intervals([Fraction(50), Fraction(70)], "out_range") == [(2, 4), (701, 70100)]


def test_readable_rounds_to_two_or_three_significant_digits_inside_the_interval():
    assert readable(4227, 2, 10**6) == 4200
    assert readable(24503, 20001, 40000) == 25000
    assert readable(1167, 1151, 1199) == 1170  # 1200 is outside: three digits
    assert readable(1167, 1161, 1169) == 1167  # neither fits: as drawn
    assert readable(87, 2, 100) == 87


def test_number_draws_exclude_forbidden_and_are_seeded():
    known = [Fraction(8), Fraction(12), Fraction(96)]
    forbidden = {Fraction(8), Fraction(12), Fraction(96), Fraction(20)}
    first = NumberDraw(known, forbidden).draw("in_range", 10, np.random.default_rng(5))
    again = NumberDraw(known, forbidden).draw("in_range", 10, np.random.default_rng(5))
    assert first == again and len(first) == 10 and first == sorted(first)
    assert all(Fraction(a) not in forbidden and a >= 2 and is_in_range(a, known) for a in first)
    out = NumberDraw(known, forbidden).draw("out_range", 10, np.random.default_rng(5))
    assert len(out) == 10 and all(not is_in_range(a, known) for a in out)
    assert all(a > 10 * 96 for a in out)  # above the whole range (8/10 < 2: nothing below it)
    # over several magnitudes: log-uniform draws fill every decade of (10r, 1000r] = (960, 96,000]
    many = NumberDraw(known, forbidden).draw("out_range", 300, np.random.default_rng(1))
    decades = {len(str(a)) for a in many}
    assert decades == {3, 4, 5} and sum(a <= 20 * 96 for a in many) < 0.3 * len(many)


def test_numbers_are_written_as_the_problem_writes_them():
    plain, commas = {"separators": False, "dollar_sign": False}, {"separators": True, "dollar_sign": True}
    assert format_number(24000, plain) == "24,000" and format_number(2400, plain) == "2400" and format_number(2400, commas) == "2,400"
    assert format_money(40, plain) == "40 dollars" and format_money(12500, commas) == "$12,500"
    assert number_style("Tom pays $1,200 for 3 bikes.", "1200 / 3 = 400\n#### 400") == {"separators": True, "dollar_sign": True}
    assert number_style("Tom has 1200 pens.", "#### 1200") == {"separators": False, "dollar_sign": False}


def test_numbers_in_a_question_with_money_and_time():
    question = "Aditi works from 9:00 to 5:30 and earns $15.25 an hour, 1,500 dollars in all."
    assert numbers_in(question) == {Fraction(9), Fraction(5), Fraction(30), Fraction(61, 4), Fraction(1500)}
