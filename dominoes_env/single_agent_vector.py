"""One learning seat in each of B games stepped at once: the single-agent view as a Gymnasium vector env.

:class:`SingleAgentVectorEnv` is to :class:`~dominoes_env.SingleAgentEnv` what a vector env
is to an env: B games on the batched engine (:class:`~dominoes_env.vector.VectorDominoes`),
one learner seat in each, and ``step(actions)`` takes one action per game. Between two of
the learner's moves the other seats are played inside the batch: every round, the games
whose player to move is an opponent are observed together and each opponent position
chooses for all its games at once. A policy that keeps nothing between moves (random,
greedy, stupid, double, td_lambda: anything with ``act_batch``) is one object for every
game; any other (best_line, persistent_line, a user's policy) gets one copy per game,
reset at the start of each of that game's hands, and chooses game by game.

Rewards follow the single-agent view: the reward of a step is everything the learner
earned from its move up to its next one. Episodes end independently; a finished game is
dealt anew in the same ``step`` (Gymnasium's same-step autoreset), with its last
observation in ``infos["final_obs"]`` and its results in ``infos["final_info"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig, TableRuleOptions, describe_table, table_of
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.rewards import illegal_action_penalty
from dominoes_env.opponent_seats import OpponentSeats
from dominoes_env.single_agent import ILLEGAL_ACTION_MODES, OBSERVATION_MODES, Opponent, _opponent_list
from dominoes_env.vector import _SHOWN_ERRORS, SCORES, TOTALS, WENT_OUT, HandEnds, VectorDominoes

if TYPE_CHECKING:
    from typing_extensions import Unpack


class SingleAgentVectorEnv(VectorEnv):
    """B games of Mexican-Train dominoes, one learning seat in each (Gymnasium ``VectorEnv``).

    Args:
        num_envs: B, the number of games.
        opponents: the other seats' players: one spec for every other seat (``"random"``,
            ``"td_lambda"``, ``"best_line(max_line_length=6)"``), a sequence of n - 1
            (specs, ``PolicySpec`` objects, or ready objects with ``act_batch``; opponent k
            sits k seats after the learner), or a callable ``opponents(rng)`` returning such a
            sequence, asked at every new game of every slot (per-game draws from
            ``baselines.OpponentPool.opponents``; its ``report_game`` hook, if any, is told
            each game's result: :mod:`dominoes_env.opponent_seats`). Default ``"random"``. Named
            policies are built at every seeded reset from the env's generator.
        num_players: as in :class:`~dominoes_env.SingleAgentEnv`, as are `highest_double`,
            `num_hands`, `seat` (``None``: a random learner seat in each game at each new game),
            `reward`, `observation`, `illegal_action` and `table_rules`.
        threads: the batched engine's threads (:class:`~dominoes_env.vector.VectorDominoes`; default 1).

    ``reset(seed=...)`` and ``step(actions)`` follow Gymnasium 1.x: observations (B, D) int8
    (or a dict with ``action_mask``), rewards (B,) float64, terminations (B,) (a game is
    over), truncations (B,) (never), and infos as a dict of arrays, each with a
    ``_``-prefixed mask of the games it concerns: ``seat`` and ``action_mask`` (every game);
    ``hand_scores``, ``game_scores`` and ``went_out`` (-1: blocked) where a hand ended;
    ``final_obs`` and ``final_info`` (the learner's ``seat`` in the game that ended, and
    ``game_scores``, or ``illegal_action``, ``penalty`` and ``reason``) where a game ended.
    :meth:`action_masks` gives the legal moves as bools.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 16, opponents: str | Sequence[Opponent] = "random",
                 num_players: int | GameConfig = 4, highest_double: int = 9, seat: int | None = None,
                 num_hands: int = 1, *, reward: str = "score", observation: str = "vector",
                 illegal_action: str = "penalize", threads: int = 1, **table_rules: Unpack[TableRuleOptions]) -> None:
        self.engine = VectorDominoes(num_envs, table_of(num_players, highest_double, table_rules), num_hands=num_hands,
                                     reward=reward, threads=threads)
        self.config = self.engine.config
        self.num_envs = self.engine.num_envs
        n = self.config.num_players
        self.fixed_seat = None if seat is None else validation.integer("seat", seat, 0, n - 1)
        self.observation_mode = validation.choice("observation", observation, OBSERVATION_MODES)
        self.illegal_action = validation.choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        drawn_per_game = callable(opponents) and not isinstance(opponents, str)
        self.opponents = OpponentSeats(opponents if drawn_per_game else _opponent_list(opponents, n),
                                       lambda chosen: _opponent_list(chosen, n), self.config, self.num_envs)
        self.opponents.rebuild(np.random.default_rng(0))  # fixed ones are checked now; rebuilt at reset
        self.opponents.check_draw()
        vector = spaces.Box(0, 1, (self.engine.observation_size,), np.int8)
        mask = spaces.Box(0, 1, (self.config.num_actions,), np.int8)
        self.single_observation_space = vector if self.observation_mode == "vector" else \
            spaces.Dict({"observation": vector, "action_mask": mask})
        self.single_action_space = spaces.Discrete(self.config.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        b = self.num_envs
        self.seats = np.zeros(b, dtype=np.int64)  #: the learner's seat in each game
        self._every_game = np.arange(b, dtype=np.int64)
        self._observations = np.zeros((b, self.engine.observation_size), dtype=np.int8)
        self._masks = np.zeros((b, self.config.num_actions), dtype=np.int8)
        self._carry = np.zeros(b, dtype=np.float64)  # rewards of a new episode earned before its first step
        self._started = False

    # ------------------------------------------------------------------ episodes
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        """Deal a new game everywhere (new learner seats unless fixed) and play the opponents up
        to the learner's first move in each. A seed fixes the deals, the seats and the
        opponents' choices (they are rebuilt from it); without one the generator goes on."""
        if isinstance(seed, (list, tuple, np.ndarray)):
            raise ValueError("seed must be one integer (it seeds every game) or None; a list of seeds is not taken")
        seed = validation.seed("seed", seed)
        if options:
            raise ValueError(f"reset() takes no options here, got {sorted(options)}")
        if seed is not None or self._np_random is None:
            self._np_random = np.random.default_rng(seed)
            self._np_random_seed = seed
            self.opponents.rebuild(self._np_random)
            self.engine.reset(seed=int(self._np_random.integers(2**63)))
        else:
            self.engine.new_games(self._every_game)
        self._started = True
        self._carry[:] = 0
        self._new_seats(self._every_game)
        self._new_hands(self._every_game)
        infos: dict[str, Any] = {}
        done = np.zeros(self.num_envs, dtype=np.bool_)
        self._play_opponents(self._every_game, self._carry, done, infos)
        return self._observe(), self._infos(infos)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play each game's learner move, then its opponents up to the learner's next move.

        Raises:
            IllegalActionError: `actions` is not B integers of the action space, or (with
                ``illegal_action="raise"``) some action is illegal; nothing changes.
        """
        if not self._started:
            raise IllegalActionError("step() refused: no games yet; call reset() first")
        values = self._as_actions(actions)
        b = self.num_envs
        legal = self._masks[self._every_game, values] == 1
        illegal = np.flatnonzero(~legal)
        if illegal.size and self.illegal_action == "raise":
            self.engine._refuse(self._every_game, values, ~legal, self.seats)
        rewards = self._carry.copy()
        self._carry[:] = 0
        done = np.zeros(b, dtype=np.bool_)
        infos: dict[str, Any] = {}
        if illegal.size:
            self._penalize(illegal, values[illegal], rewards, done, infos)
        movers = np.flatnonzero(legal)
        if movers.size:
            hand_rewards, ends = self.engine.play(movers, values[movers])
            rewards[movers] += hand_rewards[np.arange(movers.shape[0]), self.seats[movers]]
            self._book(ends, done, infos)
        self._play_opponents(self._every_game, rewards, done, infos)
        return self._observe(), rewards, done, np.zeros(b, dtype=np.bool_), self._infos(infos)

    def action_masks(self) -> np.ndarray:
        """The learner's legal moves in each game, (B, A) bool (MaskablePPO's convention)."""
        return self._masks.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the games live in this process."""

    # ------------------------------------------------------------------ playing
    def _play_opponents(self, games: np.ndarray, rewards: np.ndarray, done: np.ndarray, infos: dict[str, Any]) -> None:
        """Opponents move, round by round, in every game of `games` until the learner is to move.

        A game that ended in this step (``done``) goes on in its new episode: what the learner
        earns there before its first move is carried to that episode's first step.
        """
        n = self.config.num_players
        waiting = games[self.engine.players_to_move(games) != self.seats[games]]
        while waiting.size:
            observations, masks, players = self.engine.observe(waiting)
            offsets = (players - self.seats[waiting]) % n
            actions = np.empty(waiting.shape[0], dtype=np.int64)
            for offset in range(1, n):
                chosen = np.flatnonzero(offsets == offset)
                if chosen.size:
                    actions[chosen] = self.opponents.act(offset, waiting[chosen], observations[chosen], masks[chosen])
            try:
                hand_rewards, ends = self.engine.play(waiting, actions)
            except IllegalActionError as refused:
                raise IllegalActionError(f"an opponent played an illegal action: {refused}") from None
            earned = hand_rewards[np.arange(waiting.shape[0]), self.seats[waiting]]
            new_episode = done[waiting]
            rewards[waiting[~new_episode]] += earned[~new_episode]
            self._carry[waiting[new_episode]] += earned[new_episode]
            self._book(ends, done, infos)
            waiting = waiting[self.engine.players_to_move(waiting) != self.seats[waiting]]

    def _book(self, ends: HandEnds, done: np.ndarray, infos: dict[str, Any]) -> None:
        """Report the hands that ended; finish the games that ended (final observation from the
        learner's seat, then a new game); start the opponents' next hand."""
        if ends.games.size == 0:
            return
        self._report(infos, SCORES, ends.games, ends.scores)
        self._report(infos, WENT_OUT, ends.games, ends.went_out)
        self._report(infos, TOTALS, ends.games, self.engine.game_scores[ends.games])
        over = ends.games[ends.game_over]
        first_end = over[~done[over]]  # a new episode that ended before the learner moved is just dealt again
        if first_end.size:
            final, _, _ = self.engine.observe(first_end, self.seats[first_end])
            self._final(infos, first_end, final, {TOTALS: self.engine.game_scores[first_end],
                                                  "seat": self.seats[first_end]})
            self.opponents.game_over(first_end, self.seats[first_end], self.engine.game_scores[first_end])
            done[first_end] = True
        if over.size:
            self.engine.new_games(over)
            self._new_seats(over)
        self._new_hands(ends.games)

    def _penalize(self, games: np.ndarray, actions: np.ndarray, rewards: np.ndarray, done: np.ndarray,
                  infos: dict[str, Any]) -> None:
        """End the games whose learner played an illegal action, with the penalty, and deal them anew."""
        hands_left = self.engine.num_hands - self.engine.hands_played[games]
        penalties = np.array([illegal_action_penalty(self.config, self.engine.reward_mode, int(left))
                              for left in hands_left.tolist()])
        reasons = np.array([self.engine.position(int(game)).describe_illegal(int(action))
                            for game, action in zip(games.tolist(), actions.tolist())], dtype=object)
        rewards[games] += penalties
        self._final(infos, games, self._observations[games],
                    {"illegal_action": actions, "penalty": penalties, "reason": reasons, "seat": self.seats[games]})
        self.opponents.game_over(games, self.seats[games], None)
        done[games] = True
        self.engine.new_games(games)
        self._new_seats(games)
        self._new_hands(games)

    def _new_seats(self, games: np.ndarray) -> None:
        """New games in `games`: the learner's seat, and opponents drawn where they are drawn per game."""
        assert self._np_random is not None
        if self.fixed_seat is not None:
            self.seats[games] = self.fixed_seat
        else:
            self.seats[games] = self._np_random.integers(self.config.num_players, size=games.shape[0])
        self.opponents.seat(games, self._np_random)

    def _new_hands(self, games: np.ndarray) -> None:
        self.opponents.new_hand(games)

    # ------------------------------------------------------------------ what a step returns
    def _observe(self) -> Any:
        observations, masks, _ = self.engine.observe(self._every_game)  # the learner is to move everywhere
        self._observations, self._masks = observations, masks
        if self.observation_mode == "vector":
            return observations.copy()
        return {"observation": observations.copy(), "action_mask": masks.copy()}

    def _infos(self, infos: dict[str, Any]) -> dict[str, Any]:
        every = np.ones(self.num_envs, dtype=np.bool_)
        infos.update({"seat": self.seats.copy(), "_seat": every, "action_mask": self._masks.copy(),
                      "_action_mask": every.copy()})
        return infos

    def _report(self, infos: dict[str, Any], key: str, games: np.ndarray, values: np.ndarray) -> None:
        """Set infos[key] for `games` (an array over all games, created on first use) and its mask."""
        if key not in infos:
            shape, dtype = (self.num_envs, *values.shape[1:]), values.dtype
            infos[key] = np.empty(shape, dtype=dtype) if dtype.hasobject else np.zeros(shape, dtype=dtype)
            infos["_" + key] = np.zeros(self.num_envs, dtype=np.bool_)
        infos[key][games] = values
        infos["_" + key][games] = True

    def _final(self, infos: dict[str, Any], games: np.ndarray, observations: np.ndarray,
               results: dict[str, np.ndarray]) -> None:
        """Record the last observation and the results of the games that ended."""
        if "final_obs" not in infos:
            infos["final_obs"] = np.empty(self.num_envs, dtype=object)
            infos["_final_obs"] = np.zeros(self.num_envs, dtype=np.bool_)
            infos["final_info"] = {}
            infos["_final_info"] = np.zeros(self.num_envs, dtype=np.bool_)
        zero_mask = np.zeros(self.config.num_actions, dtype=np.int8)  # nothing is legal once a game is over
        for k, game in enumerate(games.tolist()):
            vector = observations[k].copy()
            infos["final_obs"][game] = vector if self.observation_mode == "vector" else \
                {"observation": vector, "action_mask": zero_mask.copy()}
        infos["_final_obs"][games] = True
        infos["_final_info"][games] = True
        for key, values in results.items():
            self._report(infos["final_info"], key, games, np.asarray(values))

    # ------------------------------------------------------------------ refusals
    def _as_actions(self, actions: Any) -> np.ndarray:
        """`actions` as B int64 actions of the space, or an IllegalActionError saying what they must be
        (the engine's checks of shape and dtype, then the range of the action space)."""
        array = self.engine._as_actions(actions, self.num_envs)
        a = self.config.num_actions
        outside = np.flatnonzero((array < 0) | (array >= a))
        if outside.size:
            shown = ", ".join(f"game {g}: {array[g]}" for g in outside[:_SHOWN_ERRORS].tolist())
            raise IllegalActionError(f"{outside.size} of the {self.num_envs} actions are not actions of this env "
                                     f"(integers 0..{a - 1}): {shown}; nothing changed")
        return array

    def __repr__(self) -> str:
        return f"SingleAgentVectorEnv({self.num_envs} games of {describe_table(self.config)})"
