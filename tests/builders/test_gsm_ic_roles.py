"""Finding the people of a problem and labelling roles (paper §3.1, App. A), on cases written for these tests."""

import re

import pytest

from ctxrobust.builders.gsm_ic.analysis import analyse
from ctxrobust.builders.gsm_ic.builder import PAPER_NAMES, PAPER_RELATIONS
from ctxrobust.builders.gsm_ic.irrelevance import relations_in_problem
from ctxrobust.builders.gsm_ic.lexicon import TOPIC_PARTS, TopicRule, load_lexicon, load_reviewed, load_templates, load_topic_rule
from ctxrobust.builders.gsm_ic.roles import find_people, nonoverlapping_names, overlapping_roles, role_label
from ctxrobust.builders.gsm_ic.topics import (
    assign_topic,
    count_rule,
    decide_topic,
    in_topic_templates,
    measure,
    off_topic_templates,
    sentence_label,
)
from ctxrobust.sources.gsm8k import POOL

LEX = load_lexicon()


def names(question, solution=""):
    return [p.name for p in find_people(question, solution, LEX)]


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Jewel has 12 beads. She buys 30 more. How many beads does Jewel have?", ["Jewel"]),
        ("Grover bought 3 boxes of masks. He sells them for $2 each. How much does he make?", ["Grover"]),
        ("Mr. Okafor drives 45 miles an hour. How far does he drive in 3 hours?", ["Mr. Okafor"]),
        ("Aunt Rosalind bakes 24 pies. How many pies are left if she sells 9?", ["Aunt Rosalind"]),
        ("Teodora's cat eats 2 cans a day. How many cans does her cat eat in a week?", ["Teodora"]),
        ("On Monday, Maria rode the Ferris wheel 3 times. How many rides did she take by Friday?", ["Maria"]),
        ("Kwame flew from Cape Town to New York in 16 hours. How long did his flight take?", ["Kwame"]),
        ("In Salem, 3,000 people live. How many people live there if 200 move in?", []),
        ("Zane bought 4 Oreos. He ate 3 Oreos. How many Oreos are left?", ["Zane"]),
        ("Mark is 12. He reads 5 books a week. How many books does he read in 3 weeks?", ["Mark"]),
        ("Will he finish 40 laps if he swims 8 an hour for 5 hours?", []),
        ("Exercising for an hour burns 300 calories. How many calories does he burn in 4 hours?", []),
        ("Priya gave 5 apples to Tobias and 3 to Ines. How many apples did Priya give away?", ["Priya", "Tobias", "Ines"]),
        # a name the lexicon does not know, used like a person twice, in a problem without he/she
        (
            "Grover has 4 times as many pens as Kemal has pencils. If Kemal has 9 pencils, how many pens does Grover have?",
            ["Grover", "Kemal"],
        ),
        ("Méliès bought 2 kg of meat. How much money does he have left from $180?", ["Méliès"]),  # accented letters
        ("In all, Amaya spent 100 minutes. How long did she watch?", ["Amaya"]),  # "all" across a comma is no determiner
        ("Kemal moved from Oakvale, which has 4,000 people, to Brixby, which has 300 fewer. How many people live in Brixby?", []),
        # a hyphenated name is one name: never cut to "Soo", which the problem does not name
        ("Soo-ah buys 12 tickets. She uses 5 of them. How many tickets does Soo-ah have left?", ["Soo-ah"]),
        ("Jean-Luc gave 4 pens to Tobias. How many pens does he have left if he had 10?", ["Jean-Luc", "Tobias"]),
        ("Two-thirds of the 30 students walk to school. How many students walk?", []),
    ],
)
def test_people_detection(question, expected):
    assert names(question) == expected


