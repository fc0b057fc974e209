"""scikit-learn style fronts over the engine."""
from .bandit import BanditSearchCV, bandit_select, belief_frame, plot_belief
from .jkfold import JKFoldSearchCV, RandomizedJKFoldSearchCV
from .progressive import ProgressiveSearchCV
from .quantification import QuantificationBoundSearch

__all__ = ["BanditSearchCV", "JKFoldSearchCV", "ProgressiveSearchCV", "QuantificationBoundSearch", "RandomizedJKFoldSearchCV", "bandit_select", "belief_frame", "plot_belief"]
