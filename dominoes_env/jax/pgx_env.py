"""JaxDominoes as a ``pgx.Env`` (the ``pgx`` extra), for Pgx's tools: its ``auto_reset``, its
AlphaZero example, its evaluation helpers.

Pgx's ``Env.step`` wraps the game's step: a finished state pays zeros, a terminal mask is all
ones, and the observation is the player to move's, all as :class:`~dominoes_env.jax.env.JaxDominoes`
does already. One convention differs and stays the game's: an illegal action costs the mover
:func:`dominoes_env.core.rewards.illegal_action_penalty` in pips (Pgx's -1 would cost less than
a bad hand), and the others are paid 0.
"""

from __future__ import annotations

from typing import Any

import jax
import pgx

from dominoes_env.jax.env import JaxDominoes, State


class PgxDominoes(pgx.Env):
    """``pgx.Env`` over ``JaxDominoes`` (the same arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.game = JaxDominoes(*args, **kwargs)

    def _init(self, key: jax.Array) -> State:
        return self.game.init(key)

    def _step(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        # Pgx's step has counted the step before it hands it over; the game's step counts it again
        return self.game.step(state.replace(_step_count=state._step_count - 1), action, key)

    def _observe(self, state: State, player_id: jax.Array) -> jax.Array:
        return self.game.observe(state, player_id)

    def _step_with_illegal_action(self, state: State, loser: jax.Array) -> State:
        return state  # the game's step has paid the penalty and ended the game already

    @property
    def id(self) -> Any:
        return self.game.id

    @property
    def version(self) -> str:
        return self.game.version

    @property
    def num_players(self) -> int:
        return self.game.num_players
