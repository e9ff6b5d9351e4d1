"""How ``dominoes train bc`` fits its network: one frozen dataclass, checked on construction (no torch)."""

from __future__ import annotations

from dataclasses import dataclass

from dominoes_env.core import validation

MAX_EPOCHS = 1000
MAX_BATCH = 65536


@dataclass(frozen=True)
class CloningSettings:
    """The fit (the network's shape and the table are the :class:`~baselines.ppo.config.PPOConfig`'s).

    A value out of bounds is a ValueError naming its option and what is allowed.
    """

    epochs: int = 10  #: passes over the training rows
    batch_size: int = 1024  #: rows per step
    learning_rate: float = 1e-3  #: Adam's step size, cosine-annealed to 0 over the run
    weight_decay: float = 0.0  #: AdamW's, on every weight
    value_weight: float = 0.5  #: weight of the value head's loss beside the policy's cross-entropy
    held_out: float = 0.1  #: the share of hands held out to choose the weights and draw the curve
    seed: int = 0  #: the held-out hands, the initial weights and the order of the rows

    def __post_init__(self) -> None:
        for name, low, high in (("epochs", 1, MAX_EPOCHS), ("batch_size", 1, MAX_BATCH),
                                ("seed", 0, validation.SEED_LIMIT - 1)):
            object.__setattr__(self, name, validation.integer(_flag(name), getattr(self, name), low, high))
        for name, least, most in (("learning_rate", 1e-7, 1.0), ("weight_decay", 0.0, 1.0),
                                  ("value_weight", 0.0, 100.0), ("held_out", 0.0, 0.5)):
            object.__setattr__(self, name, validation.real(_flag(name), getattr(self, name), least, most))


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
