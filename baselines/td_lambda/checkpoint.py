"""Checkpoints: V's weights and the run's configuration in one safetensors file (no torch, no pickle).

A checkpoint holds one float32 tensor ``theta`` (the flat weights, in the layout of
:class:`~baselines.td_lambda.architecture.Architecture`) and, as string metadata:

- ``format``: ``dominoes-td-lambda/2`` (``/1`` files, written before the checksum, are
  still read, with every other check);
- ``config``: the :class:`~baselines.td_lambda.config.TDLambdaConfig` as JSON;
- ``info``: a JSON object about the run (hands trained, seconds, initial checkpoint);
- ``sha256``: the SHA-256 of theta's bytes (little-endian float32), checked on load.

Reading trusts nothing in the file: the metadata is validated before anything is built
(the configuration's bounds refuse a layer claiming 10**9 units; the number of weights
it implies is computed arithmetically and compared with the tensor's declared shape and
dtype before the tensor is read), then the weights must match the checksum and be finite.
Every refusal is one ValueError naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from safetensors.numpy import save

from baselines.learning.files import (
    SHIPPED_DIRECTORY,
    opened_safetensors,
    read_config,
    read_info,
    shipped_file,
    write_atomically,
)
from baselines.td_lambda.config import MAX_TRACE_BYTES, TDLambdaConfig
from dominoes_env.core.config import GameConfig

CHECKPOINT_FORMAT = "dominoes-td-lambda/2"
UNCHECKED_FORMAT = "dominoes-td-lambda/1"  #: the first format, written without a checksum
READABLE_FORMATS = (UNCHECKED_FORMAT, CHECKPOINT_FORMAT)
TENSOR = "theta"
SHIPPED_CHECKPOINTS = SHIPPED_DIRECTORY
#: A checkpoint is a few hundred KB (the shipped one 0.2 MB). The configuration's bounds keep a network's
#: weights (4 bytes each) under MAX_TRACE_BYTES, so every checkpoint that can be valid fits below this.
MAX_CHECKPOINT_BYTES = MAX_TRACE_BYTES + 2**20


class HasWeights(Protocol):
    """Anything that can hand over its flat float32 weights (the trainer's network does)."""

    def weights(self) -> np.ndarray: ...


@dataclass(frozen=True, eq=False)
class Checkpoint:
    """Weights with the configuration that gives them a meaning; checked on construction.

    Attributes:
        theta: the flat float32 weights, one per entry of ``config.architecture``.
        config: the training configuration (table size, variant, network shape, ...).
        info: what the run recorded about itself (JSON-compatible).

    Raises:
        ValueError: weights of another length or dtype than the configuration needs, or
            not finite.
    """

    theta: np.ndarray
    config: TDLambdaConfig
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = weights_problem(self.theta, self.config)
        if problem:
            raise ValueError(f"td_lambda weights: {problem}")

    def __repr__(self) -> str:  # short: it appears in policy labels, and theta is long
        config = self.config
        return (f"Checkpoint({self.theta.shape[0]} weights, {config.variant}, hidden {config.hidden_sizes}, "
                f"{config.num_players} players, double-{config.highest_double})")


def weights_problem(theta: Any, config: TDLambdaConfig) -> str | None:
    """What is wrong with `theta` as the weights of `config`'s network, or None."""
    expected = config.architecture.num_weights
    if not isinstance(theta, np.ndarray) or theta.dtype != np.float32:
        return f"weights must be a float32 numpy array, got {getattr(theta, 'dtype', type(theta).__name__)}"
    if theta.shape != (expected,):
        return (f"holds {theta.shape} weights where its configuration ({config.variant} input, hidden sizes "
                f"{config.hidden_sizes}) needs ({expected},)")
    if not np.isfinite(theta).all():
        return f"{int(np.count_nonzero(~np.isfinite(theta)))} of its {expected} weights are not finite (NaN or inf)"
    return None


def checksum(theta: np.ndarray) -> str:
    """SHA-256 of the weights as stored: little-endian float32 bytes."""
    return hashlib.sha256(np.ascontiguousarray(theta, dtype="<f4").tobytes()).hexdigest()


def save_checkpoint(path: str | os.PathLike[str], network: HasWeights | np.ndarray, config: TDLambdaConfig,
                    info: dict[str, Any] | None = None) -> Path:
    """Write the weights, the configuration and `info` (format 2, with its checksum).

    `network` is the trainer's :class:`~baselines.td_lambda.network.ValueNetwork` (anything
    with a ``weights()`` method) or the flat weights themselves. The file is written next
    to `path` and then renamed over it, so a reader never sees half a checkpoint.

    Raises:
        ValueError: weights that do not fit `config` or are not finite, or an `info` that
            is not JSON.
    """
    path = Path(path)
    theta = network if isinstance(network, np.ndarray) else network.weights()
    problem = weights_problem(theta, config)
    if problem:
        raise ValueError(f"cannot save td_lambda checkpoint {str(path)!r}: {problem}")
    try:
        info_text = json.dumps(info or {}, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot save td_lambda checkpoint {str(path)!r}: info is not JSON: {error}") from None
    metadata = {"format": CHECKPOINT_FORMAT, "config": config.to_json(), "info": info_text,
                "sha256": checksum(theta)}
    return write_atomically(path, save({TENSOR: np.ascontiguousarray(theta)}, metadata=metadata))


def load_checkpoint(path: str | os.PathLike[str], expected: GameConfig | None = None) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint` (format 2, or format 1 without a checksum).

    Args:
        path: the file.
        expected: the table it must have been trained for (None: any).

    Raises:
        ValueError: the file is missing, damaged, not a td_lambda checkpoint, made for
            another table than `expected`, or its metadata or weights fail a check.
    """
    with opened_safetensors(path, "td_lambda checkpoint", MAX_CHECKPOINT_BYTES) as (handle, refused):
        metadata = handle.metadata() or {}
        config = _read_metadata(metadata, set(handle.keys()), expected, refused)
        declared = handle.get_slice(TENSOR)
        shape, dtype = tuple(declared.get_shape()), declared.get_dtype()
        needed = config.architecture.num_weights
        if dtype != "F32":
            raise refused(f"stores its weights as {dtype}, not float32 (F32)")
        if shape != (needed,):
            raise refused(f"holds {shape} weights where its configuration ({config.variant} input, hidden "
                          f"sizes {config.hidden_sizes}) needs ({needed},): the file is damaged")
        theta = handle.get_tensor(TENSOR)
    if metadata["format"] != UNCHECKED_FORMAT and metadata.get("sha256") != checksum(theta):
        raise refused("fails its checksum: the weights were changed or damaged after it was written")
    problem = weights_problem(theta, config)
    if problem:
        raise refused(problem)
    return Checkpoint(theta, config, read_info(metadata, refused))


def _read_metadata(metadata: dict[str, str], tensors: set[str], expected: GameConfig | None,
                   refused: Callable[[str], ValueError]) -> TDLambdaConfig:
    """The configuration of a checkpoint's metadata, after checking the format and the table."""
    if metadata.get("format") not in READABLE_FORMATS or TENSOR not in tensors:
        raise refused(f"is not a td_lambda checkpoint (format {metadata.get('format')!r}, expected one of "
                      f"{list(READABLE_FORMATS)} with a {TENSOR!r} tensor)")
    if metadata["format"] != UNCHECKED_FORMAT and not isinstance(metadata.get("sha256"), str):
        raise refused("has no 'sha256' checksum in its metadata")
    return read_config(metadata, TDLambdaConfig.from_json, expected, refused)


def shipped_checkpoint(config: GameConfig) -> Path:
    """The checkpoint shipped with the package for a table size (4 players, double-nine only).

    Raises:
        ValueError: none ships for this table.
    """
    return shipped_file("td_lambda", "safetensors", config, "checkpoint", "td-lambda")
