"""Looking at a run: load it from its store, summarise it, draw it, write it as a report.

* :mod:`.loading` -- :func:`certa.load`, a :class:`~certa.engine.selection.Selection` rebuilt from a store;
* :mod:`.summary` -- the ranked table and the statement printed by ``certa show``;
* :mod:`.plot` -- the figures (matplotlib, imported on first use);
* :mod:`.report` -- the self-contained HTML report of ``certa report``.

May import :mod:`certa.engine`, :mod:`certa.strategies` and :mod:`certa.analysis`; imported by the fronts
(:mod:`certa.search`, :mod:`certa.integrations`, the CLI). Reads runs, never changes one.
"""
