"""A progress line for Stable-Baselines3 runs (the SB3 examples share it)."""

from __future__ import annotations

import math
import time

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback


class ProgressLine(BaseCallback):
    """Every `every` rollouts, prints the steps so far, the mean return of the last 100 hands
    (from the Monitor's or VecMonitor's episode buffer) and the steps per second."""

    def __init__(self, every: int = 10) -> None:
        super().__init__()
        self.every, self.rollouts, self.started = every, 0, time.perf_counter()

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.rollouts += 1
        if self.rollouts % self.every == 0:
            returns = [episode["r"] for episode in self.model.ep_info_buffer]
            mean = float(np.mean(returns)) if returns else math.nan
            elapsed = time.perf_counter() - self.started
            print(f"{self.num_timesteps:,} steps: mean return of the last {len(returns)} hands {mean:.2f} "
                  f"({self.num_timesteps / elapsed:,.0f} steps/s, {elapsed:.0f} s)", flush=True)
