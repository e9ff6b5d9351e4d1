"""ppo's history feature (baselines/ppo/history.py): the compiled facts equal KnowledgeTracker's at
every decision of self-play, at tables with and without the boneyard and the cover rule."""

from __future__ import annotations

import numpy as np
import pytest
from test_hidden import TABLE_IDS, TABLES, decisions

from baselines.ppo.history import PassFacts, history_size
from dominoes_env.core.observation import observation_layout


@pytest.mark.parametrize("num_players, highest, table_rules", TABLES, ids=TABLE_IDS)
def test_the_compiled_facts_are_the_trackers_at_every_decision(num_players, highest, table_rules):
    facts, hand, on_table, checked, proved = None, None, 0, 0, 0
    for env, seat, observation, knowledge in decisions(num_players, highest, 4, **table_rules):
        if facts is None:
            facts = PassFacts(env.game.config, games=2)
        tiles_down = int(observation_layout(env.game.config).views(observation["observation"])["played"].sum())
        if env.game.hand_index != hand or tiles_down < on_table:  # a new hand, or a new game
            facts.reset()  # as a policy is reset at each hand
        hand, on_table = env.game.hand_index, tiles_down
        row = facts.observe(observation["observation"][None], np.array([1]), np.array([seat]))
        expected = knowledge.forbidden[1:].reshape(1, -1).astype(np.int8)
        assert np.array_equal(row, expected), f"seat {seat}: facts differ from the tracker's"
        checked += 1
        proved += int(expected.sum() > 0)
    assert checked > 50 and proved > 0  # the facts were read, and some said something
    assert row.shape[1] == history_size(env.game.config, "passes")


@pytest.mark.parametrize("num_players, highest, table_rules", [(4, 9, {}), (6, 12, {"rules": "mexican_train"}),
                                                               (3, 6, {})], ids=["4p-d9", "6p-d12-mt", "3p-d6"])
def test_never_reset_the_facts_see_each_new_hand_and_game_themselves(num_players, highest, table_rules):
    """The trainer resets a game's facts when the engine deals it anew; a game of several hands deals
    without one: the kernel must see a new hand by itself, as the tracker does."""
    facts = None
    for env, seat, observation, knowledge in decisions(num_players, highest, 3, **table_rules):
        facts = facts or PassFacts(env.game.config, games=1)
        row = facts.observe(observation["observation"][None], np.array([0]), np.array([seat]))
        assert np.array_equal(row, knowledge.forbidden[1:].reshape(1, -1).astype(np.int8))
