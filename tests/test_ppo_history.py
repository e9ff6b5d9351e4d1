"""ppo's history feature (baselines/ppo/history.py): the env's pass facts (dominoes_env/core/pass_facts.py)
read for many games at once, as the trainer feeds them, each seat's row as a tracker of that seat alone
reads it, every fact true of the real hands; and the reading sees new hands and games by itself."""

from __future__ import annotations

import numpy as np
import pytest
from test_hidden import MEXICAN_TRAIN, decisions, facts_true_of_the_deal

import dominoes_env
from baselines.policies.registry import make_policy
from baselines.ppo.history import PassFacts, history_size
from dominoes_env.core.hidden import KnowledgeTracker


def _next_decision(env) -> tuple[int, dict] | None:
    """The seat to decide next in `env` and its observation (None: the game is over)."""
    while env.agents:
        observation, _, termination, truncation, _ = env.last()
        if not (termination or truncation):
            return env.possible_agents.index(env.agent_selection), observation
        env.step(None)
    return None


@pytest.mark.parametrize("num_players, highest, table_rules",
                         [(4, 9, {}), (4, 9, {"boneyard": True, "cover_doubles": True}), (3, 6, {"boneyard": True}),
                          (6, 12, MEXICAN_TRAIN)], ids=["4p-d9", "4p-d9-boneyard-cover", "3p-d6-boneyard", "6p-d12-mt"])
def test_a_batch_of_games_reads_each_seat_as_its_own_tracker(num_players, highest, table_rules):
    """The trainer gives the movers of all its live games to one call, and resets the games the engine
    deals anew. The reading is the tracker's own code, so this checks the batch's bookkeeping: each row
    read against its (game, seat)'s own earlier observations, in the mover's frame, games ending at
    different times, resets of some games (the others see their new hand themselves); and that every
    fact fed to the network is true of the real hands."""
    games = 4
    envs = [dominoes_env.raw_env(num_players, highest, num_hands=2, **table_rules) for _ in range(games)]
    for game, env in enumerate(envs):
        env.reset(seed=game)
    config = envs[0].game.config
    players = [[make_policy("random", config, seed=10 * game + seat) for seat in range(num_players)]
               for game in range(games)]
    trackers = [[KnowledgeTracker(config) for _ in range(num_players)] for _ in range(games)]
    hands = [env.game.hand_index for env in envs]
    facts, calls, proved = PassFacts(config, games), 0, 0
    while live := [(game, *decision) for game, env in enumerate(envs) if (decision := _next_decision(env))]:
        for game, _, _ in live:
            if envs[game].game.hand_index != hands[game]:  # a new hand: a policy resets its tracker
                hands[game] = envs[game].game.hand_index
                for tracker in trackers[game]:
                    tracker.reset()
                if game % 2 == 0:
                    facts.reset(np.array([game]))
        rows = facts.observe(np.stack([observation["observation"] for *_, observation in live]),
                             np.array([game for game, *_ in live]), np.array([seat for _, seat, _ in live]))
        assert rows.shape == (len(live), history_size(config, "passes")) and rows.dtype == np.int8
        for row, (game, seat, observation) in zip(rows, live):
            forbidden = trackers[game][seat].observe(observation["observation"]).forbidden
            assert np.array_equal(row, forbidden[1:].reshape(-1).astype(np.int8)), f"game {game}, seat {seat}"
            proved += facts_true_of_the_deal(envs[game], seat, forbidden)
            envs[game].step(players[game][seat].act(observation["observation"], observation["action_mask"]))
        calls += 1
    assert calls > 50 and proved > 0  # the facts were read, and some said something


@pytest.mark.parametrize("num_players, highest, table_rules", [(4, 9, {}), (6, 12, {"rules": "mexican_train"}),
                                                               (3, 6, {})], ids=["4p-d9", "6p-d12-mt", "3p-d6"])
def test_never_reset_the_facts_see_each_new_hand_and_game_themselves(num_players, highest, table_rules):
    """The trainer resets a game's facts when the engine deals it anew; a game of several hands deals
    without one: the reading must see a new hand, or a new game in the same slot, by itself."""
    facts = None
    for env, seat, observation, knowledge in decisions(num_players, highest, 3, **table_rules):
        facts = facts or PassFacts(env.game.config, games=1)
        row = facts.observe(observation["observation"][None], np.array([0]), np.array([seat]))
        assert np.array_equal(row, knowledge.forbidden[1:].reshape(1, -1).astype(np.int8))
