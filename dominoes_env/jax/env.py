"""``JaxDominoes``: the game as pure functions of a state pytree, in Pgx's interface.

``init(key) -> State`` and ``step(state, action, key=None) -> State``, with the fields Pgx's
tools read (``current_player``, ``observation``, ``legal_action_mask``, ``rewards``,
``terminated``, ``truncated``), so that ``jax.jit(jax.vmap(env.step))`` plays thousands of
games at once and a training loop compiled with it never leaves the accelerator. The rules,
the deal and the observation are the compiled engine's, slot for slot
(:mod:`dominoes_env.jax.rules`, :mod:`dominoes_env.jax.observation`); docs/jax.md says what
it costs and when :class:`~dominoes_env.VectorDominoes` serves better.

Conventions (Pgx's, where the environment of this package has its own):

- ``rewards`` are paid when a hand ends, to every seat: minus the pips it still holds (the
  environment's "score" mode); zeros at every other step.
- After the game's last hand ``terminated`` is True; a step from a finished state changes
  nothing and pays zeros, and its mask is all ones (Pgx's, so that a policy's softmax over it
  never divides by zero).
- An illegal action (masked out, or out of range) ends the game: the mover is paid
  :func:`dominoes_env.core.rewards.illegal_action_penalty` (worse than any legal outcome of the
  hands left), the others 0. Pgx pays the mover -1, which in pips would be a bargain.
- A game of several hands deals the next one when a hand ends, from the state's own key, or
  from `key` where a step is given one.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dominoes_env.core import rules
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig, describe_table, make_config
from dominoes_env.core.rewards import illegal_action_penalty
from dominoes_env.core.state import HandState
from dominoes_env.core.validation import integer
from dominoes_env.jax.observation import JaxObserver
from dominoes_env.jax.rules import JaxRules

_FIELDS = ("current_player", "observation", "legal_action_mask", "rewards", "terminated", "truncated",
           "_step_count", "_position", "_game_scores", "_hand_index", "_hands_done", "_key")


@partial(jax.tree_util.register_dataclass, data_fields=list(_FIELDS), meta_fields=[])
@dataclasses.dataclass(frozen=True)
class State:
    """One game (or, under ``vmap``, a batch of games): Pgx's fields, then the position.

    Attributes:
        current_player: the seat to move (int32).
        observation: what that seat sees (int8, the environment's layout for the game's length).
        legal_action_mask: its legal actions (bool; all True once the game is over).
        rewards: what this step paid each seat (float32; see the module docstring).
        terminated: the game is over (its last hand ended, or an illegal action ended it).
        truncated: always False (a hand always ends).
        _step_count: actions taken in the game.
        _position: the compiled engine's state array (:mod:`dominoes_env.core.rules`).
        _game_scores: each seat's pips over the finished hands.
        _hand_index: the hand's number in the game (its engine is N - it).
        _hands_done: hands finished.
        _key: where the game's next deals come from.
    """

    current_player: jax.Array
    observation: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    _step_count: jax.Array
    _position: jax.Array
    _game_scores: jax.Array
    _hand_index: jax.Array
    _hands_done: jax.Array
    _key: jax.Array

    def replace(self, **changes: Any) -> State:
        """A copy with some fields changed (what Pgx's environments call on their states)."""
        return dataclasses.replace(self, **changes)


#: The game's name and version, as Pgx names its games (``pgx.make("dominoes")``'s would be these);
#: the version follows the environment's (``dominoes_v0``).
ENV_ID = "dominoes"
ENV_VERSION = "v0"


class JaxDominoes:
    """The game in JAX for one table and game length.

    Args:
        num_players, highest_double: the table (2-8 players, double-6 to double-18).
        hands: hands in a game (1: one hand, the environment's default).
        **table_rules: ``rules="mexican_train"``, ``boneyard=``, ``cover_doubles=``,
            ``first_player=``: as :func:`dominoes_env.make_config` takes them.

    Raises:
        ValueError: a table, rule or number of hands out of bounds (one line).
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, *, hands: int = 1,
                 **table_rules: Any) -> None:
        self.config = num_players if isinstance(num_players, GameConfig) else \
            make_config(num_players, highest_double, **table_rules)
        self.hands = integer("hands", hands, 1, MAX_HANDS_PER_GAME)
        self.rules = JaxRules(self.config)
        self.observer = JaxObserver(self.config, self.hands)
        self.num_players = self.config.num_players
        self.num_actions = self.config.num_actions
        self.id, self.version = ENV_ID, ENV_VERSION
        self.observation_shape = (self.observer.size,)
        #: the illegal action's penalty by the hands left (the one being played included)
        self._penalties = jnp.array([illegal_action_penalty(self.config, "score", left)
                                     for left in range(self.hands + 1)], dtype=jnp.float32)

    def init(self, key: jax.Array) -> State:
        """A new game: its first hand dealt from `key`."""
        deal_key, game_key = jax.random.split(key)
        return self._state(self.rules.deal(deal_key, 0), jnp.zeros(self.num_players, dtype=jnp.int32),
                           hand_index=jnp.int32(0), hands_done=jnp.int32(0), key=game_key)

    def from_position(self, position: HandState | np.ndarray, *, hand_index: int | None = None, hands_done: int = 0,
                      game_scores: Any = None, key: jax.Array | None = None) -> State:
        """The state of a position of the compiled engine (``VectorDominoes.position(g)``, a
        ``HandState`` or its ``.state`` array, a record's position), so that the two engines can
        play on from it together. `hand_index` defaults to the hand whose engine the position
        shows; a game of several hands also takes the hands finished and their scores.

        Raises:
            ValueError: no position of this table (a HandState of another table, or an array of
                the wrong size), or the game's counts are out of bounds.
        """
        if isinstance(position, HandState):
            if position.config != self.config:
                raise ValueError(f"the position is of another table ({describe_table(position.config)}); this game "
                                 f"is {describe_table(self.config)}")
            position = position.state
        state = np.asarray(position)
        if state.shape != (self.rules.state_size,) or not np.issubdtype(state.dtype, np.integer):
            raise ValueError(f"a position of {self.num_players} players, double-{self.config.highest_double} is an "
                             f"integer array of {self.rules.state_size} entries, got {state.dtype} {state.shape}")
        index = self.config.highest_double - int(state[rules.ENGINE_VALUE]) if hand_index is None else hand_index
        done = integer("hands_done", hands_done, 0, self.hands - 1)
        scores = np.zeros(self.num_players, dtype=np.int64) if game_scores is None else np.asarray(game_scores)
        if scores.shape != (self.num_players,) or scores.min() < 0:
            raise ValueError(f"game_scores must be {self.num_players} scores of 0 or more, got {game_scores!r}")
        return self._state(jnp.asarray(state.astype(np.int16)), jnp.asarray(scores, dtype=jnp.int32),
                           hand_index=jnp.int32(integer("hand_index", index, 0, 10_000)),
                           hands_done=jnp.int32(done), key=jax.random.PRNGKey(0) if key is None else key)

    def _state(self, position: jax.Array, game_scores: jax.Array, hand_index: jax.Array, hands_done: jax.Array,
               key: jax.Array) -> State:
        player = position[rules.CURRENT_PLAYER].astype(jnp.int32)
        return State(current_player=player, observation=self.observer.observe(position, player, game_scores),
                     legal_action_mask=self.rules.legal_mask(position),
                     rewards=jnp.zeros(self.num_players, dtype=jnp.float32), terminated=jnp.bool_(False),
                     truncated=jnp.bool_(False), _step_count=jnp.int32(0), _position=position,
                     _game_scores=game_scores, _hand_index=hand_index, _hands_done=hands_done, _key=key)

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """The game after the player to move plays `action` (see the module docstring for a
        finished game and an illegal action)."""
        action = jnp.asarray(action, dtype=jnp.int32)
        in_range = (action >= 0) & (action < self.num_actions)
        legal = in_range & state.legal_action_mask[jnp.clip(action, 0, self.num_actions - 1)]
        finished = state.terminated | state.truncated
        played = self._play(state, jnp.where(legal, action, 0), key)
        penalty = self._penalties[self.hands - state._hands_done]
        illegal = state.replace(
            rewards=jnp.zeros(self.num_players, dtype=jnp.float32).at[state.current_player].set(penalty),
            terminated=jnp.bool_(True), legal_action_mask=jnp.ones_like(state.legal_action_mask),
            _step_count=state._step_count + 1)
        unchanged = state.replace(rewards=jnp.zeros_like(state.rewards))
        return _select(finished, unchanged, _select(legal, played, illegal))

    def observe(self, state: State, player_id: jax.Array | None = None) -> jax.Array:
        """What a seat sees of the game (default: the player to move, as ``state.observation``)."""
        seat = state.current_player if player_id is None else jnp.asarray(player_id, dtype=jnp.int32)
        return self.observer.observe(state._position, seat, state._game_scores)

    def _play(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        """A legal action of an unfinished game: the move, the hand's rewards if it ended, the next
        hand's deal if one is left."""
        position = self.rules.apply(state._position, action)
        over = position[rules.HAND_OVER] == 1
        pips = self.rules.scores(position)
        rewards = jnp.where(over, -pips, 0).astype(jnp.float32)
        totals = state._game_scores + jnp.where(over, pips, 0)
        hands_done = state._hands_done + over.astype(jnp.int32)
        game_over = hands_done >= self.hands
        hand_index = state._hand_index
        if self.hands > 1:  # a one-hand game never deals again: no deal compiled into its step
            next_index = hand_index + 1
            dealt = self.rules.deal(jax.random.fold_in(state._key, next_index) if key is None else key, next_index)
            new_hand = over & ~game_over
            position = jnp.where(new_hand, dealt, position)
            hand_index = jnp.where(new_hand, next_index, hand_index)
        player = position[rules.CURRENT_PLAYER].astype(jnp.int32)
        return State(current_player=player, observation=self.observer.observe(position, player, totals),
                     legal_action_mask=self.rules.legal_mask(position) | game_over, rewards=rewards,
                     terminated=game_over, truncated=jnp.bool_(False), _step_count=state._step_count + 1,
                     _position=position, _game_scores=totals, _hand_index=hand_index, _hands_done=hands_done,
                     _key=state._key)


def _select(condition: jax.Array, if_true: State, if_false: State) -> State:
    """`if_true` where `condition` holds, else `if_false`, leaf by leaf (a batch's conditions, one
    per game, reach over each leaf's trailing axes)."""
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(jnp.reshape(condition, jnp.shape(condition) + (1,) * (b.ndim - jnp.ndim(condition))),
                               a, b), if_true, if_false)


def restart_finished(states: State, fresh: State) -> State:
    """A batch's auto-reset: each finished game replaced by its slot of `fresh` (new games dealt
    beforehand, e.g. once per rollout: under ``vmap`` a reset dealt at every step would be paid by
    every game at every step), the others unchanged."""
    return _select(states.terminated, fresh, states)
