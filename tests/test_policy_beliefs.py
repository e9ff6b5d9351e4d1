"""Policy-based beliefs (baselines.inference.policy): the opponents' moves read from the player's
observations agree with the real history, the beliefs keep every hard fact and sum to 1, depend on
what the player sees only, are the uniform kind's when the model says nothing, move toward what a
play shows when it is sharp, and bad arguments are refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
from test_hidden import decisions, true_places

import dominoes_env
from baselines.inference import KINDS, NetworkPolicyBeliefs, PolicyBeliefs, UniformBeliefs, make_beliefs
from baselines.inference.policy import OpponentMoves
from baselines.inference.sampling import WorldSampler
from dominoes_env.core import rules
from dominoes_env.core.hidden import BONEYARD, deal_marginals, sampled_positions
from dominoes_env.core.observation import Observer, observation_layout
from dominoes_env.core.state import HandState

TABLES = [(4, 9, {}), (6, 12, {"rules": "mexican_train"})]


def per_seat(num_players, highest, games, make, **table_rules):
    """(env, seat, knowledge, beliefs) at every decision, each seat with its own beliefs (reset each hand)."""
    held, hand = {}, None
    for env, seat, observation, knowledge in decisions(num_players, highest, games, **table_rules):
        if (env.game, env.game.hand_index) != hand:
            hand = (env.game, env.game.hand_index)
            held = {s: make(env.game.config) for s in range(num_players)}
        held[seat].observe(observation["observation"])
        yield env, seat, knowledge, held[seat]


@pytest.mark.parametrize("num_players, highest, table_rules", TABLES)
def test_the_moves_read_agree_with_the_real_history(num_players, highest, table_rules):
    """Each play read: the seat's hand then (its hand now and the tiles it played since) is its real
    hand at that play, and the tiles that fitted are the real legal ones; each pass or draw read: the
    seat's hand then held no tile that fitted."""
    config = dominoes_env.make_config(num_players, highest, **table_rules)
    tiles_with_value, t, checked, hand = config.tiles.tiles_with_value, config.num_tiles, {"plays": 0, "none": 0}, None
    for env, seat, observation, _ in decisions(num_players, highest, 2, **table_rules):
        if (env.game, env.game.hand_index) != hand:  # a new hand: each seat reads it afresh
            hand = (env.game, env.game.hand_index)
            readers, history = [OpponentMoves(config) for _ in range(num_players)], []
        state = np.array(env.game.hand.state)
        readers[seat].observe(observation["observation"])
        for move in readers[seat].moves:
            mover = (seat + move.seat) % num_players
            hand_then = (state[rules.HEADER_SIZE:rules.HEADER_SIZE + t] == mover) | move.known
            if move.chosen < 0:
                assert not (hand_then & move.legal).any()
                checked["none"] += 1
                continue
            before = next(past for past, after in zip(history, history[1:] + [state])
                          if past[rules.HEADER_SIZE + move.chosen] == mover
                          and after[rules.HEADER_SIZE + move.chosen] == rules.ON_TABLE)
            assert np.array_equal(before[rules.HEADER_SIZE:rules.HEADER_SIZE + t] == mover, hand_then)
            actions = np.empty((num_players + 1) * t + 2, dtype=np.int64)
            count = rules.fill_legal_actions(before, tiles_with_value, actions)
            legal = np.zeros(t, dtype=np.bool_)
            legal[[a % t for a in actions[:count] if a < (num_players + 1) * t]] = True
            assert np.array_equal(legal, move.legal & hand_then)
            checked["plays"] += 1
        history.append(state)
    assert checked["plays"] > 200 and checked["none"] > 20


