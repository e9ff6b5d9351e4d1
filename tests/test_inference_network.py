"""The learned kind of beliefs (the tile-location network) and worlds drawn from beliefs: the
network's beliefs keep every hard fact and read only what the player sees, its weights file
round-trips and refuses damage in one line, importance resampling never draws a world against a
fact and under the uniform kind draws the exact sampler's own worlds, and the champion takes
``inference=``. Random weights stand in for trained ones (numpy only: no torch here)."""

from __future__ import annotations

import numpy as np
import pytest
from test_hidden import decisions, true_places

import dominoes_env
from baselines.champion.policy import ChampionPolicy
from baselines.inference import make_beliefs
from baselines.inference.beliefs import NetworkBeliefs
from baselines.inference.network import (
    BeliefWeights,
    balanced,
    layer_shapes,
    load_weights,
    save_weights,
    tilted,
)
from baselines.inference.sampling import WorldSampler, believed_deals, importance_weights
from baselines.lookahead.policy import LookaheadPolicy
from dominoes_env.core.hidden import BONEYARD, deal_marginals, sample_deals, sampled_positions
from dominoes_env.core.observation import Observer, observation_layout


def random_weights(config, hidden=(16,), scale=0.3, seed=0) -> BeliefWeights:
    """A network whose scores are far from 0: any leak of a hidden tile or a broken fact would show."""
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(0, scale, weight).astype(np.float32), rng.normal(0, scale, bias).astype(np.float32))
              for weight, bias in layer_shapes(config, hidden)]
    return BeliefWeights(config, hidden, layers, {"made by": "a test"})


def network_kind(weights):
    return lambda config: NetworkBeliefs(config, weights)


def believing(kind, num_players, highest, games, **table_rules):
    """(env, seat, observation, knowledge, beliefs) at every decision: each seat's beliefs of `kind`
    take all its observations in order, and forget at each new hand."""
    config = dominoes_env.make_config(num_players, highest, **table_rules)
    by_seat = [make_beliefs(config, kind) for _ in range(num_players)]
    hand = None
    for env, seat, observation, knowledge in decisions(num_players, highest, games, policy="random", **table_rules):
        if (id(env.game), env.game.hand_index) != hand:
            hand = (id(env.game), env.game.hand_index)
            for beliefs in by_seat:
                beliefs.reset()
        by_seat[seat].observe(observation["observation"])
        yield env, seat, observation, knowledge, by_seat[seat]


@pytest.mark.parametrize("num_players, highest, table_rules", [(4, 9, {}), (4, 12, {"rules": "mexican_train"}),
                                                               (3, 6, {"boneyard": True})])
def test_the_network_kind_keeps_every_hard_fact_and_its_rows_sum_to_one(num_players, highest, table_rules):
    config = dominoes_env.make_config(num_players, highest, **table_rules)
    checked = moved = first = 0
    for env, seat, _, knowledge, beliefs in believing(network_kind(random_weights(config)), num_players, highest, 2,
                                                       **table_rules):
        probabilities = beliefs.probabilities()
        uniform = np.zeros_like(probabilities)
        uniform[knowledge.hidden] = deal_marginals(knowledge)
        hidden = knowledge.hidden
        assert np.allclose(probabilities[hidden].sum(axis=1), 1.0)
        assert not np.delete(probabilities, hidden, axis=0).any()
        assert not probabilities[uniform == 0].any()  # what the facts rule out stays ruled out
        counts = np.append(knowledge.hand_sizes, knowledge.boneyard).astype(float)
        counts[0] = 0
        assert np.allclose(probabilities[hidden].sum(axis=0), counts, atol=1e-3)  # balanced to the sizes
        truth = true_places(env, seat, knowledge)
        assert (probabilities[hidden, np.where(truth == BONEYARD, num_players, truth)] > 0).all()
        if env.game.hand_index == 0:  # the first hand's engine: the one the network reads (later: uniform)
            moved += not np.allclose(probabilities, uniform, atol=1e-3)
            first += 1
        checked += 1
    assert checked > 30 and moved > first // 2  # the random network does tilt the beliefs


