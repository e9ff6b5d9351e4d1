"""examples/openspiel_nfsp.py end to end, as a user runs it: OpenSpiel's NFSP trains on the game through
pyspiel, its average policy is saved, loaded back, rated and benched (slow: about a minute).

NFSP learns slowly here: at this budget its average policy plays about as a random player does
(docs/integrations/openspiel.md gives what longer runs reached), so the test checks the whole path,
every move of the rating legal, not a gain."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT, printed_bench_rating

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "openspiel_nfsp.py"
STEPS = 6_000
EVAL_HANDS = 40


def test_the_example_trains_through_pyspiel_saves_rates_and_benches(tmp_path):
    pytest.importorskip("pyspiel")
    pytest.importorskip("tree")
    saved = tmp_path / "average_policy.pt"
    run = subprocess.run([sys.executable, str(EXAMPLE), "--steps", str(STEPS), "--seed", "0", "--out", str(saved),
                          "--eval-hands", str(EVAL_HANDS), "--bench", "quick", "--min-buffer-size-to-learn", "200"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert saved.is_file() and f"trained {STEPS:,} steps" in run.stdout
    # the loaded policy plays through FunctionPolicy (it refuses a move outside the mask) and the harness's env
    assert run.stdout.count(f"| openspiel_nfsp({saved.name}) | {EVAL_HANDS} |") == 2, run.stdout
    printed_bench_rating(run.stdout, f"openspiel_nfsp({saved.name})")
