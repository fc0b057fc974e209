"""
Kill a search and resume it from its store
==========================================

With ``store="run.sqlite"`` every finished evaluation is committed to an SQLite file before the
search uses it. A run that is killed (``kill -9``, a lost node, a closed laptop) and started
again with the same store and seed evaluates only what is missing, and ends with the same
result as a run that was never interrupted. ``certa.load`` (or ``certa show run.sqlite`` on the
command line) reads a store at any time, also while the run is going or after it died.

This example starts a :class:`certa.JKFoldSearchCV` in a separate Python process, kills it with
SIGKILL once part of its evaluations are in the store, inspects the store, and resumes.
"""

# %%
# Start the search in another process, and kill it half-way
# ---------------------------------------------------------
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

import certa

workdir = Path(tempfile.mkdtemp())
store = workdir / "tuning.sqlite"
script = textwrap.dedent("""
    import sys
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC
    from certa import JKFoldSearchCV
    from certa.datasets import load_debian_small

    X, y = load_debian_small(return_X_y=True)
    X, y = X[:1500], y[:1500]
    search = JKFoldSearchCV(make_pipeline(TfidfVectorizer(), LinearSVC()),
                            {"linearsvc__C": [0.03, 0.3, 1, 3]}, n_splits=5, n_repeats=3,
                            random_state=0, store=sys.argv[1], progress=False)
    if __name__ == "__main__":
        search.fit(X, y)
""")
(workdir / "tune.py").write_text(script)
# the child process imports the same certa as this one
env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(certa.__file__).parents[1]),
                                                   os.environ.get("PYTHONPATH", "")]))
child = subprocess.Popen([sys.executable, str(workdir / "tune.py"), str(store)], env=env)


def n_stored() -> int:
    """Evaluations committed to the store so far (0 while the child has not created it)."""
    try:
        return len(certa.load(store).evaluations)
    except (FileNotFoundError, ValueError):
        return 0


deadline = time.monotonic() + 300
while n_stored() < 20 and child.poll() is None and time.monotonic() < deadline:
    time.sleep(0.1)
child.send_signal(signal.SIGKILL)
child.wait()
print("the child process ended with", child.returncode, "(-9: killed by SIGKILL)")

# %%
# What the store holds after the kill
# -----------------------------------
partial = certa.load(store)
print(f"{len(partial.evaluations)} of 60 evaluations stored; finished: {partial.finished}")
print(partial.evaluations.groupby("name")["score"].agg(["count", "mean"]).round(4))

# %%
# Resume: the same search, the same store and seed
# ------------------------------------------------
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from certa import JKFoldSearchCV
from certa.datasets import load_debian_small

X, y = load_debian_small(return_X_y=True)
X, y = X[:1500], y[:1500]
grid = {"linearsvc__C": [0.03, 0.3, 1, 3]}
pipe = make_pipeline(TfidfVectorizer(), LinearSVC())
resumed = JKFoldSearchCV(pipe, grid, n_splits=5, n_repeats=3, random_state=0, store=store,
                         progress=False).fit(X, y)
print("resumed run chose", resumed.best_params_, f"({resumed.best_score_:.4f})")
print("stored evaluations now:", len(certa.load(store).evaluations))

# %%
# The same result as a run that was never interrupted
# ---------------------------------------------------
fresh = JKFoldSearchCV(pipe, grid, n_splits=5, n_repeats=3, random_state=0, progress=False).fit(X, y)
print("uninterrupted run chose", fresh.best_params_)
print("identical scores:", np.array_equal(fresh.cv_results_["mean_test_score"],
                                         resumed.cv_results_["mean_test_score"]))

# %%
# A store written by a different run is refused rather than mixed in: here the grid differs.
try:
    JKFoldSearchCV(pipe, {"linearsvc__C": [0.5, 5]}, n_splits=5, n_repeats=3, random_state=0, store=store,
                   progress=False).fit(X, y)
except ValueError as err:
    print(type(err).__name__, ":", err)

# %%
shutil.rmtree(workdir)
