"""JaxDominoes, Pgx's interface over the JAX rules: games played under ``jit(vmap(step))`` agree
with the compiled engine at every step (positions, masks, observations, rewards, the next
hand's deal), compile once per table, stay finished, punish an illegal action, and repeat for a
seed."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from dominoes_env import make_config  # noqa: E402
from dominoes_env.core import rules  # noqa: E402
from dominoes_env.core.observation import Observer  # noqa: E402
from dominoes_env.core.rewards import illegal_action_penalty  # noqa: E402
from dominoes_env.jax import JaxDominoes, restart_finished  # noqa: E402


@cache
def compiled(config, hands):
    """The env of a table and game length with its jit(vmap(init)) and jit(vmap(step)): each
    compiled once for the whole file (compiling is most of these tests' time)."""
    env = JaxDominoes(config, hands=hands)
    return env, jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))


#: the default run's two programs: one hand at the shipped table, a game of three hands under
#: the Mexican Train rules (boneyard, covered doubles)
ONE_HAND, GAME = (make_config(4, 9), 1), (make_config(3, 6, rules="mexican_train"), 3)
GAMES = 8  # every batch of the file: one shape, so one program per table


def play(env, games, seed, steps=None):
    """Random legal play of `games` games under jit(vmap(step)): the states, step by step, and the actions."""
    env, init, step = compiled(env.config, env.hands)
    state = init(jax.random.split(jax.random.PRNGKey(seed), games))
    rng = np.random.default_rng(seed)
    states, actions = [state], []
    while not bool(state.terminated.all()) and (steps is None or len(actions) < steps):
        mask = np.asarray(state.legal_action_mask)
        action = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        state = step(state, jnp.asarray(action))
        states.append(state)
        actions.append(action)
    return states, actions, step


def game(state, g):
    return jax.tree_util.tree_map(lambda leaf: np.asarray(leaf[g]), state)


@pytest.mark.parametrize("config, hands", [
    GAME, pytest.param(make_config(6, 12, rules="mexican_train"), 1, marks=pytest.mark.slow),
    pytest.param(make_config(2, 6), 4, marks=pytest.mark.slow),
    pytest.param(make_config(8, 18, cover_doubles=True), 2, marks=pytest.mark.slow)])
def test_every_step_agrees_with_the_compiled_engine(config, hands):
    env = JaxDominoes(config, hands=hands)
    states, actions, _ = play(env, games=GAMES, seed=1)
    tiles = config.tiles
    encoder = Observer(config, hands)
    mask = np.empty(config.num_actions, dtype=np.int8)
    scores = np.empty(config.num_players, dtype=np.int64)
    hands_ended = 0
    for before, action, after in zip(states, actions, states[1:]):
        for g in range(action.shape[0]):
            was, now = game(before, g), game(after, g)
            if was.terminated:
                assert (now.rewards == 0).all() and np.array_equal(now._position, was._position)
                continue
            expected = was._position.copy()
            rules.apply_action(expected, tiles.low, tiles.high, tiles.tiles_with_value, int(action[g]))
            rules.hand_scores(expected, tiles.low, tiles.high, scores)
            if expected[rules.HAND_OVER]:
                hands_ended += 1
                np.testing.assert_array_equal(now.rewards, -scores)
                np.testing.assert_array_equal(now._game_scores, was._game_scores + scores)
                if now.terminated:
                    np.testing.assert_array_equal(now._position, expected)
                    assert now.legal_action_mask.all()
                else:  # the next hand, dealt: its engine is the next one down, nothing played yet
                    assert now._position[rules.ENGINE_VALUE] == (config.highest_double - now._hand_index) % (
                        config.highest_double + 1) and now._position[rules.MOVES] == 0
                    assert now._hand_index == was._hand_index + 1
            else:
                np.testing.assert_array_equal(now._position, expected)
                assert (now.rewards == 0).all() and not now.terminated
            if not now.terminated:
                rules.fill_legal_mask(now._position, tiles.tiles_with_value, mask)
                np.testing.assert_array_equal(now.legal_action_mask, mask.astype(bool))
            assert now.current_player == now._position[rules.CURRENT_PLAYER]
            np.testing.assert_array_equal(now.observation, encoder.encode(now._position, int(now.current_player),
                                                                          now._game_scores))
    assert hands_ended >= GAMES * hands and all(bool(state.terminated.all()) for state in states[-1:])


