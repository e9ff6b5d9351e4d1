"""The bench's and the leaderboard's doors: a damaged cells file and bad arguments are one line,
before any cell is played, and nothing is written where nothing was asked for."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import ROOT
from test_bench import tiny_suite

import baselines.benchmark.run as run
from baselines.benchmark import BenchError, bench, load_suite
from baselines.benchmark.run import CELLS_FILE, CELLS_FORMAT
from baselines.benchmark.suite import suite_from_dict
from baselines.cli import main as dominoes
from baselines.harness.parallel import MAX_WORKERS


def play_nothing(*args, **kwargs):
    raise AssertionError("a cell was played before the cells file was checked")


def cell_lines(tmp_path) -> list[str]:
    """greedy's cells of the tiny suite: the header, then one line a cell."""
    bench("greedy", suite_from_dict(tiny_suite()), out=tmp_path / "played")
    return (tmp_path / "played" / CELLS_FILE).read_text().splitlines()


def changed(line: str, **fields) -> str:
    return json.dumps({**json.loads(line), **fields}, sort_keys=True)


def with_outcome(line: str, index: int, *outcome) -> str:
    """The line with its outcome `index` (one past the last: a new one) set to `outcome`
    (opponent, game, score, count), or removed if none is given."""
    found = json.loads(line)["outcomes"]
    return changed(line, outcomes=[*found[:index], *([list(outcome)] if outcome else []), *found[index + 1:]])


def without(line: str, field: str) -> str:
    content = json.loads(line)
    del content[field]
    return json.dumps(content, sort_keys=True)


# Each case: the first two cells as a damaged file holds them, the line refused, what the refusal says.
DAMAGED = {
    "a NaN": (lambda cells: [changed(cells[0], difference=float("nan")), cells[1]], 2,
              r"difference must be a finite number in \[-1e\+06, 1e\+06\], got nan"),
    "a negative count": (lambda cells: [changed(cells[0], hands=-18), cells[1]], 2,
                         "hands must be an integer from 1 to 80000000, got -18"),
    "a zero count": (lambda cells: [changed(cells[0], games=0), cells[1]], 2,
                     "games must be an integer from 1 to 18, got 0"),
    "a count as text": (lambda cells: [changed(cells[0], hands="18"), cells[1]], 2,
                        "hands must be an integer .*, got '18'"),
    "counts the suite does not play": (lambda cells: [cells[0], changed(cells[1], hands=36, games=12)], 3,
                                       "cell '3p_d6/greedy' has 36 hands, 12 games and 2 deals; the suite plays "
                                       "18, 6 and 2"),
    "a cell not in the suite": (lambda cells: [changed(cells[0], cell="3p_d6/nobody"), cells[1]], 2,
                                "cell '3p_d6/nobody' is not one of the suite's cells"),
    "a cell twice": (lambda cells: [cells[0], cells[0]], 3,
                     r"cell '3p_d6/random' is recorded twice \(also on line 2\)"),
    "not JSON": (lambda cells: [cells[0][:40], cells[1]], 2, r"not JSON at column [0-9]+ \("),
    "a missing field": (lambda cells: [without(cells[0], "ci95"), cells[1]], 2, r"missing \['ci95'\]"),
    "a difference off the pips": (lambda cells: [cells[0], changed(cells[1], difference=1000.0)], 3,
                                  r"difference 1000.0 is not agent_pips - opponent_pips = -?[0-9.]+ "
                                  r"\(within 2e-06\)$"),
    "a foreign opponent": (lambda cells: [with_outcome(cells[0], 0, "greedy", "3p_d6/random#0", 1.0, 2), cells[1]], 2,
                           r"an outcome's opponent 'greedy' is not one of the line-up's \['random'\]$"),
    "a wrong game id": (lambda cells: [cells[0], with_outcome(cells[1], 5, "greedy", "3p_d6/greedy#6", 1.0, 2)], 3,
                        "an outcome's game '3p_d6/greedy#6' is not one of the cell's '3p_d6/greedy#0' to "
                        "'3p_d6/greedy#5'$"),
    "another cell's game": (lambda cells: [with_outcome(cells[0], 0, "random", "3p_d6/greedy#0", 1.0, 2), cells[1]],
                            2, "an outcome's game '3p_d6/greedy#0' is not one of the cell's '3p_d6/random#0' to"),
    "an outcome twice": (lambda cells: [with_outcome(cells[0], 6, "random", "3p_d6/random#2", 1.0, 2), cells[1]], 2,
                         "the outcome against 'random' in game '3p_d6/random#2' is recorded twice$"),
    "a count the line-up does not seat": (lambda cells: [with_outcome(cells[0], 3, "random", "3p_d6/random#3", 1.0, 1),
                                                         cells[1]], 2,
                                          "the outcome against 'random' in game '3p_d6/random#3' has count 1; "
                                          "the line-up gives it 2 seats$"),
    "a game without its outcome": (lambda cells: [cells[0], with_outcome(cells[1], 5)], 3,
                                   r"cell '3p_d6/greedy' has 5 outcomes; its 6 games against \['greedy'\] make 6$"),
}


