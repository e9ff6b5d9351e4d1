"""The game in OpenSpiel agrees with the compiled engine (it is the engine, translated): OpenSpiel's
own random-simulation test, a differential test from engine positions (the same legal actions, the
same observation, the same returns after the same moves), bad parameters refused in one line,
states serialised and read back, resampled worlds that never contradict what the player saw, and
OpenSpiel's bots as our players."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import dominoes_env  # noqa: E402
from dominoes_env import VectorDominoes, make_config  # noqa: E402
from dominoes_env.core.hidden import BONEYARD  # noqa: E402
from dominoes_env.core.observation import Observer  # noqa: E402
from dominoes_env.openspiel import SHORT_NAME, state_from_position  # noqa: E402

TABLES = [({"players": 2, "highest_double": 6}, make_config(2, 6)),
          ({"players": 4, "highest_double": 9}, make_config(4, 9)),
          ({"players": 6, "highest_double": 12, "rules": "mexican_train"}, make_config(6, 12, rules="mexican_train"))]


@pytest.mark.parametrize("params, config", TABLES, ids=["2p_d6", "4p_d9", "6p_d12_mt"])
def test_openspiels_random_simulation_test_passes(params, config):
    game = pyspiel.load_game(SHORT_NAME, params)
    assert game.num_distinct_actions() == config.num_actions and game.num_players() == config.num_players
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_a_full_game_of_several_hands_passes_it_too():
    pyspiel.random_sim_test(pyspiel.load_game(SHORT_NAME, {"players": 3, "highest_double": 6, "hands": 3}),
                            num_sims=2, serialize=True, verbose=False)


def engine_positions(config, count, seed=0):
    """`count` positions of the batched engine in random play (hands going on), with their observations."""
    vec = VectorDominoes(64, config, seed=seed)
    vec.reset()
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        for _ in range(int(rng.integers(1, 6))):
            vec.step_random()
        for game in rng.choice(64, size=4, replace=False).tolist():
            found.append(vec.position(game))
    return found[:count]


def differential(params, config, positions, seed=0):
    game = pyspiel.load_game(SHORT_NAME, params)
    observer = Observer(config)
    rng = np.random.default_rng(seed)
    for position in positions:
        state = state_from_position(game, position)
        engine = position.copy()
        while not engine.is_over:
            mover = engine.current_player
            assert state.current_player() == mover
            assert state.legal_actions() == engine.legal_actions().tolist()
            seen = observer.encode(engine.state, mover)
            assert np.array_equal(np.asarray(state.observation_tensor(mover)), seen.astype(np.float32))
            action = int(rng.choice(engine.legal_actions()))
            engine.apply(action)
            state.apply_action(action)
        assert state.is_terminal() and state.returns() == (-engine.scores().astype(float)).tolist()


@pytest.mark.parametrize("params, config", TABLES, ids=["2p_d6", "4p_d9", "6p_d12_mt"])
def test_from_engine_positions_the_game_offers_the_same_moves_views_and_returns(params, config):
    differential(params, config, engine_positions(config, 40))


@pytest.mark.slow
@pytest.mark.parametrize("params, config", TABLES, ids=["2p_d6", "4p_d9", "6p_d12_mt"])
def test_the_differential_test_over_a_thousand_positions(params, config):
    differential(params, config, engine_positions(config, 1000 // 3 + 1, seed=7), seed=7)


@pytest.mark.parametrize("params, reason", [
    ({"players": 9}, "players must be from 2 to 8, got 9"),
    ({"highest_double": 3}, "highest_double must be from 6 to 18, got 3"),
    ({"rules": "poker"}, "rules='poker' is not a rule set"),
    ({"hands": 0}, "hands must be from 1 to"),
    ({"first_player": "anyone"}, "first_player='anyone'"),
])
def test_a_bad_parameter_is_refused_by_load_game_in_one_line(params, reason):
    with pytest.raises(Exception) as refused:
        pyspiel.load_game(SHORT_NAME, params)
    assert reason in str(refused.value) and f"{SHORT_NAME}: " in str(refused.value)


def random_state(params, moves, seed):
    """A state after the deal and `moves` random moves."""
    game = pyspiel.load_game(SHORT_NAME, params)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    played = 0
    while not state.is_terminal() and (state.is_chance_node() or played < moves):
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            played += 1
    return game, state


@pytest.mark.parametrize("params", [TABLES[1][0], {**TABLES[2][0], "hands": 2}])
def test_a_state_serialised_and_read_back_plays_on_identically(params):
    game, state = random_state(params, 9, seed=1)
    copies = [game.deserialize_state(state.serialize()),
              pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1]]
    rng = np.random.default_rng(2)
    while not state.is_terminal():
        action = (state.chance_outcomes()[0][0] if state.is_chance_node()
                  else int(rng.choice(state.legal_actions())))
        for copy in copies:
            assert copy.legal_actions() == state.legal_actions() and str(copy) == str(state)
            copy.apply_action(action)
        state.apply_action(action)
    assert all(copy.returns() == state.returns() for copy in copies)


@pytest.mark.parametrize("params", [TABLES[1][0], TABLES[2][0], {"players": 3, "highest_double": 6, "boneyard": True}])
def test_resampled_worlds_never_contradict_what_the_player_saw(params):
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for seed in range(6):
        game, state = random_state(params, 6 + 3 * seed, seed)
        if state.is_terminal() or state.is_chance_node():
            continue
        player = state.current_player()
        knowledge = state._knowledge(player)
        n = game.num_players()
        for _ in range(10):
            world = state.resample_from_infostate(player, sampler)
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.observation_tensor(player) == state.observation_tensor(player)
            assert world.legal_actions() == state.legal_actions()
            owners = world.hand.owner[knowledge.hidden]
            places = np.where(owners < 0, BONEYARD, (owners - player) % n)  # in the player's frame
            assert knowledge.agrees(places)  # the sizes, and every value a pass proved a seat lacks


def test_any_bot_plays_as_our_policy_and_the_ismcts_spec_plays_legal_moves():
    from baselines.harness.evaluate import evaluate
    from baselines.openspiel import BotPolicy

    config = make_config(3, 6)
    uniform = BotPolicy(config, seed=0, bot=lambda game, rng: pyspiel.make_uniform_random_bot(0, 5))
    result = evaluate([uniform, "openspiel_ismcts(simulations=8)", "random"], 6, seed=1, num_players=config)
    assert sorted(result.labels)[0].startswith("baselines.openspiel.policy.BotPolicy")
    assert result.num_hands == 6 and all(policy.hands == 6 for policy in result.policies)
    with pytest.raises(ValueError, match="bot must be a pyspiel.Bot or a function"):
        BotPolicy(config, bot="random")
    with pytest.raises(ValueError, match="simulations must be an integer from 1 to"):
        dominoes_env.players.by_name("openspiel_ismcts(simulations=0)")[0].make(config)