@pytest.mark.parametrize("num_players, highest, table_rules", TABLES)
def test_every_hidden_tile_sums_to_one_and_every_hard_fact_holds(num_players, highest, table_rules):
    checked = 0
    for env, seat, knowledge, beliefs in per_seat(num_players, highest, 1, lambda c: make_beliefs(c, "policy"),
                                                  **table_rules):
        probabilities = beliefs.probabilities()
        hidden = knowledge.hidden
        assert np.allclose(probabilities[hidden].sum(axis=1), 1.0) and (probabilities >= 0).all()
        assert not np.delete(probabilities, hidden, axis=0).any() and not probabilities[:, 0].any()
        if knowledge.boneyard == 0:
            assert not probabilities[:, num_players].any()
        for place in range(1, num_players):
            values = np.flatnonzero(knowledge.forbidden[place])
            tiles = knowledge.config.tiles
            ruled_out = np.isin(tiles.low, values) | np.isin(tiles.high, values)
            assert not probabilities[ruled_out, place].any()
            if knowledge.hand_sizes[place] == 0:
                assert not probabilities[:, place].any()
        truth = true_places(env, seat, knowledge)
        assert (probabilities[hidden, np.where(truth == BONEYARD, num_players, truth)] > 0).all()
        checked += 1
    assert checked > 40


def test_beliefs_depend_on_what_the_player_sees_only():
    """At each decision a world drawn from the player's facts (other hands) shows it the same
    observation; fed those instead, another copy of the kind believes exactly the same."""
    config = dominoes_env.make_config(4, 9)
    rng, size = np.random.default_rng(3), observation_layout(config).size
    seen_by_one, seen_by_other = PolicyBeliefs(config), PolicyBeliefs(config)
    compared = 0
    for env, seat, _, knowledge in decisions(4, 9, 1):
        if seat != 0 or env.game.hand_index != 0:
            continue
        world = sampled_positions(knowledge, rng, 1)[0]
        observation = Observer(config, 1).encode(world.state, 0, np.zeros(4, dtype=np.int64))[:size]
        assert np.array_equal(observation, knowledge.observation[:size])
        seen_by_one.observe(knowledge.observation)
        seen_by_other.observe(observation)
        assert np.array_equal(seen_by_one.probabilities(), seen_by_other.probabilities())
        compared += 1
    assert compared > 5 and seen_by_one.filter.moves.moves


def test_a_first_observation_late_in_the_hand_reads_no_move_and_believes_as_the_uniform_kind():
    """Beliefs made in the middle of a hand see many turns at once: no sharing of one turn a seat fits
    them, so nothing is read and the beliefs are the exact marginals. Listing every order of the
    lines' tiles first once took minutes a position (at 4 players, double-nine: many tiles a line)."""
    config = dominoes_env.make_config(4, 9)
    layout, late = observation_layout(config), 0
    for _, _, _, knowledge in decisions(4, 9, 1, policy="random"):
        if int(layout.views(knowledge.observation[:layout.size])["played"].sum()) < 12:
            continue
        beliefs = PolicyBeliefs(config)
        beliefs.observe(knowledge.observation)
        assert beliefs.filter.moves.moves == []
        assert np.allclose(beliefs.probabilities(), believed(UniformBeliefs(config), [knowledge.observation]))
        late += 1
    assert late >= 10


def three_player_hand():
    """A double-six hand of three seats built by hand, the player (seat 0) holding the engine: it plays
    (0|6), the next seat plays its light (1|6) although the model would rather shed a heavy six, the
    last seat plays (5|6); the player's two observations. (4|6), (3|6) and (2|6) lie with the last seat."""
    config = dominoes_env.make_config(3, 6)
    tile = config.tiles.index
    hands = [[tile(6, 6), tile(0, 6), tile(0, 0), tile(0, 1), tile(0, 2), tile(0, 3), tile(1, 1), tile(1, 2),
              tile(1, 3), tile(2, 2)],
             [tile(1, 6), tile(0, 4), tile(0, 5), tile(1, 4), tile(1, 5), tile(2, 3), tile(2, 4), tile(3, 3),
              tile(2, 5)],
             [tile(5, 6), tile(4, 6), tile(3, 6), tile(2, 6), tile(3, 4), tile(3, 5), tile(4, 4), tile(4, 5),
              tile(5, 5)]]
    hand = HandState.from_deal(config, hands, 6)
    observer, observations = Observer(config, 1), []
    for player, played in ((0, tile(0, 6)), (1, tile(1, 6)), (2, tile(5, 6))):
        assert hand.current_player == player
        if player == 0:
            observations.append(observer.encode(hand.state, 0))
        hand.apply(int(played))  # on its own line (relative line 0)
    observations.append(observer.encode(hand.state, 0))
    return config, observations, [tile(4, 6), tile(3, 6), tile(2, 6)]


