"""TD(lambda) after-state value learner: a small package whose parts a reader finds by name.

- :mod:`~baselines.td_lambda.config`: :class:`TDLambdaConfig`, the one source of defaults,
  bounds and command-line options;
- :mod:`~baselines.td_lambda.features`: V's input, from after-state observations (numpy, numba);
- :mod:`~baselines.td_lambda.architecture`: V's shape and flat weight layout;
- :mod:`~baselines.td_lambda.network`: V in torch, with per-sample gradients (training only);
- :mod:`~baselines.td_lambda.checkpoint`: safetensors files, validated and checksummed;
- :mod:`~baselines.td_lambda.policy`: the ``td_lambda`` policy, acting in numpy;
- :mod:`~baselines.td_lambda.tables`: many training tables side by side;
- :mod:`~baselines.td_lambda.learner`: the traces, the update and the curriculum loop.

Importing this package, or making the ``td_lambda`` policy, never imports torch: the
training names (:func:`train`, :class:`ValueNetwork`, :class:`Traces`, ...) are loaded on
first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from baselines.td_lambda.architecture import LAYER_NORM_EPS, Architecture
from baselines.td_lambda.checkpoint import (
    CHECKPOINT_FORMAT,
    SHIPPED_CHECKPOINTS,
    Checkpoint,
    load_checkpoint,
    save_checkpoint,
    shipped_checkpoint,
)
from baselines.td_lambda.config import (
    SELF_PLAY,
    TDLambdaConfig,
    parse_curriculum,
)
from baselines.td_lambda.features import (
    VARIANTS,
    BasicFeatures,
    LineFeatures,
    make_features,
)
from baselines.td_lambda.policy import NumpyValue, TDLambdaPolicy, predicted_final_pips

if TYPE_CHECKING:
    from baselines.td_lambda.learner import (
        EVALUATION_SEED,
        Traces,
        TrainingLog,
        evaluate_network,
        seed_everything,
        train,
    )
    from baselines.td_lambda.network import ValueNetwork, build_network
    from baselines.td_lambda.tables import HandRecord, Tables, play_hands

#: Names that need torch (or only serve training), and the module that defines each.
_TRAINING_NAMES = {
    "EVALUATION_SEED": "learner", "Traces": "learner", "TrainingLog": "learner",
    "evaluate_network": "learner", "seed_everything": "learner", "train": "learner",
    "ValueNetwork": "network", "build_network": "network",
    "HandRecord": "tables", "Tables": "tables", "play_hands": "tables",
}

__all__ = [  # the training names are loaded on first use (see _TRAINING_NAMES)
    "CHECKPOINT_FORMAT",
    "EVALUATION_SEED",
    "LAYER_NORM_EPS",
    "SELF_PLAY",
    "SHIPPED_CHECKPOINTS",
    "VARIANTS",
    "Architecture",
    "BasicFeatures",
    "Checkpoint",
    "HandRecord",
    "LineFeatures",
    "NumpyValue",
    "TDLambdaConfig",
    "TDLambdaPolicy",
    "Tables",
    "Traces",
    "TrainingLog",
    "ValueNetwork",
    "build_network",
    "evaluate_network",
    "load_checkpoint",
    "make_features",
    "parse_curriculum",
    "play_hands",
    "predicted_final_pips",
    "save_checkpoint",
    "seed_everything",
    "shipped_checkpoint",
    "train",
]


def __getattr__(name: str) -> Any:
    """Load a training name (and torch, for most) on first use."""
    module = _TRAINING_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_TRAINING_NAMES))
