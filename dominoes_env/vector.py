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

from typing import TYPE_CHECKING, Any, NamedTuple

import numba
import numpy as np

from dominoes_env.core import batch, rules, validation
from dominoes_env.core.config import (
    MAX_HAND_INDEX,
    MAX_HANDS_PER_GAME,
    GameConfig,
    TableRuleOptions,
    describe_table,
    table_of,
)
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.game import HandEnded
from dominoes_env.core.observation import observation_layout
from dominoes_env.core.rewards import REWARD_MODES
from dominoes_env.core.state import HandState

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: Most games one batch holds (memory is checked too: see :attr:`VectorDominoes.bytes_per_game`).
MAX_ENVS = 10_000_000
#: Most memory a batch may take (states, observations, masks and the per-game arrays).
MAX_BYTES = 8 * 2**30
_SHOWN_ERRORS = 5  # games named in a refusal
_INT64 = np.dtype(np.int64)  # the actions' dtype step() takes as it is
_INT8, _BOOL = np.dtype(np.int8), np.dtype(np.bool_)

#: The infos' keys of a hand's end, named once (:class:`~dominoes_env.core.game.HandEnded`), as arrays over the games
SCORES, WENT_OUT, TOTALS = (HandEnded.KEYS[field] for field in ("scores", "went_out", "totals"))


def random_legal_actions(action_masks: np.ndarray, rng: np.random.Generator, threads: int = 1) -> np.ndarray:
    """One uniformly random legal action per row of (B, A) masks (any dtype; not 0: legal): the
    random player of a batch, compiled (:func:`dominoes_env.core.batch.pick_legal`), about ten
    times faster than numpy's passes over the masks (fastest on the env's own int8 masks where A
    is a multiple of 4; others are copied first). One ``rng.random(B)`` draw per call: row k takes its
    legal action number ``floor(u_k * count_k)``. A row with no legal action gets -1.

    `threads` (default 1) spreads batches of more than one block (256 rows) over that many of
    numba's threads, as ``VectorDominoes(threads=...)`` does its step: the same actions, since
    the draw is made first. Give the batch's own number, so that the picker is not the serial
    part of a threaded step.

    Raises:
        ValueError: `action_masks` is not a 2-D array, or `threads` is not a whole number from 1
            to numba's thread count.
    """
    masks = np.asarray(action_masks)
    if masks.ndim != 2:
        raise ValueError(f"action_masks must be a (games, actions) array, got shape {masks.shape}")
    threads = thread_count(threads)
    rows = masks.shape[0]
    return threaded_loop(threads, rows, batch.pick_legal, batch.pick_legal_parallel, batch.mask_words(masks),
                         rng.random(rows), np.empty(rows, dtype=np.int64), serial_bounds=True)


def thread_count(threads: Any) -> int:
    """`threads` checked (a whole number from 1 to numba's thread count); asking for more than one
    has numba's OpenMP threads spin only briefly before they sleep from then on
    (:func:`batch.prefer_short_spins`).

    Raises:
        ValueError: out of range or not a whole number (one line).
    """
    count = validation.integer("threads", threads, 1, numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]
    if count > 1:
        batch.prefer_short_spins()
    return count


def threaded_loop(threads: int, rows: int, serial: Any, parallel: Any, *arguments: Any,
                  serial_bounds: bool = False) -> Any:
    """Run a compiled loop over `rows` entries: `parallel` on `threads` of numba's threads when
    more than one is asked for and the loop spans more than one block, else `serial`
    (``serial_bounds``: it takes the entry range ``0, rows`` as its last arguments). numba's
    thread count is put back afterwards."""
    if threads > 1 and rows > batch.BLOCK:
        previous = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            return parallel(*arguments)
        finally:
            numba.set_num_threads(previous)
    return serial(*arguments, 0, rows) if serial_bounds else serial(*arguments)


class HandEnds(NamedTuple):
    """The hands one move ended: entry k is game ``games[k]``.

    Attributes:
        games: (m,) the games whose hand ended.
        scores: (m, n) that hand's pips left per seat.
        went_out: (m,) the seat that went out, -1 if the hand blocked.
        game_over: (m,) whether that hand was the game's last.
    """

    games: np.ndarray
    scores: np.ndarray
    went_out: np.ndarray
    game_over: np.ndarray


