"""Exceptions of the engine."""


class IllegalActionError(ValueError):
    """An action the rules do not allow in the current position.

    It subclasses ValueError so generic handlers catch it; the position is unchanged when
    it is raised, so a caller may catch it and go on.
    """