@pytest.mark.parametrize("case", DAMAGED)
def test_a_damaged_cells_file_is_refused_with_its_line_and_left_as_it_is(tmp_path, monkeypatch, case):
    """An unfinished bench (two cells, then a write cut short) with a damaged line: the bench
    refuses it in one line naming the file and the line, plays no cell and leaves the file byte
    for byte (the unfinished tail is not cut)."""
    damage, number, message = DAMAGED[case]
    header, *cells = cell_lines(tmp_path)
    path = tmp_path / "resumed" / CELLS_FILE
    path.parent.mkdir()
    path.write_bytes(("\n".join([header, *damage(cells)]) + "\n" + cells[2][:30]).encode())
    before = path.read_bytes()
    monkeypatch.setattr(run, "play_cell", play_nothing)
    refusal = rf"^{re.escape(str(path))}, line {number}: not a cell result of suite test: {message}"
    with pytest.raises(BenchError, match=refusal) as refused:
        bench("greedy", suite_from_dict(tiny_suite()), out=path.parent)
    assert "\n" not in str(refused.value)
    assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == [CELLS_FILE]


def test_the_command_refuses_a_damaged_cells_file_in_one_line(tmp_path, capsys, monkeypatch):
    import baselines.benchmark.cli as cli

    monkeypatch.setattr(cli, "load_suite", lambda version: suite_from_dict(tiny_suite()))
    lines = cell_lines(tmp_path)
    monkeypatch.setattr(run, "play_cell", play_nothing)
    path = tmp_path / "resumed" / CELLS_FILE
    path.parent.mkdir()
    path.write_text("\n".join([lines[0], changed(lines[1], agent_pips=float("nan"))]) + "\n")
    before = path.read_bytes()
    assert dominoes(["bench", "greedy", "--suite", "test", "--out", str(path.parent), "--no-progress",
                     "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err == (f"dominoes bench: error: {path}, line 2: not a cell result of suite test: agent_pips must be a "
                   "finite number in [0, 1e+06], got nan\n")
    assert path.read_bytes() == before


@pytest.fixture
def leaderboard(tmp_path, monkeypatch):
    """tools/leaderboard.py on the tiny suite (``--suite test``), its committed cells and its docs
    page under tmp_path, decisions not timed."""
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    import leaderboard

    monkeypatch.setattr(leaderboard, "load_suite", lambda version: suite_from_dict(tiny_suite()) if version == "test"
                        else load_suite(version))
    monkeypatch.setattr(leaderboard, "COMMITTED", tmp_path / "committed")
    (tmp_path / "docs").mkdir()
    monkeypatch.setattr(leaderboard, "PAGE", tmp_path / "docs" / "leaderboard.md")
    monkeypatch.setattr(leaderboard, "decision_times", lambda spec, hands, config=None: np.full(hands, 1e-3))
    return leaderboard


def damaged_cells(path, agent: str) -> None:
    path.parent.mkdir(parents=True)
    header = json.dumps({"format": CELLS_FORMAT, "suite": "test", "agent": agent}, sort_keys=True)
    path.write_text(f"{header}\n{{\"cell\": \n")


REFUSED = {
    "an unknown suite": (["--suite", "v0"], r"no benchmark suite 'v0'; the suites are \[.*'v1'"),
    "no workers": (["--workers", "0"], f"--workers must be an integer from 1 to {MAX_WORKERS}, got 0"),
    "negative workers": (["--workers", "-1"], f"--workers must be an integer from 1 to {MAX_WORKERS}, got -1"),
    "--out a file": (["--out", "{tmp}/a-file"], "--out .*/a-file: is a regular file, not a directory"),
    "an unknown --extra": (["--extra", "greedy", "nosuch"], "--extra nosuch: unknown policy 'nosuch'"),
    "an unknown --ceiling": (["--ceiling", "nosuch"], "--ceiling nosuch: unknown policy 'nosuch'"),
    "a damaged cells file under --out": ([], r".*/out/random/cells.jsonl, line 2: not a cell result of suite test: "
                                             "not JSON"),
    "a damaged committed cells file": ([], r".*/committed/bench-test/greedy/cells.jsonl, line 2: not a cell result"),
    "--out under a file": (["--out", "{tmp}/a-file/out"], r"--out .*/a-file/out: cannot be created: '.*/a-file' is "
                                                           "a regular file, not a directory"),
    "a player's folder a file": ([], "--out .*/out/greedy: is a regular file, not a directory"),
    "a player's scorecard a folder": ([], "--out .*/out/greedy: scorecard.md in it is a directory; only a regular "
                                          "file"),
}


def prepare(tmp_path, case: str) -> None:
    """What a case of REFUSED finds on disk: a file, and the damaged cells or folders it names."""
    (tmp_path / "a-file").write_text("not a directory\n")
    if case == "a damaged cells file under --out":
        damaged_cells(tmp_path / "out" / "random" / CELLS_FILE, "random")
    elif case == "a damaged committed cells file":
        damaged_cells(tmp_path / "committed" / "bench-test" / "greedy" / CELLS_FILE, "greedy")
    elif case == "a player's folder a file":
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "greedy").write_text("not a directory\n")
    elif case == "a player's scorecard a folder":
        (tmp_path / "out" / "greedy" / "scorecard.md").mkdir(parents=True)


