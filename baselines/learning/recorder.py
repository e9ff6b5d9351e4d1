"""What a ``dominoes train`` run writes, and the one home of every learner's ``log.csv`` and
``learning_curve.png``.

A learner on the shared loop writes, through a :class:`RunRecorder`: the progress bar,
``log.csv`` (one row per learning chunk and per evaluation), the latest weights after every
round of evaluations, ``resume.json`` beside them (:class:`ResumePoint`: where the run goes on
from when the same command is run again after a kill), and ``learning_curve.png`` (own mean pips
per hand against the opponents' over training), all in its ``--out`` directory. PPO's run
(:mod:`baselines.ppo.run`) keeps its own columns and curve (margins against steps and wall time),
and ``dominoes train bc`` and ``beliefs`` theirs (by epoch); they write them with the same
pieces: :class:`RunLog` (rows on disk as they come, the rows a resumed run keeps written back
whole, the wall time across sessions) and :func:`save_curve`, and their resume state (the
network's and the optimiser's tensors: ``resume.pt``, in torch's format) with
:func:`save_torch_resume` and :func:`load_torch_resume`. Every learner resumes the same way: run
the same command again; a directory holding a run of other settings is refused in one line.

An evaluation row is the shared harness's (:func:`baselines.harness.evaluate.evaluate`):
``win_rate`` is its ``won``, the share of hands won as :mod:`baselines.harness.outcomes` defines
it. Each learner's command (``baselines/<learner>/cli.py``) describes itself with a
:class:`Learner`; :mod:`baselines.command_line.learner` turns that into options and a run.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dominoes_env import files

if TYPE_CHECKING:
    from baselines.harness.evaluate import EvaluationResult
    from baselines.learning.config import LearnerConfig
    from baselines.learning.run import TrainingLog


@dataclass(frozen=True)
class Learner:
    """A learner ``dominoes train`` can run.

    Attributes:
        policy: the policy it trains (named in the learning curve).
        config: its configuration class (a :class:`~baselines.learning.config.LearnerConfig`), whose
            fields are its options.
        train: ``train(config, args, recorder) -> message``: checks what the run needs, trains
            (reporting to ``recorder.log()``), saves the final weights into ``recorder.out`` and
            says where they are.
        log_columns: the columns of its ``log.csv``.
        checkpoint_dir: where its run goes by default.
        weights_name: the file of its final weights in the run's directory.
        parallel: its runs take ``--workers`` and ``--backend`` (the result does not depend on them).
    """

    policy: str
    config: type[LearnerConfig]
    train: Callable[[Any, argparse.Namespace, RunRecorder], str]
    log_columns: tuple[str, ...]
    checkpoint_dir: Path
    weights_name: str
    parallel: bool = False


LOG_NAME, CURVE_NAME, RESUME_NAME = "log.csv", "learning_curve.png", "resume.json"
RESUME_FORMAT = "dominoes-resume/1"
RESUME_LIMIT = 2**20  #: the most a resume file may be (it holds a few numbers and the configuration)
#: The resume file of a torch learner (ppo, bc, beliefs): :func:`save_torch_resume`.
TORCH_RESUME_NAME = "resume.pt"
#: The most a torch resume file may be (a network, its optimiser's moments, PPO's pool of earlier networks)
TORCH_RESUME_LIMIT = 2**34
#: The columns every learner's log starts with (a learner adds its own figures).
LOG_COLUMNS = ("hands", "kind", "opponent", "own_pips", "opponent_pips", "win_rate")
_DIGITS = {"own_pips": 3, "opponent_pips": 3, "win_rate": 4, "td_error": 4, "fit_error": 4, "hands_per_s": 1,
           "value_loss": 4, "policy_loss": 4}


@dataclass(frozen=True)
class ResumePoint:
    """Where a run of the shared loop goes on from: the last complete round of evaluations.

    At each round the loop hands the recorder its model and its random generator
    (:attr:`~baselines.learning.run.TrainingLog.on_round`); the recorder writes the model as the
    latest weights and then ``resume.json``: the hands trained, the generator's state and the
    weights file's checksum. A run resumed from it skips the chunks already played and draws
    what the killed run would have drawn next, so it repeats exactly what followed (a chunk's
    learning starts afresh: traces and step counts live within a chunk).
    """

    done: int  #: hands trained at that round
    rng: dict[str, Any]  #: the run's numpy generator's state then (``bit_generator.state``)
    weights: Path  #: the latest weights, written at that round
    extra: dict[str, Any] = field(default_factory=dict)  #: what else the learner carries between chunks (JSON)


class RunRecorder:
    """Progress bar, CSV rows, intermediate weights, resume point and the learning-curve plot of one run.

    A learner's train function reads :meth:`resume_point` (None for a new run), calls
    :meth:`start` (how to save the latest weights) once its own checks have passed, so that
    nothing is written for a run that is refused, then :meth:`run` with its training call. The
    log itself is a :class:`RunLog`, as PPO's is.
    """

    def __init__(self, out: Path, learner: Learner, config: LearnerConfig, progress: bool) -> None:
        self.out, self.learner, self.config, self.progress = out, learner, config, progress
        self.run_log = RunLog(out / LOG_NAME, learner.log_columns)
        self.save_latest: Callable[[Path, Any, dict[str, Any]], Any] | None = None
        self.latest_name = ""
        self.latest_saved_at = -1  # hands trained when the latest model was written
        self.bar: Any = None

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The log's rows so far, the earlier sessions' included (numbers as numbers)."""
        return self.run_log.rows

    def resume_point(self, latest_name: str) -> ResumePoint | None:
        """The point a killed run of this learner and configuration left in ``--out`` (None: a new run).

        Raises:
            ValueError: ``resume.json`` is damaged, or holds a run of another learner or of other
                settings, or the latest weights are not those it was written with (one line).
        """
        path = self.out / RESUME_NAME
        try:
            state = json.loads(files.read_regular_file(path, RESUME_LIMIT))
            if not isinstance(state, dict) or state.get("format") != RESUME_FORMAT:
                raise ValueError(f"not a resume file (format {RESUME_FORMAT!r})")
            theirs, done, rng = state["config"], int(state["done"]), dict(state["rng"])
        except (FileNotFoundError, NotADirectoryError):  # a new run (a --out that is not a directory: start says so)
            return None
        except (OSError, files.FileRefused, ValueError, KeyError, TypeError) as error:
            reason = files.why_unreadable(error) if isinstance(error, OSError) else error
            raise ValueError(f"--out: {path} cannot be resumed: {reason}") from None
        ours = self.config.to_dict()
        if state.get("learner") != self.learner.policy or theirs != ours:
            theirs = theirs if isinstance(theirs, dict) else {}
            different = sorted(name for name in set(theirs) | set(ours) if theirs.get(name) != ours.get(name))
            raise ValueError(f"--out: {self.out} holds a {state.get('learner')} run of other settings "
                             f"({', '.join(different) or 'another learner'}); give the same options to resume it, "
                             f"or another --out")
        weights = self.out / latest_name
        try:
            matches = hashlib.sha256(files.read_regular_file(weights, 2**34)).hexdigest() == state.get("sha256")
        except (OSError, files.FileRefused):
            matches = False
        if not matches:
            raise ValueError(f"--out: {weights} is not the file {path} was written with (the run was killed while "
                             f"writing it); start again with another --out")
        extra = state.get("extra", {})
        if not isinstance(extra, dict):
            raise ValueError(f"--out: {path} cannot be resumed: its extra state is not a JSON object")
        return ResumePoint(done, rng, weights, extra)

    def start(self, save_latest: Callable[[Path, Any, dict[str, Any]], Any], latest_name: str,
              resume: bool | ResumePoint | None = False) -> None:
        """Create the directory and begin the log (and the progress bar): the run's checks have passed
        and it is about to train. `save_latest(path, model, info)` writes the model an evaluation
        reports as ``latest_name``. `resume`: True, the run goes on from the directory's earlier
        rows (every one is kept, and new rows follow them; the wall time goes on from theirs); a
        :class:`ResumePoint`, the rows up to its hands are kept (the run writes those after it again).

        Raises:
            ValueError: the directory cannot be created or written to, or its log cannot be read back.
        """
        files.check_output_directory("--out", self.out,
                                     (LOG_NAME, CURVE_NAME, latest_name, RESUME_NAME, self.learner.weights_name))
        self.save_latest, self.latest_name = save_latest, latest_name
        if isinstance(resume, ResumePoint):
            point = resume
            self.run_log.start(keep=lambda row: isinstance(row["hands"], int) and row["hands"] <= point.done)
        else:
            self.run_log.start(keep=(lambda row: True) if resume else None)
        if self.progress:
            from tqdm import tqdm
            done = max((row["hands"] for row in self.rows if isinstance(row["hands"], int)), default=0)
            self.bar = tqdm(total=self.config.hands, initial=done, unit="hand", smoothing=0.05)

    def log(self) -> TrainingLog:
        from baselines.learning.run import TrainingLog

        return TrainingLog(on_hand=self.on_hand, on_progress=self.on_progress, on_evaluation=self.on_evaluation,
                           on_round=self.on_round)

    def run(self, train: Callable[[TrainingLog], Any]) -> Any:
        """`train(log)`, closing the log and drawing the curve however it ends (the rows so far are
        kept, even when the run diverges)."""
        try:
            return train(self.log())
        finally:
            self.close()

    def elapsed(self) -> float:
        """Seconds of training, across the sessions of a resumed run (what ``elapsed_s`` says)."""
        return self.run_log.elapsed()

    def info(self) -> dict[str, Any]:
        return {"hands_trained": self.config.hands, "seconds": round(self.elapsed(), 1)}

    def on_hand(self, record: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def on_progress(self, stats: dict[str, Any]) -> None:
        numbers = {key: _rounded(key, value) for key, value in stats.items() if key not in ("hands", "stage")}
        self.run_log.append({"hands": stats["hands"], "kind": "train", "opponent": stats["stage"], **numbers})

    def on_evaluation(self, hands: int, opponent: str, result: EvaluationResult, model: Any) -> None:
        """One evaluation by the shared harness: the learner was listed first, the opponents' copies second."""
        learner, opponents = result.policies[0], result.policies[1]
        self.run_log.append({"hands": hands, "kind": "eval", "opponent": opponent,
                             "own_pips": round(learner.mean_pips, 3), "opponent_pips": round(opponents.mean_pips, 3),
                             "win_rate": round(learner.won, 4)})
        message = (f"[{hands} hands] vs {opponent}: own {learner.mean_pips:.2f} pips/hand, "
                   f"opponents {opponents.mean_pips:.2f}, won {100 * learner.won:.1f}%")
        (self.bar.write if self.bar is not None else print)(message)
        assert self.save_latest is not None
        if hands != self.latest_saved_at:  # one model per round of evaluations, whatever the opponents
            self.save_latest(self.out / self.latest_name, model,
                             {"hands_trained": hands, "seconds": round(self.elapsed(), 1)})
            self.latest_saved_at = hands
        evaluated = sum(row["kind"] == "eval" and row["hands"] == hands for row in self.rows)
        if evaluated == len(self.config.eval_opponents):  # the round is complete: draw it once
            plot_learning_curve(self.rows, self.out / CURVE_NAME, self.learner.policy)

    def on_round(self, hands: int, model: Any, rng: Any, extra: dict[str, Any] | None = None) -> None:
        """A round of evaluations is complete: write the model as the latest weights, then the resume
        point (:class:`ResumePoint`, with `extra`: what else the learner carries between chunks, as
        JSON), each whole (a kill leaves the old file or the new one)."""
        assert self.save_latest is not None
        weights = self.out / self.latest_name
        if hands != self.latest_saved_at:
            self.save_latest(weights, model, {"hands_trained": hands, "seconds": round(self.elapsed(), 1)})
            self.latest_saved_at = hands
        state = {"format": RESUME_FORMAT, "learner": self.learner.policy, "config": self.config.to_dict(),
                 "done": hands, "rng": rng.bit_generator.state, "extra": extra or {},
                 "sha256": hashlib.sha256(weights.read_bytes()).hexdigest()}
        files.write_atomically(self.out / RESUME_NAME, json.dumps(state, sort_keys=True).encode())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        plot_learning_curve(self.rows, self.out / CURVE_NAME, self.learner.policy)


def save_torch_resume(path: Path, format_name: str, config_json: str, state: dict[str, Any]) -> None:
    """Write a torch learner's resume file (``resume.pt``): `state` (tensors, numbers, text, and dicts
    and lists of them: what ``torch.load(weights_only=True)`` reads back) beside its format and the
    run's configuration as JSON, whole (a kill leaves the old file or the new one).
    :func:`load_torch_resume` reads it back."""
    import torch

    buffer = io.BytesIO()
    torch.save({**state, "format": format_name, "config": config_json}, buffer)
    files.write_atomically(path, buffer.getvalue())


def load_torch_resume(path: Path, format_name: str, config_json: str, device: Any = "cpu") -> dict[str, Any] | None:
    """The state :func:`save_torch_resume` wrote at `path` (tensors on `device`), or None where there
    is no file (a new run).

    Raises:
        ValueError: the file is damaged or not of `format_name`, or holds a run of another
            configuration than `config_json` (one line).
    """
    import torch

    try:
        data = files.read_regular_file(path, TORCH_RESUME_LIMIT)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, files.FileRefused) as error:
        raise ValueError(f"--out: {path} cannot be resumed: {files.why_unreadable(error)}") from None
    try:
        state = torch.load(io.BytesIO(data), weights_only=True, map_location=device)
    except Exception as error:  # whatever torch makes of a damaged file: one line, its first sentence
        reason = (str(error).splitlines() or [type(error).__name__])[0].split(". ")[0]
        raise ValueError(f"--out: {path} cannot be resumed: damaged or not a resume file ({reason})") from None
    if not isinstance(state, dict) or state.get("format") != format_name:
        raise ValueError(f"--out: {path} cannot be resumed: not a resume file (format {format_name!r})")
    if state.get("config") != config_json:
        raise ValueError(f"--out: {path.parent} holds a run of another configuration; give the same options to "
                         f"resume it, or another --out")
    return state


