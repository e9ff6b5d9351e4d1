"""The PettingZoo contract of the env: PettingZoo's own tests, registration, pickling, turn
order, masks, rewards, multi-hand episodes, illegal actions and bad arguments."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pettingzoo
import pytest
from conftest import start_env_from_hand
from pettingzoo.test import api_test, render_test, seed_test

import dominoes_env
from dominoes_env import IllegalActionError
from dominoes_env.core import HandState, make_config

TABLES = [(2, 6), (3, 9), (4, 9), (6, 12), (8, 12), (4, 15), (8, 18)]
EPISODES = [(players, highest, num_hands) for players, highest in TABLES for num_hands in (1, 3)]


def episode_id(case) -> str:
    return f"{case[0]}p-d{case[1]}-{case[2]}hands"


def random_action(env, rng: np.random.Generator):
    observation, _, termination, truncation, _ = env.last()
    if termination or truncation:
        return None
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def snapshot(env) -> dict:
    """Everything a refused action must leave untouched."""
    raw = env.unwrapped
    return {
        "state": raw.game.hand.state.copy(),
        "hand_index": raw.game.hand_index,
        "totals": raw.game.totals.copy(),
        "agent_selection": env.agent_selection,
        "agents": list(env.agents),
        "rewards": dict(env.rewards),
        "cumulative": dict(raw._cumulative_rewards),
        "terminations": dict(env.terminations),
        "truncations": dict(env.truncations),
        "observations": {a: env.observe(a) for a in env.agents},
    }


def assert_same_snapshot(before: dict, after: dict) -> None:
    assert np.array_equal(before["state"], after["state"])
    for key in ("hand_index", "agent_selection", "agents", "rewards", "cumulative", "terminations", "truncations"):
        assert before[key] == after[key], key
    assert np.array_equal(before["totals"], after["totals"])
    for agent, seen in before["observations"].items():
        for part in ("observation", "action_mask"):
            assert np.array_equal(seen[part], after["observations"][agent][part]), (agent, part)


def position_env(config, hands, engine, current=0, lines=None, markers=(), **env_options):
    """A wrapped env playing a literal position (hands and lines as lists of (a, b) pairs)."""
    index = config.tiles.index
    hand = HandState.from_position(
        config, [[index(*pair) for pair in held] for held in hands], engine, current_player=current,
        lines={line: [index(*pair) for pair in tiles] for line, tiles in (lines or {}).items()}, markers=markers)
    env = dominoes_env.env(config.num_players, config.highest_double, **env_options)
    start_env_from_hand(env, hand)
    return env


def tile_action(config, rel_line: int, a: int, b: int) -> int:
    return rel_line * config.num_tiles + config.tiles.index(a, b)


# --------------------------------------------------------------------------- PettingZoo's tests


# api_test suggests Box or Discrete observations; a Dict with an action mask is PettingZoo's own
# convention for classic games, so those two advisory warnings are expected here.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")
@pytest.mark.parametrize("case", EPISODES, ids=episode_id)
def test_pettingzoo_api_test(case):
    players, highest, num_hands = case
    api_test(dominoes_env.env(players, highest, num_hands), num_cycles=1000)


@pytest.mark.parametrize("case", EPISODES, ids=episode_id)
def test_pettingzoo_seed_test(case):
    players, highest, num_hands = case
    seed_test(lambda: dominoes_env.env(players, highest, num_hands), num_cycles=100)


@pytest.mark.parametrize("case", EPISODES, ids=episode_id)
def test_pettingzoo_render_test(case, capsys):
    players, highest, num_hands = case
    render_test(lambda render_mode=None: dominoes_env.env(players, highest, num_hands, render_mode=render_mode))
    assert "To move: player_" in capsys.readouterr().out


def test_render_shows_the_table():
    config = make_config(3, 6)
    env = position_env(config, [[(2, 6), (1, 3)], [(5, 6)], [(0, 1)]], 6, lines={1: [(6, 4)]}, markers=[1],
                       render_mode="ansi")
    text = env.render()
    assert "(6|4)" in text and "marker UP" in text and "dummy line    (not open yet" in text  # 6 on the engine
    assert "To move: player_0, holding (1|3) (2|6)" in text


# --------------------------------------------------------------------------- construction


def test_registered_with_pettingzoo():
    assert dominoes_env.ENV_ID == "dominoes/dominoes-v1"
    env = pettingzoo.make("aec", "dominoes/dominoes-v1", num_players=3, highest_double=6)
    assert isinstance(env, pettingzoo.AECEnv)
    env.reset(seed=1)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert env.action_space("player_0").n == 4 * 28 + 1
    default = pettingzoo.make("aec", "dominoes/dominoes-v1")
    assert len(default.possible_agents) == 4 and default.action_space("player_0").n == 5 * 55 + 1


@pytest.mark.parametrize("kwargs, message", [
    ({"num_players": 9}, r"num_players must be an integer from 2 to 8.*got 9"),
    ({"num_players": 1}, r"num_players must be an integer from 2 to 8.*got 1"),
    ({"highest_double": 5}, r"highest_double must be an integer from 6 to 18.*double-6 to double-18.*got 5"),
    ({"highest_double": 19}, r"highest_double must be an integer from 6 to 18.*got 19"),
    ({"num_players": 2.5}, r"num_players must be an integer"),
    ({"num_players": True}, r"num_players must be an integer.*got True"),
    ({"num_hands": 0}, r"num_hands must be an integer from 1 to 1000, got 0"),
    ({"num_hands": 1.5}, r"num_hands must be an integer from 1 to 1000, got 1.5"),
    ({"num_hands": 10**9}, r"num_hands must be an integer from 1 to 1000"),
    ({"reward": "x"}, r"reward='x'.*'score', 'zero_sum', 'rank'"),
    ({"reward": np.array(["score"])}, r"reward=array\(\['score'\].*'score', 'zero_sum', 'rank'"),
    ({"illegal_action": "ignore"}, r"illegal_action='ignore'.*'raise', 'penalize'"),
    ({"render_mode": "rgb"}, r"render_mode='rgb'.*'ansi', 'human'"),
])
@pytest.mark.parametrize("make", [dominoes_env.env, dominoes_env.raw_env])
def test_bad_constructor_arguments_are_refused_clearly(make, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make(**kwargs)


@pytest.mark.parametrize("make", [dominoes_env.env, dominoes_env.raw_env, dominoes_env.DominoesEnv])
def test_options_are_explicit_keywords(make):
    with pytest.raises(TypeError, match="colour"):
        make(colour="blue")
    env = make(4, 9, 2, None, reward="rank", illegal_action="penalize")
    assert env.unwrapped.reward_mode == "rank" and env.unwrapped.illegal_action == "penalize"
    with pytest.raises(TypeError):  # reward is keyword-only: no fifth positional argument
        make(4, 9, 1, None, "rank")


@pytest.mark.parametrize("make", [dominoes_env.env, dominoes_env.raw_env, dominoes_env.DominoesEnv,
                                  dominoes_env.make_config])
def test_the_old_keyword_highest_dominoe_is_gone_in_0_3_0(make):
    """0.2.0 renamed it with a warning; 0.3.0 removed it, as the CHANGELOG promised."""
    with pytest.raises(TypeError, match="highest_dominoe"):
        make(num_players=3, highest_dominoe=6)


@pytest.mark.parametrize("players, highest", TABLES)
def test_spaces(players, highest):
    env = dominoes_env.env(players, highest)
    env.reset(seed=0)
    t = (highest + 1) * (highest + 2) // 2
    assert env.possible_agents == [f"player_{seat}" for seat in range(players)]
    for agent in env.possible_agents:
        assert env.action_space(agent).n == (players + 1) * t + 1
        space = env.observation_space(agent)
        assert space["action_mask"].shape == ((players + 1) * t + 1,)
        assert space["action_mask"].dtype == np.int8 and space["observation"].dtype == np.int8
        assert space.contains(env.observe(agent))


# --------------------------------------------------------------------------- turn order and masks


def test_agent_selection_stays_after_a_double():
    config = make_config(3, 6)
    env = position_env(config, [[(2, 2), (2, 5), (0, 0)], [(5, 6)], [(1, 4)]], 6, lines={0: [(6, 2)]})
    assert env.agent_selection == "player_0"
    env.step(tile_action(config, 0, 2, 2))
    assert env.agent_selection == "player_0"
    env.step(tile_action(config, 0, 2, 5))
    assert env.agent_selection == "player_1"


@pytest.mark.parametrize("players, highest", [(2, 6), (4, 9), (8, 12)])
def test_turn_order_over_random_games(players, highest):
    """After a double (hand not over) the same agent moves; otherwise the next seat."""
    env = dominoes_env.env(players, highest)
    rng = np.random.default_rng(3)
    tiles = make_config(players, highest).tiles
    doubles = 0
    for game in range(20):
        env.reset(seed=game)
        while not any(env.terminations.values()):
            mover = env.agent_selection
            action = random_action(env, rng)
            env.step(action)
            if any(env.terminations.values()):
                break
            seat = env.possible_agents.index(mover)
            is_double = action < env.unwrapped.config.pass_action and tiles.is_double[action % tiles.num_tiles]
            expected = seat if is_double else (seat + 1) % players
            doubles += bool(is_double)
            assert env.agent_selection == env.possible_agents[expected]
    assert doubles > 0


@pytest.mark.parametrize("players, highest, num_hands", [(3, 9, 1), (6, 12, 2)])
def test_mask_only_for_the_agent_to_move(players, highest, num_hands):
    env = dominoes_env.env(players, highest, num_hands)
    rng = np.random.default_rng(0)
    env.reset(seed=4)
    for agent in env.agent_iter():
        for other in env.agents:
            mask = env.observe(other)["action_mask"]
            assert mask.dtype == np.int8 and set(np.unique(mask)) <= {0, 1}
            if other == agent and not env.terminations[other]:
                assert mask.any()
                assert np.array_equal(mask, env.unwrapped.game.hand.legal_mask())
            else:
                assert not mask.any(), f"{other} is not to move but has a non-zero mask"
        env.step(random_action(env, rng))


# --------------------------------------------------------------------------- pickling


@pytest.mark.parametrize("make", [dominoes_env.env, dominoes_env.raw_env])
@pytest.mark.parametrize("num_hands", [1, 3])
def test_pickled_env_continues_the_same_game(make, num_hands):
    env = make(4, 9, num_hands)
    env.reset(seed=21)
    rng = np.random.default_rng(0)
    for _ in range(25):
        env.step(random_action(env, rng))
    clone = pickle.loads(pickle.dumps(env))
    trajectories = []
    for copy in (env, clone):
        rng_copy = np.random.default_rng(99)
        trajectory = []
        for agent in copy.agent_iter():
            observation, reward, termination, truncation, _ = copy.last()
            action = random_action(copy, rng_copy)
            trajectory.append((agent, observation["observation"].tobytes(), reward, termination, action))
            copy.step(action)
        trajectories.append(trajectory)
    assert trajectories[0] == trajectories[1]
    # And the next reset draws the same deal in both (the generator was pickled too).
    env.reset()
    clone.reset()
    assert np.array_equal(env.unwrapped.game.hand.state, clone.unwrapped.game.hand.state)


# --------------------------------------------------------------------------- rewards


def ending_position(reward: str):
    """Four players, double-6: seat 0 goes out with (3|6); the others keep 10, 10 and 3 pips."""
    config = make_config(4, 6)
    env = position_env(config, [[(3, 6)], [(4, 6)], [(5, 5)], [(1, 2)]], 6, reward=reward)
    env.step(tile_action(config, 0, 3, 6))
    assert all(env.terminations.values())
    return env


@pytest.mark.parametrize("reward, expected", [
    ("score", [0, -10, -10, -3]),
    # mean of the others' pips minus my own: 23/3 - 0, 13/3 - 10, 13/3 - 10, 20/3 - 3
    ("zero_sum", [23 / 3, -17 / 3, -17 / 3, 11 / 3]),
    # (opponents with more pips - opponents with fewer) / 3; seats 1 and 2 tie with each other
    ("rank", [1.0, -2 / 3, -2 / 3, 1 / 3]),
])
def test_reward_modes_on_a_hand_computed_example(reward, expected):
    env = ending_position(reward)
    got = [env.rewards[agent] for agent in env.possible_agents]
    assert got == pytest.approx(expected)
    for agent in env.possible_agents:
        assert env.infos[agent]["hand_scores"] == [0, 10, 10, 3]
    seen = {}
    while env.agents:
        agent = env.agent_selection
        seen[agent] = env.last()[1]
        env.step(None)
    assert [seen[agent] for agent in env.possible_agents] == pytest.approx(expected)


@pytest.mark.parametrize("reward", ["score", "zero_sum", "rank"])
def test_reward_modes_over_random_hands(reward):
    env = dominoes_env.raw_env(5, 9, reward=reward)
    rng = np.random.default_rng(8)
    for game in range(30):
        env.reset(seed=game)
        while not any(env.terminations.values()):
            env.step(random_action(env, rng))
        scores = np.array(env.infos["player_0"]["hand_scores"])
        rewards = np.array([env.rewards[agent] for agent in env.possible_agents])
        if reward == "score":
            assert np.array_equal(rewards, -scores)
        elif reward == "zero_sum":
            assert rewards.sum() == pytest.approx(0)
            for seat in range(5):
                assert rewards[seat] == pytest.approx(np.delete(scores, seat).mean() - scores[seat])
        else:
            assert np.all((-1 <= rewards) & (rewards <= 1))
            for seat in range(5):
                others = np.delete(scores, seat)
                more, fewer = (others > scores[seat]).sum(), (others < scores[seat]).sum()
                assert rewards[seat] == pytest.approx((more - fewer) / 4)


# --------------------------------------------------------------------------- multi-hand episodes


@pytest.mark.parametrize("players, highest, num_hands", [(4, 9, 4), (3, 6, 9), (2, 6, 1), (8, 12, 3)])
def test_multi_hand_episode(players, highest, num_hands):
    env = dominoes_env.env(players, highest, num_hands)
    env.reset(seed=13)
    rng = np.random.default_rng(1)
    agents = env.possible_agents
    totals, collected, hand_scores = np.zeros(players, dtype=np.int64), dict.fromkeys(agents, 0.0), []
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        collected[agent] += reward
        decoded = dominoes_env.decode_observation(observation, players, highest)
        if not termination:
            # Hand k of the game (k hands finished so far) is played with the engine N - k.
            assert decoded["hand_number"] == (highest - len(hand_scores)) % (highest + 1)
            # Scores so far (egocentric) are in the observation of a multi-hand game only.
            seat = agents.index(agent)
            expected = tuple(int(totals[(seat + k) % players]) for k in range(players))
            assert decoded["scores"] == (expected if num_hands > 1 else None)
        action = random_action(env, rng)
        hand_before, hand = env.unwrapped.game.hand_index, env.unwrapped.game.hand
        env.step(action)
        if action is None:
            continue
        if hand.is_over:  # this move ended the hand (the env has dealt the next one, if any)
            scores = hand.scores()
            hand_scores.append(scores)
            totals += scores
            assert [env.rewards[a] for a in agents] == (-scores).tolist()
            assert env.infos[agents[0]]["hand_index"] == hand_before
            assert env.infos[agents[0]]["game_scores"] == totals.tolist()
            assert all(env.terminations.values()) == (len(hand_scores) == num_hands)
        else:
            assert not any(env.rewards.values())
            assert not any(env.terminations.values())
    assert len(hand_scores) == num_hands
    # Every reward reached its agent through last(): the episode's sum is minus its game score.
    assert [collected[a] for a in agents] == (-totals).tolist()


# --------------------------------------------------------------------------- illegal actions


def started_env(**options):
    env = dominoes_env.env(4, 9, 2, **options)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(7):
        env.step(random_action(env, rng))
    return env


def masked_out_action(env) -> int:
    mask = env.observe(env.agent_selection)["action_mask"]
    return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize("bad", [1.5, "3", None, -1, 276, 10_000, True, np.float64(3.0), [3], "masked"])
def test_illegal_action_raises_and_changes_nothing(bad):
    env = started_env()
    if isinstance(bad, str) and bad == "masked":
        bad = masked_out_action(env)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()
    before = snapshot(env)
    with pytest.raises(ValueError) as refused:
        env.step(bad)
    assert isinstance(refused.value, IllegalActionError)
    message = str(refused.value)
    assert repr(bad) in message or str(bad) in message, message
    listed = re.search(r"legal actions: \[(.*)\]$", message).group(1)
    assert [int(a) for a in re.findall(r"(?:^|, )(\d+) ", listed)] == legal
    assert_same_snapshot(before, snapshot(env))
    # The caller may catch the error and go on.
    rng = np.random.default_rng(0)
    env.step(np.int64(legal[0]))
    for _ in env.agent_iter():
        env.step(random_action(env, rng))
    assert not env.agents


@pytest.mark.parametrize("wrap", [int, np.int64, np.int16, np.uint16, np.array], ids=["int", "int64", "int16",
                                                                                  "uint16", "0-d array"])
def test_integer_like_actions_are_accepted(wrap):
    """Any integer type is an action, as for the engine (HandState.apply) and gymnasium's Discrete."""
    env = started_env()
    legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    reference = started_env()
    reference.step(legal)
    env.step(wrap(legal))
    assert np.array_equal(env.unwrapped.game.hand.state, reference.unwrapped.game.hand.state)
    assert env.action_space(env.agent_selection).contains(wrap(legal))


