"""RandomSplitPlan keeps the splits it made (a paired row's split serves every candidate on it):
the cached split is the one a fresh plan makes, for the same y object only, read-only, and the
cache neither travels with the plan to a worker nor outgrows its bound."""
import pickle

import numpy as np
import pytest

from certa.engine.draws import Draw
from certa.engine.plans import SPLIT_CACHE, RandomSplitPlan


def _fresh(draw, y, n, test_size=0.25):
    return RandomSplitPlan(test_size, stratified=True).split(draw, y, n)


def test_cached_split_equals_a_fresh_plans_and_is_read_only():
    y = np.repeat([0, 1, 2], 40)
    plan = RandomSplitPlan(0.25, stratified=True)
    for draw in (Draw(0, "split", (3,), seed=11), Draw(5, "subset", (0, 2), seed=12, size=30)):
        first = plan.split(draw, y, len(y))
        again = plan.split(Draw(7, draw.kind, draw.index, seed=draw.seed, size=draw.size), y, len(y))  # another candidate
        assert again[0] is first[0] and again[1] is first[1]          # served from the cache
        for a, b in zip(first, _fresh(draw, y, len(y))):
            np.testing.assert_array_equal(a, b)
        with pytest.raises(ValueError, match="read-only"):
            first[0][0] = -1


def test_another_y_object_is_never_served_a_cached_split():
    y1 = np.repeat([0, 1], 50)
    y2 = np.tile([0, 1], 50)          # same length, other labels: another stratified split
    plan = RandomSplitPlan(0.2, stratified=True)
    draw = Draw(0, "split", (0,), seed=5)
    s1, s2 = plan.split(draw, y1, 100), plan.split(draw, y2, 100)
    for got, y in ((s1, y1), (s2, y2)):
        for a, b in zip(got, _fresh(draw, y, 100, 0.2)):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(s1[1], s2[1])


def test_cache_is_bounded_and_not_pickled():
    y = np.repeat([0, 1], 50)
    plan = RandomSplitPlan(0.2, stratified=True)
    for seed in range(SPLIT_CACHE + 10):
        plan.split(Draw(0, "split", (seed,), seed=seed), y, 100)
    assert len(plan._splits) == SPLIT_CACHE
    clone = pickle.loads(pickle.dumps(plan))
    assert "_splits" not in clone.__dict__ and "_lock" not in clone.__dict__
    assert clone.spec() == plan.spec()
    np.testing.assert_array_equal(clone.split(Draw(0, "split", (3,), seed=3), y, 100)[0],
                                  plan.split(Draw(0, "split", (3,), seed=3), y, 100)[0])
