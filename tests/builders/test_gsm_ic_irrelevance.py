"""The irrelevance rules of builders/gsm_ic/irrelevance.py on questions written for these tests."""

import pytest

from ctxrobust.builders.gsm_ic import irrelevance as ir
from ctxrobust.builders.gsm_ic.builder import PAPER_RELATIONS


@pytest.mark.parametrize(
    "question, problem, expected",
    [
        ("How many marbles does James have left?", "", ["marble"]),
        ("How many trading cards does Keith have now?", "", ["card", "trading"]),
        ("How many cards did the shop sell?", "", ["$", "card", "cent", "dollar", "money", "shop", "store"]),  # selling: money; "the shop"
        ("How much money does Lena have left?", "", ["$", "cent", "dollar", "money"]),
        ("How long did the trip take?", "The trip took 3 hours and 20 minutes.", ["hour", "minute", "trip"]),
        ("How far does Ada walk in 5 days?", "Ada walks 2 miles a day.", ["day", "mile"]),
        ("What is Ral's current age?", "", ["age", "current", "old", "year"]),
        ("What is the total number of pages in the book?", "", ["book", "page"]),
    ],
)
def test_target_words_name_the_questions_object_and_units(question, problem, expected):
    assert ir.target_words(question, problem) == expected


def test_a_sentence_naming_the_target_is_caught_singular_or_plural():
    targets = ir.target_words("How many marbles does James have left?", "")
    assert ir.names_target("James's brother has 59 marbles in a jar.", targets) == ["marble"]
    assert ir.names_target("James's brother has a marble run.", targets) == ["marble"]
    assert ir.names_target("James's brother has 59 stamps.", targets) == []
    assert ir.normal("cherries") == "cherry" and ir.normal("boxes") == "box" and ir.normal("feet") == "foot"


def test_money_questions_and_money_sentences():
    assert ir.is_money_question("How much did he pay for everything?", "")
    assert ir.is_money_question("What is the total bill?", "")
    assert not ir.is_money_question("How many years of experience does Bill have?", "")  # "Bill" is a name
    assert ir.is_money_question("How much is he out of pocket?", "He is out 10000 + 20000 = $30000.\n#### 30000")
    assert not ir.is_money_question("How many pencils does Lena have?", "")
    assert ir.template_gives_money("{role} has {money} in a savings account.")
    assert ir.template_gives_money("{role} donated {number} coins.")
    assert not ir.template_gives_money("{role} has {number} stamps.")  # the role "Bill" fills no money word


def test_relations_already_in_the_problem():
    problem = "Mike is 16. His sister Barbara is half as old. Their neighbors have a dog. Dan's son is 4."
    assert ir.relations_in_problem(problem, PAPER_RELATIONS) == ["father", "mother", "neighbor", "sister"]
    assert ir.relations_in_problem("Lena buys 4 pens.", PAPER_RELATIONS) == []


def test_an_it_of_the_question_or_a_pronoun_no_name_carries():
    assert ir.ambiguous_it("How many minutes did it take?") == "it"
    assert ir.ambiguous_it("How long will it take Carla to cook 3 steaks?") is None  # "it takes ... to"
    assert ir.ambiguous_it("How many pens does Lena have?") is None
    people = [("Lena", "f"), ("Tom", "m")]
    assert ir.open_pronoun_genders("How much does Lena spend on her books?", people) == []
    assert ir.open_pronoun_genders("How much does she spend?", people) == ["f"]
    assert ir.open_pronoun_genders("If Tom gives her 3 pens, how many does she have?", people) == ["f"]
    genders = {"Ada": "f", "Tom": "m"}
    assert ir.role_gender("Mike's sister", genders) == "f" and ir.role_gender("Tom", genders) == "m"
    assert ir.role_gender("Mike's neighbor", genders) is None


@pytest.mark.parametrize(
    "question, named",
    [
        ("How tall is the building?", {"building"}),
        ("What's the total number of visitors who went to the library that week?", {"library"}),
        ("How fast does Tom ride his bike?", {"bike", "bicycle"}),  # a synonym is named too
        ("If the discount Maria received is $40, how much did she pay?", {"discount"}),  # a name is no thing
        ("In how many months will the car be fully paid for?", {"car", "automobile"}),
        ("If he packs the rest into bags of 60, how many bags does he fill?", set()),
    ],
)
def test_things_the_question_names_with_the_or_a_possessive_are_targets(question, named):
    assert ir.definite_nouns(question) == named
    assert named <= set(ir.target_words(question, ""))
    if named:
        assert ir.names_target(f"John's {sorted(named)[0]} is new.", ir.target_words(question, ""))
