"""Deep Monte-Carlo (DMC, DouZero's method) on ppo's network: a second learner, measured against PPO.

DouZero (Zha et al., 2021) beat every earlier Dou Dizhu program without a policy gradient: one
network scores each legal move from a rich encoding of the move, the moves are chosen
epsilon-greedily in self-play, and each chosen move's score is regressed on the return its
mover got at the game's end (a Monte-Carlo target: no bootstrapping, no critic). Here the rich
encoding is the after-state (:class:`~baselines.ppo.heads.AfterstateHead`): the score of a move
is the network's value of the position it leads to, so the trained network is a ppo weights
file like any other (``ppo@FILE`` plays it greedily, as it plays every ppo file).

:class:`DMCTrainer` replaces PPO's collection and update and keeps everything else of the PPO
run (:func:`baselines.ppo.run.train_run`: segments, evaluations, log, curve, resume). Of
:class:`~baselines.ppo.config.PPOConfig` it reads the table, the network, the rollout's size,
the learning rate and its schedule, ``epochs`` and ``minibatches`` (the passes over each batch
of finished decisions), ``max_grad_norm``, the reward and its scale; PPO's clipping, entropy,
GAE and value weight mean nothing to it. Only self-play and the after-state head: a pool's
opponents and the action head are refused in one line.

A decision is learned from once its game has ended (its target is not known before): each
rollout learns from the decisions of the games that ended during it, wherever they began. A
segment deals every game anew, so the decisions of the games it cuts short are dropped, and a
resumed run repeats exactly what followed its checkpoint, as PPO's does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import torch

from baselines.ppo.config import PPOConfig
from baselines.ppo.history import PassFacts
from baselines.ppo.trainer import Trainer, segment_seed

EPSILON = 0.01  #: DouZero's exploration: a uniformly random legal move at this share of the decisions


@dataclass
class Finished:
    """The decisions with a choice whose games ended in a rollout: what the update regresses."""

    afterstates: torch.Tensor  # (K, D) int8: the position the chosen move led to, as its mover saw it
    returns: torch.Tensor  # (K,) the mover's (scaled) rewards from the move to its game's end
    steps: int  # decisions of the rollout, forced moves included (the learner steps it counts, as PPO's)


class DMCTrainer(Trainer):
    """PPO's trainer with DMC's collection (epsilon-greedy over the after-states' scores) and update
    (the chosen moves' scores regressed on their Monte-Carlo returns)."""

    warms_value = False

    reads_history = True

    def __init__(self, config: PPOConfig, device: torch.device | str = "cpu", engine_threads: int = 1,
                 epsilon: float = EPSILON) -> None:
        """Raises:
            ValueError: a pool of opponents, the action head, or an epsilon outside [0, 1]."""
        if not config.self_play:
            raise ValueError("dmc learns in self-play only (--opponents self)")
        if config.policy_head != "afterstates":
            raise ValueError("dmc scores the moves' after-states: --policy-head afterstates")
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon!r}")
        super().__init__(config, device, engine_threads)
        self.epsilon = epsilon
        self._reset_games()

    def resume_identity(self) -> str:
        """The configuration, the learner's name and its epsilon: ``dominoes train ppo`` on a DMC
        run's directory (or DMC with another epsilon) is refused, not resumed as the wrong learner."""
        return json.dumps({"learner": "dmc", "epsilon": self.epsilon, "config": json.loads(self.config.to_json())},
                          sort_keys=True)

    def _reset_games(self) -> None:
        b, n = self.config.num_envs, self.config.num_players
        self.games = np.arange(b)
        self.explore_rng = np.random.default_rng(0)
        self.paid = np.zeros((b, n))  # each seat's rewards so far in each game's current episode
        self.episode = np.zeros(b, dtype=np.int64)  # each game's episode number within the segment
        self.open: list[tuple[np.ndarray, ...]] = []  # decisions whose game has not ended yet
        self.ended_keys: list[np.ndarray] = []  # (game, episode) keys of the episodes ended since the last learn
        self.ended_paid: list[np.ndarray] = []  # and what they paid each seat in all
        #: the history feature's facts of every seat of every game (None: the network reads none)
        self.facts = PassFacts(self.config.game, b) if self.config.history != "none" else None

    def start_segment(self, segment: int) -> None:
        """Deal anew (PPO's), drop the games cut short, and reseed the exploration from (seed, segment)."""
        super().start_segment(segment)
        self._reset_games()
        self.explore_rng = np.random.default_rng(segment_seed(self.config.seed, segment) + 1)

    @torch.no_grad()
    def _choose(self, observations: np.ndarray, masks: np.ndarray, facts: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each game's move (greedy on the scores, random at a share epsilon of the decisions with a
        choice), and for the games with a choice their rows and the chosen moves' after-states (with
        the mover's `facts`, the history feature, where the network reads it)."""
        actions = masks.argmax(axis=1)  # the forced move where there is one
        found = self.head.candidates(observations, masks)
        assert found.vectors is not None
        if not found.rows.size:
            return actions, found.rows, np.zeros((0, self.config.observation_size), dtype=found.vectors.dtype)
        if facts is not None:
            found.vectors = np.concatenate([found.vectors, facts[found.rows]], axis=1)
        scores = self.network.afterstate_scores(torch.from_numpy(found.vectors).to(self.device).float()).cpu().numpy()
        explore = np.less(self.explore_rng.random(masks.shape[0]), self.epsilon)
        keys = np.where(explore[found.rows], self.explore_rng.random(found.rows.size), scores)
        order = np.lexsort((-keys, found.rows))  # by row, best key first
        sorted_rows = found.rows[order]
        first = order[np.concatenate(([True], sorted_rows[1:] != sorted_rows[:-1]))]
        actions[found.rows[first]] = found.actions[first]
        return actions, found.rows[first], found.vectors[first]

    def collect(self) -> Finished:  # type: ignore[override]
        """`rollout_steps` steps of every game; the decisions of the games that ended, with their returns."""
        config, engine = self.config, self.engine
        for _ in range(config.rollout_steps):
            observations, masks = self.observation["observation"][:, :self.one_hand], self.observation["action_mask"]
            movers = engine.current_player.astype(np.int64)
            facts = None if self.facts is None else self.facts.observe(observations, self.games, movers)
            actions, rows, afterstates = self._choose(observations, masks, facts)
            self.open.append((rows, self.episode[rows], movers[rows], self.paid[rows, movers[rows]], afterstates))
            self.observation, rewards, terminated, truncated, infos = engine.step(actions)
            self._count_hands(infos)
            self.paid += rewards * config.reward_scale
            ended = np.flatnonzero(terminated | truncated)
            if ended.size:
                if self.facts is not None:
                    self.facts.reset(ended)  # the engine dealt these games anew
                self.ended_keys.append(ended * (1 << 32) + self.episode[ended])
                self.ended_paid.append(self.paid[ended].copy())
                self.paid[ended] = 0.0
                self.episode[ended] += 1
        return self._finished(config.num_envs * config.rollout_steps)

    def _finished(self, steps: int) -> Finished:
        """Take the open decisions whose episode has ended out of ``self.open``, with their returns."""
        rows, episodes, movers, paid_before, afterstates = (np.concatenate(part) for part in zip(*self.open))
        done = episodes < self.episode[rows]
        keys = np.concatenate(self.ended_keys) if self.ended_keys else np.zeros(0, dtype=np.int64)
        totals = np.concatenate(self.ended_paid) if self.ended_paid else np.zeros((0, self.config.num_players))
        sorter = np.argsort(keys)
        where = sorter[np.searchsorted(keys, rows[done] * (1 << 32) + episodes[done], sorter=sorter)]
        returns = totals[where, movers[done]] - paid_before[done]
        kept = ~done
        self.open = [(rows[kept], episodes[kept], movers[kept], paid_before[kept], afterstates[kept])]
        self.ended_keys, self.ended_paid = [], []
        return Finished(torch.from_numpy(afterstates[done]).to(self.device),
                        torch.from_numpy(returns).float().to(self.device), steps)

    def learn(self, rollout: Finished, learning_rate: float) -> dict[str, float]:  # type: ignore[override]
        """`epochs` passes of `minibatches` minibatches: the chosen moves' scores regressed on their returns."""
        rows = rollout.returns.shape[0]
        if rows == 0:
            return {}

        def loss_of(batch: torch.Tensor) -> torch.Tensor:
            scores = self.network.afterstate_scores(rollout.afterstates.index_select(0, batch).float())
            return 0.5 * (scores - rollout.returns.index_select(0, batch)).pow(2).mean()

        return {"value": self.descend(rows, learning_rate, loss_of)}

    def learner_steps(self, rollout: Finished) -> int:  # type: ignore[override]
        """Every decision the rollout stepped, as PPO counts in self-play (the curves compare like with like)."""
        return rollout.steps
