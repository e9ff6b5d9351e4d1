"""``dominoes serve``: play against the shipped players and watch recorded games in a browser.

A small Starlette app (the ``web`` extra) serves plain HTML, CSS and JavaScript pages shipped
in the package (``static/``, no build step) and a JSON API:

- :mod:`~baselines.web.table`: a position as the data the pages draw (SVG);
- :mod:`~baselines.web.games`: the games being played, one per browser tab, dropped when idle;
- :mod:`~baselines.web.watch`: records found in ``--records`` or uploaded, as frames to step through;
- :mod:`~baselines.web.app`: the routes, and the one-line 4xx reasons of every refusal;
- :mod:`~baselines.web.cli`: ``dominoes serve``.
"""
