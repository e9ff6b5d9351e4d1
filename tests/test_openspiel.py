"""The game in OpenSpiel agrees with the compiled engine (it is the engine, translated): OpenSpiel's
own random-simulation test, a differential test from engine positions (the same legal actions, the
same observation, the same returns after the same moves), bad parameters refused in one line,
states serialised and read back, resampled worlds that never contradict what the player saw, and
OpenSpiel's bots as our players."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import re  # noqa: E402
from pathlib import Path  # noqa: E402

import dominoes_env  # noqa: E402
import dominoes_env.openspiel as twin  # noqa: E402
from dominoes_env import VectorDominoes, make_config  # noqa: E402
from dominoes_env.core.config import TABLE_RULES  # noqa: E402
from dominoes_env.core.hidden import BONEYARD  # noqa: E402
from dominoes_env.core.observation import Observer  # noqa: E402
from dominoes_env.openspiel import SHORT_NAME, game_parameters, state_from_position  # noqa: E402

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


@pytest.mark.parametrize("rule", TABLE_RULES, ids=[rule.name for rule in TABLE_RULES])
def test_each_table_rule_off_the_rule_book_agrees_with_the_engine_or_is_refused(rule):
    """Generated from TABLE_RULES: a new rule is played against the engine, or refused, never dropped."""
    config = make_config(3, 6, **{rule.name: rule.values[1]})
    if rule.name not in twin.IMPLEMENTED_RULES:
        with pytest.raises(ValueError, match=f"does not implement {rule.name}="):
            game_parameters(config)
        return
    params = game_parameters(config)
    assert pyspiel.load_game(SHORT_NAME, params).config == config
    differential(params, config, engine_positions(config, 24, seed=3), seed=3)


def test_a_rule_the_game_does_not_implement_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(twin, "IMPLEMENTED_RULES", twin.IMPLEMENTED_RULES - {"cover_doubles"})
    for refuse in (lambda: pyspiel.load_game(SHORT_NAME, {"players": 3, "highest_double": 6, "cover_doubles": True}),
                   lambda: game_parameters(make_config(3, 6, cover_doubles=True))):
        with pytest.raises(Exception) as refused:
            refuse()
        line = [text for text in str(refused.value).splitlines() if SHORT_NAME in text]
        assert line == [f"{SHORT_NAME}: the game does not implement cover_doubles=True; "
                        "it implements ['boneyard', 'first_player']"], str(refused.value)
    game_parameters(make_config(3, 6, boneyard=True))  # the rules it implements, and the rule book's values, pass
    pyspiel.load_game(SHORT_NAME, {"players": 3, "highest_double": 6})


def test_rewards_summed_after_every_transition_pay_each_hand_once():
    """Summed after every transition, or (as OpenSpiel's random_sim_test and rl_environment do) at the
    states that are not chance nodes, the rewards of a game of several hands are its returns."""
    from open_spiel.python import rl_environment

    game = pyspiel.load_game(SHORT_NAME, {"players": 3, "highest_double": 6, "hands": 3})
    for seed in range(3):
        rng = np.random.default_rng(seed)
        state, total, paying = game.new_initial_state(), np.zeros(3), 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
            total += state.rewards()
            paying += any(state.rewards())
            if not state.is_chance_node():
                assert np.allclose(total, state.returns())
        assert paying == 3 and np.allclose(total, state.returns()) and all(total < 0)
        env = rl_environment.Environment(game, seed=seed)
        step, paid = env.reset(), np.zeros(3)
        while not step.last():
            step = env.step([int(rng.choice(step.observations["legal_actions"][step.observations["current_player"]]))])
            paid += step.rewards
        assert np.allclose(paid, env.get_state.returns())


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


# ---------------------------------------------------------------- OpenSpiel's algorithms the page says run
PAGE = Path(__file__).resolve().parents[1] / "docs" / "integrations" / "openspiel.md"
SMALL = {"players": 2, "highest_double": 6}


def listed_as_running() -> list[str]:
    """The first `name` of each row marked yes in the page's table of what runs."""
    text = PAGE.read_text()
    table = text[text.index("What runs and what does not"):text.index("## How strong IS-MCTS is")]
    return [re.search(r"`([^`]+)`", row.group(1)).group(1)  # type: ignore[union-attr]
            for row in re.finditer(r"^\| (.+?) \| yes \|", table, re.MULTILINE)]


def _random_sim_test(game):
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def _rl_episodes(game, make_agent, steps=120):
    from open_spiel.python import rl_environment

    env = rl_environment.Environment(game, seed=0)
    info, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    agents = [make_agent(player, info, actions) for player in range(game.num_players())]
    step, paid = env.reset(), np.zeros(game.num_players())
    for _ in range(steps):
        if step.last():
            for agent in agents:
                agent.step(step)
            paid += step.rewards
            step = env.reset()
            continue
        step = env.step([agents[step.observations["current_player"]].step(step).action])
    assert paid.any()  # a hand ended and paid


def _rl_environment(game):
    from open_spiel.python.algorithms.random_agent import RandomAgent

    _rl_episodes(game, lambda player, info, actions: RandomAgent(player, actions))


def _nfsp(game):
    pytest.importorskip("torch")
    from open_spiel.python.pytorch import nfsp

    _rl_episodes(game, lambda player, info, actions: nfsp.NFSP(
        player, info, actions, [16], 100, 0.1, batch_size=8, min_buffer_size_to_learn=8, learn_every=4,
        replay_buffer_capacity=100))


def _dqn(game):
    pytest.importorskip("torch")
    from open_spiel.python.pytorch import dqn

    _rl_episodes(game, lambda player, info, actions: dqn.DQN(
        player, info, actions, [16], replay_buffer_capacity=100, batch_size=8, min_buffer_size_to_learn=8,
        learn_every=4))


def _ismcts(game):
    from open_spiel.python.algorithms import ismcts, mcts

    _, state = random_state(SMALL, 2, seed=0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), 10.0, 8,
                           random_state=np.random.RandomState(0))
    assert bot.step(state) in state.legal_actions()


def _outcome_sampling_mccfr(game):
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    native = pyspiel.OutcomeSamplingMCCFRSolver(game)
    for _ in range(20):
        solver.iteration()
        native.run_iteration()
    assert solver.average_policy() is not None and native.average_policy() is not None


RUNS = {"random_sim_test": _random_sim_test, "rl_environment.Environment": _rl_environment, "nfsp.NFSP": _nfsp,
        "dqn.DQN": _dqn, "ISMCTSBot": _ismcts, "outcome_sampling_mccfr": _outcome_sampling_mccfr}


def test_the_pages_list_of_what_runs_is_what_this_file_runs():
    assert sorted(listed_as_running()) == sorted(RUNS)


@pytest.mark.parametrize("name", listed_as_running())
def test_each_algorithm_the_page_lists_as_running_runs_a_few_iterations(name):
    RUNS[name](pyspiel.load_game(SHORT_NAME, SMALL))
