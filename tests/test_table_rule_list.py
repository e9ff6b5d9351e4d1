"""The table rules are declared once (``TABLE_RULES``): the typed copies agree with it, and the
config, the words, the command line and the docs' table are read from it."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from pathlib import Path

import pytest

from baselines.command_line import options
from dominoes_env.core import rules as engine
from dominoes_env.core.config import (
    TABLE_RULES,
    GameConfig,
    TableRuleOptions,
    make_config,
    table_arguments,
    table_of,
    table_rule_options,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "table_rules.md"


def test_the_typed_copies_name_the_same_rules_in_the_same_order_with_the_same_defaults():
    fields = dataclasses.fields(GameConfig)[2:]  # after the table's size
    assert [(field.name, field.default) for field in fields] == [(rule.name, rule.default) for rule in TABLE_RULES]
    assert list(TableRuleOptions.__annotations__) == ["rules"] + [rule.name for rule in TABLE_RULES]


def test_every_rule_is_one_bit_of_the_engine_and_has_two_values():
    bits = [getattr(engine, rule.engine_flag) for rule in TABLE_RULES]
    assert all(bit > 0 and bit & (bit - 1) == 0 for bit in bits) and len(set(bits)) == len(bits)
    assert all(len(rule.values) == 2 and rule.values[0] != rule.values[1] for rule in TABLE_RULES)
    for rule in TABLE_RULES:  # the bit is set exactly when the rule is off the rule book's value
        assert make_config(4, 9).rule_flags & getattr(engine, rule.engine_flag) == 0
        assert make_config(4, 9, **{rule.name: rule.values[1]}).rule_flags == getattr(engine, rule.engine_flag)


def every_table():
    for values in itertools.product(*(rule.values for rule in TABLE_RULES)):
        yield make_config(5, 12, **dict(zip((rule.name for rule in TABLE_RULES), values)))


@pytest.mark.parametrize("config", list(every_table()), ids=lambda config: config.rules_text())
def test_each_table_goes_through_the_command_line_and_back(config):
    parser = argparse.ArgumentParser()
    options.add_table_options(parser)
    assert options.table(parser.parse_args(table_arguments(config).split())) == config
    assert make_config(**config.options()) == config
    words = config.rules_text()
    assert all((rule.words in words) == (getattr(config, rule.name) != rule.default) for rule in TABLE_RULES)


def test_the_command_line_offers_each_rule_with_its_help():
    parser = argparse.ArgumentParser()
    options.add_table_options(parser)
    text = " ".join(parser.format_help().split())
    for rule in TABLE_RULES:
        assert rule.option in text and " ".join(rule.help.split()) in text


def test_a_value_a_rule_does_not_have_and_a_keyword_that_is_no_rule_are_refused_in_one_line():
    for rule in TABLE_RULES:
        with pytest.raises(ValueError, match=f"^{rule.name}") as error:
            make_config(4, 9, **{rule.name: "sometimes"})
        assert "\n" not in str(error.value)
    with pytest.raises(TypeError, match=r"\['bonyard'\]; the table rules are \['boneyard'"):
        make_config(4, 9, bonyard=True)
    with pytest.raises(TypeError, match=r"\['bonyard'\]"):
        table_of(make_config(4, 9), table_rules={"bonyard": True})


def test_the_docs_print_the_table_the_declaration_gives():
    assert table_rule_options() in DOCS.read_text()
