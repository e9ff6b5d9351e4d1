"""Thousands of games stepped at once: the batched engine for self-play at scale.

:class:`VectorDominoes` holds B independent games as one 2-D array of engine states and
steps them in lockstep, each game at its own player to move. Every step plays one action
in every game, with exactly the rules of the scalar engine (the same compiled kernels,
looped in :mod:`dominoes_env.core.batch`), and returns every game's observation and legal
mask for its next player to move, in exactly the scalar env's layout.

Episodes (games of ``num_hands`` hands) end independently. A finished game is dealt anew
from the seeded generator inside the same ``step`` call: Gymnasium 1.x's **same-step
autoreset** (``gymnasium.vector.AutoresetMode.SAME_STEP``). The observation returned for
that game is the new game's first one; the finished game's last observation is in
``infos["final_obs"]`` and its results in ``infos["final_info"]``, each with a ``_``-prefixed
mask of the games concerned, as Gymnasium's vector envs report them.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from dominoes_env.core import batch, rules, validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig, describe_table, make_config
from dominoes_env.core.deprecation import renamed_keyword
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.observation import observation_layout
from dominoes_env.core.rewards import REWARD_MODES
from dominoes_env.core.state import HandState

#: Most games one batch holds (memory is checked too: see :attr:`VectorDominoes.bytes_per_game`).
MAX_ENVS = 10_000_000
#: Most memory a batch may take (states, observations, masks and the per-game arrays).
MAX_BYTES = 8 * 2**30
_SHOWN_ERRORS = 5  # games named in a refusal


class VectorDominoes:
    """B games of the rule book (or the table rules) stepped in lockstep.

    Args:
        num_envs: B, the number of games.
        num_players, highest_double, num_hands: the table and the game length, as in
            :func:`dominoes_env.env`.
        reward: "score", "zero_sum" or "rank" (:mod:`dominoes_env.core.rewards`).
        seed: seeds the one generator every deal comes from (None: fresh entropy); the same
            seed plays the same games.
        boneyard, cover_doubles, first_player: the table rules (keyword-only).

    ``reset()`` and ``step(actions)`` return ``obs = {"observation": (B, D) int8,
    "action_mask": (B, A) int8}`` for the player to move in each game; ``step`` also
    returns ``rewards`` (B, n) in seat order (a hand pays when it ends), ``terminations``
    (B,) (the game ended; it was dealt anew in the same call), ``truncations`` (all False)
    and ``infos``: ``current_player`` (B,), and, with masks ``_hand_scores`` and so on,
    ``hand_scores`` (B, n), ``went_out`` (B,; -1 blocked) for the games whose hand ended in
    this step, and ``final_obs``/``final_info`` for the games that ended.
    """

    @renamed_keyword
    def __init__(self, num_envs: int, num_players: int = 4, highest_double: int = 9, num_hands: int = 1,
                 reward: str = "score", seed: int | None = None, *, boneyard: bool = False,
                 cover_doubles: bool = False, first_player: str = "engine_holder") -> None:
        self.config: GameConfig = make_config(num_players, highest_double, boneyard=boneyard,
                                              cover_doubles=cover_doubles, first_player=first_player)
        self.num_envs = validation.integer("num_envs", num_envs, 1, MAX_ENVS)
        self.num_hands = validation.integer("num_hands", num_hands, 1, MAX_HANDS_PER_GAME)
        self.reward_mode = validation.choice("reward", reward, REWARD_MODES)
        self.layout = observation_layout(self.config, self.num_hands)
        total = self.num_envs * self.bytes_per_game
        if total > MAX_BYTES:
            raise ValueError(f"{self.num_envs} games of {describe_table(self.config)} would take "
                             f"{total / 2**30:.1f} GiB ({self.bytes_per_game} bytes each); at most "
                             f"{MAX_BYTES // 2**30} GiB: use fewer games")
        n, b, t = self.config.num_players, self.num_envs, self.config.num_tiles
        tiles = self.config.tiles
        self._low, self._high, self._tiles_with_value = tiles.low, tiles.high, tiles.tiles_with_value
        self._offsets = self.layout.offsets
        self._bits = self.layout.score_bits
        self.states = np.zeros((b, rules.state_size(n, t)), dtype=np.int16)
        self.game_scores = np.zeros((b, n), dtype=np.int64)  #: scores of the hands finished in each game
        self.hands_played = np.zeros(b, dtype=np.int64)  #: hands finished in each game's current episode
        self.current_player = np.zeros(b, dtype=np.int64)
        self._reward_code = REWARD_MODES.index(self.reward_mode)
        self._max_hand, self._highest = self.config.max_hand_size, self.config.highest_double
        self._scores = np.zeros((b, n), dtype=np.int64)  # scratch of every step
        self._ended = np.zeros(b, dtype=np.bool_)
        self._went_out = np.full(b, -1, dtype=np.int64)
        self._bad = np.zeros(b, dtype=np.bool_)
        self._rng: np.random.Generator | None = None
        self._seed = validation.seed("seed", seed)
        self._dealt = False

    # ------------------------------------------------------------------ sizes
    @property
    def bytes_per_game(self) -> int:
        """Memory one game takes: its state, the observation and mask returned, and the per-game arrays."""
        n = self.config.num_players
        state = 2 * rules.state_size(n, self.config.num_tiles)
        per_step = self.layout.size + self.config.num_actions + 8 * n + 8  # obs, mask, rewards, player
        return state + 2 * per_step + 8 * n + 8 * 2  # returned arrays, and the game scores and counters

    @property
    def observation_size(self) -> int:
        return self.layout.size

    # ------------------------------------------------------------------ episodes
    def reset(self, seed: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Deal every game afresh (the first hand of a new game). A seed restarts the generator;
        without one the generator given at construction (or the last reset) continues."""
        seed = validation.seed("seed", seed)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed if seed is not None else self._seed)
        rows = np.arange(self.num_envs)
        self.game_scores[:] = 0
        self.hands_played[:] = 0
        self._deal(rows, np.zeros(self.num_envs, dtype=np.int64))
        self._dealt = True
        observations = self._observe()
        return observations, {"current_player": self.current_player.copy()}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play ``actions[i]`` in game i for its player to move; see the class docstring.

        Raises:
            IllegalActionError: the array is not B integers, or some action is not legal in
                its game (the message names the games and actions at fault); nothing changes.
        """
        if not self._dealt:
            raise IllegalActionError("step() refused: no games yet; call reset() first")
        values = self._as_actions(actions)
        b = self.num_envs
        rewards = np.zeros((b, self.config.num_players), dtype=np.float64)
        scores, ended, went_out, bad = self._scores, self._ended, self._went_out, self._bad  # scratch
        play = batch.check_and_play_parallel if self._parallel() else batch.check_and_play
        finished_count = play(self.states, values, self._low, self._high, self._tiles_with_value, self._reward_code,
                              bad, scores, rewards, ended, went_out)
        if finished_count < 0:
            self._refuse(values, bad)
        if finished_count == 0:  # the common step: no hand ended anywhere
            observations = self._observe()
            return observations, rewards, np.zeros(b, dtype=np.bool_), np.zeros(b, dtype=np.bool_), \
                {"current_player": self.current_player.copy()}
        finished = np.flatnonzero(ended)
        scores, went_out = np.where(ended[:, None], scores, 0), np.where(ended, went_out, -1)
        ended = ended.copy()
        self._ended[:] = False  # the scratch flags are set only where a hand ends
        self.game_scores[finished] += scores[finished]
        self.hands_played[finished] += 1
        infos: dict[str, Any] = {"hand_scores": scores, "_hand_scores": ended, "went_out": went_out,
                                 "_went_out": ended.copy()}
        over = ended & (self.hands_played >= self.num_hands)
        terminations = over.copy()
        going_on = finished[~over[finished]]
        if going_on.size:  # the next hand of those games
            self._deal(going_on, self.hands_played[going_on])
        games_over = np.flatnonzero(over)
        if games_over.size:
            self._finish(games_over, scores, went_out, infos)
        observations = self._observe()
        infos["current_player"] = self.current_player.copy()
        return observations, rewards, terminations, np.zeros(b, dtype=np.bool_), infos

    def _finish(self, games: np.ndarray, scores: np.ndarray, went_out: np.ndarray, infos: dict[str, Any]) -> None:
        """Record the finished games' last observations and results, then deal them anew (same-step autoreset)."""
        last = self._observe_rows(games)
        final_obs = np.full(self.num_envs, None, dtype=object)
        for k, game in enumerate(games):
            final_obs[game] = {"observation": last[0][k], "action_mask": last[1][k]}
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[games] = True
        final_scores = np.zeros_like(self.game_scores)
        final_scores[games] = self.game_scores[games]
        infos["final_obs"], infos["_final_obs"] = final_obs, mask
        infos["final_info"] = {"game_scores": final_scores, "_game_scores": mask.copy(),
                               "hand_scores": scores * mask[:, None], "_hand_scores": mask.copy(),
                               "went_out": np.where(mask, went_out, -1), "_went_out": mask.copy()}
        infos["_final_info"] = mask.copy()
        self.game_scores[games] = 0
        self.hands_played[games] = 0
        self._deal(games, np.zeros(games.shape[0], dtype=np.int64))

    # ------------------------------------------------------------------ inside
    def _parallel(self, rows: int | None = None) -> bool:
        """Whether to run a loop over `rows` games (default: all) on several threads: only loops of
        more than one block, and only when numba may use more than one thread."""
        return (self.num_envs if rows is None else rows) > batch.BLOCK and numba.get_num_threads() > 1

    def _deal(self, rows: np.ndarray, hand_indices: np.ndarray) -> None:
        """Deal hand `hand_indices[k]` of its game into row `rows[k]`, one shuffle each from the generator."""
        assert self._rng is not None
        t = self.config.num_tiles
        permutations = self._rng.permuted(np.broadcast_to(np.arange(t, dtype=np.int16), (rows.shape[0], t)), axis=1)
        c = self.config
        arguments = (self.states, rows.astype(np.int64), permutations, hand_indices.astype(np.int64),
                     c.num_players, c.highest_double, c.rule_flags, c.deal_size)
        if self._parallel(rows.shape[0]):
            batch.deal_parallel(*arguments)
        else:
            batch.deal_rows(*arguments, 0, rows.shape[0])

    def _observe(self) -> dict[str, np.ndarray]:
        observations, masks = self._observe_into(self.states, self.game_scores, self.current_player)
        return {"observation": observations, "action_mask": masks}

    def _observe_into(self, states: np.ndarray, game_scores: np.ndarray, players: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        observations = np.empty((states.shape[0], self.layout.size), dtype=np.int8)
        masks = np.empty((states.shape[0], self.config.num_actions), dtype=np.int8)
        arguments = (states, game_scores, self._offsets, self._highest, self._max_hand, self._bits,
                     self._tiles_with_value, observations, masks, players)
        if self._parallel(states.shape[0]):
            batch.observe_parallel(*arguments)
        else:
            batch.observe_rows(*arguments, 0, states.shape[0])
        return observations, masks

    def _observe_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._observe_into(self.states[rows], self.game_scores[rows], np.empty(rows.shape[0], dtype=np.int64))

    def _as_actions(self, actions: Any) -> np.ndarray:
        """`actions` as a (B,) int64 array, or an error saying what the array must be."""
        if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (self.num_envs,):
            return actions  # the common case, checked by the compiled move
        array = np.asarray(actions)
        if array.shape != (self.num_envs,):
            raise IllegalActionError(f"actions must be an array of {self.num_envs} actions (one per game), "
                                     f"got shape {array.shape}")
        if not np.issubdtype(array.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers, got dtype {array.dtype}")
        if array.dtype == np.uint64 and (array > np.iinfo(np.int64).max).any():
            raise IllegalActionError("actions must fit 64-bit integers")
        return array.astype(np.int64)

    def _refuse(self, values: np.ndarray, bad: np.ndarray) -> None:
        """The error for the illegal actions the compiled move found (it changed nothing)."""
        games = np.flatnonzero(bad)
        shown = "; ".join(f"game {game}: {self.position(game).describe_illegal(int(values[game]))}"
                          for game in games[:_SHOWN_ERRORS])
        more = f"; and {games.size - _SHOWN_ERRORS} more games" if games.size > _SHOWN_ERRORS else ""
        raise IllegalActionError(f"{games.size} of the {self.num_envs} actions refused, nothing changed: "
                                 f"{shown}{more}")

    # ------------------------------------------------------------------ one game
    def position(self, game: int) -> HandState:
        """Game `game`'s current position (a copy): ``raw_env().reset(options={"position": ...})``
        shows the same observation and mask (add :meth:`reset_options` for a multi-hand game)."""
        game = validation.integer("game", game, 0, self.num_envs - 1)
        return HandState(self.config, self.states[game].copy())

    def reset_options(self, game: int) -> dict[str, Any]:
        """The options that put a scalar env (same table, rules and game length) at game `game`'s
        position, scores so far included: ``raw_env(...).reset(options=vec.reset_options(i))``."""
        game = validation.integer("game", game, 0, self.num_envs - 1)
        played = int(self.hands_played[game])
        return {"position": self.position(game), "hand_index": played, "hands_played": played,
                "game_scores": self.game_scores[game].tolist()}
