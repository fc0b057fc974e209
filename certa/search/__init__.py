"""scikit-learn style fronts over the engine.

Each front (:class:`JKFoldSearchCV`, :class:`RandomizedJKFoldSearchCV`, :class:`BanditSearchCV`,
:func:`bandit_select`, :class:`ProgressiveSearchCV`, :class:`QuantificationBoundSearch`) turns an
estimator and its grid into candidates, a plan and a strategy, runs them through the engine's
runner and presents the result as scikit-learn does.

The top room: may import anything below it (:mod:`certa.engine`, :mod:`certa.strategies`,
:mod:`certa.quantification`, :mod:`certa.planning`, :mod:`certa.analysis`,
:mod:`certa.reporting`); imported only by the other fronts (:mod:`certa.integrations`, the CLI,
the demo) and by ``certa`` itself.
"""
from ._budget import NearTieWarning, TargetNotReachedWarning
from .bandit import BanditSearchCV, bandit_select, belief_frame, plot_belief
from .jkfold import JKFoldSearchCV, RandomizedJKFoldSearchCV
from .progressive import ProgressiveSearchCV
from .quantification import QuantificationBoundSearch

__all__ = ["BanditSearchCV", "JKFoldSearchCV", "NearTieWarning", "ProgressiveSearchCV", "QuantificationBoundSearch", "RandomizedJKFoldSearchCV", "TargetNotReachedWarning",
           "bandit_select", "belief_frame", "plot_belief"]
