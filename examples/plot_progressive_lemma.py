"""
Progressive sampling on the bundled Dutch lemma data
====================================================

:class:`certa.ProgressiveSearchCV` tunes a learner by *wrapped progressive sampling*
(Paramsearch, van den Bosch 2004; PSearch): every setting is trained on a small part of the
training data first, the settings a paired test shows worse are dropped, and the survivors
are trained on larger and larger parts. Most settings never see the full data, so a grid of
dozens of settings costs a fraction of an exhaustive search. The learner's default setting is
kept to the end and replaced only if the final choice beats it in a confirmation
(``vs_baseline_``).

The task is the bundled Dutch lemmatisation data (:func:`certa.datasets.load_nl_lemma`): predict
the suffix transformation that turns a word form into its lemma from its last 6 and first 2
letters, with a TiMBL-like k-NN (:mod:`certa.learners`). We use 8,000 of the 70,000 forms and the
36-setting quick grid to keep the example fast.
"""

# %%
import certa.reporting.plot
from certa import ProgressiveSearchCV
from certa.datasets import apply_transformation, load_nl_lemma
from certa.learners import knn_default_params, knn_grid, knn_pipeline

data = load_nl_lemma()
X, y = data.data[:8000], data.target[:8000]  # rows come in a fixed random order
for form, letters, cls in zip(data.forms[:3], X[:3], y[:3]):
    print(f"{form:12s} features {''.join(letters)}  class {cls!r}")

# %%
# Search the grid
# ---------------
# ``schedule="psearch"`` is PSearch's size schedule; the default ``survival="auto"`` drops a
# setting only when an exact McNemar test (Bonferroni-corrected) shows it worse than the
# round's leader; ``baseline`` is the setting to beat (TiMBL's default IB1 here).
search = ProgressiveSearchCV(knn_pipeline(), knn_grid(quick=True), schedule="psearch",
                             baseline=knn_default_params(), random_state=0, progress=False).fit(X, y)
print("chosen:", search.best_params_)
vs = search.vs_baseline_
print(f"best challenger of the default: {vs['challenger']}")
print(f"difference {vs['difference']:+.4f} [{vs['ci_low']:+.4f}, {vs['ci_high']:+.4f}], one-sided p = {vs['pvalue']:.3f}"
      f" ({vs['test']}; {vs['evidence']}): beat the default: {vs['beat_baseline']}")

# %%
# Rounds: how many settings were trained on how much data
# -------------------------------------------------------
print(search.round_summary_.round(3).to_string())

# %%
# Score against training size for every setting; the dropped ones stop early.
ax = certa.reporting.plot.learning_curves(search.selection_)
ax.figure.tight_layout()

# %%
# Use the tuned model on forms it has not seen
# --------------------------------------------
new = slice(60000, 60008)
predicted = search.predict(data.data[new])
for form, cls, lemma in zip(data.forms[new], predicted, data.lemmas[new]):
    print(f"{form:14s} -> {apply_transformation(form, cls):14s} (true lemma {lemma})")