def test_non_none_action_for_a_finished_agent_is_refused():
    env = started_env()
    rng = np.random.default_rng(5)
    while not all(env.terminations.get(a, False) for a in env.agents):
        env.step(random_action(env, rng))
    finished = env.agent_selection
    before = snapshot(env)
    with pytest.raises(ValueError, match=rf"{finished}.*None.*got 0"):
        env.step(0)
    assert_same_snapshot(before, snapshot(env))
    env.step(None)
    assert finished not in env.agents


@pytest.mark.parametrize("make", [dominoes_env.env, dominoes_env.raw_env])
def test_step_after_the_episode_or_before_reset_is_a_clear_error(make):
    env = make(3, 6)
    with pytest.raises(IllegalActionError, match=r"no episode yet.*call reset\(\)"):
        env.unwrapped.step(0)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in env.agent_iter():
        env.step(random_action(env, rng))
    assert not env.agents
    with pytest.raises(IllegalActionError, match=r"the episode is over.*call reset\(\)"):
        env.unwrapped.step(None)


@pytest.mark.parametrize("seed, message", [(-1, "got -1"), (2**64, "got 18446744073709551616"), (1.5, "got 1.5"),
                                           ("7", "got '7'"), (True, "got True")])
def test_bad_seeds_are_a_value_error_naming_the_seed(seed, message):
    env = dominoes_env.raw_env(3, 6)
    with pytest.raises(ValueError, match=rf"seed must be an integer from 0 to 18446744073709551615, {message}"):
        env.reset(seed=seed)
    env.reset(seed=np.uint64(2**64 - 1))  # the largest seed works


