"""scikit-learn style fronts over the engine."""
from ._budget import NearTieWarning, TargetNotReachedWarning
from .bandit import BanditSearchCV, bandit_select, belief_frame, plot_belief
from .jkfold import JKFoldSearchCV, RandomizedJKFoldSearchCV
from .progressive import ProgressiveSearchCV
from .quantification import QuantificationBoundSearch

__all__ = ["BanditSearchCV", "JKFoldSearchCV", "NearTieWarning", "ProgressiveSearchCV", "QuantificationBoundSearch", "RandomizedJKFoldSearchCV", "TargetNotReachedWarning",
           "bandit_select", "belief_frame", "plot_belief"]
