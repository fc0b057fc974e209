"""StableKNeighborsClassifier: ties among equidistant neighbours in training order, whatever the threads."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits

from certa.datasets import load_nl_lemma
from certa.learners import (
    ExponentialDecay,
    InverseLinear,
    StableKNeighborsClassifier,
    SymbolicEncoder,
    knn_pipeline,
)

WEIGHTS = ["uniform", "distance", InverseLinear(), ExponentialDecay(4.0)]


def test_ties_go_to_the_lowest_training_index():
    # the query is at distance 1 from rows 1, 2, 4 and 6 (exact ties) and 0 from none;
    # the 3 nearest, ties by training order, are rows 1, 2, 4 (row 6 is left out)
    X = np.array([[5.0], [1.0], [-1.0], [7.0], [1.0], [3.0], [-1.0]])
    y = np.array([0, 1, 2, 0, 3, 0, 4])
    knn = StableKNeighborsClassifier(n_neighbors=3).fit(X, y)
    dist, ind = knn.kneighbors([[0.0]])
    np.testing.assert_array_equal(ind, [[1, 2, 4]])
    np.testing.assert_allclose(dist, [[1.0, 1.0, 1.0]])
    # k = 1 among four equidistant neighbours: the first, so its class
    assert StableKNeighborsClassifier(n_neighbors=1).fit(X, y).predict([[0.0]]).tolist() == [1]
    # a permutation of the training set moves the tie to the new lowest index
    perm = np.array([6, 0, 1, 2, 3, 4, 5])
    knn_p = StableKNeighborsClassifier(n_neighbors=1).fit(X[perm], y[perm])
    assert knn_p.predict([[0.0]]).tolist() == [4]
    # uniform 3-NN: classes 1, 2, 3 one vote each; the tie of votes goes to the lowest class
    np.testing.assert_allclose(knn.predict_proba([[0.0]]), [[0, 1 / 3, 1 / 3, 1 / 3, 0]])
    assert knn.predict([[0.0]]).tolist() == [1]


def test_no_query_is_its_own_neighbour_when_x_is_none():
    X = np.array([[0.0], [0.0], [2.0], [5.0]])
    knn = StableKNeighborsClassifier(n_neighbors=2).fit(X, [0, 1, 0, 1])
    _, ind = knn.kneighbors()
    np.testing.assert_array_equal(ind, [[1, 2], [0, 2], [0, 1], [2, 0]])


@pytest.mark.parametrize("weights", WEIGHTS, ids=repr)
@pytest.mark.parametrize("k", [1, 4, 9])
def test_without_ties_it_is_scikit_learns_brute_knn(weights, k):
    rng = np.random.default_rng(k)
    X, Q = rng.normal(size=(300, 6)), rng.normal(size=(120, 6))
    y = rng.integers(0, 5, size=300)
    ours = StableKNeighborsClassifier(n_neighbors=k, weights=weights).fit(X, y)
    ref = KNeighborsClassifier(n_neighbors=k, weights=weights, algorithm="brute").fit(X, y)
    d_ours, i_ours = ours.kneighbors(Q)
    d_ref, i_ref = ref.kneighbors(Q)
    np.testing.assert_array_equal(i_ours, i_ref)
    np.testing.assert_allclose(d_ours, d_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(Q), ref.predict_proba(Q), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(Q), ref.predict(Q))
    assert ours.score(Q, y[:120]) == ref.score(Q, y[:120])


def test_lemma_predictions_do_not_depend_on_the_thread_count():
    # one-hot letters: many exactly equidistant neighbours; 1 and 2 threads must agree on every
    # example, for the small training sets of the schedules' first rounds and a large one
    X, y = load_nl_lemma(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    tr, te = order[:3200], order[3200:4000]
    enc = SymbolicEncoder("onehot", "gr").fit(X[tr], y[tr])
    A, B = enc.transform(X[tr]), enc.transform(X[te])
    for n_train in (160, 800, 3200):
        for k, weights in [(1, "uniform"), (15, "distance"), (7, ExponentialDecay(4.0))]:
            knn = StableKNeighborsClassifier(n_neighbors=k, weights=weights).fit(A[:n_train], y[tr][:n_train])
            got = {}
            for threads in (1, 2):
                with threadpool_limits(threads):
                    got[threads] = knn.kneighbors(B)
            np.testing.assert_array_equal(got[1][1], got[2][1])
            np.testing.assert_array_equal(got[1][0], got[2][0])
            # and the chosen neighbours are the stable-sort order of the exact weighted overlap
            if n_train == 160:
                overlap = (X[tr][:n_train][None, :, :] != X[te][:, None, :]) @ enc.weights_
                expected = np.argsort(overlap, axis=1, kind="stable")[:, :k]
                np.testing.assert_array_equal(got[1][1], expected)


def test_exactly_equidistant_instances_go_in_training_order_whatever_the_float_order():
    # (a, b, c) and (c, b, a) are exactly equidistant from any (t, t, t); summed in feature order
    # their float squared distances differ in about 1 in 9 draws, and the earlier version (|y|^2 - 2 x.y
    # by BLAS) then took the later row first (issue 24, item 2: the cause of the thread dependence)
    rng = np.random.default_rng(5)
    for _ in range(300):
        v = rng.normal(size=3)
        X = np.array([v + 7.0, v, v[::-1], v - 7.0])
        knn = StableKNeighborsClassifier(n_neighbors=2).fit(X, [0, 1, 2, 3])
        dist, ind = knn.kneighbors(np.full((1, 3), rng.normal()))
        assert ind.tolist() == [[1, 2]]
        assert dist[0, 0] == dist[0, 1]


def test_neighbours_do_not_depend_on_how_the_matrix_product_rounds(monkeypatch):
    # the BLAS product only proposes candidates; any rounding within the standard error bound (any kernel,
    # thread count or summation order) must give the same neighbours and bit-equal distances
    X, y = load_nl_lemma(return_X_y=True)
    order = np.random.default_rng(1).permutation(len(y))
    tr, te = order[:2000], order[2000:2400]
    enc = SymbolicEncoder("onehot", "gr").fit(X[tr], y[tr])
    A, B = enc.transform(X[tr]), enc.transform(X[te])
    knns = [StableKNeighborsClassifier(n_neighbors=k).fit(A, y[tr]) for k in (1, 9, 35)]
    plain = [knn.kneighbors(B) for knn in knns]
    approx = StableKNeighborsClassifier._approx_h
    rng = np.random.default_rng(0)

    def rounded_otherwise(self, q):
        h, bound = approx(self, q)
        return h + rng.uniform(-1, 1, size=h.shape) * bound[:, None], bound

    monkeypatch.setattr(StableKNeighborsClassifier, "_approx_h", rounded_otherwise)
    for knn, (d0, i0) in zip(knns, plain):
        d1, i1 = knn.kneighbors(B)
        np.testing.assert_array_equal(i1, i0)
        np.testing.assert_array_equal(d1, d0)


def test_knn_pipeline_uses_it_and_rejects_what_it_cannot_do():
    pipe = clone(knn_pipeline())
    assert isinstance(pipe[-1], StableKNeighborsClassifier)
    assert pipe.get_params()["knn__n_neighbors"] == 1
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="Euclidean"):
        StableKNeighborsClassifier(metric="manhattan").fit(X, [0, 1])
    with pytest.raises(ValueError, match="one output"):
        StableKNeighborsClassifier().fit(X, [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="n_neighbors"):
        StableKNeighborsClassifier(n_neighbors=3).fit(X, [0, 1]).kneighbors(X)