def test_the_network_kind_reads_what_the_player_sees_only():
    """Another world that agrees with the player's facts shows it the same observation, so the
    beliefs cannot differ: the network reads the observation and the facts, nothing else."""
    config = dominoes_env.make_config(4, 9)
    weights = random_weights(config)
    rng = np.random.default_rng(3)
    fields = observation_layout(config)
    compared = 0
    for _, _, _, knowledge in decisions(4, 9, 1, policy="random"):
        world = sampled_positions(knowledge, rng, 1)[0]
        seen = Observer(config, 1).encode(world.state, 0, np.zeros(4, dtype=np.int64))[:fields.size]
        first, second = NetworkBeliefs(config, weights), NetworkBeliefs(config, weights)
        first.observe(knowledge.observation)
        second.observe(seen)
        assert np.array_equal(first.probabilities(), second.probabilities())
        compared += 1
    assert compared > 10


def test_in_a_later_hand_of_a_game_the_network_kind_is_the_uniform_kind():
    """The networks learned from first hands (engine N|N): later engines get the uniform kind."""
    config = dominoes_env.make_config(4, 9)
    later = 0
    for env, _, _, knowledge, beliefs in believing(network_kind(random_weights(config)), 4, 9, 1):
        if env.game.hand_index == 1:
            assert np.allclose(beliefs.probabilities()[knowledge.hidden], deal_marginals(knowledge))
            later += 1
    assert later > 10


def test_a_network_that_scores_nothing_gives_back_the_uniform_kind():
    config = dominoes_env.make_config(4, 9)
    zero = random_weights(config, scale=0.0)
    for *_, knowledge, beliefs in believing(lambda table: NetworkBeliefs(table, zero, balance=False), 4, 9, 1):
        assert np.allclose(beliefs.probabilities()[knowledge.hidden], deal_marginals(knowledge), atol=1e-12)


def test_tilting_and_balancing_keep_zeros_and_sums():
    rng = np.random.default_rng(0)
    marginals = rng.random((6, 4)) * (rng.random((6, 4)) > 0.3)
    marginals[0] = 0.0  # a tile the player sees
    marginals[1:, 0] = 0.0
    marginals[1:, 1] = np.maximum(marginals[1:, 1], 0.1)
    marginals /= np.where(marginals.sum(axis=1, keepdims=True) > 0, marginals.sum(axis=1, keepdims=True), 1)
    scores = rng.normal(0, 2, marginals.shape)
    beliefs = tilted(marginals, scores)
    assert not beliefs[0].any() and not beliefs[marginals == 0].any()
    assert np.allclose(beliefs[1:].sum(axis=1), 1.0)
    counts = beliefs[1:].sum(axis=0).round()
    counts[1] += 5 - counts.sum()  # sizes that add up to the 5 hidden tiles
    scaled = balanced(beliefs[1:], counts)
    assert np.allclose(scaled.sum(axis=1), 1.0) and not scaled[marginals[1:] == 0].any()


