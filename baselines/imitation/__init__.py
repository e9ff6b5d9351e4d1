"""Behaviour cloning: a player's recorded games (a Minari dataset of ``dominoes dataset``) into the
``ppo`` network, so that ``ppo@FILE`` plays the clone and ``dominoes train ppo --init FILE`` improves it.

Only :mod:`baselines.imitation.demonstrations` (numpy and Minari) loads without torch; the
training (:mod:`baselines.imitation.train`) and ``dominoes train bc`` need it.
"""

from __future__ import annotations

from baselines.imitation.demonstrations import Demonstrations, load_demonstrations

__all__ = ["Demonstrations", "load_demonstrations"]