#: The most a log read back on resuming may be (a PPO run writes a row every 250,000 steps: a few
#: hundred bytes each)
LOG_LIMIT = 64 * 2**20


class RunLog:
    """A run's ``log.csv``, written the same way for every learner (the shared loop's
    :class:`RunRecorder` and PPO's run): each row goes to disk as it comes, so that a killed run
    keeps its rows, and a resumed run starts from the earlier rows it keeps.

    ``rows`` holds the log's rows as reading the file back gives them (numbers as numbers, an
    empty cell as ""), for the learning curve and for what the run does next. ``elapsed_s``, where
    the log has that column, is the wall time across sessions: a resumed run goes on from its
    kept rows' last figure, so the curve against wall time does not jump back to 0.
    """

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path, self.columns = path, tuple(columns)
        self.rows: list[dict[str, Any]] = []
        self.before = 0.0  # wall time of the earlier sessions
        self.begun = time.perf_counter()

    def start(self, keep: Callable[[dict[str, Any]], bool] | None = None, seconds_before: float = 0.0) -> None:
        """Begin this session's rows. `keep` None starts the log afresh; otherwise the earlier rows it
        accepts (read back, numbers as numbers) are kept and the others dropped: a run that
        repeats what followed its resume point writes those again, and one that goes on keeps
        every row. `seconds_before`: what this session spent before its log began (reading its
        data), counted in ``elapsed_s`` like the earlier sessions' time. The kept rows are written
        back whole, in their own text, by a rename: a kill leaves the old log or the new one, never
        a mix.

        Raises:
            ValueError: the log is not a regular file, is too large or is not a CSV log (one line).
            OSError: the directory cannot be written.
        """
        kept = [row for row in self._earlier() if keep(_read_row(row))] if keep is not None else []
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=self.columns)
        writer.writeheader()
        writer.writerows(kept)
        files.write_atomically(self.path, text.getvalue().encode())
        self.rows = [_read_row(row) for row in kept]
        self.before = seconds_before + max((row["elapsed_s"] for row in self.rows
                                            if isinstance(row.get("elapsed_s"), (int, float))), default=0.0)
        self.begun = time.perf_counter()

    def _earlier(self) -> list[dict[str, str]]:
        """The rows of the log already there (none without one), as text, in this log's columns.

        Raises:
            ValueError: the log is not a regular file, is too large or is not a CSV log (one line).
        """
        try:
            data = files.read_regular_file(self.path, LOG_LIMIT)
        except FileNotFoundError:
            return []
        except (OSError, files.FileRefused) as error:
            raise files.FileRefused(f"{self.path}: {files.why_unreadable(error)}") from None
        try:
            rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))
        except (UnicodeDecodeError, csv.Error) as error:  # a damaged log: one line, never a traceback
            raise files.FileRefused(f"{self.path}: is not a CSV log ({error})") from None
        return [{column: row.get(column) or "" for column in self.columns} for row in rows]

    def elapsed(self) -> float:
        """Seconds since the run began, its earlier sessions included."""
        return self.before + time.perf_counter() - self.begun

    def append(self, row: dict[str, Any]) -> None:
        """Add `row` (values as the learner shows them; a column it lacks is left empty, a key that
        is not a column is left out) with the wall time so far, on disk at once."""
        values = {column: row.get(column) for column in self.columns}
        if "elapsed_s" in values:
            values["elapsed_s"] = round(self.elapsed(), 1)
        text = io.StringIO()
        csv.DictWriter(text, fieldnames=self.columns).writerow(values)
        with files.open_for_writing(self.path, append=True) as handle:
            handle.write(text.getvalue().encode())
        self.rows.extend(_read_row(read) for read in csv.DictReader(io.StringIO(text.getvalue(), newline=""),
                                                                     fieldnames=self.columns))


