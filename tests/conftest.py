"""Shared helpers of the tests: golden hands, positions, running the library examples, torch on one
thread, and a run interrupted where a test says."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from dominoes_env.core import HandState

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """torch on one thread for the test (the trainers' tests: determinism and this 2-core machine), then as it was."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def interrupt_at(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
                 before: Callable[..., bool] = lambda *args: False,
                 after: Callable[..., bool] = lambda *args: False) -> Callable[..., object]:
    """Make ``owner.name`` raise KeyboardInterrupt (as Ctrl-C does) before it runs where `before(*args)`
    holds, or once it has run where `after(*args)` holds: a run killed at a chosen point. Returns
    the original, for the test to put back before it runs the same command again."""
    original = getattr(owner, name)

    def interrupted(*args: object) -> object:
        if before(*args):
            raise KeyboardInterrupt
        result = original(*args)
        if after(*args):
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(owner, name, interrupted)
    return original

def load_golden_hands() -> list[dict]:
    """The golden hands (tests/data/golden_hands.jsonl), one dict per recorded hand."""
    with open(DATA / "golden_hands.jsonl") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def start_env_from_hand(env, hand: HandState, hand_index: int = 0) -> None:
    """Reset `env` to start from `hand` (the env's public ``position`` reset option)."""
    env.reset(seed=0, options={"position": hand, "hand_index": hand_index})


@pytest.fixture
def import_example(monkeypatch) -> Iterator[Callable[[str], ModuleType]]:
    """Imports an example script as a module (the examples import their shared helpers from their
    own folder), with torch on one thread as the scripts run it: small networks on a shared
    machine are several times slower with more. The thread count is restored afterwards."""
    import torch

    monkeypatch.syspath_prepend(str(EXAMPLES))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield importlib.import_module
    torch.set_num_threads(threads)


def run_library_snippets(page: Path) -> list[dict]:
    """Runs each ```py snippet of a docs page (the snippets that need an RL library;
    tests/test_readme.py, which runs under the test extra alone, takes the ```python ones), each
    in a fresh namespace; returns the namespaces."""
    snippets = re.findall(r"```py\n(.*?)```", page.read_text(), flags=re.S)
    assert snippets, f"no ```py snippet in {page}"
    namespaces = []
    for index, block in enumerate(snippets):
        namespace: dict = {"__name__": "__snippet__"}
        exec(compile(block, f"{page.name} py snippet {index}", "exec"), namespace)
        namespaces.append(namespace)
    return namespaces


def printed_gain(output: str) -> float:
    """The gain over a random player in the same seats and deals that examples/rating.py prints."""
    match = re.search(r"gain ([+-]\d+\.\d+) ± (\d+\.\d+) pips per hand", output)
    assert match, output
    return float(match.group(1))


def printed_bench_rating(output: str, label: str) -> float:
    """The dominoes-bench headline that examples/rating.py prints last (``--bench quick``): the
    agent's rating on the frozen pool's scale, played at the example's table (4p_d9) only."""
    match = re.search(rf"\n{re.escape(label)} on dominoes-bench v1-quick: rating (\d+) ± (\d+) \(95% interval\), "
                      rf"normalised score -?\d+, at 4p_d9 only\n*$", output)
    assert match, output[-2000:]
    assert 0 < float(match.group(2)) < 300
    return float(match.group(1))


def check_bench_scorecard(scorecard) -> None:
    """An example's scorecard (``--bench quick``): rated, every cell at the example's table."""
    assert scorecard is not None and scorecard.rating is not None
    assert scorecard.suite == "v1-quick" and {cell["table"] for cell in scorecard.cells} == {"4p_d9"}
    assert "4p_d9" not in scorecard.skipped and scorecard.skipped


# --------------------------------------------------------------------------- a run that selects nothing
_LEFT_OUT_BY_DEFAULT = ("slow", "torch", "rllib")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    """`pytest tests/test_web_browser.py` selects no test (they are all slow, which the default run leaves
    out): say so, and how to run them, instead of exiting 5 without a word. The marks are read from the
    files named (the workers of -n collect, not this process)."""
    if exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
        return
    marks = set()
    for arg in config.args:
        path = Path(arg.split("::")[0])
        if path.is_file():
            marks |= set(re.findall(r"pytest\.mark\.(\w+)", path.read_text())) & set(_LEFT_OUT_BY_DEFAULT)
    if not marks:
        return
    chosen = " or ".join(sorted(marks))
    terminalreporter.write_line(
        f"no test ran: the tests chosen are marked {chosen}, which the default run leaves out (addopts in "
        f"pyproject.toml); choose them with -m, e.g. pytest -m \"{chosen}\" {' '.join(config.args)}")


# --------------------------------------------------------------------------- JAX last
def _runs_jax(item: pytest.Item) -> bool:
    return "jax" in item.nodeid.lower()


def pytest_collection_modifyitems(config, items) -> None:  # type: ignore[no-untyped-def]
    """The tests that run JAX go last, in every process: JAX starts threads, and a process that forks
    after them (the league's and the bench's workers fork) may deadlock in the child. Placed last in
    the collection, they are also handed to the -n workers last, after each worker's other tests."""
    items.sort(key=_runs_jax)  # stable: every other test keeps its order
