"""The magnitudes each template reads naturally with (review.md, "Magnitudes each template reads naturally with"):
a business's, a place's or a long span's count has a smallest number, one person's things a largest; the cases
are those Reading 6 of the release found implausible, and their kind across every template."""

import re

import pytest

from ctxrobust.builders.gsm_ic.lexicon import load_reviewed, load_templates

REVIEWED = load_reviewed()
SHARED = load_templates()


def every_template():
    own = [t for base_id in REVIEWED.problems for t in REVIEWED.templates_of(base_id)]
    return own + SHARED.in_topic + SHARED.off_topic


def own(base_id, text):
    return next(t for t in REVIEWED.templates_of(base_id) if t.text == text)


# (a pattern of template text, the smallest number a template matching it may take)
SMALLEST = [
    (r"amusement park .*visitors a (day|week)", 100),  # Reading 6: "3 visitors a week"
    (r"visitors a (week|year)", 1000),
    (r"'s (snack stand|bakery|restaurant|store|clothing shop|candy store|movie theater) sold \{number\} .* last year", 100),
    (r"(restaurant served|bakery sold) \{number\} .* last year", 1000),
    (r"over the years", 20),  # Reading 6: "34 weeds over the years"
    (r"weeds over the years", 200),
    (r"(highways?|email server) .* a day", 100),
    (r"'s (hometown|town) has \{number\} (residents|houses|homes)", 50),
    (r"'s school has \{number\} students", 20),
    (r"(hospital|bookstore) .* (babies|books over the years)", 100),
]
# (a pattern of template text, the largest number a template matching it may take)
LARGEST = [
    (r"art supply store stocks", 5000),  # Reading 6: 150,000 paintbrushes in one shop
    (r"episodes of a cooking show", 1000),  # Reading 6: 25,000 episodes
    (r"filled \{number\} notebooks", 300),  # Reading 6: 1,300 notebooks
    (r"^\{role\} (ate|picked|planted) \{number\} \w+\.$", 10000),
    (r"^\{role\} has \{number\} (rabbits|napkins in a drawer)\.$", 500),
]


@pytest.mark.parametrize("pattern, smallest", SMALLEST)
def test_a_business_a_place_or_a_long_span_never_counts_a_handful(pattern, smallest):
    matched = [t for t in every_template() if re.search(pattern, t.text)]
    assert matched, pattern
    assert [(t.id, t.text, t.min) for t in matched if t.min < smallest] == []


@pytest.mark.parametrize("pattern, largest", LARGEST)
def test_one_persons_or_one_shops_things_stay_below_a_ceiling(pattern, largest):
    matched = [t for t in every_template() if re.search(pattern, t.text)]
    assert [(t.id, t.text, t.max) for t in matched if t.max is None or t.max > largest] == []


def test_the_templates_reading_6_found_implausible_are_bounded_or_reworded():
    # the amusement park's visitors a week never fit pool-0001's in-range numbers: now its season pass's number
    assert own("pool-0001", "{role}'s season pass for the amusement park has the number {number}.").identifier
    assert own("pool-0526", "{role}'s snack stand sells {number} pretzels a week.").min >= 20
    assert own("pool-0586", "{role} has pulled {number} weeds over the years.").min >= 200
    assert own("pool-0305", "{role} has watched {number} episodes of a cooking show.").max <= 1000
    assert own("pool-0995", "{role} has filled {number} notebooks.").max <= 300
    texts = {t.text for t in every_template()}
    # wording: a vineyard's grapes are not counted one by one, a licence is not held "for 12,000 days",
    # and a neighbour's town is the person's own ("{role}'s town" reads "Emily's neighbor's town")
    assert not any(re.search(r"vineyard grew \{number\} grapes|license for \{number\} days|\{role\}'s town\b", t) for t in texts)
    license_number = own("pool-0193", "{role}'s driver's license has the number {number}.")
    assert license_number.identifier
