"""Beliefs about the hidden tiles (baselines.inference): the shape and the hard facts at every
decision of real hands, the uniform kind equal to the exact sampler's marginals (by listing every
agreeing deal on small tables, and against the samples' frequencies on larger ones), beliefs that
depend on what the player sees only, and the ways a kind is chosen or refused."""

from __future__ import annotations

import numpy as np
import pytest
from test_hidden import consistent_deals, decisions, true_places

import dominoes_env
from baselines.inference import DEFAULT_KIND, KINDS, UniformBeliefs, default_kind, make_beliefs
from dominoes_env.core import rules
from dominoes_env.core.hidden import BONEYARD, HandKnowledge, deal_marginals, sample_deals, sampled_positions
from dominoes_env.core.observation import Observer, observation_layout

TABLES = [(4, 9, {}), (3, 6, {"boneyard": True}), (4, 12, {"rules": "mexican_train"}),
          (2, 12, {"rules": "mexican_train"}), (6, 12, {"rules": "mexican_train"})]


def believed(knowledge: HandKnowledge) -> np.ndarray:
    """The uniform kind's probabilities at the position `knowledge` is of (one observation's facts kept)."""
    beliefs = UniformBeliefs(knowledge.config)
    beliefs.knowledge = knowledge
    return beliefs.probabilities()


@pytest.mark.parametrize("num_players, highest, table_rules", TABLES)
def test_every_hidden_tile_sums_to_one_and_every_hard_fact_holds(num_players, highest, table_rules):
    checked = 0
    for env, seat, _, knowledge in decisions(num_players, highest, 3, policy="random", **table_rules):
        probabilities = believed(knowledge)
        config = knowledge.config
        assert probabilities.shape == (config.num_tiles, num_players + 1)
        hidden = knowledge.hidden
        visible = np.setdiff1d(np.arange(config.num_tiles), hidden)
        assert np.allclose(probabilities[hidden].sum(axis=1), 1.0) and not probabilities[visible].any()
        assert not probabilities[:, 0].any()  # the player's own hand is seen
        assert (probabilities >= 0).all()
        if not config.boneyard or knowledge.boneyard == 0:
            assert not probabilities[:, num_players].any()
        for place in range(1, num_players):
            if knowledge.hand_sizes[place] == 0:
                assert not probabilities[:, place].any()
            values = np.flatnonzero(knowledge.forbidden[place])
            ruled_out = np.isin(config.tiles.low, values) | np.isin(config.tiles.high, values)
            assert not probabilities[ruled_out, place].any()
        truth = true_places(env, seat, knowledge)
        places = np.where(truth == BONEYARD, num_players, truth)
        assert (probabilities[hidden, places] > 0).all()  # the truth is never ruled out
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("num_players, table_rules", [(3, {}), (2, {"boneyard": True}), (3, {"boneyard": True}),
                                                      (4, {"boneyard": True})])
def test_the_uniform_kind_is_the_exact_distribution_of_the_agreeing_deals(num_players, table_rules):
    """On double-six tables, at positions where passes ruled deals out, every agreeing deal is listed:
    the share of them that puts each tile at each place is the uniform kind's probability."""
    tested = 0
    for *_, knowledge in decisions(num_players, 6, 30, policy="random", **table_rules):
        if not knowledge.forbidden.any() or knowledge.hidden.shape[0] > 11:
            continue
        deals = np.array(consistent_deals(knowledge))
        places = np.where(deals == BONEYARD, num_players, deals)
        listed = np.stack([(places == place).mean(axis=0) for place in range(num_players + 1)], axis=1)
        assert np.allclose(deal_marginals(knowledge), listed, atol=1e-12)
        assert np.allclose(believed(knowledge)[knowledge.hidden], listed, atol=1e-12)
        tested += 1
        if tested == 12:
            break
    assert tested >= 4


def test_the_uniform_kind_matches_the_samplers_frequencies_on_a_larger_table():
    rng = np.random.default_rng(11)
    tested = 0
    for *_, knowledge in decisions(6, 12, 2, policy="random", rules="mexican_train"):
        if not knowledge.forbidden.any():
            continue
        n = knowledge.config.num_players
        samples = sample_deals(knowledge, rng, 4000)
        places = np.where(samples == BONEYARD, n, samples)
        frequencies = np.stack([(places == place).mean(axis=0) for place in range(n + 1)], axis=1)
        assert np.abs(frequencies - deal_marginals(knowledge)).max() < 0.035  # 4,000 draws: a few standard errors
        tested += 1
        if tested == 5:
            break
    assert tested >= 3


def test_beliefs_depend_on_what_the_player_sees_only():
    """A world sampled from the player's facts (other hidden tiles, other hands) shows the player
    the same observation, so the beliefs are the same; and the same observations give the same
    beliefs whatever object takes them."""
    config = dominoes_env.make_config(4, 9)
    rng = np.random.default_rng(5)
    compared = 0
    fields = observation_layout(config)
    other_worlds = 0
    for env, seat, _, knowledge in decisions(4, 9, 1, policy="random"):
        world = sampled_positions(knowledge, rng, 1)[0]  # the player is seat 0 there, to move
        seen = Observer(config, 1).encode(world.state, 0, np.zeros(4, dtype=np.int64))[:fields.size]
        assert np.array_equal(seen, knowledge.observation[:fields.size])
        owners = np.asarray(world.state[rules.HEADER_SIZE + knowledge.hidden])
        placed = np.where(owners == rules.IN_BONEYARD, BONEYARD, owners)
        other_worlds += not np.array_equal(placed, true_places(env, seat, knowledge))
        first, second = make_beliefs(config), make_beliefs(config)
        for beliefs in (first, second):
            beliefs.observe(knowledge.observation)
        assert np.array_equal(first.probabilities(), second.probabilities())
        compared += 1
    assert compared > 10 and other_worlds > compared // 2  # most sampled worlds are not the true one


def test_a_kind_is_named_or_given_as_a_factory_and_anything_else_is_one_line():
    config = dominoes_env.make_config(4, 9)
    assert DEFAULT_KIND in KINDS and isinstance(make_beliefs(config), KINDS[default_kind(config)])
    assert default_kind(dominoes_env.make_config(3, 6)) == "uniform"  # no network ships for this table
    made = []

    def own(table):
        beliefs = UniformBeliefs(table)
        made.append(beliefs)
        return beliefs

    assert make_beliefs(config, own) is made[0]
    known = "kind must be one of ['network', 'network+policy', 'policy', 'uniform'] or a factory of beliefs"
    for kind, message in (("psychic", f"{known}, got 'psychic'"), (3, f"{known}, got 3"),
                          (lambda table: object(), "lack reset, observe, probabilities")):
        with pytest.raises(ValueError) as refused:
            make_beliefs(config, kind)
        assert message in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="config must be a GameConfig"):
        make_beliefs("4p_d9")
    with pytest.raises(ValueError, match="no observation yet"):
        make_beliefs(config).probabilities()


def test_a_new_hand_forgets_the_last_hands_facts():
    beliefs = make_beliefs(dominoes_env.make_config(3, 6))
    last = None
    for env, seat, observation, knowledge in decisions(3, 6, 2, policy="random"):
        if seat != 0:
            continue
        if last is not None and env.game.hand_index != last:
            beliefs.reset()
        last = env.game.hand_index
        beliefs.observe(observation["observation"])
        assert np.allclose(beliefs.probabilities()[knowledge.hidden], deal_marginals(knowledge))