def test_a_finished_hand_reports_who_went_out_to_every_agent():
    env = dominoes_env.raw_env(4, 9, num_hands=3)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    reported = []
    while env.agents:
        hand, moving = env.game.hand, not env.terminations[env.agent_selection]
        env.step(random_action(env, rng))
        if moving and hand.is_over:
            infos = [env.infos[a] for a in env.agents]
            assert all(info == infos[0] for info in infos)
            assert infos[0]["went_out"] == hand.went_out and infos[0]["hand_scores"] == hand.scores().tolist()
            reported.append(infos[0]["went_out"])
    assert len(reported) == 3 and any(seat is not None for seat in reported)


@pytest.mark.parametrize("reward, num_hands", [("score", 1), ("zero_sum", 1), ("rank", 1), ("score", 3), ("rank", 3)])
def test_penalize_ends_the_game_with_a_penalty_worse_than_any_legal_outcome(reward, num_hands):
    env = dominoes_env.raw_env(4, 9, num_hands, reward=reward, illegal_action="penalize")
    env.reset(seed=3)
    offender = env.agent_selection
    action = masked_out_action(env)
    env.step(action)
    config = make_config(4, 9)
    per_hand = -1.0 if reward == "rank" else -config.max_hand_pips  # the worst one hand can pay
    penalty = env.rewards[offender]
    assert penalty < per_hand * num_hands  # worse than the worst legal outcome of every hand left
    assert env.infos[offender]["illegal_action"] == action and env.infos[offender]["penalty"] == penalty
    assert "not legal" in env.infos[offender]["reason"]
    assert all(env.terminations.values())
    assert {a: env.rewards[a] for a in env.possible_agents} == {a: penalty if a == offender else 0.0
                                                                for a in env.possible_agents}
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any()
    seen = {}
    for agent in env.agent_iter():
        _, reward_seen, termination, _, _ = env.last()
        assert termination
        seen[agent] = reward_seen
        env.step(None)
    assert seen == {a: penalty if a == offender else 0.0 for a in env.possible_agents}


