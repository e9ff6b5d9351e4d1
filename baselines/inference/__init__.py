"""Beliefs about the hidden tiles: where each tile the player cannot see lies, from one player's
view of a hand.

    beliefs = make_beliefs(config)          # the project's best kind at the table (default_kind)
    beliefs.reset()                         # a new hand
    beliefs.observe(observation)            # each of the player's own observations, in order
    p = beliefs.probabilities()             # (tiles, players + 1): seats relative to the player, boneyard last

Kinds (:data:`KINDS`): ``"uniform"``, the marginals of the exact sampler of
:mod:`dominoes_env.core.hidden` (every deal that agrees with the hard facts alike), the baseline
every other kind is scored against (docs/inference.md); ``"network"``, the uniform marginals
tilted by a tile-location network trained on self-play deals (:mod:`baselines.inference.network`),
where its weights ship; ``"policy"``, the exact marginals tilted by how likely each opponent's
plays are under a softened model of its play, and ``"network+policy"``, the network's beliefs so
tilted (:mod:`baselines.inference.policy`). A user's own model is passed as
``make_beliefs(config, kind=factory)``, `factory` a callable that takes the table and returns an
object with the same three methods.
"""

from baselines.inference.beliefs import (
    DEFAULT_KIND,
    KINDS,
    Beliefs,
    NetworkBeliefs,
    UniformBeliefs,
    default_kind,
    make_beliefs,
)
from baselines.inference.policy import NetworkPolicyBeliefs, PolicyBeliefs  # registers its kinds in KINDS

__all__ = ["DEFAULT_KIND", "KINDS", "Beliefs", "NetworkBeliefs", "NetworkPolicyBeliefs", "PolicyBeliefs",
           "UniformBeliefs", "default_kind", "make_beliefs"]
