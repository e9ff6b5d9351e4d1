"""The batched engine as a TorchRL multi-agent env: every seat of B games in one tensordict.

TorchRL's ``PettingZooWrapper`` drives the AEC env one game and one move at a time through
Python (about 150 steps a second in its collector here). :class:`TorchRLVectorEnv` gives
TorchRL :class:`~dominoes_env.vector.VectorDominoes` instead: an ``EnvBase`` with
``batch_size=[B]`` whose step plays one move in each of B games at once.

Its keys are the ones ``PettingZooWrapper(raw_env, use_mask=True, group_map={"players": seats})``
gives the AEC env, with B in front, so a policy, loss and training loop written for one run on
the other (``examples/torchrl_ppo.py --env batched``):

| key | shape, dtype | holds |
|---|---|---|
| ``("players", "observation", "observation")`` | ``[B, n, D]`` int8 | each seat's egocentric vector |
| ``("players", "action_mask")`` | ``[B, n, A]`` bool | the mover's legal moves; all True for the others |
| ``("players", "mask")`` | ``[B, n]`` bool | True for the seat to move |
| ``("players", "action")`` | ``[B, n]`` int64 | one action per seat; only the mover's is played |
| ``("next", "players", "reward")`` | ``[B, n, 1]`` float32 | every seat's reward of the step (a hand pays as it ends) |
| ``("next", "players", "done")``, ``("next", "done")`` | ``[B, n, 1]``, ``[B, 1]`` bool | the game is over |

A game that ends stays on its final position (every seat's last observation is returned)
until TorchRL resets it (``"_reset"``, as its collectors and ``rollout`` do), which deals it
anew; the other games go on. ``rand_action`` draws legal moves, so ``check_env_specs`` and
random rollouts need no mask transform. An illegal action raises
:class:`~dominoes_env.IllegalActionError` and changes nothing. Needs torchrl (the ``examples`` extra);
importing torchrl makes "spawn" the process's default multiprocessing start method (TorchRL's
choice; the package's own worker pools name theirs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, table_of
from dominoes_env.vector import VectorDominoes, random_legal_actions

GROUP = "players"  #: the one group holding every seat, as in the docs' PettingZooWrapper
OBSERVATION = (GROUP, "observation", "observation")
ACTION_MASK = (GROUP, "action_mask")
MOVER = (GROUP, "mask")
ACTION = (GROUP, "action")
REWARD = (GROUP, "reward")
DONE_KEYS = ("done", "terminated", "truncated")


class TorchRLVectorEnv(EnvBase):
    """B games of Mexican-Train dominoes as a TorchRL ``EnvBase`` of batch size [B] (see the module docstring).

    Args:
        num_envs: B, the number of games.
        num_players: seats at the table, or a ``GameConfig`` (which brings its table rules).
        highest_double: N of the double-N set.
        num_hands: hands in a game (an episode).
        reward: "score", "zero_sum" or "rank" (:mod:`dominoes_env.core.rewards`).
        seed: seeds the deals (``set_seed`` and ``reset`` after it start them again).
        threads: the batched engine's threads (default 1).
        table_rules: the table rules as keywords, as :func:`dominoes_env.env` takes them.
    """

    batch_locked = True

    def __init__(self, num_envs: int = 64, num_players: int | GameConfig = 4, highest_double: int = 9,
                 num_hands: int = 1, reward: str = "score", seed: int | None = None, threads: int = 1,
                 **table_rules: Any) -> None:
        config = table_of(num_players, highest_double, table_rules)
        self.engine = VectorDominoes(num_envs, config, num_hands=num_hands, reward=reward,
                                     seed=validation.seed("seed", seed), threads=threads)
        self.config = config
        b, n = self.engine.num_envs, config.num_players
        super().__init__(device="cpu", batch_size=torch.Size([b]))
        self._games = np.arange(b, dtype=np.int64)
        self._seats = np.arange(n, dtype=np.int64)
        self._rng = np.random.default_rng(seed)
        self._pending_seed: int | None = seed
        self._dealt = False  # the first reset deals every game, whatever "_reset" says
        self._observations = np.zeros((b, n, self.engine.observation_size), dtype=np.int8)
        self._masks = np.ones((b, n, config.num_actions), dtype=np.bool_)
        self._movers = np.zeros((b, n), dtype=np.bool_)
        self._make_specs(b, n)

    def _make_specs(self, b: int, n: int) -> None:
        a, d = self.config.num_actions, self.engine.observation_size
        seats = (b, n)

        def flag(*shape: int) -> Categorical:
            return Categorical(2, shape=torch.Size(shape), dtype=torch.bool)

        self.observation_spec = Composite({GROUP: Composite({
            "observation": Composite({"observation": Bounded(0, 1, shape=(*seats, d), dtype=torch.int8)},
                                     shape=seats),
            "action_mask": flag(*seats, a), "mask": flag(*seats)}, shape=seats)}, shape=(b,))
        self.action_spec = Composite({GROUP: Composite({"action": Categorical(a, shape=seats, dtype=torch.int64)},
                                                       shape=seats)}, shape=(b,))
        self.reward_spec = Composite({GROUP: Composite({"reward": Unbounded(shape=(*seats, 1))}, shape=seats)},
                                     shape=(b,))
        self.full_done_spec = Composite({**{key: flag(b, 1) for key in DONE_KEYS},
                                         GROUP: Composite({key: flag(*seats, 1) for key in DONE_KEYS}, shape=seats)},
                                        shape=(b,))

    # ------------------------------------------------------------------ EnvBase
    def _set_seed(self, seed: int | None) -> None:
        """The next reset deals from `seed` (TorchRL's ``set_seed``; it also seeds ``rand_action``)."""
        self._pending_seed = validation.seed("seed", seed)
        self._rng = np.random.default_rng(seed)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        """Deal every game (a first reset, or one without ``"_reset"``), or only the games ``"_reset"`` marks."""
        reset = None if tensordict is None else tensordict.get("_reset", None)
        if reset is None or self._pending_seed is not None or not self._dealt:
            self.engine.reset(seed=self._pending_seed)
            self._pending_seed, self._dealt = None, True
            games = self._games
        else:
            games = np.flatnonzero(reset.reshape(-1).numpy())
            self.engine.new_games(games)
        self._observations = self._observations.copy()  # the last tensordict handed out keeps its values
        self._masks, self._movers = self._masks.copy(), self._movers.copy()
        self._observe(games)
        return self._output(np.zeros(self.batch_size[0], dtype=np.bool_), None)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        actions = tensordict.get(ACTION).numpy().astype(np.int64, copy=False)
        movers = self.engine.players_to_move(self._games)
        rewards, ends = self.engine.play(self._games, actions[self._games, movers])
        over = np.zeros(self.batch_size[0], dtype=np.bool_)
        over[ends.games[ends.game_over]] = True
        self._observations = np.empty_like(self._observations)
        self._masks, self._movers = np.empty_like(self._masks), np.empty_like(self._movers)
        self._observe(self._games)
        return self._output(over, rewards)

    def rand_action(self, tensordict: TensorDictBase | None = None) -> TensorDictBase:
        """A uniformly random legal move for each game's player to move (the same number in every seat's slot)."""
        if tensordict is None:
            tensordict = TensorDict(batch_size=self.batch_size, device=self.device)
        given = ACTION_MASK in tensordict.keys(True) and MOVER in tensordict.keys(True)
        masks = tensordict.get(ACTION_MASK).numpy() if given else self._masks  # else: the games as they stand
        movers = (tensordict.get(MOVER).numpy() if given else self._movers).argmax(axis=1)
        chosen = random_legal_actions(masks[self._games, movers], self._rng)
        n = self.config.num_players
        tensordict.set(ACTION, torch.from_numpy(np.repeat(chosen[:, None], n, axis=1)))
        return tensordict

    # ------------------------------------------------------------------ inside
    def _observe(self, games: np.ndarray) -> None:
        """Every seat's observation of `games`, with the mover's mask (all True for the other seats)."""
        movers = self.engine.players_to_move(games)
        for seat in self._seats.tolist():
            observations, masks, _ = self.engine.observe(games, np.full(games.shape[0], seat))
            self._observations[games, seat] = observations
            moving = movers == seat
            self._movers[games, seat] = moving
            self._masks[games, seat] = np.where(moving[:, None], masks.astype(np.bool_), True)

    def _output(self, over: np.ndarray, rewards: np.ndarray | None) -> TensorDictBase:
        b, n = self.batch_size[0], self.config.num_players
        done = torch.from_numpy(over).reshape(b, 1)
        seat_done = done.reshape(b, 1, 1).expand(b, n, 1)
        group = TensorDict({"observation": TensorDict({"observation": torch.from_numpy(self._observations)},
                                                      batch_size=(b, n)),
                            "action_mask": torch.from_numpy(self._masks), "mask": torch.from_numpy(self._movers),
                            "done": seat_done.clone(), "terminated": seat_done.clone(),
                            "truncated": torch.zeros((b, n, 1), dtype=torch.bool)}, batch_size=(b, n))
        if rewards is not None:
            group["reward"] = torch.from_numpy(rewards.astype(np.float32)).reshape(b, n, 1)
        return TensorDict({GROUP: group, "done": done.clone(), "terminated": done.clone(),
                           "truncated": torch.zeros((b, 1), dtype=torch.bool)}, batch_size=(b,), device=self.device)