class VectorDominoes:
    """B games of the rule book (or the table rules) stepped in lockstep.

    Args:
        num_envs: B, the number of games.
        num_players: seats at the table, as in :func:`dominoes_env.env` (a GameConfig brings its
            table rules).
        highest_double: N of the double-N set.
        num_hands: hands in a game.
        reward: "score", "zero_sum" or "rank" (:mod:`dominoes_env.core.rewards`).
        seed: seeds the one generator every deal comes from (None: fresh entropy); the same
            seed plays the same games.
        table_rules: the table rules as keywords (:class:`~dominoes_env.core.config.TableRuleOptions`), or
            a GameConfig in place of `num_players`.
        threads: how many threads the compiled loops over more than one block (256 games) may use;
            default 1 (one core). More is faster on cores nothing else uses; on a busy machine a
            thread waits for the others at every step (see docs/vector.md).

    ``reset()`` and ``step(actions)`` return ``obs = {"observation": (B, D) int8,
    "action_mask": (B, A) int8}`` for the player to move in each game; ``step`` also
    returns ``rewards`` (B, n) in seat order (a hand pays when it ends), ``terminations``
    (B,) (the game ended; it was dealt anew in the same call), ``truncations`` (all False)
    and ``infos``: ``current_player`` (B,), and, with masks ``_hand_scores`` and so on,
    ``hand_scores`` (B, n), ``went_out`` (B,; -1 blocked) for the games whose hand ended in
    this step, and ``final_obs``/``final_info`` for the games that ended.
    """

    def __init__(self, num_envs: int, num_players: int | GameConfig = 4, highest_double: int = 9, num_hands: int = 1,
                 reward: str = "score", seed: int | None = None, *, threads: int = 1,
                 **table_rules: Unpack[TableRuleOptions]) -> None:
        self.config: GameConfig = table_of(num_players, highest_double, table_rules)
        self.num_envs = validation.integer("num_envs", num_envs, 1, MAX_ENVS)
        #: threads of the compiled loops over more than one block of games (numba's; 1: one core)
        self.threads = thread_count(threads)
        self.num_hands = validation.integer("num_hands", num_hands, 1, MAX_HANDS_PER_GAME)
        self.reward_mode = validation.choice("reward", reward, REWARD_MODES)
        self.layout = observation_layout(self.config, self.num_hands)
        total = self.num_envs * self.bytes_per_game
        if total > MAX_BYTES:
            raise ValueError(f"{self.num_envs} games of {describe_table(self.config)} would take "
                             f"{total / 2**30:.1f} GiB ({self.bytes_per_game} bytes each); at most "
                             f"{MAX_BYTES // 2**30} GiB: use fewer games")
        n, b = self.config.num_players, self.num_envs
        # every array a move reads or writes, in one buffer (the kernels take it as one argument)
        self._arena, self._arrays = batch.allocate(self.config, b, self.num_hands, REWARD_MODES.index(self.reward_mode))
        #: (B, S) int16, each game's engine state, read-only: a position changes through this
        #: class's methods, which keep what the batch remembers of it (its legal moves) in step
        self.states = self._arrays.states.view()
        self.states.flags.writeable = False
        self.game_scores = self._arrays.game_scores  #: scores of the hands finished in each game
        self.hands_played = self._arrays.hands_played  #: hands finished in each game's current episode
        self.current_player = self._arrays.players  #: each game's player to move
        self._bad = self._arrays.bad  # scratch of every move: the actions refused
        self._every_game = self._arrays.rows
        self._no_viewers = self._arrays.viewers  # -1: each game's player to move
        # shapes of what a step returns (the config's sizes are properties: read them once)
        self._observations_shape = (b, self.layout.size)
        self._masks_shape = (b, self.config.num_actions)
        self._rewards_shape = (b, n)
        self._one_per_game = (b,)
        # whether a step of every game runs the serial kernel (as small batches and one thread do)
        self._serial_step = self.threads == 1 or b <= batch.BLOCK
        self._no_ends = HandEnds(np.zeros(0, dtype=np.int64), np.zeros((0, n), dtype=np.int64),
                                 np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_))
        self._rng: np.random.Generator | None = None
        self._seed = validation.seed("seed", seed)
        self._dealt = False

    # ------------------------------------------------------------------ sizes
    @property
    def bytes_per_game(self) -> int:
        """Memory one game takes: its state and the other per-game arrays (:class:`batch.BatchArrays`),
        and what a step returns, twice (a caller holds the last step's while the next is made)."""
        n = self.config.num_players
        state = 2 * rules.state_size(n, self.config.num_tiles)
        books = 2 * 8 * n + 5 * 8 + 2  # scores and game scores; player, hands, viewer, row, went_out; bad, ended
        books += 2 * min(batch.LEGAL_CAPACITY, self.config.num_actions) + 8  # the legal moves remembered
        # obs, mask, rewards, player, flags, and step_random's actions
        per_step = self.layout.size + self.config.num_actions + 8 * n + 8 + 2 + 8
        return state + books + 2 * per_step

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
        self.new_games(self._every_game)
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
        b = self.num_envs
        # The common case inline and the serial kernel called directly: a step of one game is a few microseconds.
        values = actions if (type(actions) is np.ndarray and actions.dtype is _INT64
                             and actions.shape == self._one_per_game) else self._as_actions(actions, b)
        observations = np.empty(self._observations_shape, _INT8)  # dtypes as instances, and positional: faster
        masks = np.empty(self._masks_shape, _INT8)
        rewards = np.zeros(self._rewards_shape)  # float64
        if self._serial_step:
            finished_count = batch.check_play_observe(self._arena, values, rewards, observations, masks)
        else:
            finished_count = self._loop(b, batch.check_play_observe, batch.check_play_observe_parallel, self._arena,
                                        values, rewards, observations, masks)
        if finished_count < 0:
            self._refuse(self._every_game, values, self._bad)
        return self._step_result(finished_count, observations, masks, rewards, {})

    def step_random(self, rng: np.random.Generator | None = None
                    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play a uniformly random legal move in every game: :meth:`step` with the moves of
        :func:`random_legal_actions`, chosen inside the compiled step.

        The same moves as ``step(random_legal_actions(masks, rng))`` over the last masks, with
        the same generator state (one ``rng.random(B)`` draw), but one pass over the games
        instead of three: no mask is read back and no move needs checking. For random
        opponents, random exploration and throughput measurements. `rng` defaults to the env's
        own generator (the one the deals come from), so a seeded env repeats its games.
        Returns what :meth:`step` returns, with the moves played in ``infos["actions"]``.

        Raises:
            IllegalActionError: no games yet, or some game's hand is over (after :meth:`play`, a
                finished game waits for :meth:`new_games`); nothing changes, `rng` included.
            TypeError: `rng` is not a numpy Generator.
        """
        if not self._dealt:
            raise IllegalActionError("step_random() refused: no games yet; call reset() first")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
        assert self._rng is not None
        over = np.flatnonzero(self.states[:, rules.HAND_OVER])  # before the draw: a refusal leaves rng as it was
        if over.size:
            more = " ..." if over.size > _SHOWN_ERRORS else ""
            raise IllegalActionError(f"step_random() refused: the hand is over in {over.size} game(s) (games "
                                     f"{over[:_SHOWN_ERRORS].tolist()}{more}); new_games() deals them")
        b = self.num_envs
        uniforms = (self._rng if rng is None else rng).random(b)
        actions = np.empty(b, dtype=np.int64)
        observations = np.empty(self._observations_shape, _INT8)
        masks = np.empty(self._masks_shape, _INT8)
        rewards = np.zeros(self._rewards_shape)
        finished_count = self._loop(b, batch.play_random_observe, batch.play_random_observe_parallel,
                                    self._arena, uniforms, actions, rewards, observations, masks)
        return self._step_result(finished_count, observations, masks, rewards, {"actions": actions})

    def _step_result(self, finished_count: int, observations: np.ndarray, masks: np.ndarray, rewards: np.ndarray,
                     extra: dict[str, Any]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray,
                                                     dict[str, Any]]:
        """What a step returns once every game has moved: where hands ended, book them and deal on
        (:meth:`_end_hands`); `extra` joins the infos."""
        b = self.num_envs
        if finished_count == 0:  # the common step: no hand ended anywhere
            return {"observation": observations, "action_mask": masks}, rewards, np.zeros(b, _BOOL), \
                np.zeros(b, _BOOL), {"current_player": self.current_player.copy(), **extra}
        infos, terminations = self._end_hands(observations, masks)
        infos.update(extra)
        return {"observation": observations, "action_mask": masks}, rewards, terminations, np.zeros(b, _BOOL), infos

    def _end_hands(self, observations: np.ndarray, masks: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
        """After a step that ended hands: book them, record the games they ended and deal every
        one of those games its next hand (a new game's first, for those that ended), whose first
        observations and masks replace theirs. Returns the step's infos and terminations."""
        b = self.num_envs
        terminations = np.zeros(b, dtype=np.bool_)
        hand_over = np.zeros(b, dtype=np.bool_)
        hand_scores = np.zeros(self._rewards_shape, dtype=np.int64)
        went_out = np.full(b, -1, dtype=np.int64)
        games_over = batch.close_hands(self._arena, self._every_game, True, hand_over, hand_scores, went_out,
                                       terminations)
        infos: dict[str, Any] = {SCORES: hand_scores, f"_{SCORES}": hand_over, WENT_OUT: went_out,
                                 f"_{WENT_OUT}": hand_over.copy()}
        ended = np.flatnonzero(hand_over)
        if games_over:
            self._finish(ended[terminations[ended]], infos, observations, masks)
        self._deal(ended, self.hands_played[ended])  # hand 0 of a new game where the game ended
        self._observe_into(ended, self._no_viewers, True, observations, masks, self.current_player)
        infos["current_player"] = self.current_player.copy()
        return infos, terminations

    def _finish(self, games: np.ndarray, infos: dict[str, Any], step_observations: np.ndarray,
                step_masks: np.ndarray) -> None:
        """Record the finished games' last observations (the last hand's scores counted) and
        final scores, then clear their scores and hand counts for a new game (same-step autoreset)."""
        b = self.num_envs
        if self.layout.score_bits:  # the step observed them before their last hand's scores were counted
            observations, masks, _ = self._observe_games(games, self._no_viewers)
        else:  # nothing changed since the step observed them at their final positions: copy those rows
            observations, masks = step_observations[games], step_masks[games]
        final_obs = np.empty(b, dtype=object)
        final_obs[games] = [{"observation": seen, "action_mask": mask} for seen, mask in zip(observations, masks)]
        over = np.zeros(b, dtype=np.bool_)
        over[games] = True
        final_scores = np.zeros(self._rewards_shape, dtype=np.int64)
        final_scores[games] = self.game_scores[games]
        infos["final_obs"], infos["_final_obs"] = final_obs, over
        infos["final_info"] = {TOTALS: final_scores, f"_{TOTALS}": over.copy()}
        infos["_final_info"] = over.copy()
        self.game_scores[games] = 0
        self.hands_played[games] = 0

    # ------------------------------------------------------------------ some of the games
    # The building blocks of step(), public for adapters that step only some games at a time
    # (the single-agent vector env plays the opponents' seats; the TD trainer its tables).
    def play(self, games: np.ndarray, actions: Any) -> tuple[np.ndarray, HandEnds]:
        """Play ``actions[k]`` in game ``games[k]`` (distinct game indices) for its player to move.

        A game whose hand ends is dealt its next hand at once, unless that hand ended the
        game: a finished game keeps its final position (and ``game_scores``) until
        :meth:`new_games` deals it anew.

        Returns:
            the rewards (k, n) in seat order (non-zero only where a hand ended) and the
            :class:`HandEnds` of this move.

        Raises:
            IllegalActionError: as :meth:`step`; nothing changes.
        """
        if not self._dealt:
            raise IllegalActionError("step() refused: no games yet; call reset() first")
        games = self._as_games(games)
        k = games.shape[0]
        values = self._as_actions(actions, k)
        rewards = np.zeros((k, self.config.num_players), dtype=np.float64)
        finished_count = self._loop(k, batch.check_and_play, batch.check_and_play_parallel, self._arena, games, values,
                                    rewards)
        if finished_count < 0:
            self._refuse(games, values, self._bad[:k])
        if finished_count == 0:
            return rewards, self._no_ends
        hand_over = np.zeros(k, dtype=np.bool_)
        hand_scores = np.zeros((k, self.config.num_players), dtype=np.int64)
        went_out = np.full(k, -1, dtype=np.int64)
        game_over = np.zeros(k, dtype=np.bool_)
        batch.close_hands(self._arena, games, False, hand_over, hand_scores, went_out, game_over)
        ends = HandEnds(games[hand_over], hand_scores[hand_over], went_out[hand_over], game_over[hand_over])
        going_on = ends.games[~ends.game_over]
        if going_on.size:  # the next hand of those games
            self._deal(going_on, self.hands_played[going_on])
        return rewards, ends

    def new_games(self, games: np.ndarray, first_hands: np.ndarray | None = None) -> None:
        """Start a new game (scores cleared, its first hand dealt from the generator) in each of
        `games`: hand 0, or hand ``first_hands[k]`` (its engine and first player; a one-hand
        game may so be played with any engine)."""
        if self._rng is None:
            raise IllegalActionError("no games yet; call reset() first")
        games = self._as_games(games)
        self._new_games(games, self._as_hand_indices(first_hands, games))

    def _new_games(self, games: np.ndarray, first_hands: np.ndarray | None = None) -> None:
        self.game_scores[games] = 0
        self.hands_played[games] = 0
        self._deal(games, np.zeros(games.shape[0], dtype=np.int64) if first_hands is None else first_hands)

    def deal(self, games: np.ndarray, hand_indices: Any) -> None:
        """Deal hand ``hand_indices[k]`` of its game (its engine and, with table rules, its first
        player follow from the index) into game ``games[k]``, one shuffle each from the generator.
        The games' scores and hand counts are left as they are."""
        if self._rng is None:
            raise IllegalActionError("no games yet; call reset() first")
        games = self._as_games(games)
        indices = self._as_hand_indices(hand_indices, games)
        if indices is None:
            raise ValueError(f"hand indices must be {games.shape[0]} integers from 0 to {MAX_HAND_INDEX}, one per "
                             f"game")
        self._deal(games, indices)

    def _as_hand_indices(self, hand_indices: Any, games: np.ndarray) -> np.ndarray | None:
        """One hand index >= 0 per game as int64 (None stays None), or a ValueError."""
        if hand_indices is None:
            return None
        array = np.asarray(hand_indices)
        if array.shape != games.shape or not (np.issubdtype(array.dtype, np.integer) or array.size == 0) \
                or (array.size and (array.min() < 0 or array.max() > MAX_HAND_INDEX)):
            raise ValueError(f"hand indices must be {games.shape[0]} integers from 0 to {MAX_HAND_INDEX}, one per "
                             f"game, got {validation.shown(hand_indices)}")
        return array.astype(np.int64)

    def _deal(self, games: np.ndarray, hand_indices: np.ndarray) -> None:
        assert self._rng is not None
        t = self.config.num_tiles
        k = games.shape[0]
        self._loop(k, batch.deal_rows, batch.deal_parallel, self._arena, games, self._rng.random((k, t)), hand_indices,
                   serial_bounds=True)

    def observe(self, games: np.ndarray, viewers: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Game ``games[k]`` as seat ``viewers[k]`` sees it (default, or -1: its player to move).

        Returns:
            observations (k, D) int8, masks (k, A) int8 (a seat's legal moves where it is its
            turn, else zeros) and the seat to move in each game (k,).
        """
        games = self._as_games(games)
        k = games.shape[0]
        if viewers is None:
            viewers = self._no_viewers[:k]
        else:
            viewers = np.asarray(viewers)
            n = self.config.num_players
            if viewers.shape != (k,) or not np.issubdtype(viewers.dtype, np.integer) \
                    or (k and not -1 <= viewers.min() <= viewers.max() < n):
                raise ValueError(f"viewers must be {k} seats (-1 for the player to move), each -1..{n - 1}")
            viewers = viewers.astype(np.int64)
        return self._observe_games(games, viewers)

    def _observe_games(self, games: np.ndarray, viewers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = games.shape[0]
        observations = np.empty((k, self._observations_shape[1]), dtype=np.int8)
        masks = np.empty((k, self._masks_shape[1]), dtype=np.int8)
        players = np.empty(k, dtype=np.int64)
        self._observe_into(games, viewers, False, observations, masks, players)
        return observations, masks, players

    def players_to_move(self, games: np.ndarray) -> np.ndarray:
        """The seat to move in each of `games`."""
        return self.states[self._as_games(games), rules.CURRENT_PLAYER].astype(np.int64)

    def _as_games(self, games: Any) -> np.ndarray:
        """`games` as distinct game indices (int64), or a ValueError saying what they must be."""
        if games is self._every_game:
            return games
        array = np.asarray(games)
        if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) or array.size == 0):
            raise ValueError(f"games must be a 1-D array of game indices, got {array.dtype} of shape {array.shape}")
        array = array.astype(np.int64)
        if array.size and not 0 <= array.min() <= array.max() < self.num_envs:
            raise ValueError(f"games must be indices 0..{self.num_envs - 1}, got {array.min()}..{array.max()}")
        ascending = array.size < 2 or bool((array[1:] > array[:-1]).all())  # the usual case, and cheap to check
        if not ascending and np.unique(array).size != array.size:
            raise ValueError("games must be distinct: one move per game in one call")
        return array

    # ------------------------------------------------------------------ inside
    def _loop(self, rows: int, serial: Any, parallel: Any, *arguments: Any, serial_bounds: bool = False) -> Any:
        """:func:`threaded_loop` on the batch's threads."""
        return threaded_loop(self.threads, rows, serial, parallel, *arguments, serial_bounds=serial_bounds)

    def _observe(self) -> dict[str, np.ndarray]:
        observations = np.empty(self._observations_shape, dtype=np.int8)
        masks = np.empty(self._masks_shape, dtype=np.int8)
        self._observe_into(self._every_game, self._no_viewers, True, observations, masks, self.current_player)
        return {"observation": observations, "action_mask": masks}

    def _observe_into(self, games: np.ndarray, viewers: np.ndarray, by_game: bool, observations: np.ndarray,
                      masks: np.ndarray, players: np.ndarray) -> None:
        """Observe `games` into the outputs, at row k for ``games[k]`` or, `by_game`, at row ``games[k]``."""
        self._loop(games.shape[0], batch.observe_games, batch.observe_games_parallel, self._arena, games, viewers,
                   by_game, observations, masks, players, serial_bounds=True)

    def _as_actions(self, actions: Any, count: int) -> np.ndarray:
        """`actions` as a (count,) int64 array, or an error saying what the array must be."""
        if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (count,):
            return actions  # the common case, checked by the compiled move
        array = np.asarray(actions)
        if array.shape != (count,):
            raise IllegalActionError(f"actions must be an array of {count} actions (one per game), "
                                     f"got shape {array.shape}")
        if not np.issubdtype(array.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers, got dtype {array.dtype}")
        if array.dtype == np.uint64 and (array > np.iinfo(np.int64).max).any():
            raise IllegalActionError("actions must fit 64-bit integers")
        return array.astype(np.int64)

    def _refuse(self, games: np.ndarray, values: np.ndarray, bad: np.ndarray,
                seats: np.ndarray | None = None) -> None:
        """The error for the illegal actions found (nothing changed): `bad` marks them among the
        `games` and their `values`; `seats`, by game, names each game's seat too."""
        at_fault = np.flatnonzero(bad)

        def game(k: int) -> str:
            g = int(games[k])
            return f"game {g}" if seats is None else f"game {g} (seat {seats[g]})"

        shown = "; ".join(f"{game(k)}: {self.position(int(games[k])).describe_illegal(int(values[k]))}"
                          for k in at_fault[:_SHOWN_ERRORS])
        more = f"; and {at_fault.size - _SHOWN_ERRORS} more games" if at_fault.size > _SHOWN_ERRORS else ""
        raise IllegalActionError(f"{at_fault.size} of the {games.shape[0]} actions refused, nothing changed: "
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