def test_a_name_at_the_start_of_a_solution_line_is_not_a_thing():
    # "... = 100" then a line starting with the name: the number ends the previous line, it does not count the name
    question = "Arthur sells 2,000 cards at 5 cents each. How many $6 comic books can he buy?"
    solution = "Arthur makes $100 because .05 x 2000 = 100\nArthur can buy 16 comic books because 100 / 6 = 16\n#### 16"
    assert names(question, solution) == ["Arthur"]


def test_solution_confirms_a_name_used_only_at_sentence_starts():
    question = "Oyelaran collects 20 shells. How many shells does she have after finding 5 more?"
    assert names(question, solution="Oyelaran has 20 + 5 = 25 shells.") == ["Oyelaran"]


def test_gender_comes_from_lexicon_or_title():
    people = find_people("Mrs. Adeyemi and Tom buy 4 pies. How many pies do Mrs. Adeyemi and Tom have?", "", LEX)
    assert [(p.name, p.gender) for p in people] == [("Mrs. Adeyemi", "f"), ("Tom", "m")]


def test_overlapping_roles_are_derived_from_the_problem_people():
    question = "Jewel has 12 beads. How many beads does she have after buying 30?"
    people = find_people(question, "", LEX)
    roles = overlapping_roles(people, PAPER_RELATIONS, [])
    assert roles == ["Jewel's brother", "Jewel's father", "Jewel's mother", "Jewel's neighbor", "Jewel's sister"]  # the paper's relations
    assert all(role_label(r, ["Jewel"], question, "") == "overlapped" for r in roles)
    # a relation the problem already names is never a role ("Mike's sister" beside Mike's sister Barbara)
    present = relations_in_problem("Mike and his sister Barbara have 8 kites. Their parents buy 2 more.", PAPER_RELATIONS)
    assert present == ["father", "mother", "sister"]
    assert overlapping_roles(people, PAPER_RELATIONS, present) == ["Jewel's brother", "Jewel's neighbor"]


def test_nonoverlapping_names_avoid_every_word_of_the_problem():
    question = "Felix and Greta have 5 pens. How many pens does Felix have if Greta has 2?"
    solution = "Felix has 5 - 2 = 3 pens. Ada checks it."
    found = nonoverlapping_names(question, solution, PAPER_NAMES)
    assert found == ["David", "Emma", "Jack", "John", "Mary", "Max", "Tom"]  # the paper's names less "Ada"
    assert all(role_label(n, ["Felix", "Greta"], question, solution) == "nonoverlapped" for n in found)


def test_role_label_replay():
    question, people = "Mr. Okafor drives 45 miles. How far does he drive?", ["Mr. Okafor"]
    assert role_label("Mr. Okafor's uncle", people, question, "") == "overlapped"
    assert role_label("Nadia", people, question, "") == "nonoverlapped"
    assert role_label("Jo", ["John"], "John has 5 pens.", "") == "nonoverlapped"  # whole words only
    # neither: a relation of someone who is not a person of the problem, or a bare name the problem uses
    assert role_label("Nadia's aunt", people, question, "") is None
    assert role_label("Okafor", people, question, "") is None
    assert role_label("Nadia", people, question, "Nadia checks: 45 miles.") is None


def test_count_rule_of_release_1_0_0_counts_keywords_and_breaks_ties_by_listed_order():
    templates = load_templates()
    topic, hits = count_rule("Lena bakes 12 cookies and 3 cakes, then eats 2 cookies. How many cookies are left?", templates)
    assert topic == "food" and hits == ["bakes", "cakes", "cookies", "cookies", "cookies", "eats"]
    assert count_rule("Nadia has 5 things. How many?", templates) == (None, [])
    # one keyword each for "age" and "animals": the topic listed first wins
    assert count_rule("Nadia is older than her dog.", templates)[0] == "age"


def rule(**changes) -> TopicRule:
    return load_topic_rule().model_copy(update=changes)


