"""The batched engine as a TorchRL multi-agent env (``baselines.adapters.torchrl``): TorchRL's own
spec check, every seat's observation equal to the AEC env's at the same position, per-seat
rewards, partial resets, refusals, and the example's batched run.

Slow, and only where torchrl is installed (the ``examples`` extra, which CI's slow run has).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import dominoes_env
from dominoes_env import IllegalActionError, make_config

# torchrl is imported inside the tests only: importing it sets multiprocessing's start method to
# "spawn" for the whole process, which would change the other tests of a run that merely collects this file
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("torchrl") is None, reason="needs torchrl (examples extra)")]


@pytest.fixture
def adapter():
    from baselines.adapters import torchrl

    return torchrl


@pytest.mark.parametrize("table", [make_config(4, 9), make_config(3, 12, rules="mexican_train"), make_config(2, 6)])
def test_check_env_specs_passes_and_random_rollouts_play_only_legal_moves(adapter, table):
    from torchrl.envs.utils import check_env_specs

    env = adapter.TorchRLVectorEnv(8, table, seed=0)
    for seed in range(3):
        check_env_specs(env, seed=seed)
    rollout = env.rollout(150, break_when_any_done=False)  # an illegal move would raise
    assert rollout.shape == (8, 150)
    assert (rollout[adapter.MOVER].sum(-1) == 1).all()  # one seat moves in each game at each step
    assert int(rollout["next", "done"].sum()) >= 8


def test_every_seat_sees_what_the_aec_env_shows_at_the_same_position(adapter):
    env = adapter.TorchRLVectorEnv(6, seed=1)
    state = env.reset()
    for _ in range(25):
        state = env.step(env.rand_action(state))["next"]
        done = state["done"].reshape(-1)
        if done.any():
            state = env.reset(state.clone().set("_reset", state["done"].clone()))
    observations, masks, movers = (state[key].numpy() for key in (adapter.OBSERVATION, adapter.ACTION_MASK,
                                                                  adapter.MOVER))
    for game in range(6):
        aec = dominoes_env.raw_env(4, 9)
        aec.reset(options=env.engine.reset_options(game))
        mover = int(np.flatnonzero(movers[game])[0])
        assert aec.agent_selection == f"player_{mover}"
        for seat in range(4):
            seen = aec.observe(f"player_{seat}")
            np.testing.assert_array_equal(observations[game, seat], seen["observation"])
            expected = seen["action_mask"].astype(bool) if seat == mover else np.ones(276, dtype=bool)
            np.testing.assert_array_equal(masks[game, seat], expected)


def test_each_seat_is_paid_its_own_pips_when_a_hand_ends_and_a_partial_reset_deals_only_that_game(adapter):
    import torch

    OBSERVATION = adapter.OBSERVATION
    env = adapter.TorchRLVectorEnv(16, seed=2)
    state = env.reset()
    paid = 0
    for _ in range(400):
        out = env.step(env.rand_action(state))["next"]
        done = out["done"].reshape(-1).numpy()
        reward = out[adapter.REWARD].squeeze(-1).numpy()
        assert (reward[~done] == 0).all()  # a one-hand game pays only as it ends
        for game in np.flatnonzero(done).tolist():
            np.testing.assert_array_equal(reward[game], -env.engine.game_scores[game])  # every seat, its own pips
            paid += 1
        if done.any():
            before = out[OBSERVATION].clone()
            state = env.reset(out.clone().set("_reset", out["done"].clone()))
            going_on = ~done
            assert torch.equal(state[OBSERVATION][going_on], before[going_on])  # the others are untouched
            held = state[OBSERVATION][done][:, :, :55].sum(-1)  # a fresh deal: every tile in a hand but the engine
            assert (held.sum(-1) == 54).all() and (held >= 12).all()
        else:
            state = out
    assert paid >= 40


def test_an_illegal_action_raises_and_changes_nothing_and_the_same_seed_plays_the_same_games(adapter):
    import torch

    ACTION, OBSERVATION = adapter.ACTION, adapter.OBSERVATION
    env = adapter.TorchRLVectorEnv(4, seed=3)
    state = env.reset()
    states = env.engine.states.copy()
    action = env.rand_action(state.clone())
    bad = action[ACTION].clone()
    bad[0] = 275  # the pass, with legal moves in hand
    with pytest.raises(IllegalActionError, match="refused, nothing changed"):
        env.step(action.set(ACTION, bad))
    assert np.array_equal(env.engine.states, states)

    def run(seed):
        env = adapter.TorchRLVectorEnv(4, seed=0)
        env.set_seed(seed)
        return env.rollout(60, break_when_any_done=False)

    first, again, other = run(5), run(5), run(6)
    assert torch.equal(first[OBSERVATION], again[OBSERVATION]) and torch.equal(first[ACTION], again[ACTION])
    assert not torch.equal(first[OBSERVATION], other[OBSERVATION])
    fresh = env.rand_action()  # no tensordict: legal moves of the games as they stand
    env.step(fresh)
    with pytest.raises(ValueError, match="num_envs must be"):
        adapter.TorchRLVectorEnv(0)


def test_the_example_trains_on_the_batched_env_and_beats_random_players(import_example):
    """``examples/torchrl_ppo.py --env batched``: 5 x 4,096 moves from 64 games, then the rating.
    Measured: +4.95 after 6,144 moves at seed 0; an untrained network is within about ±1.4 of 0."""
    example = import_example("torchrl_ppo")
    result = example.main(["--env", "batched", "--games", "64", "--frames-per-batch", "4096", "--iterations", "5",
                           "--eval-hands", "400", "--seed", "0", "--bench", "off"])
    assert [log.frames for log in result.iterations] == [4096] * 5
    assert result.rating.gain.gain >= 2.0
    with pytest.raises(SystemExit):
        example.main(["--env", "batched", "--games", "60", "--frames-per-batch", "1000"])