def test_a_weights_file_round_trips_and_refuses_damage_in_one_line(tmp_path):
    config = dominoes_env.make_config(4, 9)
    weights = random_weights(config)
    path = save_weights(tmp_path / "beliefs.safetensors", weights)
    loaded = load_weights(path, config)
    assert loaded.hidden == weights.hidden and loaded.info == {"made by": "a test"}
    assert all(np.array_equal(a.astype(np.float16).astype(np.float32), b) and b.dtype == np.float32
               for pair, other in zip(weights.layers, loaded.layers) for a, b in zip(pair, other))  # stored as float16
    data = path.read_bytes()
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(data[:-8] + bytes(8))  # the last weights zeroed
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(data[: len(data) // 2])
    for bad, message in ((damaged, "fails its checksum"), (cut, "damaged or not a safetensors file"),
                         (tmp_path / "missing.safetensors", "does not exist")):
        with pytest.raises(ValueError) as refused:
            load_weights(bad, config)
        assert message in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="was trained for 4 players, double-9, not 3 players"):
        load_weights(path, dominoes_env.make_config(3, 9))
    with pytest.raises(ValueError, match="w0 must be a float32 array"):
        BeliefWeights(config, (16,), [(np.zeros((3, 3), np.float32), np.zeros(3, np.float32))] * 2)


def test_worlds_drawn_from_beliefs_never_contradict_a_fact():
    config = dominoes_env.make_config(4, 12, rules="mexican_train")
    rng = np.random.default_rng(4)
    drawn = 0
    for *_, knowledge, beliefs in believing(network_kind(random_weights(config, scale=1.0)), 4, 12, 1,
                                            rules="mexican_train"):
        deals = believed_deals(knowledge, beliefs.probabilities(), rng, 16)
        assert deals.shape == (16, knowledge.hidden.shape[0])
        assert all(knowledge.agrees(deal) for deal in deals)
        drawn += 1
    assert drawn > 10


def test_the_uniform_kind_draws_the_exact_samplers_own_worlds():
    sampler = WorldSampler(dominoes_env.make_config(4, 9), "uniform")
    assert sampler.beliefs is None and sampler.kind == "uniform"
    for _, _, observation, knowledge in decisions(4, 9, 1, policy="random"):
        sampler.observe(observation["observation"])
        ours, exact = np.random.default_rng(8), np.random.default_rng(8)
        assert np.array_equal(sampler.deals(knowledge, ours, 12), sample_deals(knowledge, exact, 12))
    with pytest.raises(ValueError, match="sharpness"):
        WorldSampler(dominoes_env.make_config(4, 9), "uniform", sharpness=2.0)


def test_the_uniform_marginals_are_counted_once_a_decision_and_the_draws_do_not_change(monkeypatch):
    """The beliefs keep the uniform marginals of their latest knowledge and the sampler's weights take
    them from there: one count a decision, and the worlds drawn random number for random number as
    when the weights counted their own."""
    import baselines.inference.beliefs as beliefs_module
    import baselines.inference.sampling as sampling_module

    config = dominoes_env.make_config(4, 9)
    sampler = WorldSampler(config, network_kind(random_weights(config, scale=1.0)))
    counted = []
    counting = beliefs_module.deal_marginals

    def count(knowledge):
        counted.append(knowledge)
        return counting(knowledge)

    monkeypatch.setattr(beliefs_module, "deal_marginals", count)
    monkeypatch.setattr(sampling_module, "deal_marginals", count)
    decided = 0
    for _, _, observation, knowledge in decisions(4, 9, 1, policy="random"):
        if knowledge.hidden.shape[0] == 0:
            continue
        sampler.observe(observation["observation"], knowledge)
        before = len(counted)
        ours, theirs = np.random.default_rng(decided), np.random.default_rng(decided)
        drawn = sampler.deals(knowledge, ours, 12)
        assert len(counted) == before + 1  # the probabilities' count, which the weights reuse
        shared = sampler.beliefs.uniform_marginals()
        assert not shared.flags.writeable and np.array_equal(shared, counting(knowledge))
        expected = believed_deals(knowledge, sampler.beliefs.probabilities(), theirs, 12)  # counts its own
        assert np.array_equal(drawn, expected)
        decided += 1
    assert decided > 10
    pool = sample_deals(knowledge, np.random.default_rng(0), 8)
    with pytest.raises(ValueError, match="marginals must be the uniform marginals"):
        importance_weights(knowledge, sampler.beliefs.probabilities(), pool, marginals=np.ones((1, 5)))


def test_the_beliefs_take_the_players_own_tracker_and_believe_the_same():
    """``observe_knowledge`` lets the player's tracker serve the beliefs too: the same probabilities
    as beliefs that track the hand themselves; a searching player hands over its own knowledge."""
    config = dominoes_env.make_config(4, 9)
    weights = random_weights(config)
    tracking, told = NetworkBeliefs(config, weights), NetworkBeliefs(config, weights)
    compared, hand = 0, None
    for env, seat, observation, knowledge in decisions(4, 9, 1, policy="random"):
        if seat != 0:
            continue
        if env.game.hand_index != hand:  # the tracker of decisions() forgets at each hand: so do both
            tracking.reset()
            told.reset()
            hand = env.game.hand_index
        tracking.observe(observation["observation"])
        told.observe_knowledge(knowledge)
        assert told.knowledge is knowledge
        assert np.array_equal(tracking.probabilities(), told.probabilities())
        compared += 1
    assert compared > 10
    with pytest.raises(ValueError, match="knowledge must be a HandKnowledge"):
        told.observe_knowledge(observation["observation"])
    with pytest.raises(ValueError, match="the knowledge is of 4 players"):
        NetworkBeliefs(dominoes_env.make_config(3, 9), random_weights(dominoes_env.make_config(3, 9))) \
            .observe_knowledge(knowledge)
    champion = ChampionPolicy(config, seed=0, simulations=4, worlds=2, inference=network_kind(weights))
    lookahead = LookaheadPolicy(config, seed=0, samples=2, inference=network_kind(weights))
    for player in (champion, lookahead):
        player.sampler.beliefs.tracker.observe = lambda _: pytest.fail("the beliefs tracked the hand a second time")
        player.act(observation["observation"], observation["action_mask"])
        assert player.sampler.beliefs.knowledge is not None
    assert champion.sampler.beliefs.knowledge is champion.observe(observation["observation"])


def test_the_champion_takes_inference_and_the_uniform_kind_is_todays_player():
    """``inference='uniform'`` is the champion as it was: the same moves as a champion whose worlds
    come straight from the exact sampler; a learned kind plays legal moves."""
    config = dominoes_env.make_config(4, 9)

    class ExactSampler(ChampionPolicy):
        def worlds(self, knowledge):
            from dominoes_env.core.hidden import sampled_states
            return sampled_states(knowledge, sample_deals(knowledge, self.rng, self.settings.worlds), self.rng)

    players = {"uniform": ChampionPolicy(config, seed=7, simulations=24, worlds=4, inference="uniform"),
               "exact": ExactSampler(config, seed=7, simulations=24, worlds=4),
               "network": ChampionPolicy(config, seed=7, simulations=24, worlds=4,
                                         inference=network_kind(random_weights(config)))}
    assert "uniform beliefs" in repr(players["uniform"]) and "network beliefs" in repr(players["network"])
    env = dominoes_env.raw_env(config)
    env.reset(seed=21)
    compared = 0
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        if agent == env.possible_agents[0]:
            moves = {name: player.act(observation["observation"], observation["action_mask"])
                     for name, player in players.items()}
            assert moves["uniform"] == moves["exact"] and observation["action_mask"][moves["network"]]
            compared += 1
            env.step(moves["uniform"])
        else:
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert compared > 5
    with pytest.raises(ValueError, match="kind must be one of"):
        ChampionPolicy(config, inference="psychic")


def test_positions_for_learning_carry_the_truth_in_the_players_frame():
    from baselines.inference.data import self_play_positions

    config = dominoes_env.make_config(4, 9)
    positions = self_play_positions(config, 300, seed=5, player="greedy")
    assert positions.observations.shape[0] >= 300 and positions.hands[0] == 0
    hidden = positions.marginals.sum(axis=2) > 0
    assert ((positions.places >= 0) == hidden).all()  # a label for every hidden tile, none for a seen one
    assert not (positions.places == 0).any()  # never the player's own hand: it is seen
    truth = positions.places[hidden]
    assert (positions.marginals[hidden][np.arange(truth.shape[0]), truth] > 0).all()
    assert set(np.unique(positions.places)) <= set(range(-1, config.num_players + 1))


def test_a_network_ships_for_each_table_of_the_benchmark_and_keeps_its_facts():
    from baselines.inference import DEFAULT_KIND, default_kind
    from baselines.inference.network import shipped_weights_file
    from baselines.learning.files import shipped_tables

    tables = shipped_tables("beliefs", "safetensors")
    expected = [dominoes_env.make_config(4, 9)] + [dominoes_env.make_config(n, 12, rules="mexican_train")
                                                  for n in (2, 4, 6, 8)]
    assert sorted(map(repr, tables)) == sorted(map(repr, expected))
    for config in tables:
        weights = load_weights(shipped_weights_file(config), config)
        assert default_kind(config) == DEFAULT_KIND and weights.info["held_out_log_p"] > weights.info[
            "held_out_uniform_log_p"]
        n, highest = config.num_players, config.highest_double
        rules = {} if config.is_default else {"rules": "mexican_train"}
        checked = 0
        for env, seat, _, knowledge, beliefs in believing("network", n, highest, 1, **rules):
            probabilities = beliefs.probabilities()
            truth = true_places(env, seat, knowledge)
            assert np.allclose(probabilities[knowledge.hidden].sum(axis=1), 1.0)
            assert (probabilities[knowledge.hidden, np.where(truth == BONEYARD, n, truth)] > 0).all()
            checked += 1
            if checked == 40:
                break
        assert checked == 40
