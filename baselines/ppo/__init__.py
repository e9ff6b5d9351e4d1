"""PPO self-play on the batched engine, and ``ppo``, the deep-RL player it trains: a small package
whose parts a reader finds by name.

- :mod:`~baselines.ppo.config`: :class:`PPOConfig`, the one source of defaults, bounds and options;
- :mod:`~baselines.ppo.network`: the actor-critic in torch (training only);
- :mod:`~baselines.ppo.trainer`: the algorithm, CleanRL-style, top to bottom: collect, advantages, update;
- :mod:`~baselines.ppo.opponents`: the seats a pool plays when the learner does not play them all;
- :mod:`~baselines.ppo.run`: a run's segments, evaluations, log, curve, weights and resume state;
- :mod:`~baselines.ppo.weights`: the player's safetensors file, validated and checksummed (numpy);
- :mod:`~baselines.ppo.policy`: the ``ppo`` policy, acting in numpy;
- :mod:`~baselines.ppo.cli`: ``dominoes train ppo``.

Importing this package, or making the ``ppo`` policy, never imports torch.
"""

from __future__ import annotations

from baselines.ppo.config import PPOConfig
from baselines.ppo.policy import PPOPolicy
from baselines.ppo.weights import PPOWeights, load_weights, save_weights, shipped_weights

__all__ = ["PPOConfig", "PPOPolicy", "PPOWeights", "load_weights", "save_weights", "shipped_weights"]
