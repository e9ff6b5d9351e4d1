"""The shape of V, declared once: hidden blocks, the flat weight layout, the weight count.

V is a stack of hidden blocks Linear -> ReLU -> LayerNorm (the reference's) and a Linear to
one number. All its weights live in ONE flat float32 vector ``theta``, block by block:
``w{i}`` (width x input), ``b{i}``, ``ln_w{i}``, ``ln_b{i}`` for each hidden block i, then
``w_out`` (1 x last width) and ``b_out``. The trainer's torch network
(:mod:`~baselines.td_lambda.network`), the numpy forward pass that acts
(:mod:`~baselines.td_lambda.policy`) and the checkpoint reader (which counts the weights a
file must hold before it reads any) all take the layout from here. No numpy or torch
needed: slicing and reshaping work the same on both.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

LAYER_NORM_EPS = 1e-5

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Architecture:
    """Input size and hidden widths of V; everything else follows."""

    input_size: int
    hidden_sizes: tuple[int, ...]

    def layers(self) -> list[list[tuple[str, Shape]]]:
        """(name, shape) of each parameter, grouped by block: (w, b, ln_w, ln_b) per hidden block, then (w, b)."""
        blocks: list[list[tuple[str, Shape]]] = []
        width = self.input_size
        for i, hidden in enumerate(self.hidden_sizes):
            blocks.append([(f"w{i}", (hidden, width)), (f"b{i}", (hidden,)),
                           (f"ln_w{i}", (hidden,)), (f"ln_b{i}", (hidden,))])
            width = hidden
        return blocks + [[("w_out", (1, width)), ("b_out", (1,))]]

    def shapes(self) -> list[tuple[str, Shape]]:
        """(name, shape) of every parameter, in theta's order."""
        return [entry for block in self.layers() for entry in block]

    def slices(self) -> Iterator[tuple[str, slice, Shape]]:
        """(name, its columns in theta, its shape) of every parameter, in theta's order."""
        offset = 0
        for name, shape in self.shapes():
            size = math.prod(shape)
            yield name, slice(offset, offset + size), shape
            offset += size

    @property
    def num_weights(self) -> int:
        """Length of theta, computed from the sizes alone (nothing is allocated)."""
        total, width = 0, self.input_size
        for hidden in self.hidden_sizes:
            total += hidden * width + 3 * hidden
            width = hidden
        return total + width + 1

    def unflatten(self, theta: Any) -> dict[str, Any]:
        """Views of each parameter in a flat theta (a numpy array or a torch tensor), by name."""
        return {name: theta[columns].reshape(shape) for name, columns, shape in self.slices()}
