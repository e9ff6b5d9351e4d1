"""What the learners share: their configuration's common fields and command-line options, the
training tables on the batched engine, and the run's schedule, reports and evaluations.

- :mod:`~baselines.learning.options`: how a configuration field is written on the command
  line (:class:`~baselines.learning.options.Option`), and the checks learners share;
- :mod:`~baselines.learning.config`: :class:`~baselines.learning.config.LearnerConfig`, the fields every learner's
  configuration starts with (table, curriculum, tables side by side, seed, evaluation);
- :mod:`~baselines.learning.tables`: :class:`~baselines.learning.tables.Tables`, many training tables side by side;
- :mod:`~baselines.learning.run`: the chunks of a run, :class:`~baselines.learning.run.TrainingLog`, evaluations by
  the shared harness;
- :mod:`~baselines.learning.recorder`: what a ``dominoes train`` run writes (the log, the latest
  weights, the learning curve) and :class:`~baselines.learning.recorder.Learner`, how a learner
  describes its command.

Each learner (:mod:`baselines.td_lambda`, :mod:`baselines.linear_sarsa`) is a package of its
own built on these; ``dominoes train LEARNER`` (:mod:`baselines.cli.train`) runs any of them
through its own ``cli.py``.
"""
