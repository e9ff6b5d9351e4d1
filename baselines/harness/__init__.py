"""Playing and measuring: the one game loop, the evaluation harness, and what they share.

- :mod:`~baselines.harness.play`: one episode of an AEC env with a policy in each seat, and
  the hand ends it reports.
- :mod:`~baselines.harness.evaluate`: ``evaluate(policies, ...)``, rotated seats over the same
  deals, with confidence intervals; :mod:`~baselines.harness.seating`,
  :mod:`~baselines.harness.outcomes` and :mod:`~baselines.harness.statistics` hold who sits
  where, what "won" means, and the interval.
- :mod:`~baselines.harness.timing`: milliseconds a decision, as the speed benchmarks and the
  leaderboard print them.
- :mod:`~baselines.harness.warmup`: compiling what a run will use before it starts;
  :mod:`~baselines.harness.threads`: torch on one thread where small networks run.

The league (:mod:`baselines.league`) and the learners' evaluations use these.
"""
