"""Question-sentence location, pronoun rewording and insertion replay (paper Tab. 1, App. A)."""

import pytest

from ctxrobust.builders.gsm_ic.insertion import (
    KeptPronoun,
    Unresolved,
    apply_edits,
    insert_sentence,
    pronoun_edits,
    question_sentence_start,
    sentence_starts,
)
from ctxrobust.builders.gsm_ic.lexicon import load_lexicon
from ctxrobust.builders.gsm_ic.roles import find_people

LEX = load_lexicon()


def reword(question):
    edits = [e.as_row() for e in pronoun_edits(question, find_people(question, "", LEX))]
    return apply_edits(question, edits), edits


def test_sentences_do_not_break_at_decimals_titles_or_times():
    text = "Mr. Okafor paid $3.50 at 6:30 a.m. on Monday.  He left. How much did he pay?"
    starts = sentence_starts(text)
    assert [text[s : s + 4] for s in starts] == ["Mr. ", "He l", "How "]


def test_question_sentence_is_the_last_with_a_question_mark():
    text = "Lena has 5 pens. How many pens does she have? Answer in pens."
    assert text[question_sentence_start(text) :].startswith("How many")


def test_question_sentence_without_question_mark_is_the_last_sentence():
    text = "Lena bought 400 beads at 4 cents each. Calculate the total she paid."
    assert text[question_sentence_start(text) :] == "Calculate the total she paid."


def test_single_sentence_problem_inserts_at_the_start():
    text = "If Lena has 5 pens and buys 3, how many pens does Lena have?"
    assert question_sentence_start(text) == 0
    assert insert_sentence(text, 0, "Nadia owns 9 houseplants.") == "Nadia owns 9 houseplants. " + text


def test_double_spaces_are_kept_around_the_inserted_sentence():
    text = "Lena has 5 pens.  How many pens does Lena have?"
    offset = question_sentence_start(text)
    assert insert_sentence(text, offset, "Nadia owns 9 houseplants.") == (
        "Lena has 5 pens.  Nadia owns 9 houseplants. How many pens does Lena have?"
    )


@pytest.mark.parametrize(
    "question, expected",
    [
        (
            "John trades in 100 VHS tapes. If he gets $2 each, how much does he get?",
            "John trades in 100 VHS tapes. If John gets $2 each, how much does he get?",
        ),
        ("Maria spends $8 on soap. How much will she spend in a year?", "Maria spends $8 on soap. How much will Maria spend in a year?"),
        ("Tom earns $5 a day. How much do his savings grow in a week?", "Tom earns $5 a day. How much do Tom's savings grow in a week?"),
        ("Lena earns $5 a day. How much does it cost her to save $40?", "Lena earns $5 a day. How much does it cost Lena to save $40?"),
        (
            "Lena earns $5 a day. How many days until her savings reach $40?",
            "Lena earns $5 a day. How many days until Lena's savings reach $40?",
        ),
        (
            "Lena earns $5 a day. How many days until Lena can spend her $40?",
            "Lena earns $5 a day. How many days until Lena can spend her $40?",
        ),
        (
            "Mrs. Adeyemi and Tom each have 6 eggs. How many eggs will she have after buying 4?",
            "Mrs. Adeyemi and Tom each have 6 eggs. How many eggs will Mrs. Adeyemi have after buying 4?",
        ),
    ],
)
def test_question_pronoun_is_replaced_by_the_name(question, expected):
    edited, edits = reword(question)
    assert edited == expected
    if question == expected:
        assert edits == []
    else:
        (edit,) = edits
        assert question[edit["start"] : edit["end"]] == edit["old"]


def test_pronoun_with_two_possible_people_is_unresolved():
    with pytest.raises(Unresolved, match="'he'"):
        reword("Tom and Ben have 6 eggs each. How many will he have after buying 4?")


def test_a_pronoun_that_could_be_someone_named_only_by_a_relation_is_kept():
    # "she" is the mom, not Lena: no name replaces it, and no female role is inserted (the question stays unambiguous)
    question = (
        "While preparing balloons for Lena's party, her mom bought 40 balloons. She fills 8 balloons an hour. "
        "If she filled every balloon, how many hours did she work?"
    )
    with pytest.raises(KeptPronoun, match="Lena or the problem's 'mom'"):
        reword(question)
    from ctxrobust.builders.gsm_ic.analysis import analyse
    from ctxrobust.builders.gsm_ic.lexicon import load_templates

    analysis = analyse(question, "40 / 8 = 5\n#### 5", "5", LEX, load_templates())
    assert analysis.edits == [] and analysis.open_pronouns == ["f"] and "mom" in analysis.pronoun_kept
    assert not [kind for kind, _ in analysis.problems if kind.startswith("pronoun")]
    # a relation of the other gender leaves the pronoun's antecedent unambiguous
    edited, _ = reword("While preparing balloons for Lena's party, her dad bought 40 balloons. How many did she fill?")
    assert edited.endswith("How many did Lena fill?")


def test_pronoun_resolved_by_gender_when_one_person_fits():
    edited, _ = reword("Tom and Lena have 6 eggs each. How many will she have after buying 4?")
    assert edited.endswith("How many will Lena have after buying 4?")


def test_a_person_of_unknown_gender_keeps_the_pronoun_ambiguous():
    # Katelyn is not in the lexicon: she may be the "she" as well as Chloe, so nothing is guessed
    question = "Chloe made 49 sandwiches; Katelyn made 47 more than Chloe. How many did she make?"
    assert [p.name for p in find_people(question, "Katelyn made 49 + 47 = 96.", LEX)] == ["Chloe", "Katelyn"]
    with pytest.raises(Unresolved, match="Chloe, Katelyn"):
        pronoun_edits(question, find_people(question, "Katelyn made 49 + 47 = 96.", LEX))


def test_apply_edits_rejects_stale_or_overlapping_edits():
    text = "How much does he get?"
    assert text[14:16] == "he"
    assert apply_edits(text, [{"start": 14, "end": 16, "old": "he", "new": "John"}]) == "How much does John get?"
    with pytest.raises(ValueError, match="expects"):
        apply_edits(text, [{"start": 14, "end": 16, "old": "she", "new": "John"}])
    with pytest.raises(ValueError, match="overlaps"):
        apply_edits(text, [{"start": 9, "end": 15, "old": "does h", "new": ""}, {"start": 14, "end": 16, "old": "he", "new": "x"}])