def test_step_compiles_once_and_a_seed_repeats_its_games():
    env = JaxDominoes(*ONE_HAND[:1], hands=ONE_HAND[1])
    first, actions, step = play(env, games=GAMES, seed=3)
    assert step._cache_size() == 1  # every step of every game: one program
    again, same_actions, _ = play(env, games=GAMES, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(actions, same_actions))
    np.testing.assert_array_equal(np.asarray(first[-1]._position), np.asarray(again[-1]._position))
    other, _, _ = play(env, games=GAMES, seed=4, steps=1)
    assert not np.array_equal(np.asarray(other[0]._position), np.asarray(first[0]._position))


def test_finished_games_stay_finished_beside_games_still_playing():
    env = JaxDominoes(GAME[0], hands=GAME[1])
    states, _, step = play(env, games=GAMES, seed=5)
    ends = [int(np.argmax([bool(s.terminated[g]) for s in states])) for g in range(GAMES)]
    assert len(set(ends)) > 1  # games of a batch end at different steps
    last = states[-1]
    again = step(last, jnp.zeros(GAMES, dtype=jnp.int32))
    assert bool(again.terminated.all()) and not np.asarray(again.rewards).any()
    np.testing.assert_array_equal(np.asarray(again._position), np.asarray(last._position))
    # the batch's auto-reset: the finished games (all of them here) start again from their fresh slot
    fresh = states[0]
    restarted = restart_finished(last, fresh)
    np.testing.assert_array_equal(np.asarray(restarted._position), np.asarray(fresh._position))
    middle = states[min(ends)]  # some games finished, others still playing
    mixed = restart_finished(middle, fresh)
    for g in range(GAMES):
        expected = fresh if bool(middle.terminated[g]) else middle
        np.testing.assert_array_equal(np.asarray(mixed.observation[g]), np.asarray(expected.observation[g]))
    assert 0 < int(middle.terminated.sum()) < GAMES


def test_an_illegal_action_ends_the_game_and_costs_the_mover_more_than_any_legal_play():
    config, hands = GAME
    env, init, step = compiled(config, hands)
    states = init(jax.random.split(jax.random.PRNGKey(0), GAMES))
    illegal = int(np.flatnonzero(~game(states, 0).legal_action_mask)[0])
    legal = [int(np.flatnonzero(game(states, g).legal_action_mask)[0]) for g in range(3, GAMES)]
    after = step(states, jnp.array([illegal, -1, env.num_actions, *legal]))
    assert not np.asarray(after.terminated[3:]).any()  # the batch's other games play on
    for g in range(3):
        expected = np.zeros(config.num_players, dtype=np.float32)
        expected[int(game(states, g).current_player)] = illegal_action_penalty(config, "score", hands)
        assert bool(after.terminated[g]) and np.array_equal(np.asarray(after.rewards[g]), expected)
        np.testing.assert_array_equal(np.asarray(after._position[g]), np.asarray(states._position[g]))