def test_the_worst_hand_bound_is_the_heaviest_hand_a_seat_can_hold():
    config = make_config(4, 9)
    assert config.max_hand_size == 14 and config.max_hand_pips == 202  # (9|9) 18 + (8|9) 17 + ... 14 tiles
    paid = []
    env = dominoes_env.raw_env(4, 9)
    rng = np.random.default_rng(0)
    for seed in range(30):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            paid.append(env.last()[1])
            env.step(random_action(env, rng))
    assert min(paid) < -20 and min(paid) > -config.max_hand_pips  # real hands pay less than the bound


def test_penalize_still_plays_legal_moves_normally():
    env = started_env(illegal_action="penalize")
    rng = np.random.default_rng(4)
    steps = 0
    for _ in env.agent_iter():
        env.step(random_action(env, rng))
        steps += 1
    assert steps > 10 and not env.agents


def test_reset_from_a_position_refuses_a_foreign_or_finished_one():
    env = dominoes_env.raw_env(4, 9)
    foreign = HandState.deal(make_config(3, 9), 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="4 players, double-9"):
        env.reset(seed=0, options={"position": foreign})
    config = make_config(4, 9)
    tile = config.tiles.index
    blocked = HandState.from_position(config, [[tile(1, 2)], [tile(3, 4)], [tile(0, 0)], [tile(5, 5)]], 9)
    with pytest.raises(ValueError, match="finished"):
        env.reset(seed=0, options={"position": blocked})


