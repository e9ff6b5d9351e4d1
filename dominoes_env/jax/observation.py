"""What a seat observes, in JAX: the environment's binary vector, entry for entry.

The twin of :func:`dominoes_env.core.observation.write_observation`: the same egocentric layout
(:func:`dominoes_env.core.observation.observation_fields` declares it; this module only fills
it), each field built as a whole array and the fields joined in the layout's order.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from dominoes_env.core import rules
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout
from dominoes_env.jax.rules import JaxRules


def _one_hot(index: jax.Array, size: int) -> jax.Array:
    return jnp.arange(size, dtype=jnp.int32) == index


def _thermometer(count: jax.Array, size: int) -> jax.Array:
    return jnp.arange(size, dtype=jnp.int32) < count


class JaxObserver:
    """Encodes positions of one table for a game of `num_hands` hands (the layout's scores so far
    come with more than one hand)."""

    def __init__(self, config: GameConfig, num_hands: int = 1) -> None:
        self.rules = JaxRules(config)
        self.layout = observation_layout(config, num_hands)
        self.size = self.layout.size

    def observe(self, state: jax.Array, viewer: jax.Array, scores_so_far: jax.Array | None = None) -> jax.Array:
        """(D,) int8: what seat `viewer` sees of the position `state` (`scores_so_far`: the game
        scores before this hand, by seat; needed where the layout has them)."""
        r = self.rules
        n, t, v, m = r.n, r.t, r.highest + 1, r.config.max_hand_size
        viewer = jnp.asarray(viewer, dtype=jnp.int32)
        owner = r._block(state, r.owner, t)
        line_of = r._block(state, r.line_of, t)
        relative_of_tile = jnp.where(line_of == n, n, (line_of - viewer) % n)
        relatives = jnp.arange(n + 1, dtype=jnp.int32)
        lines = jnp.where(relatives == n, n, (viewer + relatives) % n)
        seats = lines[:n]
        current = (state[rules.CURRENT_PLAYER].astype(jnp.int32) - viewer) % n
        open_values = r._block(state, r.open_values, n + 1)[lines]
        fields = {
            "hand": owner == viewer,
            "played": (line_of >= 0)[None, :] & (relative_of_tile[None, :] == relatives[:, None]),
            "open_values": open_values[:, None] == jnp.arange(v, dtype=jnp.int32)[None, :],
            "markers": r._block(state, r.marker_up, n)[seats],
            "lines_started": r._block(state, r.line_started, n)[seats],
            "dummy_open": state[rules.DUMMY_OPEN][None],
            "hand_sizes": jnp.arange(m, dtype=jnp.int32)[None, :] < r._block(state, r.hand_sizes, n)[seats][:, None],
            "passed_last": r._block(state, r.passed_last, n)[seats],
            "whose_turn": _one_hot(current, n),
            "turns_until": (jnp.arange(n, dtype=jnp.int32)[None, :]
                            == ((jnp.arange(n, dtype=jnp.int32) - current) % n)[:, None]),
            "hand_number": _one_hot(state[rules.ENGINE_VALUE].astype(jnp.int32), v),
        }
        if "boneyard" in self.layout.names:
            fields["boneyard"] = _thermometer(state[rules.PILE_COUNT].astype(jnp.int32),
                                              self.layout.field("boneyard").size)
            fields["drew"] = state[rules.DREW][None]
        if "double_to_cover" in self.layout.names:
            pending = state[rules.DOUBLE_LINE].astype(jnp.int32)
            relative = jnp.where(pending == n, n, (pending - viewer) % n)
            fields["double_to_cover"] = (pending >= 0) & _one_hot(relative, n + 1)
        if "scores" in self.layout.names:
            bits = self.layout.score_bits
            assert scores_so_far is not None, "a game of several hands observes its scores so far"
            totals = jnp.asarray(scores_so_far, dtype=jnp.int32)[seats]
            fields["scores"] = (totals[:, None] >> jnp.arange(bits, dtype=jnp.int32)[None, :]) & 1
        return jnp.concatenate([fields[name].reshape(-1).astype(jnp.int8) for name in self.layout.names])
