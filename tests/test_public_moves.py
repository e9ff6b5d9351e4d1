"""The public move history (``public_moves=True``): each agent's infos list the hand's moves so far,
in order, seats counted from that agent; off by default; a new hand starts a new list."""

from __future__ import annotations

import numpy as np
import pytest

import dominoes_env
from dominoes_env.core import actions


@pytest.mark.parametrize("num_players, highest, table_rules", [(4, 9, {}), (3, 12, {"rules": "mexican_train"})])
def test_every_agent_reads_the_moves_so_far_in_its_own_frame(num_players, highest, table_rules):
    env = dominoes_env.raw_env(num_players, highest, num_hands=2, public_moves=True, **table_rules)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    played: list[tuple[int, int]] = []  # (absolute seat, action) of the current hand
    shown: list[tuple[int, int]] = []  # what the infos show: the current hand's, or a finished one's until a move
    checked = new_hands = 0
    for agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        assert info["public_moves"] == tuple(((mover - seat) % num_players, action) for mover, action in shown)
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        hand = env.game.hand_index
        env.step(action)
        played.append((seat, action))
        shown = list(played)
        if env.game is not None and env.game.hand_index != hand:  # the hand ended: the next starts afresh
            played, new_hands = [], new_hands + 1
        checked += 1
    assert checked > 40 and new_hands >= 1


def test_a_move_names_its_tile_and_line_as_the_mover_saw_it():
    env = dominoes_env.raw_env(4, 9, public_moves=True)
    env.reset(seed=2)
    config = env.game.config
    longest = 0
    for _agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        for _, action in info["public_moves"]:
            decoded = actions.decode(config, action)
            assert decoded is None or 0 <= decoded[1] < config.num_tiles
        longest = max(longest, len(info["public_moves"]))
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert longest > 10


def test_off_by_default_and_refused_unless_a_bool():
    env = dominoes_env.raw_env(4, 9)
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert all("public_moves" not in info for info in env.infos.values())
    with pytest.raises(ValueError, match="public_moves must be True or False, got 'yes'"):
        dominoes_env.raw_env(4, 9, public_moves="yes")
