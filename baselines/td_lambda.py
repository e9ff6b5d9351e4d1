"""TD(lambda) after-state value learner, read top to bottom (CleanRL style, but importable).

The player keeps a network V(s) that predicts its own pips at the end of the hand (lower
is better). To move, it builds the after-state of every legal move with
:func:`dominoes_env.core.afterstate.afterstates` (what it would observe right after the
move, computed from its own observation) and plays the move whose after-state has the
lowest V. A move that ends the hand needs no prediction: its value is the pips the mover
still holds, exactly.

Learning is TD(lambda) with eligibility traces as the issue specifies, after the
reference (TD-Gammon's scheme):

- the states s_1, s_2, ... of one learner in one hand are the after-states of its own
  moves (passes and forced moves included; after a double it moves again, so two of its
  after-states follow each other). This is the standard choice for after-state TD: the
  value the player acts on is the value it learns;
- at each of its moves: delta = V(s_{t+1}) - V(s_t); theta <- theta + alpha * delta * z;
  then z <- lambda * z + grad V(s_{t+1}) (z starts at grad V(s_1) each hand);
- when the hand ends: delta = R_final - V(s_K) with R_final its true final pips, one more
  update, and the trace is dropped. When its own move ends the hand, that after-state is
  terminal and V(terminal) = R_final, so the last delta is R_final - V(s_{K-1});
- no discounting; defaults lambda 0.5, alpha 3e-5 (the reference's).

Where this differs from the reference's loop, for speed: many hands are played side by
side (``parallel_hands`` tables), every learner keeps its own trace, and the updates of all
learners that moved in one round are summed into one parameter update (each learner's
delta is still computed from values under the parameters of that round). The reference
updated on every player's turn; here a learner updates on its own moves. Because every
learner's update is applied, one round moves theta by up to ``parallel_hands`` updates:
alpha and the number of tables must be chosen together (alpha 7e-5 with 40 tables learns
well; alpha 3e-5 with 128 tables diverged in self-play), and self-play stages, where every
seat learns, use ``self_play_alpha`` (default alpha / players). Exploration is
epsilon-greedy over legal moves and off by default (the reference had none; the dealt
tiles already make play varied).

The shipped checkpoint (``baselines/checkpoints``, see TRAINING.md there) is a line-variant
network trained this way for 420,000 hands in 40 minutes on two shared cores.

Input variants: ``basic`` is the reference's input (177 numbers for 4 players,
double-nine): own hand (T bits), tiles played anywhere (T), each line's open value
one-hot ((n+1) x V), markers, "passed last" flags, hand sizes (as a fraction of the
largest hand), turns until each player moves (as a fraction of n-1), and whether the
dummy line is open. ``line`` adds what the best-line planner knows about the own hand
(see :class:`LineFeatures`). Everything is computed from the after-state observation
vector.
"""

from __future__ import annotations

import json
from functools import lru_cache
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from numba import njit
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from baselines.chain_search import (IN_LINE_DISCOUNT, MAX_LINE_LENGTH, OFF_LINE_DISCOUNT, discount_powers,
                                    search_best_chain)
from baselines.policy import Policy, SeedLike, make_policy, register_policy
from dominoes_env.core import HandState, make_config, rules
from dominoes_env.core.afterstate import afterstates, legal_afterstates
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import Observer, observation_fields

CHECKPOINT_FORMAT = "dominoes-td-lambda/1"
SHIPPED_CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
VARIANTS = ("basic", "line")
SELF_PLAY = "self"
LAYER_NORM_EPS = 1e-5