def test_a_position_of_the_compiled_engine_plays_on_in_jax():
    from dominoes_env import VectorDominoes
    config, hands = GAME
    vector = VectorDominoes(GAMES, config, num_hands=hands)
    vector.reset(seed=0)
    env, _, step = compiled(config, hands)
    options = [vector.reset_options(g) for g in range(GAMES)]
    states = [env.from_position(option["position"].state, hand_index=option["hand_index"],
                                hands_done=option["hands_played"], game_scores=option["game_scores"])
              for option in options]
    batch = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *states)
    actions = []
    for g, option in enumerate(options):
        position = option["position"]
        assert int(states[g].current_player) == position.current_player
        np.testing.assert_array_equal(np.flatnonzero(np.asarray(states[g].legal_action_mask)),
                                      position.legal_actions())
        np.testing.assert_array_equal(np.asarray(states[g].observation),
                                      Observer(config, hands).encode(position.state, position.current_player,
                                                                     np.array(option["game_scores"])))
        actions.append(int(position.legal_actions()[-1]))
        position.apply(actions[-1])
    stepped = step(batch, jnp.array(actions))
    for g, option in enumerate(options):
        np.testing.assert_array_equal(np.asarray(stepped._position[g]), option["position"].state)
    position = options[0]["position"].state
    for bad, message in [(position[:-1], "is an integer array of"), (position.astype(float), "is an integer array of")]:
        with pytest.raises(ValueError, match=message):
            env.from_position(bad)
    with pytest.raises(ValueError, match="hands_done must be"):
        env.from_position(position, hands_done=hands)


def test_a_position_object_is_taken_as_its_array_and_the_game_is_named_as_pgx_names_it():
    from dominoes_env import VectorDominoes
    config, hands = GAME
    vector = VectorDominoes(2, config, num_hands=hands)
    vector.reset(seed=3)
    env = JaxDominoes(config, hands=hands)
    position = vector.position(1)  # what the batched engine hands out: a HandState
    for a, b in zip(jax.tree_util.tree_leaves(env.from_position(position)),
                    jax.tree_util.tree_leaves(env.from_position(position.state))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    other = VectorDominoes(1, make_config(config.num_players, config.highest_double + 3), num_hands=1)
    other.reset(seed=0)
    with pytest.raises(ValueError, match="the position is of another table"):
        env.from_position(other.position(0))
    assert (env.id, env.version) == ("dominoes", "v0")


@pytest.mark.slow
def test_pgx_runs_the_game_as_one_of_its_own():
    pgx = pytest.importorskip("pgx")
    from dominoes_env.jax.pgx_env import PgxDominoes
    config, hands = GAME
    env = PgxDominoes(config, hands=hands)
    assert isinstance(env, pgx.Env) and env.num_players == 3 and env.num_actions == config.num_actions
    game_env, init, step = compiled(config, hands)
    keys = jax.random.split(jax.random.PRNGKey(2), GAMES)
    ours, theirs = init(keys), jax.jit(jax.vmap(env.init))(keys)
    pgx_step = jax.jit(jax.vmap(env.step))
    rng = np.random.default_rng(0)
    for _ in range(40):
        for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        action = jnp.asarray([rng.choice(np.flatnonzero(row)) for row in np.asarray(ours.legal_action_mask)])
        ours, theirs = step(ours, action), pgx_step(theirs, action)
    illegal = int(np.flatnonzero(~np.asarray(theirs.legal_action_mask[0]))[0]) if not bool(
        theirs.terminated[0]) else -1
    punished = pgx_step(theirs, jnp.full(GAMES, illegal))
    np.testing.assert_array_equal(np.asarray(punished.rewards[0]), np.asarray(step(ours, jnp.full(GAMES, illegal))
                                                                               .rewards[0]))


@pytest.mark.slow
def test_pgx_auto_reset_and_random_actor_play_the_game_on():
    """Pgx's experimental tools run on it: auto_reset starts a finished game again, act_randomly picks legal moves."""
    pytest.importorskip("pgx")
    from pgx.experimental import act_randomly, auto_reset

    from dominoes_env.jax.pgx_env import PgxDominoes
    env = PgxDominoes(2, 6)
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))
    key = jax.random.PRNGKey(0)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(key, GAMES))
    finished = 0
    for _ in range(60):
        key, pick, reset = jax.random.split(key, 3)
        action = act_randomly(pick, state.legal_action_mask)
        assert np.asarray(state.legal_action_mask[jnp.arange(GAMES), action]).all()
        state = step(state, action, jax.random.split(reset, GAMES))
        finished += int(state.terminated.sum())
    assert finished > 0 and not np.asarray(state.terminated).all()
