"""The ``ppo`` player's weights file: safetensors, read and checked in numpy (no torch, no pickle).

A file holds one float32 tensor per weight of the network (:func:`layer_names`: the trunk's
layers, the policy head, the value head, each laid out as torch lays a linear layer, (out,
in)) and, as string metadata:

- ``format``: ``dominoes-ppo/1``;
- ``config``: the run's :class:`~baselines.ppo.config.PPOConfig` as JSON (the table, the
  network's widths and activation, and how it was trained);
- ``info``: a JSON object about the run (steps trained, seconds, the command);
- ``sha256``: the SHA-256 of every tensor's bytes (little-endian float32) in name order.

Reading trusts nothing in the file: the configuration is validated first (its bounds refuse
a layer of 10**9 units), every tensor's declared shape and dtype is compared with what the
configuration implies before it is read, then the checksum and finiteness. Every refusal is
one ValueError naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save

from baselines.learning.files import opened_safetensors, read_config, read_info, shipped_file, write_atomically
from baselines.ppo.config import MAX_LAYERS, MAX_WIDTH, PPOConfig
from dominoes_env.core.config import GameConfig

FORMAT = "dominoes-ppo/1"
#: An action the mask forbids: its logit (finite, so that 0 x it stays 0 in the entropy)
MASKED_LOGIT = -1e9
#: Bounds on any table's observation size and action count (8 players, double-18: 2,563 and 1,712)
_LARGEST_INPUT, _MOST_ACTIONS = 4096, 2048
#: The largest file a valid configuration allows: the widest network's float32 weights, and metadata.
MAX_WEIGHTS_BYTES = 4 * ((_LARGEST_INPUT + 1) * MAX_WIDTH + MAX_LAYERS * (MAX_WIDTH + 1) * MAX_WIDTH
                         + (_MOST_ACTIONS + 8) * (MAX_WIDTH + 1)) + 2**20


def layer_names(config: PPOConfig) -> list[str]:
    """The weights' names, in the file's order: ``trunk.K.weight``/``.bias`` per hidden layer,
    then ``policy.*`` and ``value.*``."""
    return list(layer_shapes(config))


def layer_shapes(config: PPOConfig) -> dict[str, tuple[int, ...]]:
    """The shape of every weight the configuration's network has (as torch lays them: (out, in))."""
    sizes = [config.observation_size, *config.hidden]
    shapes: dict[str, tuple[int, ...]] = {}
    for k, (inputs, outputs) in enumerate(zip(sizes, sizes[1:])):
        shapes[f"trunk.{k}.weight"], shapes[f"trunk.{k}.bias"] = (outputs, inputs), (outputs,)
    last = sizes[-1]
    actions = config.game.num_actions if config.policy_head == "actions" else 1  # afterstates: one score a move
    shapes["policy.weight"], shapes["policy.bias"] = (actions, last), (actions,)
    shapes["value.weight"], shapes["value.bias"] = (config.num_players, last), (config.num_players,)
    return shapes


@dataclass(frozen=True, eq=False)
class PPOWeights:
    """A trained network with the configuration that gives it a meaning; checked on construction.

    Attributes:
        weights: float32 arrays by name (:func:`layer_shapes`).
        config: the run's configuration (the table, the widths, the activation).
        info: what the run recorded about itself (JSON-compatible).

    Raises:
        ValueError: a weight missing, extra, of another shape or dtype, or not finite.
    """

    weights: Mapping[str, np.ndarray]
    config: PPOConfig
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = weights_problem(self.weights, self.config)
        if problem:
            raise ValueError(f"ppo weights: {problem}")

    def __repr__(self) -> str:  # short: it appears in policy labels
        config = self.config
        return (f"PPOWeights(hidden {config.hidden}, {config.activation}, {config.num_players} players, "
                f"double-{config.game.highest_double})")

    def policy(self, vectors: np.ndarray) -> np.ndarray:
        """(K, D) vectors -> the policy head's (K, outputs) float32, in numpy: logits over the action
        table from observations ("actions"), or one score each from after-states ("afterstates")."""
        x = vectors.astype(np.float32, copy=False)
        relu = self.config.activation == "relu"
        for k in range(len(self.config.hidden)):
            x = x @ self.weights[f"trunk.{k}.weight"].T + self.weights[f"trunk.{k}.bias"]
            x = np.maximum(x, 0.0, out=x) if relu else np.tanh(x, out=x)
        return x @ self.weights["policy.weight"].T + self.weights["policy.bias"]


