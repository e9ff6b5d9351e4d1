"""The actor-critic network PPO trains (torch), and its weights by name (numpy) for the file.

One trunk (an MLP over observation vectors) and two heads on its last layer:

- the **policy** head: one logit per action of the table's action table (read for the legal
  moves alone: the illegal ones have probability 0), or one score for an after-state vector
  (:mod:`baselines.ppo.heads`);
- the **value** head: one value per seat, in the mover's frame (entry 0 the player to move,
  entry k the k-th seat after it): the return each seat can expect from this position, as
  the player to move sees it. Every seat's value at every step is what lets one network
  learn from every seat's moves with one generalized advantage estimate per seat
  (:mod:`baselines.ppo.trainer`).

A shared trunk costs half of CleanRL's separate actor and critic, and the critic gains from
the policy's features. Initialised as CleanRL does (orthogonal, gains sqrt(2) in the trunk,
0.01 for the policy head, 1 for the value head).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from baselines.ppo.config import PPOConfig


class ActorCritic(nn.Module):
    """Policy logits over the action table and every seat's value, from one trunk."""

    def __init__(self, config: PPOConfig) -> None:
        super().__init__()
        sizes = [config.observation_size, *config.hidden]
        activation = nn.Tanh if config.activation == "tanh" else nn.ReLU
        self.trunk = nn.Sequential()
        for k, (inputs, outputs) in enumerate(zip(sizes, sizes[1:])):
            self.trunk.add_module(str(2 * k), _initialised(nn.Linear(inputs, outputs), math.sqrt(2)))
            self.trunk.add_module(str(2 * k + 1), activation())
        outputs = config.game.num_actions if config.policy_head == "actions" else 1
        self.policy = _initialised(nn.Linear(sizes[-1], outputs), 0.01)
        self.value = _initialised(nn.Linear(sizes[-1], config.num_players), 1.0)

    def candidate_logits(self, features: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """The trunk's (M, H) features and (M,) actions -> each action's logit (M,): the policy layer's
        rows of those actions alone, not the whole action table's (the illegal ones are never read)."""
        # index_select, not [] indexing: its backward is an index_add, 3x faster on the CPU than the
        # accumulating index_put that indexing's backward is
        return ((features * self.policy.weight.index_select(0, actions)).sum(dim=-1)
                + self.policy.bias.index_select(0, actions))

    def afterstate_scores(self, vectors: torch.Tensor) -> torch.Tensor:
        """(M, D) float after-state vectors -> (M,) scores."""
        return self.policy(self.trunk(vectors)).squeeze(-1)

    def named_weights(self) -> dict[str, np.ndarray]:
        """Every weight as a float32 numpy array, under :func:`~baselines.ppo.weights.layer_names`'s names."""
        state = self.state_dict()
        names = {f"trunk.{k // 2}.{part}": f"trunk.{k}.{part}" for k in range(0, len(self.trunk), 2)
                 for part in ("weight", "bias")}
        names.update({name: name for name in ("policy.weight", "policy.bias", "value.weight", "value.bias")})
        return {name: state[key].detach().cpu().numpy().astype(np.float32, copy=True) for name, key in names.items()}

    def load_named_weights(self, weights: dict[str, np.ndarray]) -> None:
        """Set every weight from :meth:`named_weights`'s form (a weights file's)."""
        state = {}
        for name, value in weights.items():
            if name.startswith("trunk."):
                _, layer, part = name.split(".")
                name = f"trunk.{2 * int(layer)}.{part}"
            state[name] = torch.as_tensor(value)
        self.load_state_dict(state)


def _initialised(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer
