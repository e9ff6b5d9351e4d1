"""The value network V(s) for training (torch), with hand-written per-sample gradients.

Acting never comes here: the policy runs the same weights through a numpy forward pass
(:class:`baselines.td_lambda.policy.NumpyValue`). Training needs torch for one thing the
numpy pass cannot give cheaply: each sample's gradient grad V(x_k), added straight into
its eligibility trace.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from baselines.td_lambda.architecture import LAYER_NORM_EPS, Architecture
from baselines.td_lambda.config import TDLambdaConfig


class ValueNetwork(torch.nn.Module):
    """V(s): the player's predicted own pips at the end of the hand.

    Hidden blocks are Linear -> ReLU -> LayerNorm (the reference's), then a Linear to one
    number. All weights live in ONE flat parameter vector ``theta`` (the layout of
    :class:`~baselines.td_lambda.architecture.Architecture`) so that per-sample
    gradients, eligibility traces and the update are plain (rows x P) tensors.
    """

    def __init__(self, input_size: int, hidden_sizes: Sequence[int]) -> None:
        super().__init__()
        self.architecture = Architecture(input_size, tuple(hidden_sizes))
        self.shapes = self.architecture.shapes()
        self.num_hidden = len(hidden_sizes)
        self.theta = torch.nn.Parameter(torch.cat([self._initial(block) for block in self.architecture.layers()]))

    @staticmethod
    def _initial(block: list[tuple[str, tuple[int, ...]]]) -> torch.Tensor:
        """torch.nn.Linear's default initialisation (weights and bias uniform in +-1/sqrt(fan_in));
        LayerNorm starts as the identity."""
        (_, weight_shape), (_, bias_shape), *norm = block
        bound = 1 / math.sqrt(weight_shape[1])
        parts = [torch.empty(weight_shape).uniform_(-bound, bound).reshape(-1),
                 torch.empty(bias_shape).uniform_(-bound, bound)]
        if norm:
            parts += [torch.ones(norm[0][1]), torch.zeros(norm[1][1])]
        return torch.cat(parts)

    def weights(self) -> np.ndarray:
        """A float32 numpy copy of theta (what checkpoints store and the numpy forward pass reads)."""
        return self.theta.detach().cpu().numpy().copy()

    def load_weights(self, theta: np.ndarray) -> None:
        """Copy a flat float32 vector of this network's length into theta."""
        if theta.shape != tuple(self.theta.shape):
            raise ValueError(f"weights of shape {theta.shape} do not fit a network of {self.theta.numel()} weights")
        with torch.no_grad():
            self.theta.copy_(torch.from_numpy(np.ascontiguousarray(theta, dtype=np.float32)))

    def value(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """V for a (K, input_size) batch under parameters `theta` -> (K,)."""
        p = self.architecture.unflatten(theta)
        for i in range(self.num_hidden):
            x = F.relu(F.linear(x, p[f"w{i}"], p[f"b{i}"]))
            x = F.layer_norm(x, (x.shape[-1],), p[f"ln_w{i}"], p[f"ln_b{i}"], eps=LAYER_NORM_EPS)
        return F.linear(x, p["w_out"], p["b_out"])[..., 0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.value(self.theta, x)

    @torch.no_grad()
    def gradients_and_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-sample grad V(x_k) as a (K, P) tensor (in theta's layout), and V(x_k) as (K,)."""
        grads = torch.zeros(x.shape[0], self.theta.numel())
        return grads, self.add_gradients_(x, grads)

    @torch.no_grad()
    def add_gradients_(self, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """Add each sample's grad V(x_k) to row k of `out` (K, P) in place; return V(x_k) as (K,).

        Back-propagation written out by hand: each sample's weight gradient is the outer
        product of its own output gradient and input, added straight into its row (a trace)
        without materialising it (torch.func's vmap(grad) computed the same numbers several
        times slower here).
        """
        p = self.architecture.unflatten(self.theta)
        rows = self._unflatten_rows(out)
        inputs, pre_activations, normalized, inverse_std = [], [], [], []
        for i in range(self.num_hidden):
            inputs.append(x)
            a = F.linear(x, p[f"w{i}"], p[f"b{i}"])
            r = a.clamp(min=0)
            mean = r.mean(dim=1, keepdim=True)
            inv = torch.rsqrt(r.var(dim=1, unbiased=False, keepdim=True) + LAYER_NORM_EPS)
            xhat = (r - mean) * inv
            pre_activations.append(a)
            normalized.append(xhat)
            inverse_std.append(inv)
            x = xhat * p[f"ln_w{i}"] + p[f"ln_b{i}"]
        values = F.linear(x, p["w_out"], p["b_out"])[:, 0]
        rows["b_out"].add_(1.0)
        rows["w_out"][:, 0].add_(x)
        dy = p["w_out"][0].expand_as(x)
        for i in reversed(range(self.num_hidden)):
            xhat, inv = normalized[i], inverse_std[i]
            rows[f"ln_b{i}"].add_(dy)
            rows[f"ln_w{i}"].addcmul_(dy, xhat)
            dxhat = dy * p[f"ln_w{i}"]
            dr = inv * (dxhat - dxhat.mean(dim=1, keepdim=True) - xhat * (dxhat * xhat).mean(dim=1, keepdim=True))
            da = dr * (pre_activations[i] > 0)
            rows[f"b{i}"].add_(da)
            rows[f"w{i}"].addcmul_(da[:, :, None], inputs[i][:, None, :])
            dy = da @ p[f"w{i}"]
        return values

    def _unflatten_rows(self, rows: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views (never copies: the traces are written through them) of each parameter's columns
        of a (K, P) tensor, shaped (K, *parameter shape)."""
        return {name: rows[:, columns].view(rows.shape[0], *shape)
                for name, columns, shape in self.architecture.slices()}

    @torch.no_grad()
    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.value(self.theta, torch.from_numpy(features)).numpy()


def build_network(config: TDLambdaConfig, weights: np.ndarray | None = None) -> ValueNetwork:
    """A network for the configuration: freshly initialised (from torch's generator), or holding `weights`."""
    architecture = config.architecture
    network = ValueNetwork(architecture.input_size, architecture.hidden_sizes)
    if weights is not None:
        network.load_weights(weights)
    return network