REFUSED_RESETS = [
    ({"game_scores": 5}, "game_scores must be a list of 4 scores, got 5"),
    ({"game_scores": [1, 2]}, "game_scores must give 4 scores, got 2"),
    ({"hands_played": 7}, "hands_played must be an integer from 0 to 2, got 7"),
]


@pytest.mark.parametrize("options, message", REFUSED_RESETS)
def test_a_refused_reset_leaves_the_aec_episode_as_it_was(options, message):
    """The refused reset names the option; the game goes on as if it had not been called, the
    deals' generator included (a seed given with the refused call is not taken)."""
    env, twin = dominoes_env.raw_env(4, 9, num_hands=3), dominoes_env.raw_env(4, 9, num_hands=3)
    for e in (env, twin):
        e.reset(seed=3)
    with pytest.raises(ValueError, match=re.escape(message)):
        env.reset(seed=5, options=options)
    hands = 0
    while twin.agents and hands < 2:  # the same moves, through the end of the first hand into the next deal
        action = int(np.flatnonzero(twin.observe(twin.agent_selection)["action_mask"])[0])
        for e in (env, twin):
            e.step(action)
        hands += bool(twin.infos[twin.agent_selection].get("hand_scores") is not None)
        assert np.array_equal(env.observe(env.agent_selection)["observation"],
                              twin.observe(twin.agent_selection)["observation"])
    assert hands >= 1


