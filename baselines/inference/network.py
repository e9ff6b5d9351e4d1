"""The tile-location network: a learned correction to the uniform beliefs, and its weights file.

The network reads what the player knows (its observation vector and the uniform kind's
marginals, which carry every hard fact) and gives a score to each (tile, place). The beliefs are
the uniform marginals tilted by those scores, row by row:

    p[tile, place] = u[tile, place] * exp(score[tile, place]) / sum over places of the same

so a place the facts rule out (u = 0) stays at 0 whatever the network says, and a network that
scores 0 everywhere gives back the uniform kind. It is a plain multilayer perceptron in numpy
(ReLU hidden layers), trained with torch by :mod:`baselines.inference.train` on self-play
positions whose label is the true deal (:mod:`baselines.inference.data`).

A weights file is one safetensors file: tensors ``w0, b0, w1, b1, ...`` (stored as float16, which
halves the file and changes a belief by well under a thousandth; read back as float32) and, as
metadata, ``format`` (``dominoes-beliefs/1``), ``table`` (the table's options as JSON),
``hidden`` (the hidden sizes, JSON), ``info`` (the run: command, seed, data, time) and
``sha256`` (of every tensor's bytes in order). Nothing in a file is trusted: the shapes are
computed from the table and the hidden sizes and compared with the declared ones before any
tensor is read, then the checksum and finiteness are checked; each refusal is one ValueError
naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from baselines.learning.files import opened_safetensors, read_info, shipped_file, write_atomically
from dominoes_env.core.config import GameConfig, describe_table, make_config
from dominoes_env.core.observation import observation_layout

WEIGHTS_FORMAT = "dominoes-beliefs/1"
#: The widest hidden layer and the most hidden layers a file may declare: they bound its size.
MAX_WIDTH = 4096
MAX_LAYERS = 4
#: The largest weights file read (the largest network the bounds allow at the largest table fits).
MAX_WEIGHTS_BYTES = 256 * 2**20
SHIPPED_NAME = "beliefs"


def input_size(config: GameConfig) -> int:
    """The network's input: the observation vector, then the uniform marginals (tiles x places)."""
    return observation_layout(config).size + config.num_tiles * (config.num_players + 1)


def output_size(config: GameConfig) -> int:
    """A score per (tile, place)."""
    return config.num_tiles * (config.num_players + 1)