def _read_row(row: dict[str, str]) -> dict[str, Any]:
    """A log row read back: numbers as numbers, the rest as text."""
    def value(text: str) -> Any:
        try:
            number = float(text)
        except ValueError:
            return text
        return int(number) if number.is_integer() and "." not in text else number

    return {key: value(text) for key, text in row.items()}


def _rounded(column: str, value: Any) -> Any:
    """A log value as written: a fixed number of decimals, or four significant digits (step sizes)."""
    return round(value, _DIGITS[column]) if column in _DIGITS else float(f"{value:.4g}")


def plot_learning_curve(rows: list[dict[str, Any]], path: Path, learner: str = "td_lambda") -> None:
    """Own mean pips per hand and the opponents' against hands trained: one panel per opponent."""
    plt = pyplot()
    evaluations = [r for r in rows if r["kind"] == "eval"]
    training = [r for r in rows if r["kind"] == "train"]
    opponents = sorted({r["opponent"] for r in evaluations})
    losses = [column for column in ("value_loss", "policy_loss")
              if any(r.get(column) not in (None, "") for r in training)]
    panels = len(opponents) + 1 + bool(losses)
    figure, axes = plt.subplots(1, panels, figsize=(4.5 * panels, 3.6), squeeze=False)
    for axis, opponent in zip(axes[0], opponents):
        points = [r for r in evaluations if r["opponent"] == opponent]
        hands = [r["hands"] for r in points]
        axis.plot(hands, [r["own_pips"] for r in points], marker="o", label=learner)
        axis.plot(hands, [r["opponent_pips"] for r in points], marker="s", label=f"{opponent} (mean of 3)")
        axis.set_title(f"evaluation vs 3x {opponent}")
        axis.set_xlabel("hands trained")
        axis.set_ylabel("mean pips per hand (lower is better)")
        axis.legend(fontsize=8)
    if losses:  # a learner that reports its losses (the champion's expert iteration)
        axis = axes[0][-2]
        for column in losses:
            points = [r for r in training if r.get(column) not in (None, "")]
            axis.plot([r["hands"] for r in points], [r[column] for r in points], marker=".", label=column)
        axis.set_title("training losses")
        axis.set_xlabel("hands trained")
        axis.legend(fontsize=8)
    axis = axes[0][-1]
    axis.plot([r["hands"] for r in training], [r["own_pips"] for r in training], marker=".", label=learner)
    axis.plot([r["hands"] for r in training], [r["opponent_pips"] for r in training], marker=".",
              label="training opponents")
    axis.set_title("while learning (curriculum)")
    axis.set_xlabel("hands trained")
    axis.legend(fontsize=8)
    figure.tight_layout()
    save_curve(figure, path, dpi=90)


def pyplot() -> Any:
    """matplotlib's pyplot, drawing off screen: a run draws its curve on a machine with no display
    (and matplotlib is imported only when a curve is drawn)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_curve(figure: Any, path: Path, dpi: int) -> None:
    """Write `figure` to `path` as a PNG, whole and only over a regular file (a reader, or a killed
    run, never sees half a curve), and free it whatever happens: a run redraws it many times."""
    try:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=dpi)
    finally:
        pyplot().close(figure)
    files.write_atomically(path, buffer.getvalue())
