import os

import pytest

# Keep BLAS single-threaded in tests: the machine has 2 cores and tests run worker processes.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")


@pytest.fixture
def n_evals(monkeypatch):
    """Counts evaluations (every front using it runs inline, in this process)."""
    import certa.engine.runner as runner_mod  # here, not above: the thread settings come before numpy's import

    count = {"n": 0}
    original = runner_mod.execute

    def counting(*args, **kwargs):
        count["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(runner_mod, "execute", counting)
    return count