def network_inputs(config: GameConfig, observations: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """(B, input_size) float32 from (B, D) observation vectors and (B, T, n + 1) uniform marginals:
    the one definition the trainer and the beliefs share."""
    size = observation_layout(config).size
    batch = observations.shape[0]
    return np.concatenate([observations[:, :size].astype(np.float32),
                           marginals.reshape(batch, -1).astype(np.float32)], axis=1)


def tilted(marginals: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The uniform marginals (..., T, n + 1) tilted by the network's scores (same shape), each hidden
    tile's row normalised; rows that are all 0 (tiles the player sees) stay 0."""
    allowed = marginals > 0
    logits = np.where(allowed, np.log(np.where(allowed, marginals, 1.0)) + scores, -np.inf)
    top = logits.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    weights = np.where(allowed, np.exp(logits - top), 0.0)
    totals = weights.sum(axis=-1, keepdims=True)
    return weights / np.where(totals > 0, totals, 1.0)


@dataclass(frozen=True, eq=False)
class BeliefWeights:
    """A trained tile-location network: its table, hidden sizes and layers; checked on construction.

    Attributes:
        config: the table it was trained for.
        hidden: the hidden layers' widths.
        layers: [(W, b), ...] float32, W of shape (inputs, outputs).
        info: what the run recorded about itself (JSON-compatible).
    """

    config: GameConfig
    hidden: tuple[int, ...]
    layers: list[tuple[np.ndarray, np.ndarray]]
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = _layers_problem(self.config, self.hidden, self.layers)
        if problem:
            raise ValueError(f"beliefs network: {problem}")

    def scores(self, inputs: np.ndarray) -> np.ndarray:
        """(B, T, n + 1) scores of (B, input_size) inputs."""
        hidden = inputs
        for weight, bias in self.layers[:-1]:
            hidden = np.maximum(hidden @ weight + bias, 0.0)
        weight, bias = self.layers[-1]
        out = hidden @ weight + bias
        return out.reshape(inputs.shape[0], self.config.num_tiles, self.config.num_players + 1)

    def beliefs(self, observations: np.ndarray, marginals: np.ndarray) -> np.ndarray:
        """(B, T, n + 1) beliefs from a batch of observations and their uniform marginals."""
        inputs = network_inputs(self.config, observations, marginals)
        return tilted(marginals.astype(np.float64), self.scores(inputs).astype(np.float64))


def layer_shapes(config: GameConfig, hidden: tuple[int, ...]) -> list[tuple[tuple[int, int], tuple[int]]]:
    """((inputs, outputs), (outputs,)) of each layer, from the table and the hidden widths."""
    sizes = [input_size(config), *hidden, output_size(config)]
    return [((sizes[k], sizes[k + 1]), (sizes[k + 1],)) for k in range(len(sizes) - 1)]


def _hidden_problem(hidden: object) -> str | None:
    if not isinstance(hidden, (list, tuple)) or not 1 <= len(hidden) <= MAX_LAYERS or \
            not all(isinstance(width, int) and not isinstance(width, bool) and 1 <= width <= MAX_WIDTH
                    for width in hidden):
        return f"hidden sizes must be 1 to {MAX_LAYERS} integers from 1 to {MAX_WIDTH}, got {hidden!r}"
    return None


def _layers_problem(config: GameConfig, hidden: tuple[int, ...], layers: list) -> str | None:
    problem = _hidden_problem(hidden)
    if problem:
        return problem
    shapes = layer_shapes(config, hidden)
    if len(layers) != len(shapes):
        return f"has {len(layers)} layers where hidden sizes {list(hidden)} need {len(shapes)}"
    for k, ((weight, bias), (weight_shape, bias_shape)) in enumerate(zip(layers, shapes)):
        for name, array, shape in ((f"w{k}", weight, weight_shape), (f"b{k}", bias, bias_shape)):
            if not isinstance(array, np.ndarray) or array.dtype != np.float32 or array.shape != shape:
                return (f"{name} must be a float32 array of shape {shape} at {describe_table(config)}, got "
                        f"{getattr(array, 'dtype', type(array).__name__)} {getattr(array, 'shape', '')}")
            if not np.isfinite(array).all():
                return f"{name} holds values that are not finite (NaN or inf)"
    return None


#: How a file stores the weights: little-endian float16, safetensors' F16.
STORED, STORED_NAME = "<f2", "F16"


def checksum(layers: list[tuple[np.ndarray, np.ndarray]]) -> str:
    """SHA-256 of every tensor's bytes as stored (little-endian float16), in the order w0, b0, w1, b1, ..."""
    digest = hashlib.sha256()
    for weight, bias in layers:
        for array in (weight, bias):
            digest.update(np.ascontiguousarray(array, dtype=STORED).tobytes())
    return digest.hexdigest()


def save_weights(path: str | os.PathLike[str], weights: BeliefWeights) -> Path:
    """Write `weights` whole (written beside `path`, then renamed over it)."""
    from safetensors.numpy import save

    largest = max(float(np.abs(array).max(initial=0.0)) for layer in weights.layers for array in layer)
    if largest > float(np.finfo(np.float16).max):
        raise ValueError(f"cannot save beliefs weights {str(path)!r}: a weight of {largest:.3g} does not fit float16")
    tensors = {}
    for k, (weight, bias) in enumerate(weights.layers):
        tensors[f"w{k}"] = np.ascontiguousarray(weight, dtype=STORED)
        tensors[f"b{k}"] = np.ascontiguousarray(bias, dtype=STORED)
    metadata = {"format": WEIGHTS_FORMAT, "table": json.dumps(weights.config.options(), sort_keys=True),
                "hidden": json.dumps(list(weights.hidden)), "info": json.dumps(weights.info, sort_keys=True),
                "sha256": checksum(weights.layers)}
    return write_atomically(Path(path), save(tensors, metadata=metadata))


def load_weights(path: str | os.PathLike[str], expected: GameConfig | None = None) -> BeliefWeights:
    """Read a file written by :func:`save_weights`.

    Raises:
        ValueError: one line naming the file: missing, damaged, another format, made for another
            table than `expected`, tensors of the wrong shape, a bad checksum, values not finite.
    """
    with opened_safetensors(path, "beliefs weights", MAX_WEIGHTS_BYTES) as (handle, refused):
        metadata = handle.metadata() or {}
        if metadata.get("format") != WEIGHTS_FORMAT:
            raise refused(f"is not a beliefs weights file (format {metadata.get('format')!r}, expected "
                          f"{WEIGHTS_FORMAT!r})")
        try:
            table = json.loads(metadata.get("table", ""))
            config = make_config(**table)
            hidden = json.loads(metadata.get("hidden", ""))
        except (TypeError, ValueError, RecursionError) as error:
            raise refused(f"has an unreadable table or hidden sizes: {error}") from None
        problem = _hidden_problem(hidden)
        if problem:
            raise refused(problem)
        hidden = tuple(hidden)
        if expected is not None and config != expected:
            raise refused(f"was trained for {describe_table(config)}, not {describe_table(expected)}")
        shapes = layer_shapes(config, hidden)
        names = {f"{kind}{k}" for k in range(len(shapes)) for kind in "wb"}
        if set(handle.keys()) != names:
            raise refused(f"holds tensors {sorted(handle.keys())}, expected {sorted(names)}")
        layers = []
        for k, (weight_shape, bias_shape) in enumerate(shapes):
            arrays = []
            for name, shape in ((f"w{k}", weight_shape), (f"b{k}", bias_shape)):
                declared = handle.get_slice(name)
                if declared.get_dtype() != STORED_NAME or tuple(declared.get_shape()) != shape:
                    raise refused(f"stores {name} as {declared.get_dtype()} {tuple(declared.get_shape())}, "
                                  f"expected {STORED_NAME} {shape}")
                arrays.append(handle.get_tensor(name))
            layers.append((arrays[0], arrays[1]))
        if metadata.get("sha256") != checksum(layers):
            raise refused("fails its checksum: the weights were changed or damaged after it was written")
        layers = [(weight.astype(np.float32), bias.astype(np.float32)) for weight, bias in layers]
        info = read_info(metadata, refused)
        try:
            return BeliefWeights(config, hidden, layers, info)
        except ValueError as error:
            raise refused(str(error)) from None


def shipped_weights_file(config: GameConfig) -> Path:
    """The beliefs weights shipped for `config` (a ValueError listing the tables that have one)."""
    return shipped_file(SHIPPED_NAME, "safetensors", config, "network", "beliefs", argument="weights")


def balanced(beliefs: np.ndarray, counts: np.ndarray, rounds: int = 200, tolerance: float = 1e-4) -> np.ndarray:
    """`beliefs` (hidden tiles, places) scaled so that each place's column sums to the tiles it holds
    (`counts`, the places' sizes: 0 for the player's own column) while each row still sums to 1
    (iterative proportional fitting). Every deal gives each place exactly its size, so the true
    marginals have these sums; a learned prediction may not. Zeros stay zeros. It stops once every
    column is within `tolerance` of its count (the uniform marginals, with the same zeros, show that
    such a scaling exists)."""
    scaled = beliefs.copy()
    for _ in range(rounds):
        columns = scaled.sum(axis=0)
        scaled *= np.where(columns > 0, counts / np.where(columns > 0, columns, 1.0), 0.0)
        rows = scaled.sum(axis=1, keepdims=True)
        scaled /= np.where(rows > 0, rows, 1.0)
        if np.abs(scaled.sum(axis=0) - counts).max() < tolerance:
            break
    return scaled