def test_keyword_rule_weighs_keywords_the_question_sentence_and_the_longest_span():
    templates, topic_rule = load_templates(), load_topic_rule()
    topic, hits = assign_topic("Lena bakes 12 cookies and 3 cakes, then eats 2 cookies. How many cookies are left?", templates, topic_rule)
    assert topic == "food" and hits == ["bakes", "cakes", "cookies", "cookies", "cookies", "eats"]
    assert assign_topic("Nadia has 5 things. How many?", templates, topic_rule) == (None, [])
    assert assign_topic("Nadia is older than her dog.", templates, topic_rule)[0] == "age"  # a tie: listed first
    # "bought" and "cost" weigh less than the subject's own words: a purchase of cookies is about food
    purchase = "Lena bought 3 cookies for $2. She paid with $5. How much did the cookies cost?"
    assert count_rule(purchase, templates)[0] == "shopping" and assign_topic(purchase, templates, topic_rule)[0] == "food"
    # "model trains" is one span: it is not the travel keyword "trains"
    assert assign_topic("Max has 4 model trains. How many model trains does he have?", templates, topic_rule)[0] == "crafts"
    # one keyword of each topic; the one in the question sentence counts question_weight times
    text = "Lena has a dog. How many cookies does she have?"
    assert assign_topic(text, templates, topic_rule)[0] == "food"
    assert assign_topic(text, templates, rule(question_weight=1.0))[0] == "animals"


def test_topic_rule_file_names_only_topics_and_keywords_it_has(tmp_path):
    import json

    from ctxrobust.builders.gsm_ic import lexicon

    data = json.loads((lexicon.HERE / "topic_rule.json").read_text(encoding="utf-8"))
    data["weights"]["food"]["no such keyword"] = 2
    path = tmp_path / "topic_rule.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="food: weights for keywords the topic lacks"):
        lexicon.load_topic_rule.__wrapped__(path)


def test_every_topic_has_off_topic_templates_and_every_default_base_its_own_in_topic_ones():
    templates, reviewed = load_templates(), load_reviewed()
    for topic in templates.topics:
        outside = off_topic_templates(topic.name, templates)
        # out-of-range numbers can be very large: every topic keeps templates that read naturally with numbers into
        # the millions (a city's people, a song's streams, an ID), while a person's own things are bounded
        assert len(outside) >= 10 and sum(t.max is None or t.max >= 1_000_000 for t in outside) >= 8, topic.name
        assert all(sentence_label(t.topics, topic.name) == "off_topic" for t in outside)
        inside = in_topic_templates(topic.name, templates)
        assert all(sentence_label(t.topics, topic.name) == "in_topic" for t in inside)
    bounded = {t.id: t.max for t in templates.off_topic}
    assert all(bounded[i] is not None and bounded[i] <= 100_000 for i in ("off-2", "off-6", "off-15", "off-17", "off-22", "off-25")), (
        bounded
    )
    # idiomatic wording: "Ada's phone holds 40 photos.", not "Ada has 40 photos on a phone."
    assert not any(re.search(r"\bon a phone\b|\bin a collection\b", t.text) for t in templates.off_topic)
    # four in-topic templates written for each reviewed base problem (paper, Appendix A), tagged with its topic
    assert len(reviewed.problems) >= 100
    for base_id, entry in reviewed.problems.items():
        own = reviewed.templates_of(base_id)
        assert len(own) == 4 and len({t.text for t in own}) == 4, base_id
        assert all(sentence_label(t.topics, entry.topic) == "in_topic" for t in own)
        # bounded to the magnitudes each reads naturally with ("owns 500 watches"; a town's or a factory's
        # quantities unbounded): every default base problem's templates carry their bounds
        assert entry.max is None or len(entry.max) == 4, base_id
        # written to read as English: "Javier's farm", never "the farm of Javier"; no "it" and no relation words
        assert not any(re.search(r"\bof \{role\}|\bit\b|father|mother|brother|sister|neighbor", t.text) for t in own), base_id
        assert all(sentence_label(t.topics, topic.name) == "in_topic" for t in inside)
        assert all(sentence_label(t.topics, topic.name) == "off_topic" for t in outside)
    assert sum(entry.max is not None for entry in reviewed.problems.values()) >= 100


