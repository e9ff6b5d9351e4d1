"""Shared helpers for the engine and env tests."""

from __future__ import annotations

import json
from pathlib import Path

from dominoes_env.core import HandState

DATA = Path(__file__).resolve().parent / "data"


def load_golden_hands() -> list[dict]:
    """The golden hands (tests/data/golden_hands.jsonl), one dict per recorded hand."""
    with open(DATA / "golden_hands.jsonl") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def start_env_from_hand(env, hand: HandState, hand_index: int = 0) -> None:
    """Reset `env` to start from `hand` (the env's public ``position`` reset option)."""
    env.reset(seed=0, options={"position": hand, "hand_index": hand_index})
