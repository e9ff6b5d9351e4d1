"""The batched engine against the scalar env, move by move, and its refusals."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_invariants import RULE_IDS, RULE_SETS

import dominoes_env
from dominoes_env import IllegalActionError
from dominoes_env.core import HandState, batch, make_config, rules
from dominoes_env.vector import VectorDominoes


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)


def follow(players: int, highest: int, num_hands: int, games: int, steps: int, seed: int, **rules) -> dict:
    """Drive a VectorDominoes and one scalar env per game with the same actions from the same
    positions; assert every observation, mask, player to move, reward and score agree."""
    vec = VectorDominoes(games, players, highest, num_hands, seed=seed, **rules)
    observations, infos = vec.reset()
    envs = [dominoes_env.raw_env(players, highest, num_hands, **rules) for _ in range(games)]
    for game, env in enumerate(envs):
        env.reset(seed=0, options=vec.reset_options(game))
    rng = np.random.default_rng(seed)
    counted = {"hands": 0, "games": 0, "steps": 0}
    for _ in range(steps):
        for game, env in enumerate(envs):
            agent = env.agent_selection
            assert infos["current_player"][game] == env.possible_agents.index(agent)
            seen = env.observe(agent)
            np.testing.assert_array_equal(observations["observation"][game], seen["observation"])
            np.testing.assert_array_equal(observations["action_mask"][game], seen["action_mask"])
        actions = random_actions(observations["action_mask"], rng)
        observations, rewards, terminations, truncations, infos = vec.step(actions)
        assert not truncations.any()
        counted["steps"] += games
        for game, env in enumerate(envs):
            env.step(int(actions[game]))
            np.testing.assert_array_equal(rewards[game], [env.rewards[agent] for agent in env.possible_agents])
            if "_hand_scores" in infos and infos["_hand_scores"][game]:
                counted["hands"] += 1
                finished = env.infos[env.possible_agents[0]]
                assert infos["hand_scores"][game].tolist() == finished["hand_scores"]
                assert infos["went_out"][game] == (-1 if finished["went_out"] is None else finished["went_out"])
                assert terminations[game] == env.game.is_over
                if terminations[game]:
                    counted["games"] += 1
                    assert infos["_final_obs"][game] and infos["_final_info"][game]
                    assert infos["final_info"]["game_scores"][game].tolist() == finished["game_scores"]
                    last = env.possible_agents[env.game.hand.current_player]
                    np.testing.assert_array_equal(infos["final_obs"][game]["observation"],
                                                  env.observe(last)["observation"])
                # the batch dealt the next hand (or game) from its own generator: follow it there
                env.reset(seed=0, options=vec.reset_options(game))
            else:
                assert not terminations[game]
    return counted


# (players, highest, hands per game, games in the batch, steps)
CASES = [(4, 9, 1, 24, 300), (2, 6, 1, 16, 300), (3, 12, 2, 12, 250), (8, 15, 1, 6, 500), (5, 9, 3, 8, 300)]


@pytest.mark.parametrize("players, highest, num_hands, games, steps", CASES)
def test_the_batch_plays_exactly_the_scalar_game(players, highest, num_hands, games, steps):
    counted = follow(players, highest, num_hands, games, steps, seed=players * 7 + highest)
    assert counted["hands"] > games and counted["games"] > 0


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_the_batch_plays_exactly_the_scalar_game_under_every_table_rule(rules):
    counted = follow(4, 9, 2, 12, 200, seed=5, **rules)
    assert counted["hands"] > 12


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
@pytest.mark.parametrize("players, highest, num_hands, games, steps", CASES)
def test_the_batch_plays_exactly_the_scalar_game_many(players, highest, num_hands, games, steps, rules):
    follow(players, highest, num_hands, games * 4, steps * 2, seed=players + highest, **rules)


def test_same_seed_same_games_and_reset_continues_the_generator():
    def trajectory(seed):
        vec = VectorDominoes(32, seed=seed)
        observations, _ = vec.reset()
        rng = np.random.default_rng(0)
        seen = [observations["observation"].copy()]
        for _ in range(80):
            observations, rewards, terminations, _, _ = vec.step(random_actions(observations["action_mask"], rng))
            seen.append(observations["observation"].copy())
        return np.stack(seen)

    assert np.array_equal(trajectory(3), trajectory(3)) and not np.array_equal(trajectory(3), trajectory(4))
    vec = VectorDominoes(4, seed=1)
    first, _ = vec.reset()
    again, _ = vec.reset(seed=1)
    assert np.array_equal(first["observation"], again["observation"])
    other, _ = vec.reset()  # no seed: the generator goes on
    assert not np.array_equal(first["observation"], other["observation"])


@pytest.mark.parametrize("make_actions, message", [
    (lambda vec, legal: legal[:-1], r"an array of 6 actions .*got shape \(5,\)"),
    (lambda vec, legal: legal.reshape(2, 3), r"an array of 6 actions"),
    (lambda vec, legal: legal.astype(np.float64), r"must be integers, got dtype float64"),
    (lambda vec, legal: np.array(["1"] * 6), r"must be integers"),
    (lambda vec, legal: np.where(np.arange(6) == 2, 999, legal), r"1 of the 6 actions refused.*game 2: action 999 "
                                                               r"is out of range 0..275"),
    (lambda vec, legal: np.where(np.arange(6) % 2 == 1, vec.config.pass_action, legal),
     r"3 of the 6 actions refused, nothing changed: game 1: action 275 \(pass\) is not legal"),
    (lambda vec, legal: np.full(6, -1), r"6 of the 6 actions refused.*game 0: action -1 is out of range"),
])
def test_bad_action_arrays_are_refused_naming_the_games_and_nothing_changes(make_actions, message):
    vec = VectorDominoes(6, seed=2)
    observations, _ = vec.reset()
    legal = np.array([np.flatnonzero(row)[0] for row in observations["action_mask"]], dtype=np.int64)
    states = vec.states.copy()
    with pytest.raises(IllegalActionError, match=message):
        vec.step(make_actions(vec, legal))
    assert np.array_equal(vec.states, states)
    vec.step(legal)  # and the batch goes on
    with pytest.raises(IllegalActionError, match="no games yet"):
        VectorDominoes(2).step(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize("kwargs, message", [
    ({"num_envs": 0}, "num_envs must be an integer from 1 to"), ({"num_envs": 2.5}, "num_envs must be an integer"),
    ({"num_envs": 10**8}, "num_envs must be an integer from 1 to 10000000"),
    ({"num_envs": 9_000_000, "num_players": 8, "highest_double": 18}, r"would take .* GiB"),
    ({"num_envs": 4, "reward": "win"}, "reward='win'"), ({"num_envs": 4, "seed": -1}, "seed must be an integer"),
    ({"num_envs": 4, "num_hands": 0}, "num_hands must be"), ({"num_envs": 4, "boneyard": "yes"}, "boneyard must be"),
])
def test_bad_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VectorDominoes(**kwargs)


def test_a_hundred_thousand_games_fit_in_two_gigabytes():
    vec = VectorDominoes(100_000)
    assert vec.bytes_per_game * 100_000 < 2 * 2**30
    observations, _ = vec.reset(seed=0)
    assert observations["observation"].shape == (100_000, 479) and observations["action_mask"].any(axis=1).all()


def test_position_and_reset_options_put_the_scalar_env_on_the_same_game():
    vec = VectorDominoes(3, num_hands=3, seed=9)
    observations, infos = vec.reset()
    rng = np.random.default_rng(9)
    for _ in range(120):
        observations, *_, infos = vec.step(random_actions(observations["action_mask"], rng))
    env = dominoes_env.raw_env(4, 9, 3)
    for game in range(3):
        env.reset(options=vec.reset_options(game))
        seen = env.observe(env.agent_selection)
        np.testing.assert_array_equal(seen["observation"], observations["observation"][game])
        one_hand = dominoes_env.raw_env(4, 9)
        one_hand.reset(options={"position": vec.position(game)})
        np.testing.assert_array_equal(one_hand.observe(one_hand.agent_selection)["action_mask"],
                                      observations["action_mask"][game])


def test_subsets_of_games_step_alone_and_bad_subsets_are_refused():
    vec = VectorDominoes(6, seed=4)
    observations, _ = vec.reset()
    before = vec.states.copy()
    games = np.array([4, 1])
    actions = np.array([np.flatnonzero(observations["action_mask"][g])[0] for g in games])
    rewards, ends = vec.play(games, actions)
    assert rewards.shape == (2, 4) and ends.games.size == 0
    changed = np.flatnonzero((vec.states != before).any(axis=1))
    assert changed.tolist() == [1, 4]
    seen, masks, players = vec.observe(games)
    env = dominoes_env.raw_env(4, 9)
    for k, game in enumerate(games):
        env.reset(options={"position": vec.position(game)})
        assert env.possible_agents.index(env.agent_selection) == players[k]
        np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], seen[k])
        np.testing.assert_array_equal(env.observe(env.agent_selection)["action_mask"], masks[k])
        other = (players[k] + 1) % 4  # another seat's view: its own observation, and nothing legal
        np.testing.assert_array_equal(vec.observe(np.array([game]), np.array([other]))[0][0],
                                      env.observe(f"player_{other}")["observation"])
        assert not vec.observe(np.array([game]), np.array([other]))[1].any()
    vec.deal(np.array([0, 5]), np.array([3, 0]))
    assert vec.position(0).engine_value == 6 and vec.position(5).engine_value == 9
    for call, message in [(lambda: vec.play(np.array([1, 1]), np.array([0, 0])), "distinct"),
                          (lambda: vec.play(np.array([6]), np.array([0])), r"indices 0..5"),
                          (lambda: vec.observe(np.array([0.5])), "game indices"),
                          (lambda: vec.observe(np.array([0]), np.array([4])), r"each -1..3"),
                          (lambda: vec.deal(np.array([0]), np.array([-1])), "integers from 0 to 999"),
                          # the bound records and resets take: one hand index bound, one place
                          (lambda: vec.deal(np.array([0]), np.array([10**12])), "integers from 0 to 999")]:
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.slow  # compiles the parallel kernels: 8 s on a cold cache, a seventh of the default run
def test_threads_play_the_same_games_and_are_bounded():
    import numba

    def run(threads):
        vec = VectorDominoes(600, seed=11, threads=threads)  # more than one block of 256 games
        observations, _ = vec.reset()
        rng = np.random.default_rng(0)
        for _ in range(60):
            observations, *_ = vec.step(random_actions(observations["action_mask"], rng))
        return observations["observation"], vec.states.copy()

    def run_random(threads):
        vec = VectorDominoes(600, seed=11, threads=threads)
        vec.reset()
        for _ in range(60):
            observations, *_ = vec.step_random()
        return observations["observation"], observations["action_mask"], vec.states.copy()

    before = numba.get_num_threads()
    one = run(1)
    many = run(numba.config.NUMBA_NUM_THREADS)
    assert all(np.array_equal(a, b) for a, b in zip(one, many))
    assert all(np.array_equal(a, b) for a, b in zip(run_random(1), run_random(numba.config.NUMBA_NUM_THREADS)))
    assert numba.get_num_threads() == before  # the caller's setting is left as it was

    # the threaded kernels refuse as the serial ones do, in a whole step and in some games
    vec = VectorDominoes(600, seed=3, threads=numba.config.NUMBA_NUM_THREADS)
    observations, _ = vec.reset()
    actions = random_actions(observations["action_mask"], np.random.default_rng(1))
    illegal = vec.config.num_actions - 1  # the pass, never legal at a hand's first move here
    actions[[5, 300, 599]] = illegal
    states = vec.states.copy()
    with pytest.raises(IllegalActionError, match=r"^3 of the 600 actions refused, nothing changed: game 5"):
        vec.step(actions)
    refused_in_some = r"^2 of the 500 actions refused, nothing changed: game 300: .*; game 599"
    with pytest.raises(IllegalActionError, match=refused_in_some):
        vec.play(np.arange(100, 600), actions[100:])
    assert np.array_equal(vec.states, states)
    with pytest.raises(ValueError, match="threads must be an integer from 1 to"):
        VectorDominoes(4, threads=numba.config.NUMBA_NUM_THREADS + 1)


def test_the_batch_deals_like_the_scalar_engine():
    """20,000 deals of 3 players, double-six, from the batch's shuffle and from the scalar
    engine's (numpy's permutation): for each tile, how often each seat holds it, one
    contingency test over all tiles. A biased shuffle (Sattolo's in place of Fisher-Yates, an
    off-by-one) fails it; a deal is not symmetric in the seats, hence the comparison."""
    stats = pytest.importorskip("scipy.stats")
    deals = 20_000
    config = make_config(3, 6)
    t = config.num_tiles
    vec = VectorDominoes(deals, config, seed=0)
    vec.reset()
    rng = np.random.default_rng(1)
    scalar = np.stack([HandState.deal(config, 0, rng).state for _ in range(deals)])

    def seat_counts(states: np.ndarray) -> np.ndarray:  # (tiles, seats)
        owners = states[:, rules.HEADER_SIZE:rules.HEADER_SIZE + t]
        return np.stack([(owners == seat).sum(axis=0) for seat in range(3)], axis=1)

    batch_counts, scalar_counts = seat_counts(vec.states), seat_counts(scalar)
    engine = rules.double_index(6, 6)
    assert batch_counts[engine].sum() == scalar_counts[engine].sum() == 0  # the engine is on the table
    statistic = sum(stats.chi2_contingency(np.stack([batch_counts[tile], scalar_counts[tile]])).statistic
                    for tile in range(t) if tile != engine)
    assert stats.chi2.sf(statistic, (t - 1) * 2) > 1e-3


def test_the_compiled_random_picker_is_uniform_over_each_rows_legal_actions():
    """random_legal_actions: row k takes legal action number floor(u_k * count_k) (the numpy
    picker's rule, so a seeded stream plays the same moves), every legal action as often as
    the others, -1 for a row with none; int8 and bool masks alike."""
    from dominoes_env.vector import random_legal_actions

    masks = np.zeros((3, 10), dtype=np.int8)
    masks[0, [1, 4, 9]] = 1
    masks[1, 7] = 1
    uniforms = np.random.default_rng(5).random(3)
    picks = random_legal_actions(masks, np.random.default_rng(5))
    assert picks[0] == [1, 4, 9][int(uniforms[0] * 3)] and picks[1] == 7 and picks[2] == -1
    assert np.array_equal(random_legal_actions(masks.astype(bool), np.random.default_rng(5)), picks)
    many = np.repeat(masks[:1], 30_000, axis=0)
    counts = np.bincount(random_legal_actions(many, np.random.default_rng(0)), minlength=10)
    assert counts[[1, 4, 9]].sum() == 30_000 and np.all(np.abs(counts[[1, 4, 9]] - 10_000) < 400)  # 4.9 sigma
    with pytest.raises(ValueError, match="must be a \\(games, actions\\) array"):
        random_legal_actions(masks[0], np.random.default_rng(0))


def test_the_random_picker_on_threads_picks_what_one_thread_picks():
    """random_legal_actions(..., threads=all) over several blocks: the same actions as on one
    thread from the same seed (the draw comes first), numba's thread count put back after; a
    thread count out of range is refused in one line."""
    import numba

    from dominoes_env.vector import random_legal_actions

    masks = (np.random.default_rng(3).random((1000, 55)) < 0.1).astype(np.int8)  # rows with none included
    before = numba.get_num_threads()
    one = random_legal_actions(masks, np.random.default_rng(4))
    two = random_legal_actions(masks, np.random.default_rng(4), threads=numba.config.NUMBA_NUM_THREADS)
    assert np.array_equal(one, two) and numba.get_num_threads() == before
    assert np.all(masks[one >= 0, one[one >= 0]] == 1) and np.all((one == -1) == (masks.sum(axis=1) == 0))
    uniforms = np.random.default_rng(4).random(masks.shape[0])  # the parallel kernel itself, on any machine
    picked = batch.pick_legal_parallel(batch.mask_words(masks), uniforms, np.empty(masks.shape[0], dtype=np.int64))
    assert np.array_equal(picked, one)
    reference = [np.flatnonzero(row)[int(u * row.sum())] if row.any() else -1 for row, u in zip(masks, uniforms)]
    assert one.tolist() == reference  # legal action number floor(u * count), ascending
    # the picker reads a mask four bytes at a time: any dtype, order, width and nonzero value picks alike
    for same in (masks.astype(bool), masks * np.int8(-3), masks.astype(np.float32), np.asfortranarray(masks),
                 np.pad(masks, ((0, 0), (0, 1)))[:, :55]):
        assert np.array_equal(random_legal_actions(same, np.random.default_rng(4)), one)
    whole_words = masks[:, :52].copy()  # read in place (52 = 13 words)
    assert np.array_equal(random_legal_actions(whole_words, np.random.default_rng(4)),
                          random_legal_actions(np.pad(whole_words, ((0, 0), (0, 1))), np.random.default_rng(4)))
    for bad in (0, numba.config.NUMBA_NUM_THREADS + 1, 1.5):
        with pytest.raises(ValueError, match="threads") as refused:
            random_legal_actions(masks, np.random.default_rng(0), threads=bad)
        assert "\n" not in str(refused.value)


def _same_step(a: tuple, b: tuple) -> None:
    """Two step results equal: observations, masks, rewards, terminations and every info."""
    (obs_a, rew_a, term_a, trunc_a, infos_a), (obs_b, rew_b, term_b, trunc_b, infos_b) = a, b
    for key in ("observation", "action_mask"):
        np.testing.assert_array_equal(obs_a[key], obs_b[key])
    for x, y in ((rew_a, rew_b), (term_a, term_b), (trunc_a, trunc_b)):
        np.testing.assert_array_equal(x, y)
    assert set(infos_a) == set(infos_b)
    for key, value in infos_a.items():
        if key == "final_obs":
            for game in np.flatnonzero(infos_a["_final_obs"]):
                for part in ("observation", "action_mask"):
                    np.testing.assert_array_equal(value[game][part], infos_b[key][game][part])
        elif key == "final_info":
            assert all(np.array_equal(value[name], infos_b[key][name]) for name in value)
        else:
            np.testing.assert_array_equal(value, infos_b[key])


@pytest.mark.parametrize("table", [dict(num_players=4, highest_double=9, num_hands=2),
                                   dict(num_players=2, highest_double=6),
                                   dict(num_players=6, highest_double=12, rules="mexican_train", num_hands=2)],
                         ids=["4p-d9", "2p-d6", "6p-d12-mexican-train"])
def test_step_random_plays_the_moves_the_picker_would_and_reports_them(table):
    """step_random(rng) is step(random_legal_actions(masks, rng)) done inside the compiled step:
    from the same seeds, every observation, mask, reward, termination and info is equal, hands
    and games end on the way, and infos["actions"] holds the moves played."""
    from dominoes_env.vector import random_legal_actions

    picked, inside = VectorDominoes(40, seed=9, **table), VectorDominoes(40, seed=9, **table)
    observations, _ = picked.reset()
    inside.reset()
    picker_rng, inside_rng = np.random.default_rng(4), np.random.default_rng(4)
    ended = 0
    for _ in range(400):
        actions = random_legal_actions(observations["action_mask"], picker_rng)
        stepped = picked.step(actions)
        result = inside.step_random(inside_rng)
        np.testing.assert_array_equal(result[4].pop("actions"), actions)
        _same_step(stepped, result)
        observations = stepped[0]
        ended += int(stepped[2].sum())
    assert ended > 40


def test_step_random_defaults_to_the_envs_generator_and_refuses_what_step_refuses():
    def trajectory(seed: int) -> list:
        vec = VectorDominoes(16, seed=seed)
        vec.reset()
        return [vec.step_random()[4]["actions"] for _ in range(60)]

    assert np.array_equal(trajectory(1), trajectory(1)) and not np.array_equal(trajectory(1), trajectory(2))
    vec = VectorDominoes(8, seed=0)
    with pytest.raises(IllegalActionError, match=r"^step_random\(\) refused: no games yet; call reset\(\) first$"):
        vec.step_random()
    vec.reset()
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        vec.step_random(3)  # type: ignore[arg-type]
    # a game left on its last position by play() has no move: refused, nothing changed
    rng = np.random.default_rng(0)
    while True:
        _, hands = vec.play(np.arange(8), random_actions(vec.observe(np.arange(8))[1], rng))
        if hands.game_over.any():
            break
    states = vec.states.copy()
    over = hands.games[hands.game_over].tolist()
    refusal = rf"^step_random\(\) refused: the hand is over in {len(over)} game\(s\) \(games {re.escape(str(over))}\)"
    rng = np.random.default_rng(1)
    with pytest.raises(IllegalActionError, match=refusal + r"; new_games\(\) deals them$"):
        vec.step_random(rng)
    with pytest.raises(IllegalActionError, match=refusal):
        vec.step_random()  # the env's own generator
    assert np.array_equal(vec.states, states)
    assert rng.random() == np.random.default_rng(1).random()  # the refused steps drew nothing
    vec.new_games(np.array(over))
    assert vec.step_random()[4]["actions"].shape == (8,)


def _stale_move(vec: VectorDominoes, masks: np.ndarray) -> tuple[int, int]:
    """A game and a move its mask in `masks` shows as legal that its position no longer allows."""
    for game in range(vec.num_envs):
        for action in np.flatnonzero(masks[game]).tolist():
            if not vec.position(game).is_legal(action):
                return game, action
    raise AssertionError("no move went stale")


def test_the_legal_moves_a_batch_remembers_follow_every_change_of_a_position():
    """A step checks moves against the legal moves it remembers from the last observation
    (batch.BatchArrays.legal). play(), deal() and new_games() change positions without a step:
    a move that was legal before them is refused after, naming the game, and nothing changes."""
    vec = VectorDominoes(8, seed=5)
    observations, _ = vec.reset()
    rng = np.random.default_rng(0)
    for change in ("play", "deal", "new_games"):
        observations, *_ = vec.step(random_actions(observations["action_mask"], rng))
        masks = observations["action_mask"]
        assert (vec._arrays.legal_counts >= 0).all()  # remembered from this step's observation
        if change == "play":
            vec.play(np.arange(8), random_actions(masks, rng))
        elif change == "deal":
            vec.deal(np.arange(8), np.zeros(8, dtype=np.int64))
        else:
            vec.new_games(np.arange(8))
        assert (vec._arrays.legal_counts == -1).all(), change
        game, stale = _stale_move(vec, masks)
        moves = random_actions(vec.observe(np.arange(8))[1], rng)
        moves[game] = stale
        states = vec.states.copy()
        with pytest.raises(IllegalActionError, match=rf"^1 of the 8 actions refused, nothing changed: game {game}: "):
            vec.step(moves)
        assert np.array_equal(vec.states, states), change
        observations = {"action_mask": vec.observe(np.arange(8))[1]}


def test_positions_with_more_legal_moves_than_remembered_are_checked_by_the_rules(monkeypatch):
    """With room for one legal move a game (most positions have more), step and step_random
    play exactly the games of a batch that remembers them all, and still refuse illegal moves."""
    from dominoes_env.vector import random_legal_actions

    full = VectorDominoes(40, seed=9, num_hands=2)
    monkeypatch.setattr(batch, "LEGAL_CAPACITY", 1)
    small = VectorDominoes(40, seed=9, num_hands=2)
    assert small._arrays.legal.shape == (40, 1)
    observations, _ = full.reset()
    small.reset()
    rngs = [np.random.default_rng(4) for _ in range(4)]
    for turn in range(300):
        if turn % 2:
            _same_step(full.step_random(rngs[0]), small.step_random(rngs[1]))
        else:
            masks = observations["action_mask"]
            _same_step(full.step(random_legal_actions(masks, rngs[2])),
                       small.step(random_legal_actions(masks, rngs[3])))
        observations = {"action_mask": full.observe(np.arange(40))[1]}
    assert 0 < (small._arrays.legal_counts >= 0).sum() < 40  # some positions had one legal move
    bad = random_legal_actions(observations["action_mask"], rngs[0])
    bad[3] = 999
    with pytest.raises(IllegalActionError, match="game 3: action 999 is out of range"):
        small.step(bad)