# --------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class TDLambdaConfig:
    """Everything that defines a learner and its training run (stored in every checkpoint)."""

    num_players: int = 4
    """Seats at the table (2-8)."""
    highest_double: int = 9
    """N of the double-N set (6-18)."""
    variant: str = "basic"
    """Input features of V: "basic" (the reference's basic input) or "line" (basic + best-chain features)."""
    hidden_sizes: tuple[int, ...] = (128, 64)
    """Widths of the hidden blocks (Linear -> ReLU -> LayerNorm); the reference used (1000, 500, 500)."""
    td_lambda: float = 0.5
    """Trace decay lambda in [0, 1]."""
    alpha: float = 3e-5
    """Step size of theta <- theta + alpha * delta * z."""
    self_play_alpha: float | None = None
    """Step size in self-play stages; None: alpha / num_players. Every seat of a self-play table
    learns, so a hand brings n times the updates; at the full alpha self-play diverged in our
    runs (line variant: alpha 3e-5 with 64 tables diverged within 1,000 hands, 1e-5 did not)."""
    epsilon: float = 0.0
    """Probability of a uniformly random legal move while learning (0: purely greedy)."""
    hands: int = 20_000
    """Hands to learn from, over all curriculum stages."""
    curriculum: tuple[tuple[str, float], ...] = (
        ("random", 0.1), ("double", 0.2), ("persistent_line", 0.3), (SELF_PLAY, 0.4))
    """Stages in order: (opponents, share of `hands`). Opponents: a policy name (three copies at
    each table), "self" for self-play, or names joined by "+" ("double+persistent_line"):
    table i of the batch then plays the i-th name in turn."""
    parallel_hands: int = 64
    """Tables played side by side; their forward passes and updates are batched. Every learner's
    update alpha * delta * z is applied, so one round moves theta by up to parallel_hands
    updates at once: too many tables for a given alpha diverges (128 did at alpha 3e-5)."""
    seed: int = 0
    """Seeds the initial weights, the deals, the opponents and the exploration."""
    eval_every: int = 5_000
    """Hands of learning between evaluations (0: evaluate only at the end)."""
    eval_hands: int = 400
    """Hands per evaluation and opponent (rounded up to a multiple of the seat count)."""
    eval_opponents: tuple[str, ...] = ("random", "double", "persistent_line")
    """Fixed opponents of the periodic evaluation (three copies at the table, seats rotated)."""

    def __post_init__(self) -> None:
        make_config(self.num_players, self.highest_double)
        if self.variant not in VARIANTS:
            raise ValueError(f"variant {self.variant!r} is not available; choose one of {list(VARIANTS)}")
        if not 0.0 <= self.td_lambda <= 1.0:
            raise ValueError(f"td_lambda must be in [0, 1], got {self.td_lambda}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        if self.self_play_alpha is not None and self.self_play_alpha <= 0:
            raise ValueError(f"self_play_alpha must be > 0 (or None: alpha / num_players), got {self.self_play_alpha}")
        if self.alpha <= 0 or self.hands < 0 or self.parallel_hands < 1 or not self.hidden_sizes:
            raise ValueError("alpha must be > 0, hands >= 0, parallel_hands >= 1 and hidden_sizes non-empty")
        if any(share < 0 for _, share in self.curriculum) or not self.curriculum:
            raise ValueError(f"curriculum needs at least one stage with non-negative shares, got {self.curriculum}")

    @property
    def game(self) -> GameConfig:
        return make_config(self.num_players, self.highest_double)

    def stage_hands(self) -> list[tuple[str, int]]:
        """The curriculum as (opponent, hands) with the hands summing to :attr:`hands`."""
        total = sum(share for _, share in self.curriculum) or 1.0
        bounds = np.round(np.cumsum([share / total for _, share in self.curriculum]) * self.hands).astype(int)
        counts = np.diff(np.concatenate([[0], bounds]))
        return [(name, int(count)) for (name, _), count in zip(self.curriculum, counts)]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TDLambdaConfig:
        values = json.loads(text)
        if "highest_dominoe" in values:  # checkpoints written before 0.2.0
            values["highest_double"] = values.pop("highest_dominoe")
        values["hidden_sizes"] = tuple(values["hidden_sizes"])
        values["curriculum"] = tuple((name, float(share)) for name, share in values["curriculum"])
        values["eval_opponents"] = tuple(values["eval_opponents"])
        return cls(**values)


def seed_everything(seed: int) -> np.random.Generator:
    """Seed torch (weights) and return the run's numpy generator; torch runs on one thread."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- input features
class BasicFeatures:
    """The reference's basic input, computed from (after-state) observation vectors."""

    def __init__(self, config: GameConfig) -> None:
        self.fields = {f.name: f for f in observation_fields(config, 1)}
        self.slices = {name: field.slice for name, field in self.fields.items()}
        n, t, v = config.num_players, config.num_tiles, config.highest_double + 1
        self.n, self.t, self.max_hand = n, t, config.max_hand_size
        self.v = v
        self.size = 2 * t + (n + 1) * v + 4 * n + 1
        names = ("hand", "played", "open_values", "markers", "passed_last", "hand_sizes", "turns_until", "dummy_open")
        self.offsets = np.array([self.fields[name].offset for name in names], dtype=np.int64)
        self.pips = config.tiles.pips.astype(np.float32)

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        """(K, D) int8 observation vectors -> (K, size) float32 features."""
        out = np.empty((vectors.shape[0], self.size), dtype=np.float32)
        self.fill(vectors, out)
        return out

    def fill(self, vectors: np.ndarray, out: np.ndarray) -> None:
        """Write the basic features into the first columns of `out` (one compiled pass).

        Per row: own hand (T), tiles played on any line (T), open values one-hot
        ((n+1) x V), markers (n), passed_last (n), hand sizes / M (n), turns until each
        seat moves / (n-1) (n), dummy open (1).
        """
        _basic_block(vectors, self.offsets, self.n, self.t, self.v, self.max_hand, out)

    def own_pips(self, vectors: np.ndarray) -> np.ndarray:
        """Pips the observer still holds in each vector (its final score once the hand is over)."""
        return vectors[:, self.slices["hand"]] @ self.pips


class LineFeatures(BasicFeatures):
    """Basic features plus what the best-line planner knows about the own hand.

    The exact best chain (:func:`baselines.chain_search.search_best_chain`, reference
    discounts 0.9 / 0.7, up to 12 tiles) from the own line's open value in the after-state,
    as 2T + 5 numbers: per tile, whether it is in the chain and its discounted pips there
    (0.9 ** turn * pips / 2N); then the chain's value, its in-line value, the pips left off
    it (all / (N * M)), its length and the tiles left over (/ M). The reference's line
    variant averaged such statistics over every chain with softmax weights; the best chain
    is the zero-temperature limit of that average, and it needs one branch-and-bound
    search per after-state instead of a full enumeration (what made the reference learn at
    0.5 hands/s).
    """

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.basic_size = self.size
        self.size += 2 * self.t + 5
        self.low, self.high = config.tiles.low, config.tiles.high
        self.in_pow = discount_powers(IN_LINE_DISCOUNT, MAX_LINE_LENGTH)
        self.off_pow = discount_powers(OFF_LINE_DISCOUNT, MAX_LINE_LENGTH)
        self.highest = config.highest_double
        self.own_open = self.fields["open_values"].slice.start

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        out = np.zeros((vectors.shape[0], self.size), dtype=np.float32)
        self.fill(vectors, out)
        _best_chain_block(np.ascontiguousarray(vectors[:, self.slices["hand"]]),
                          np.ascontiguousarray(vectors[:, self.own_open:self.own_open + self.highest + 1]),
                          self.low, self.high, self.in_pow, self.off_pow, MAX_LINE_LENGTH,
                          float(2 * self.highest), float(self.highest * self.max_hand), float(self.max_hand),
                          out[:, self.basic_size:])
        return out


@njit(cache=True)
def _basic_block(vectors, offsets, n, t, v, max_hand, out):
    """BasicFeatures in one pass; `offsets` are those of hand, played, open_values, markers,
    passed_last, hand_sizes, turns_until and dummy_open in the observation layout."""
    hand, played, open_values, markers, passed, sizes, turns, dummy = offsets
    for k in range(vectors.shape[0]):
        row = vectors[k]
        col = 0
        for tile in range(t):
            out[k, col + tile] = row[hand + tile]
            on_table = 0
            for line in range(n + 1):
                on_table += row[played + line * t + tile]
            out[k, col + t + tile] = on_table
        col += 2 * t
        for i in range((n + 1) * v):
            out[k, col + i] = row[open_values + i]
        col += (n + 1) * v
        for seat in range(n):
            out[k, col + seat] = row[markers + seat]
            out[k, col + n + seat] = row[passed + seat]
            held = 0
            for j in range(max_hand):
                held += row[sizes + seat * max_hand + j]
            out[k, col + 2 * n + seat] = np.float32(held) / np.float32(max_hand)
            wait = 0
            for j in range(n):
                wait += j * row[turns + seat * n + j]
            out[k, col + 3 * n + seat] = np.float32(wait) / np.float32(max(n - 1, 1))
        out[k, col + 4 * n] = row[dummy]


@njit(cache=True)
def _best_chain_block(hands, own_open_one_hot, low, high, in_pow, off_pow, max_line_length,
                      pip_scale, hand_scale, size_scale, out):
    t = hands.shape[1]
    positions = np.empty(max_line_length, dtype=np.int64)
    for k in range(hands.shape[0]):
        hand = np.nonzero(hands[k])[0].astype(np.int64)
        open_value = np.argmax(own_open_one_hot[k])
        value, length = search_best_chain(hand, open_value, low, high, in_pow, off_pow, max_line_length, positions)
        non_doubles, in_line, chain_pips, total = 0, 0.0, 0, 0
        for tile in hand:
            total += low[tile] + high[tile]
        for i in range(length):
            tile = hand[positions[i]]
            pips = low[tile] + high[tile]
            if low[tile] != high[tile]:
                non_doubles += 1
            weighted = in_pow[max(non_doubles - 1, 0)] * pips
            out[k, tile] = 1.0
            out[k, t + tile] = weighted / pip_scale
            in_line += weighted
            chain_pips += pips
        out[k, 2 * t] = value / hand_scale
        out[k, 2 * t + 1] = in_line / hand_scale
        out[k, 2 * t + 2] = (total - chain_pips) / hand_scale
        out[k, 2 * t + 3] = length / size_scale
        out[k, 2 * t + 4] = (hand.shape[0] - length) / size_scale


def make_features(config: TDLambdaConfig) -> BasicFeatures:
    return (LineFeatures if config.variant == "line" else BasicFeatures)(config.game)


# --------------------------------------------------------------------------- the value network
class ValueNetwork(torch.nn.Module):
    """V(s): the player's predicted own pips at the end of the hand.

    Hidden blocks are Linear -> ReLU -> LayerNorm (the reference's), then a Linear to one
    number. All weights live in ONE flat parameter vector ``theta`` so that per-sample
    gradients, eligibility traces and the update are plain (rows x P) tensors.
    """

    def __init__(self, input_size: int, hidden_sizes: Sequence[int]) -> None:
        super().__init__()
        self.shapes: list[tuple[str, tuple[int, ...]]] = []
        width = input_size
        for i, hidden in enumerate(hidden_sizes):
            self.shapes += [(f"w{i}", (hidden, width)), (f"b{i}", (hidden,)),
                            (f"ln_w{i}", (hidden,)), (f"ln_b{i}", (hidden,))]
            width = hidden
        self.shapes += [("w_out", (1, width)), ("b_out", (1,))]
        self.num_hidden = len(hidden_sizes)
        self.theta = torch.nn.Parameter(torch.cat([self._initial(shapes) for shapes in _layers(self.shapes)]))

    @staticmethod
    def _initial(layer: list[tuple[str, tuple[int, ...]]]) -> torch.Tensor:
        """torch.nn.Linear's default initialisation (weights and bias uniform in +-1/sqrt(fan_in));
        LayerNorm starts as the identity."""
        (_, weight_shape), (_, bias_shape), *norm = layer
        bound = 1 / math.sqrt(weight_shape[1])
        parts = [torch.empty(weight_shape).uniform_(-bound, bound).reshape(-1),
                 torch.empty(bias_shape).uniform_(-bound, bound)]
        if norm:
            parts += [torch.ones(norm[0][1]), torch.zeros(norm[1][1])]
        return torch.cat(parts)

    def _unflatten(self, theta: torch.Tensor) -> dict[str, torch.Tensor]:
        views, offset = {}, 0
        for name, shape in self.shapes:
            size = math.prod(shape)
            views[name] = theta[offset:offset + size].reshape(shape)
            offset += size
        return views

    def value(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """V for a (K, input_size) batch under parameters `theta` -> (K,)."""
        p = self._unflatten(theta)
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
        p = self._unflatten(self.theta)
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
        """Views of each parameter's columns of a (K, P) tensor, shaped (K, *parameter shape)."""
        views, offset = {}, 0
        for name, shape in self.shapes:
            size = math.prod(shape)
            views[name] = rows[:, offset:offset + size].view(rows.shape[0], *shape)
            offset += size
        return views

    @torch.no_grad()
    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.value(self.theta, torch.from_numpy(features)).numpy()


class NumpyValue:
    """The value network's forward pass in numpy, for acting.

    A decision evaluates a handful of after-states; at that size torch's per-operation
    overhead dominates, and plain numpy on the same weights is about three times faster.
    It has :meth:`ValueNetwork.predict`'s signature and results (to float rounding).
    """

    def __init__(self, network: ValueNetwork) -> None:
        with torch.no_grad():
            p = {name: view.detach().numpy().copy() for name, view in network._unflatten(network.theta).items()}
        self.hidden = [(p[f"w{i}"].T.copy(), p[f"b{i}"], p[f"ln_w{i}"], p[f"ln_b{i}"])
                       for i in range(network.num_hidden)]
        self.w_out, self.b_out = p["w_out"].T.copy(), p["b_out"]

    def predict(self, features: np.ndarray) -> np.ndarray:
        x = features
        for weight, bias, norm_weight, norm_bias in self.hidden:
            x = x @ weight
            _relu_layer_norm(x, bias, norm_weight, norm_bias)
        return (x @ self.w_out + self.b_out)[..., 0]


@njit(cache=True)
def _relu_layer_norm(y, bias, norm_weight, norm_bias):
    """The rest of a hidden block after its matrix product, in place: + bias -> ReLU -> LayerNorm."""
    width = y.shape[1]
    for k in range(y.shape[0]):
        mean = np.float32(0.0)
        for j in range(width):
            y[k, j] = max(y[k, j] + bias[j], np.float32(0.0))
            mean += y[k, j]
        mean /= width
        variance = np.float32(0.0)
        for j in range(width):
            y[k, j] -= mean
            variance += y[k, j] * y[k, j]
        scale = np.float32(1.0) / np.sqrt(variance / width + np.float32(LAYER_NORM_EPS))
        for j in range(width):
            y[k, j] = y[k, j] * scale * norm_weight[j] + norm_bias[j]


def _layers(shapes: list[tuple[str, tuple[int, ...]]]) -> list[list[tuple[str, tuple[int, ...]]]]:
    """Group the flat parameter list by layer: (w, b, ln_w, ln_b) per hidden block, then (w_out, b_out)."""
    layers, current = [], []
    for name, shape in shapes:
        if name.startswith("w") and current:
            layers.append(current)
            current = []
        current.append((name, shape))
    return layers + [current]


def build_network(config: TDLambdaConfig) -> ValueNetwork:
    return ValueNetwork(make_features(config).size, config.hidden_sizes)


def predicted_final_pips(network: ValueNetwork | NumpyValue, features: BasicFeatures, vectors: np.ndarray,
                         ends_hand: np.ndarray) -> np.ndarray:
    """V of each after-state; a hand-ending after-state is worth exactly the pips the mover still holds."""
    values = network.predict(features(vectors))
    if ends_hand.any():
        values[ends_hand] = features.own_pips(vectors[ends_hand])
    return values


# --------------------------------------------------------------------------- checkpoints
def save_checkpoint(path: str | Path, network: ValueNetwork, config: TDLambdaConfig,
                    info: dict[str, Any] | None = None) -> Path:
    """Write the weights and the full configuration (JSON metadata) as safetensors."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"format": CHECKPOINT_FORMAT, "config": config.to_json(), "info": json.dumps(info or {})}
    save_file({"theta": network.theta.detach().contiguous()}, str(path), metadata=metadata)
    return path


def load_checkpoint(path: str | Path, expected: GameConfig | None = None) -> tuple[ValueNetwork, TDLambdaConfig]:
    """Read a checkpoint written by :func:`save_checkpoint` (no pickle involved).

    Raises:
        ValueError: the file is missing, damaged, not a td_lambda checkpoint, or made for
            another table size than `expected`.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"td_lambda checkpoint {str(path)!r} does not exist")
    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            theta = handle.get_tensor("theta") if "theta" in handle.keys() else None
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"td_lambda checkpoint {str(path)!r} is damaged or not a safetensors file: {error}") from None
    if metadata.get("format") != CHECKPOINT_FORMAT or theta is None:
        raise ValueError(f"{str(path)!r} is not a td_lambda checkpoint (format {metadata.get('format')!r}, "
                         f"expected {CHECKPOINT_FORMAT!r} with a 'theta' tensor)")
    try:
        config = TDLambdaConfig.from_json(metadata["config"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"td_lambda checkpoint {str(path)!r} has an unreadable configuration: {error}") from None
    table = (config.num_players, config.highest_double)
    if expected is not None and table != (expected.num_players, expected.highest_double):
        raise ValueError(
            f"td_lambda checkpoint {str(path)!r} was trained for {config.num_players} players, "
            f"double-{config.highest_double}, not {expected.num_players} players, double-{expected.highest_double}")
    network = build_network(config)
    if theta.shape != network.theta.shape:
        raise ValueError(f"td_lambda checkpoint {str(path)!r} holds {tuple(theta.shape)} weights where its "
                         f"configuration needs {tuple(network.theta.shape)}: the file is damaged")
    with torch.no_grad():
        network.theta.copy_(theta)
    return network, config


@lru_cache(maxsize=16)
def _load_for_acting(resolved: str, modified_ns: int, size: int, table: tuple[int, int]
                     ) -> tuple[NumpyValue, TDLambdaConfig]:
    """Load once per file version: the league makes fresh policies for every game."""
    network, config = load_checkpoint(resolved, expected=make_config(*table))
    return NumpyValue(network), config


def shipped_checkpoint(config: GameConfig) -> Path:
    """The checkpoint shipped with the package for a table size (4 players, double-nine only)."""
    path = SHIPPED_CHECKPOINTS / f"td_lambda_{config.num_players}p_d{config.highest_double}.safetensors"
    if not path.is_file():
        raise ValueError(f"no td_lambda checkpoint ships for {config.num_players} players, "
                         f"double-{config.highest_double} (only 4 players, double-nine); train one with "
                         f"`dominoes train td-lambda` and pass checkpoint=PATH")
    return path


# --------------------------------------------------------------------------- the policy
@register_policy("td_lambda")
class TDLambdaPolicy(Policy):
    """Plays the legal move whose after-state has the lowest predicted final pips.

    Args:
        checkpoint: a file written by ``dominoes train td-lambda``; default: the shipped
            checkpoint (4 players, double-nine).
        epsilon: probability of a uniformly random legal move instead (0: greedy).

    The network is small: with torch on one thread (``torch.set_num_threads(1)``, as the
    league's workers do) a decision costs well under a millisecond; more threads only add
    synchronisation.
    """

    def __init__(self, num_players: int = 4, highest_double: int = 9, seed: SeedLike = None,
                 checkpoint: str | None = None, epsilon: float = 0.0) -> None:
        super().__init__(num_players, highest_double, seed)
        path = (shipped_checkpoint(self.config) if checkpoint is None else Path(checkpoint)).resolve()
        if not path.is_file():
            raise ValueError(f"td_lambda checkpoint {str(path)!r} does not exist")
        stat = path.stat()
        table = (self.num_players, self.highest_double)
        self.value, self.training_config = _load_for_acting(str(path), stat.st_mtime_ns, stat.st_size, table)
        self.features = make_features(self.training_config)
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be a probability in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        actions, vectors, ends_hand = legal_afterstates(observation, action_mask, self.num_players,
                                                        self.highest_double)
        if actions.shape[0] == 1:
            return int(actions[0])
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(actions[self.rng.integers(actions.shape[0])])
        return int(actions[np.argmin(predicted_final_pips(self.value, self.features, vectors, ends_hand))])


# --------------------------------------------------------------------------- TD(lambda) with traces
class Traces:
    """Eligibility traces of many concurrent learners (one per table and learner seat) and the update."""

    def __init__(self, network: ValueNetwork, td_lambda: float, alpha: float, tables: int, seats: int) -> None:
        self.network, self.td_lambda, self.alpha = network, td_lambda, alpha
        self.z = torch.zeros(tables, seats, network.theta.numel())
        self.previous_value = np.zeros((tables, seats), dtype=np.float32)
        self.has_previous = np.zeros((tables, seats), dtype=bool)
        self.pending_delta = np.zeros((tables, seats), dtype=np.float32)  # final deltas of finished hands
        self.mean_abs_errors: list[float] = []  # mean |delta| of each update, for the log

    def end_hand(self, table: int, slot: int, final_pips: float) -> None:
        """The hand is over for this learner: queue delta = R_final - V(s_K) for the next update."""
        if self.has_previous[table, slot]:
            self.pending_delta[table, slot] = final_pips - self.previous_value[table, slot]
            self.has_previous[table, slot] = False

    def flush(self) -> None:
        """Apply the queued final deltas (theta += alpha * delta * z) of learners with no move left."""
        flat_delta = self.pending_delta.reshape(-1)
        queued = np.flatnonzero(flat_delta)
        if queued.size:
            flat_z = self.z.view(-1, self.z.shape[-1])
            rows = torch.from_numpy(queued)
            change = torch.from_numpy(flat_delta[queued]) @ flat_z.index_select(0, rows)
            with torch.no_grad():
                self.network.theta.add_(change, alpha=self.alpha)
            self.mean_abs_errors.append(float(np.abs(flat_delta[queued]).mean()))
            flat_z.index_fill_(0, rows, 0.0)
        self.pending_delta[:] = 0.0

    def step(self, tables: np.ndarray, slots: np.ndarray, next_values: np.ndarray, terminal: np.ndarray,
             next_features: np.ndarray) -> None:
        """One move of each learner (tables[i], slots[i]) to the after-state with value next_values[i].

        Applies theta += alpha * sum(delta * z) for these moves and the queued final deltas,
        then z <- lambda z + grad V(s_{t+1}) for the moves that did not end the hand
        (`next_features` holds every move's after-state features; a move that ended the
        hand drops its trace).
        """
        delta = self.pending_delta
        had = self.has_previous[tables, slots]
        delta[tables[had], slots[had]] += next_values[had] - self.previous_value[tables[had], slots[had]]
        flat_delta = delta.reshape(-1)
        flat_z = self.z.view(-1, self.z.shape[-1])
        movers = tables * self.z.shape[1] + slots
        every_table_in_order = self.z.shape[1] == 1 and movers.size == self.z.shape[0]
        mover_index = torch.from_numpy(movers)
        mover_z = flat_z if every_table_in_order else flat_z.index_select(0, mover_index)
        change = torch.from_numpy(flat_delta[movers]) @ mover_z
        others = np.setdiff1d(np.flatnonzero(flat_delta), movers)  # final deltas of learners not moving now
        if others.size:
            change += torch.from_numpy(flat_delta[others]) @ flat_z.index_select(0, torch.from_numpy(others))
        nonzero = flat_delta[flat_delta != 0]
        if nonzero.size:
            with torch.no_grad():
                self.network.theta.add_(change, alpha=self.alpha)
            self.mean_abs_errors.append(float(np.abs(nonzero).mean()))
        delta[:] = 0.0
        going_on = ~terminal
        decay = torch.from_numpy(np.where(had & going_on, self.td_lambda, 0.0).astype(np.float32))
        mover_z.mul_(decay[:, None])
        values = self.network.add_gradients_(torch.from_numpy(next_features), mover_z).numpy()
        if terminal.any():
            mover_z[torch.from_numpy(terminal)] = 0.0
        if not every_table_in_order:
            flat_z.index_copy_(0, mover_index, mover_z)
        self.previous_value[tables[going_on], slots[going_on]] = values[going_on]
        self.has_previous[tables, slots] = going_on


# --------------------------------------------------------------------------- many tables at once
@dataclass
class HandRecord:
    """One finished hand: every seat's pips and which seats the learner held."""

    scores: np.ndarray
    learner_seats: tuple[int, ...]


@dataclass
class Table:
    """One table of the batch: its hand, which seats the learner plays, the other seats' policies."""

    hand: HandState | None = None
    learner_slot: dict[int, int] = field(default_factory=dict)  # seat -> trace slot
    opponents: dict[int, Policy] = field(default_factory=dict)


HandSource = Iterator[tuple[HandState, tuple[int, ...]]]


def play_hands(network: ValueNetwork, features: BasicFeatures, opponent: str, hands: HandSource,
               config: TDLambdaConfig, rng: np.random.Generator, traces: Traces | None = None,
               on_hand: Callable[[HandRecord], None] | None = None) -> list[HandRecord]:
    """Play every hand `hands` yields on ``config.parallel_hands`` tables side by side.

    The learner (greedy on after-state values, epsilon-greedy when learning) moves in its
    seats with one batched forward pass per round over the after-states of every legal
    move at every table; the other seats are `opponent` policies (fresh per table, reset
    each hand; "a+b" alternates the kinds over the tables) acting on their own
    observations. With `traces` given it learns with TD(lambda) as it plays. The learner
    only ever reads observation vectors; the tables' HandStates are driven here directly
    (not through the PettingZoo env) for speed, with the env's observation encoder.
    """
    game = config.game
    n, highest = game.num_players, game.highest_double
    observer = Observer(game)
    tables = [Table() for _ in range(config.parallel_hands)]
    opponent_seed = int(rng.integers(2**63))
    records: list[HandRecord] = []
    epsilon = config.epsilon if traces is not None else 0.0
    buffer = np.empty(game.num_actions, dtype=np.int64)
    mask = np.empty(game.num_actions, dtype=np.int8)
    observations = np.zeros((len(tables), observer.size), dtype=np.int8)
    tiles_with_value = game.tiles.tiles_with_value

    def deal(index: int, table: Table) -> bool:
        nxt = next(hands, None)
        if nxt is None:
            table.hand = None
            return False
        table.hand, seats = nxt
        table.learner_slot = {seat: slot for slot, seat in enumerate(seats)}
        if opponent != SELF_PLAY and not table.opponents:
            names = opponent.split("+")
            table.opponents = {seat: make_policy(names[index % len(names)], n, highest,
                                                 seed=np.random.default_rng([opponent_seed, index, seat]))
                               for seat in range(n)}
        for policy in table.opponents.values():
            policy.reset()
        return True

    def finish(index: int, table: Table) -> None:
        scores = table.hand.scores()
        record = HandRecord(scores, tuple(table.learner_slot))
        records.append(record)
        if traces is not None:
            for seat, slot in table.learner_slot.items():
                traces.end_hand(index, slot, float(scores[seat]))
        if on_hand is not None:
            on_hand(record)

    for index, table in enumerate(tables):
        deal(index, table)
    while True:
        movers: list[tuple[int, int]] = []
        for index, table in enumerate(tables):
            while table.hand is not None:
                hand = table.hand
                if hand.is_over:
                    finish(index, table)
                    deal(index, table)
                    continue
                seat = hand.current_player
                if seat in table.learner_slot:
                    movers.append((index, seat))
                    break
                hand.legal_mask(out=mask)
                hand.apply(table.opponents[seat].act(observer.encode(hand.state, seat), mask))
        if not movers:
            if traces is not None:
                traces.flush()  # the last hands' final deltas have no later step to ride on
            return records
        counts = np.empty(len(movers), dtype=np.int64)
        actions = []
        for i, (index, seat) in enumerate(movers):
            state = tables[index].hand.state
            observer.encode(state, seat, out=observations[i])
            counts[i] = rules.fill_legal_actions(state, tiles_with_value, buffer)
            actions.append(buffer[:counts[i]].copy())
        flat_actions = np.concatenate(actions)
        rows = np.repeat(np.arange(len(movers)), counts)
        vectors, ends_hand = afterstates(observations[:len(movers)], flat_actions, n, highest, rows)
        values = predicted_final_pips(network, features, vectors, ends_hand)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        chosen = np.array([start + (rng.integers(count) if epsilon and rng.random() < epsilon
                                    else int(np.argmin(values[start:start + count])))
                           for start, count in zip(starts, counts)], dtype=np.int64)
        if traces is not None:
            table_index = np.array([index for index, _ in movers], dtype=np.int64)
            slot = np.array([tables[index].learner_slot[seat] for index, seat in movers], dtype=np.int64)
            traces.step(table_index, slot, values[chosen], ends_hand[chosen], features(vectors[chosen]))
        for (index, _), pick in zip(movers, chosen):
            tables[index].hand.apply_unchecked(int(flat_actions[pick]))


def training_hands(config: TDLambdaConfig, count: int, rng: np.random.Generator, self_play: bool) -> HandSource:
    """`count` freshly dealt hands (any engine, seat order of the deal), the learner in one random seat or all."""
    game = config.game
    for _ in range(count):
        hand = HandState.deal(game, int(rng.integers(game.highest_double + 1)), rng)
        yield hand, tuple(range(game.num_players)) if self_play else (int(rng.integers(game.num_players)),)


def rotated_hands(config: TDLambdaConfig, count: int, seed: int) -> HandSource:
    """Fixed deals, each played once with the learner in every seat (`count` rounded up to whole rotations)."""
    game = config.game
    for deal in range(-(-count // game.num_players)):
        rng = np.random.default_rng([seed, deal])
        hand_index = int(rng.integers(game.highest_double + 1))
        dealt = HandState.deal(game, hand_index, rng)
        for seat in range(game.num_players):
            yield dealt.copy(), (seat,)


# --------------------------------------------------------------------------- evaluation
@dataclass(frozen=True)
class Evaluation:
    """The learner (one seat, rotated) against three copies of `opponent` over the same deals."""

    opponent: str
    hands: int
    own_pips: float
    opponent_pips: float
    win_rate: float  # share of hands where the learner scored lowest (ties shared)


def summarize(opponent: str, records: Sequence[HandRecord]) -> Evaluation:
    own, others, wins = [], [], 0.0
    for record in records:
        seat = record.learner_seats[0]
        scores = record.scores
        own.append(scores[seat])
        others.append(np.delete(scores, seat).mean())
        lowest = scores == scores.min()
        wins += lowest[seat] / lowest.sum()
    return Evaluation(opponent, len(records), float(np.mean(own)), float(np.mean(others)), wins / max(len(records), 1))


def evaluate(network: ValueNetwork, config: TDLambdaConfig, opponent: str, hands: int, seed: int = 12345) -> Evaluation:
    """Greedy play (no learning) against three copies of `opponent` with rotated seats."""
    records = play_hands(network, make_features(config), opponent, rotated_hands(config, hands, seed), config,
                         np.random.default_rng(seed))
    return summarize(opponent, records)


# --------------------------------------------------------------------------- training
@dataclass
class TrainingLog:
    """What :func:`train` reports as it goes (the command line turns it into CSV, a plot and a bar)."""

    on_hand: Callable[[HandRecord], None] | None = None
    on_progress: Callable[[dict[str, Any]], None] | None = None
    on_evaluation: Callable[[int, Evaluation, ValueNetwork], None] | None = None


def train(config: TDLambdaConfig, log: TrainingLog | None = None, network: ValueNetwork | None = None) -> ValueNetwork:
    """Learn V by TD(lambda) through the curriculum; returns the trained network.

    Deterministic for a seed (one torch thread, every draw from the run's generator).
    """
    log = log or TrainingLog()
    rng = seed_everything(config.seed)
    network = network or build_network(config)
    features = make_features(config)
    done = 0
    for opponent, stage_hands in config.stage_hands():
        self_play = opponent == SELF_PLAY
        seats = config.num_players if self_play else 1
        while stage_hands > 0:
            until_evaluation = config.eval_every - done % config.eval_every if config.eval_every > 0 else stage_hands
            chunk = min(stage_hands, until_evaluation)
            alpha = (config.self_play_alpha or config.alpha / config.num_players) if self_play else config.alpha
            traces = Traces(network, config.td_lambda, alpha, config.parallel_hands, seats)
            start = time.perf_counter()
            records = play_hands(network, features, opponent, training_hands(config, chunk, rng, self_play),
                                 config, rng, traces, log.on_hand)
            elapsed = time.perf_counter() - start
            if not torch.isfinite(network.theta).all():
                raise FloatingPointError(
                    f"TD(lambda) diverged after {done + chunk} hands (non-finite weights): one round applies up to "
                    f"parallel_hands={config.parallel_hands} updates of alpha={alpha}; lower either")
            done += chunk
            stage_hands -= chunk
            if log.on_progress is not None:
                own = np.mean([r.scores[list(r.learner_seats)].mean() for r in records])
                rest = [np.delete(r.scores, list(r.learner_seats)).mean() for r in records if not self_play]
                log.on_progress({"hands": done, "stage": opponent, "own_pips": float(own),
                                 "opponent_pips": float(np.mean(rest)) if rest else float("nan"),
                                 "td_error": float(np.mean(traces.mean_abs_errors or [np.nan])),
                                 "hands_per_s": chunk / elapsed})
            if config.eval_every > 0 and done % config.eval_every == 0 or done == config.hands:
                for name in config.eval_opponents:
                    result = evaluate(network, config, name, config.eval_hands)
                    if log.on_evaluation is not None:
                        log.on_evaluation(done, result, network)
    return network
