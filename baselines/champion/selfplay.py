"""Self-play for the champion's training: every seat searches with the current network.

A task plays a block of hands side by side on the batched engine (:class:`~dominoes_env.vector.VectorDominoes`,
one hand per game), with one champion per seat of each game (each keeps its own knowledge of
the hidden tiles). At every decision with a choice it records what the search found (the
legal moves and their visits at the root); at every tile move, the mover's observation and
the move, whose after-state learns the pips the mover holds when the hand ends. A task
depends only on the weights, the configuration and its numbers (generation, block), so the
same tasks give the same records on one worker, on many, or on Ray.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from baselines.champion.config import ChampionConfig
from baselines.champion.policy import ChampionPolicy, best_move
from baselines.td_lambda.checkpoint import Checkpoint
from dominoes_env.vector import VectorDominoes


@dataclass(frozen=True)
class SelfPlayTask:
    """One block of self-play hands (picklable: it travels to a worker process or a Ray task)."""

    theta: np.ndarray
    config_json: str
    generation: int
    block: int
    hands: int


@dataclass
class SelfPlayRecords:
    """What a block of hands taught.

    Attributes:
        search_observations: (k, D) int8, the mover's observation at each searched decision.
        search_actions, search_visits: the legal moves of decision j and their root visits, as
            flat arrays cut by `search_offsets` (k + 1,).
        move_observations, move_actions: (m, D) and (m,): every tile move (not a draw) and
            what the mover saw before it.
        move_final_pips: (m,) pips the mover held when that hand ended.
        hand_scores: (hands, n) pips left by seat in each hand.
    """

    search_observations: np.ndarray
    search_actions: np.ndarray
    search_visits: np.ndarray
    search_offsets: np.ndarray
    move_observations: np.ndarray
    move_actions: np.ndarray
    move_final_pips: np.ndarray
    hand_scores: np.ndarray

    @classmethod
    def concatenate(cls, parts: list[SelfPlayRecords]) -> SelfPlayRecords:
        return cls(np.concatenate([p.search_observations for p in parts]),
                   np.concatenate([p.search_actions for p in parts]),
                   np.concatenate([p.search_visits for p in parts]),
                   join_offsets([p.search_offsets for p in parts]),
                   np.concatenate([p.move_observations for p in parts]),
                   np.concatenate([p.move_actions for p in parts]),
                   np.concatenate([p.move_final_pips for p in parts]),
                   np.concatenate([p.hand_scores for p in parts]))


def join_offsets(parts: list[np.ndarray]) -> np.ndarray:
    """The offsets (k + 1,) of ragged rows cut from several batches laid end to end."""
    joined, start = [np.zeros(1, dtype=np.int64)], 0
    for offsets in parts:
        joined.append(offsets[1:] + start)
        start += int(offsets[-1])
    return np.concatenate(joined)


def task_seed(config: ChampionConfig, generation: int, block: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([config.seed, generation, block])


def play_block(task: SelfPlayTask) -> SelfPlayRecords:
    """Play one task's hands in self-play and return their records (a module-level function: workers import it)."""
    config = ChampionConfig.from_json(task.config_json)
    game = config.game
    n = game.num_players
    weights = Checkpoint(task.theta, config.network_config(), {})
    seeds = task_seed(config, task.generation, task.block).spawn(task.hands * n + 1)
    players = [[ChampionPolicy(game, seed=np.random.default_rng(seeds[1 + g * n + s]), simulations=config.simulations,
                               worlds=config.worlds, exploration=config.exploration, temperature=config.temperature,
                               checkpoint=weights) for s in range(n)] for g in range(task.hands)]
    engine = VectorDominoes(task.hands, game, num_hands=1)
    engine.reset(seed=int(seeds[0].generate_state(1)[0]))
    draw = game.draw_action
    choice_rng = np.random.default_rng(seeds[0].spawn(1)[0])
    searched: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    moves: list[tuple[int, int, np.ndarray, int]] = []  # (game, seat, observation, action)
    decisions_with_choice = np.zeros((task.hands, n), dtype=np.int64)
    hand_scores = np.zeros((task.hands, n), dtype=np.int64)
    going_on = np.arange(task.hands)
    while going_on.size:
        observations, masks, movers = engine.observe(going_on)
        actions = np.empty(going_on.shape[0], dtype=np.int64)
        for k, g in enumerate(going_on.tolist()):
            seat = int(movers[k])
            legal, visits, utilities = players[g][seat].visits(observations[k], masks[k])
            if legal.shape[0] > 1:
                searched.append((observations[k], legal, visits))
                if decisions_with_choice[g, seat] < config.sampled_moves:
                    pick = int(choice_rng.choice(legal.shape[0], p=visits / visits.sum()))
                else:
                    pick = best_move(visits, utilities)
                decisions_with_choice[g, seat] += 1
            else:
                pick = 0
            actions[k] = legal[pick]
            if draw is None or actions[k] != draw:
                moves.append((g, seat, observations[k], int(actions[k])))
        _, ends = engine.play(going_on, actions)
        if ends.games.size:
            hand_scores[ends.games] = ends.scores
            going_on = going_on[~np.isin(going_on, ends.games)]
    size = engine.observation_size
    return SelfPlayRecords(
        np.array([s[0] for s in searched], dtype=np.int8).reshape(-1, size),
        np.concatenate([s[1] for s in searched]) if searched else np.zeros(0, dtype=np.int64),
        np.concatenate([s[2] for s in searched]) if searched else np.zeros(0, dtype=np.int64),
        np.concatenate([[0], np.cumsum([s[1].shape[0] for s in searched], dtype=np.int64)]).astype(np.int64),
        np.array([m[2] for m in moves], dtype=np.int8).reshape(-1, size),
        np.array([m[3] for m in moves], dtype=np.int64),
        np.array([hand_scores[m[0], m[1]] for m in moves], dtype=np.float32),
        hand_scores)