def weights_problem(weights: Any, config: PPOConfig) -> str | None:
    """What is wrong with `weights` as `config`'s network, or None."""
    shapes = layer_shapes(config)
    if not isinstance(weights, Mapping) or set(weights) != set(shapes):
        names = sorted(weights) if isinstance(weights, Mapping) else type(weights).__name__
        return f"holds the weights {names}, where its configuration needs {sorted(shapes)}"
    for name, shape in shapes.items():
        value = weights[name]
        if not isinstance(value, np.ndarray) or value.dtype != np.float32 or value.shape != shape:
            got = f"{value.dtype} {value.shape}" if isinstance(value, np.ndarray) else type(value).__name__
            return f"{name} must be float32 of shape {shape}, got {got}"
        if not np.isfinite(value).all():
            return f"{name} holds {int(np.count_nonzero(~np.isfinite(value)))} values that are not finite"
    return None


def checksum(weights: Mapping[str, np.ndarray]) -> str:
    """SHA-256 of every weight's little-endian float32 bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(weights):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(weights[name], dtype="<f4").tobytes())
    return digest.hexdigest()


def save_weights(path: str | os.PathLike[str], weights: PPOWeights) -> Path:
    """Write the weights, the configuration and the info, atomically (a reader never sees half a file).

    Raises:
        ValueError: an `info` that is not JSON.
    """
    path = Path(path)
    try:
        info_text = json.dumps(weights.info, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot save ppo weights {str(path)!r}: info is not JSON: {error}") from None
    metadata = {"format": FORMAT, "config": weights.config.to_json(), "info": info_text,
                "sha256": checksum(weights.weights)}
    tensors = {name: np.ascontiguousarray(value) for name, value in weights.weights.items()}
    return write_atomically(path, save(tensors, metadata=metadata))


def load_weights(path: str | os.PathLike[str], expected: GameConfig | None = None) -> PPOWeights:
    """Read a file written by :func:`save_weights`.

    Args:
        path: the file.
        expected: the table it must have been trained for (None: any).

    Raises:
        ValueError: the file is missing, damaged, not a ppo weights file, trained for another
            table than `expected`, or its metadata or weights fail a check (one line).
    """
    with opened_safetensors(path, "ppo weights", MAX_WEIGHTS_BYTES) as (handle, refused):
        metadata = handle.metadata() or {}
        config = _read_config(metadata, expected, refused)
        shapes = layer_shapes(config)
        if set(handle.keys()) != set(shapes):
            raise refused(f"holds the tensors {sorted(handle.keys())}, where its configuration needs "
                          f"{sorted(shapes)}: the file is damaged")
        for tensor, shape in shapes.items():
            declared = handle.get_slice(tensor)
            if declared.get_dtype() != "F32" or tuple(declared.get_shape()) != shape:
                raise refused(f"stores {tensor} as {declared.get_dtype()} {tuple(declared.get_shape())}, "
                              f"not float32 {shape}: the file is damaged")
        weights = {tensor: handle.get_tensor(tensor) for tensor in shapes}
    if metadata.get("sha256") != checksum(weights):
        raise refused("fails its checksum: the weights were changed or damaged after it was written")
    problem = weights_problem(weights, config)
    if problem:
        raise refused(problem)
    return PPOWeights(weights, config, read_info(metadata, refused))


def _read_config(metadata: dict[str, str], expected: GameConfig | None,
                 refused: Callable[[str], ValueError]) -> PPOConfig:
    if metadata.get("format") != FORMAT:
        raise refused(f"is not a ppo weights file (format {metadata.get('format')!r}, expected {FORMAT!r})")
    if not isinstance(metadata.get("sha256"), str):
        raise refused("has no 'sha256' checksum in its metadata")
    return read_config(metadata, PPOConfig.from_json, expected, refused)


def shipped_weights(config: GameConfig) -> Path:
    """The trained ``ppo`` weights shipped for a table.

    Raises:
        ValueError: none ships for this table (the message lists those that have one).
    """
    return shipped_file("ppo", "safetensors", config, "weights file", "ppo")