def test_paper_names_are_not_english_words_of_the_stop_list_and_census_names_are_known():
    assert not {n.lower() for n in PAPER_NAMES} & LEX.stop
    assert {"Charles", "Barbara", "Javier"} <= LEX.known_names and LEX.gender_of("Charles") == "m"
    # a census name that is a common English word needs evidence of a person
    assert "Will" in LEX.ambiguous and "Will" not in LEX.known_names
    assert names("Charles has 4 boxes. He gives 1 away. How many boxes does he have?") == ["Charles"]


def questions_of(store) -> dict[str, str]:
    from ctxrobust.sources import gsm8k

    return {gsm8k.base_id(r.line): r.question for r in gsm8k.read_pool(store.path(gsm8k.POOL))}


def test_keyword_topic_rule_against_the_maintainers_samples_of_the_pool(store):
    """The keyword rule (topics.py, topic_rule.json) gives problems without a reviewed entry their topic, or leaves
    it undecided; reviewed.json holds the maintainers' topics for uniform samples of other pool problems, a tuning part
    (topic_sample) and a held-out part (topic_held_out) the rule was not tuned on. The figures measured here (agreement
    among decided problems, and coverage) are the ones README, card and review.md report."""
    reviewed = load_reviewed()
    assert len(reviewed.topic_sample) == 290 and len(reviewed.topic_held_out) >= 100
    assert not set(reviewed.topic_sample) & set(reviewed.topic_held_out)
    assert not (set(reviewed.topic_sample) | set(reviewed.topic_held_out)) & set(reviewed.problems)
    questions = questions_of(store)
    tuning, held_out = measure(reviewed.topic_sample, questions), measure(reviewed.topic_held_out, questions)
    assert (tuning.agreeing, tuning.decided, tuning.total) == TUNING, tuning
    assert (held_out.agreeing, held_out.decided, held_out.total) == HELD_OUT, held_out
    # the undecided rule, deciding every problem by its leading topic, is the keyword rule of before
    templates, topic_rule = load_templates(), load_topic_rule()
    leading = measure(reviewed.topic_sample, questions, lambda q: assign_topic(q, templates, topic_rule)[0])
    assert (leading.agreeing, leading.decided) == (261, 288)


TUNING = (151, 155, 290)  # 97.4% of the decided, 53% decided (thresholds tuned on this part only)
HELD_OUT = (45, 49, 110)  # 91.8% of the decided, 45% decided (measured once); the 95% target is not met
SECOND_HELD_OUT = (83, 103, 200)  # 80.6% of the decided, 51.5% decided (labelled after the rule was fixed, measured once)


def test_every_pool_problem_has_the_maintainers_topic_and_the_labels_reliability_is_measured(store):
    """Every pool id has a reviewed entry or a topic label, in exactly one part, so the keyword rule decides only
    for base_file problems; the second held-out part is measured like the first; the held-out part labelled twice
    agrees with itself on 90 of 110, the ceiling any rule's agreement with one labelling is read against."""
    reviewed = load_reviewed()
    questions = questions_of(store)
    parts = [set(reviewed.problems)] + [set(getattr(reviewed, part)) for part in TOPIC_PARTS]
    assert sum(map(len, parts)) == len(set().union(*parts)) == len(questions) == 1000
    second = measure(reviewed.topic_second_held_out, questions)
    assert (second.agreeing, second.decided, second.total) == SECOND_HELD_OUT, second
    again = reviewed.topic_held_out_relabelled
    assert sum(again[i] == topic for i, topic in reviewed.topic_held_out.items()) == 90
    pool = reviewed.topic_pool_sha256
    assert pool == store.snapshot(POOL).sha256  # the labels are of the locked pool file
    assert all(reviewed.pool_topic(i, pool)[0] == topic for i, topic in reviewed.topic_rest.items())
    assert reviewed.pool_topic("pool-0001", pool) is None  # a reviewed entry, not a label
    assert reviewed.pool_topic(next(iter(reviewed.topic_rest)), "0" * 64) is None  # another pool file: other problems


