"""Training the tile-location network (torch): supervised learning on labelled self-play positions.

The loss is the one the beliefs are scored by: minus the log-probability the tilted marginals
(:func:`baselines.inference.network.tilted`) give each hidden tile's true place, averaged over the
hidden tiles. The last layer starts at 0, so training starts from the uniform kind exactly and
every step is a change away from it. A share of the hands (whole hands) is held out; ten times an
epoch the held-out score is logged beside the uniform kind's on the same positions, and the weights
that scored best there are the ones returned (positions of one hand are alike, so a network
overfits the hands it has seen well before it has seen each position many times).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from baselines.inference.data import Positions
from baselines.inference.network import BeliefWeights, input_size, network_inputs, output_size
from dominoes_env.core.config import GameConfig


@dataclass(frozen=True)
class TrainingSettings:
    """How one network is trained (the defaults made the shipped weights: docs/inference.md)."""

    hidden: tuple[int, ...] = (512, 512)
    epochs: int = 4
    batch_size: int = 512
    learning_rate: float = 1e-3
    held_out: float = 0.05  # the share of hands held out for the curve
    seed: int = 0
    dropout: float = 0.0  # of each hidden layer's units, while training
    weight_decay: float = 0.0  # AdamW's, on every weight


def split_by_hand(positions: Positions, held_out: float) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the training hands and of the last `held_out` share of hands."""
    hands = positions.hands
    cut = int(np.ceil(int(hands.max()) + 1 - held_out * (int(hands.max()) + 1)))
    return np.flatnonzero(hands < cut), np.flatnonzero(hands >= cut)


def _model(config: GameConfig, settings: TrainingSettings) -> Any:
    """The network in torch: Linear -> ReLU (-> Dropout) per hidden layer, the last Linear at 0."""
    import torch

    sizes = [input_size(config), *settings.hidden, output_size(config)]
    layers: list[torch.nn.Module] = []
    for k in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[k], sizes[k + 1]))
        if k < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
            if settings.dropout:
                layers.append(torch.nn.Dropout(settings.dropout))
    model = torch.nn.Sequential(*layers)
    last = model[-1]
    assert isinstance(last, torch.nn.Linear)
    torch.nn.init.zeros_(last.weight)
    torch.nn.init.zeros_(last.bias)
    return model


def _start_from(model: Any, init: BeliefWeights, config: GameConfig, settings: TrainingSettings) -> None:
    """Copy `init`'s layers into the torch model (its W is (inputs, outputs), torch's (outputs, inputs))."""
    import torch

    if init.config != config or tuple(init.hidden) != tuple(settings.hidden):
        raise ValueError(f"--init: a network of hidden {tuple(init.hidden)} for another table or of other widths than "
                         f"this run's (hidden {tuple(settings.hidden)}); give the run the same --hidden and table")
    linear = [layer for layer in model if isinstance(layer, torch.nn.Linear)]
    with torch.no_grad():
        for layer, (weight, bias) in zip(linear, init.layers):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(weight.T, dtype=np.float32)))
            layer.bias.copy_(torch.from_numpy(np.asarray(bias, dtype=np.float32)))


def train(config: GameConfig, positions: Positions, settings: TrainingSettings,
          log: Callable[[dict], None] = lambda row: None, init: BeliefWeights | None = None) -> BeliefWeights:
    """Train a network on `positions` of `config`'s table; `log(row)` after each epoch (and each
    tenth of one) with the held-out scores. `init`: start from these weights (of this table and
    these hidden widths) instead of a network that is the uniform kind.

    Raises:
        ValueError: `init` is of another table or other widths.
    """
    import torch

    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    model = _model(config, settings)
    if init is not None:
        _start_from(model, init, config, settings)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    training, held = split_by_hand(positions, settings.held_out)
    steps_per_epoch = max(1, training.shape[0] // settings.batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, settings.epochs * steps_per_epoch)
    shape = (config.num_tiles, config.num_players + 1)
    started = time.perf_counter()

    def batch_loss(rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, int]:
        inputs = torch.from_numpy(network_inputs(config, positions.observations[rows], positions.marginals[rows]))
        marginals = torch.from_numpy(positions.marginals[rows].astype(np.float32))
        places = torch.from_numpy(positions.places[rows].astype(np.int64))
        scores = model(inputs).reshape(-1, *shape)
        allowed = marginals > 0
        logits = torch.where(allowed, torch.log(torch.where(allowed, marginals, 1.0)) + scores, -torch.inf)
        hidden = allowed.any(dim=-1)
        target = places.clamp(min=0)
        chosen = torch.log_softmax(torch.where(hidden[..., None], logits, 0.0), dim=-1)
        given = chosen.gather(-1, target[..., None])[..., 0]
        uniform = torch.log(marginals.clamp(min=1e-12)).gather(-1, target[..., None])[..., 0]
        count = int(hidden.sum())
        return -(given * hidden).sum() / max(count, 1), -(uniform * hidden).sum() / max(count, 1), count

    def held_out_scores() -> tuple[float, float]:
        model.eval()
        total = uniform_total = 0.0
        count = 0
        with torch.no_grad():
            for start in range(0, held.shape[0], 4096):
                loss, uniform, tiles = batch_loss(held[start:start + 4096])
                total += float(loss) * tiles
                uniform_total += float(uniform) * tiles
                count += tiles
        model.train()
        return -total / max(count, 1), -uniform_total / max(count, 1)

    step = 0
    best: tuple[float, dict[str, torch.Tensor]] | None = None
    for epoch in range(settings.epochs):
        order = rng.permutation(training)
        running = []
        for k in range(steps_per_epoch):
            rows = np.sort(order[k * settings.batch_size:(k + 1) * settings.batch_size])
            loss, _, _ = batch_loss(rows)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            running.append(float(loss.detach()))
            step += 1
            if (k + 1) % max(1, steps_per_epoch // 10) == 0 or k == steps_per_epoch - 1:
                network, uniform = held_out_scores()
                if best is None or network > best[0]:
                    best = (network, {key: value.clone() for key, value in model.state_dict().items()})
                log({"epoch": epoch + (k + 1) / steps_per_epoch, "positions": step * settings.batch_size,
                     "train_log_p": -float(np.mean(running)), "held_out_log_p": network,
                     "held_out_uniform_log_p": uniform, "best_held_out_log_p": best[0],
                     "seconds": time.perf_counter() - started})
                running = []
    if best is not None:
        model.load_state_dict(best[1])
    weights = [(layer.weight.detach().numpy().T.astype(np.float32).copy(),
                layer.bias.detach().numpy().astype(np.float32).copy())
               for layer in model if isinstance(layer, torch.nn.Linear)]
    return BeliefWeights(config, tuple(settings.hidden), weights)