@pytest.mark.parametrize("options, message", [*REFUSED_RESETS, ({"seat": 4}, "seat must be an integer from 0 to 3")])
def test_a_refused_reset_leaves_the_single_agent_episode_as_it_was(options, message):
    """Seat, players and game stay those of the episode in progress, and the generator too: the
    next episodes are those of a twin that was never refused (a seed given with the refused
    call is not taken)."""
    env, twin = (dominoes_env.SingleAgentEnv(opponents="random", num_hands=3) for _ in range(2))
    for e in (env, twin):
        e.reset(seed=1)
    seat, players, game = env.seat, list(env.players), env.game
    with pytest.raises(ValueError, match=re.escape(message)):
        env.reset(seed=5, options=options)
    assert env.seat == seat and env.players == players and env.game is game
    for _ in range(3):
        (observation, _), (expected, _) = env.reset(), twin.reset()
        assert env.seat == twin.seat and np.array_equal(observation, expected)


def test_pettingzoos_parallel_seed_test_refused_under_raise_passes_under_penalize():
    """parallel_seed_test samples every agent's action without its mask: the mover's illegal
    sample is refused under illegal_action="raise" (the default, as documented), and ends the game
    with its penalty, seeded the same way, under "penalize"."""
    from pettingzoo.test import parallel_seed_test

    with pytest.raises(dominoes_env.IllegalActionError, match="is not legal for seat"):
        parallel_seed_test(lambda: dominoes_env.parallel_env(3, 6, 2), num_cycles=200)
    parallel_seed_test(lambda: dominoes_env.parallel_env(3, 6, 2, illegal_action="penalize"), num_cycles=200)
