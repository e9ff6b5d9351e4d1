"""The game in JAX (the ``jax`` extra): :class:`JaxDominoes` in Pgx's interface, over rules that
are pure array functions of the compiled engine's own state layout, so that ``jax.jit`` and
``jax.vmap`` play thousands of games at once (docs/jax.md)."""

from dominoes_env.jax.env import JaxDominoes, State, restart_finished
from dominoes_env.jax.observation import JaxObserver
from dominoes_env.jax.rules import JaxRules, as_state

__all__ = ["JaxDominoes", "JaxObserver", "JaxRules", "State", "as_state", "restart_finished"]