def believed(beliefs, observations):
    beliefs.reset()
    for observation in observations:
        beliefs.observe(observation)
    return beliefs.probabilities()


def test_a_model_that_says_nothing_is_the_uniform_kind_and_a_sharp_one_reads_the_play():
    config, observations, heavy = three_player_hand()
    uniform = believed(UniformBeliefs(config), observations)
    silent = believed(PolicyBeliefs(config, strength=0.0), observations)
    assert np.allclose(silent, uniform, atol=1e-12)  # no pass read: no fact added, and no tilt
    flat = believed(PolicyBeliefs(config, temperature=1e6, double_bonus=0.0, pool=512), observations)
    sharp = believed(PolicyBeliefs(config, temperature=1.0, double_bonus=0.0, pool=512), observations)
    default = believed(PolicyBeliefs(config), observations)
    for probabilities in (flat, sharp, default):
        assert np.allclose(probabilities[probabilities.sum(axis=1) > 0].sum(axis=1), 1.0)
        assert np.array_equal(probabilities > 0, uniform > 0)
    # the next seat (relative seat 1) shed (1|6): under a sharp model it had no heavier six
    assert (sharp[heavy, 1] < uniform[heavy, 1] - 0.1).all() and (sharp[heavy, 2] > uniform[heavy, 2]).all()
    assert (default[heavy, 1] < uniform[heavy, 1]).all()
    # a model that plays any fitting tile alike still reads something (a hand with fewer sixes makes (1|6)
    # likelier), but far less than the sharp one
    assert np.abs(flat - uniform).max() < np.abs(sharp - uniform).max() / 2


@pytest.mark.parametrize("num_players, highest, table_rules", TABLES)
def test_the_kinds_are_made_by_name_and_worlds_drawn_from_them_keep_every_fact(num_players, highest, table_rules):
    config = dominoes_env.make_config(num_players, highest, **table_rules)
    assert isinstance(make_beliefs(config, "policy"), PolicyBeliefs)
    assert isinstance(make_beliefs(config, "network+policy"), NetworkPolicyBeliefs)
    assert {"policy", "network+policy"} <= set(KINDS)
    rng, drawn = np.random.default_rng(7), 0
    samplers: dict = {}
    for env, seat, observation, knowledge in decisions(num_players, highest, 1, **table_rules):
        sampler = samplers.setdefault((env.game.hand_index, seat), WorldSampler(config, "policy"))
        sampler.observe(observation["observation"], knowledge)
        for deal in sampler.deals(knowledge, rng, 8):
            assert knowledge.agrees(deal)
            drawn += 1
    assert drawn > 400


def test_the_combined_kind_keeps_the_facts_and_sums_to_one():
    checked = 0
    for env, seat, knowledge, beliefs in per_seat(4, 9, 1, lambda c: make_beliefs(c, "network+policy")):
        probabilities = beliefs.probabilities()
        hidden = knowledge.hidden
        assert np.allclose(probabilities[hidden].sum(axis=1), 1.0) and not np.delete(probabilities, hidden, 0).any()
        assert not probabilities[hidden][deal_marginals(knowledge) == 0].any()  # zero where the facts rule out
        truth = true_places(env, seat, knowledge)
        assert (probabilities[hidden, np.where(truth == BONEYARD, 4, truth)] > 0).all()
        checked += 1
    assert checked > 40


@pytest.mark.parametrize("arguments, message", [
    ({"temperature": 0}, "temperature must be a finite number in (0, "),
    ({"temperature": "hot"}, "temperature must be"),
    ({"temperature": float("nan")}, "temperature must be"),
    ({"double_bonus": float("inf")}, "double_bonus must be"),
    ({"strength": 1.5}, "strength must be"),
    ({"pool": 0}, "pool must be an integer from 1 to 4096"),
    ({"pool": 2.5}, "pool must be"),
    ({"seed": -1}, "seed must be"),
])
def test_bad_arguments_are_refused_in_one_line(arguments, message):
    config = dominoes_env.make_config(4, 9)
    for kind in (PolicyBeliefs, NetworkPolicyBeliefs):
        with pytest.raises(ValueError) as refused:
            kind(config, **arguments)
        assert message in str(refused.value) and "\n" not in str(refused.value)
