"""
How many evaluations will I need? Simulate before you spend
============================================================

Before any GPU hour is spent, :func:`certa.simulate` runs a selection strategy many times
against simulated scores (Gaussian candidates with the means and SDs you expect, or a table of
scores you already have, replayed at random) and reports how many evaluations it needed and how
often it chose the true best. The same is ``certa simulate`` on the command line.

Here: four candidates whose accuracies differ by 0.02-0.06 with a split-to-split SD of 0.02, as
a pilot run might suggest.
"""

# %%
import matplotlib.pyplot as plt

from certa import simulate
from certa.strategies import TopTwoThompson, UniformUntilConfident

means = [0.80, 0.78, 0.76, 0.74]
sds = [0.02, 0.02, 0.02, 0.02]
strategies = {
    "top-two, delta-correct GLR (default)": TopTwoThompson(0.9),
    "top-two, within 0.01 of the best": TopTwoThompson(0.9, tolerance=0.01),
    "FIESTA's Bayes stopping rule": TopTwoThompson(0.9, beta=0.5, stopping="bayes"),
    "uniform allocation, GLR": UniformUntilConfident(0.9),
}
reports = {name: simulate(s, means=means, sds=sds, n_runs=100, random_state=0) for name, s in strategies.items()}
for name, rep in reports.items():
    print(f"{name:38s} evaluations mean {rep.evaluations.mean():6.1f}, max {rep.evaluations.max():5d}; "
          f"right in {rep.p_correct:.1%} of {rep.n_runs} runs")

# %%
# "Right" is the true best, or (with a tolerance) a candidate within it of the best. The
# delta-correct rule promises a wrong choice in at most 10 % of runs (here it is wrong far
# less often: the rule is conservative); the Bayes rule is cheaper but makes no such promise.
# A tolerance makes near ties cheap. The distribution of the cost:
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.boxplot([rep.evaluations for rep in reports.values()], orientation="horizontal")
ax.set_yticks(range(1, len(reports) + 1), list(reports))
ax.set_xlabel("evaluations until the strategy stopped (100 simulated runs)")
fig.tight_layout()