def tree(root) -> dict:
    """Every path under `root` and its bytes (None: a folder)."""
    return {path: None if path.is_dir() else path.read_bytes() for path in root.rglob("*")}


@pytest.mark.parametrize("case", REFUSED)
def test_the_leaderboard_refuses_bad_input_in_one_line_before_benching_anyone(leaderboard, tmp_path, capsys,
                                                                              monkeypatch, case):
    """Each bad argument, player, cells file or folder: exit status 2, one line on stderr, no player
    benched (the bench is replaced by one that fails), and nothing written or created: no page, no
    folder under --out (the random player's comes before greedy's refused one), files as they were."""
    arguments, message = REFUSED[case]
    prepare(tmp_path, case)
    before = tree(tmp_path)
    monkeypatch.setattr(leaderboard, "bench", play_nothing)
    argv = ["--suite", "test", "--extra", "--ceiling", "none", "--out", str(tmp_path / "out"),
            *[argument.format(tmp=tmp_path) for argument in arguments]]
    assert leaderboard.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tools/leaderboard.py: error: ") and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert tree(tmp_path) == before


def test_the_leaderboard_writes_the_docs_page_only_when_asked(leaderboard, tmp_path, monkeypatch):
    """Without --update-docs the page goes to OUT/leaderboard.md only; with it, to the docs page too,
    which then shows the command that wrote it."""
    docs = (ROOT / "docs" / "leaderboard.md").read_bytes()
    argv = ["--suite", "test", "--extra", "--ceiling", "none", "--workers", "1", "--out", str(tmp_path / "out")]
    assert leaderboard.main(argv) == 0
    written = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "\n| greedy " in written and "\n| random " in written  # a row each
    assert not leaderboard.PAGE.exists()
    monkeypatch.setattr(run, "play_cell", play_nothing)  # every cell is read back: none played again
    assert leaderboard.main([*argv, "--update-docs"]) == 0
    assert leaderboard.PAGE.read_text() == (tmp_path / "out" / "leaderboard.md").read_text()
    assert "    python tools/leaderboard.py --suite test --workers 2 --update-docs --ceiling none\n" in written
    assert (ROOT / "docs" / "leaderboard.md").read_bytes() == docs