def test_measure_counts_agreement_among_decided_problems_and_coverage():
    labels = {"pool-0001": "food", "pool-0002": "sports", "pool-0003": "money", "pool-0004": "age"}
    questions = {k: k for k in labels}
    answers = {"pool-0001": "food", "pool-0002": "travel", "pool-0003": None, "pool-0004": "age"}
    result = measure(labels, questions, answers.get)
    assert (result.agreeing, result.decided, result.total) == (2, 3, 4)
    assert result.agreement == pytest.approx(2 / 3) and result.coverage == 0.75
    with pytest.raises(ValueError, match="no question for labelled ids"):
        measure({"pool-0009": "food"}, questions, answers.get)


def test_topic_decision_needs_clear_evidence_and_records_why_not():
    templates, topic_rule = load_templates(), load_topic_rule()
    clear = decide_topic("Lena bakes 12 cookies and 3 cakes, then eats 2 cookies. How many cookies are left?", templates, topic_rule)
    assert clear.topic == "food" and clear.undecided is None
    assert clear.evidence().startswith("food ") and "distinct keywords" in clear.evidence()
    # no keyword at all
    none = decide_topic("Nadia has 5 things. How many?", templates, topic_rule)
    assert none.topic is None and none.leader is None and none.undecided == "no topic keyword in the question"
    # one keyword, however often: "cookies" three times is one distinct keyword
    single = decide_topic("Lena has 4 cookies. Max has 2 cookies. How many cookies do they have?", templates, topic_rule)
    assert single.topic is None and single.leader == "food" and "1 distinct keyword(s) (cookies), fewer than 2" in single.undecided
    # two topics about even: the lead is under the margin
    close = decide_topic("Lena bakes 3 cakes and rides 2 horses to eat. How many horses and dogs are there?", templates, topic_rule)
    assert close.topic is None and close.undecided == "the leading topic animals (4.00) leads food (3.00) by 25%, under 45%"
    # two keywords, but little weight
    weak = decide_topic("Lena has a dog and a cat. She has 3 more. How many are there?", templates, topic_rule)
    assert weak.topic is None and weak.undecided == "the leading topic animals totals 2.00, under 2.5"
    looser = rule(decision=topic_rule.decision.model_copy(update={"min_margin": 0.0, "min_score": 0.0, "min_distinct_keywords": 1}))
    assert decide_topic("Lena has 4 cookies. How many cookies?", templates, looser).topic == "food"


def test_a_labelled_pool_problem_takes_its_label_where_the_keyword_rule_is_undecided(store):
    reviewed, templates, topic_rule, lexicon = load_reviewed(), load_templates(), load_topic_rule(), load_lexicon()
    questions = questions_of(store)
    pool = store.snapshot(POOL).sha256
    undecided = [i for i in sorted(reviewed.topic_rest) if decide_topic(questions[i], templates, topic_rule).topic is None]
    assert len(undecided) > 100  # the rule alone would leave these unusable
    for base_id in undecided[:5]:
        result = analyse(questions[base_id], "#### 1", "1", lexicon, templates, reviewed, base_id, pool_sha256=pool)
        assert (result.topic, result.topic_source) == (reviewed.topic_rest[base_id], "reviewed")
        assert result.topic_evidence == "reviewed.json topic_rest label"
        assert not [kind for kind, _ in result.problems if kind in ("topic_undecided", "no_topic")]
    # the same question from a base_file is not a pool problem: no label applies
    from_file = analyse(
        questions[undecided[0]], "#### 1", "1", lexicon, templates, reviewed, undecided[0], from_file=True, pool_sha256=pool
    )
    assert from_file.topic_source != "reviewed"
