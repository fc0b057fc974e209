"""Real datasets bundled with certa, loaded scikit-learn style.

Three compact datasets, derived from real public data by ``scripts/build_datasets.py``
(sources, licences and the exact derivation are in ``certa/datasets/data/README.md``):

- :func:`load_debian_small`: 3,000 Debian package descriptions from 6 sections; a small
  text classification task for J-K-fold tuning demos.
- :func:`load_debian_sections`: 24,186 Debian package descriptions from 58 sections with
  power-law sizes, split into train / quantification (unlabelled) / test parts, for model
  selection by quantification bounds (Balikas et al., IDA 2015).
- :func:`load_nl_lemma`: 70,000 Dutch word forms; predict the suffix transformation that
  turns a form into its lemma from its last 6 and first 2 letters (as in PSearch).

Everything is read from package data with :mod:`importlib.resources` (works from an
installed wheel) and parsed once per process; every call returns fresh copies.

Data only: imports nothing of certa (numpy, pandas and scikit-learn's ``Bunch``); used by the
demo, the examples, the tests and the benchmarks.
"""

from __future__ import annotations

# imported under private names so that the module's namespace is its public API only
import csv as _csv
import functools as _functools
import re as _re
from importlib import resources as _resources

import numpy as _np
import pandas as _pd
from sklearn.utils import Bunch  # the loaders return it, as scikit-learn's do

__all__ = [
    "NL_LEMMA_FEATURE_NAMES",
    "apply_transformation",
    "load_debian_sections",
    "load_debian_small",
    "load_nl_lemma",
]

#: Number of letters taken from the end and from the start of a form (PSearch-style).
_NL_END = 6
_NL_START = 2
_NL_PAD = "_"
#: Feature names of :func:`load_nl_lemma`, in column order.
NL_LEMMA_FEATURE_NAMES: tuple[str, ...] = tuple(
    [f"end-{i}" for i in range(1, _NL_END + 1)] + [f"start-{i}" for i in range(1, _NL_START + 1)]
)
_SPLITS = ("train", "quantification", "test")

_CLASS_RE = _re.compile(r"([0-9]+):(.*)", _re.DOTALL)


def _check_return_X_y(return_X_y: object) -> None:
    if not isinstance(return_X_y, (bool, _np.bool_)):
        raise TypeError(f"return_X_y must be a bool, got {type(return_X_y).__name__}")


@_functools.cache
def _read(name: str) -> _pd.DataFrame:
    """Parse one bundled TSV (cached; callers must copy before handing it out)."""
    with _resources.files(__name__).joinpath("data", name).open("rb") as fh:
        return _pd.read_csv(
            fh,
            sep="\t",
            compression="gzip",
            quoting=_csv.QUOTE_NONE,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            encoding="utf-8",
            lineterminator="\n",
        )


def _descr(title: str, body: str) -> str:
    return f"{title}\n{'=' * len(title)}\n\n{body.strip()}\n\nSee certa/datasets/data/README.md for the exact derivation.\n"


_DEBIAN_SMALL_DESCR = _descr(
    "Debian package descriptions, 6 sections (debian_small)",
    """
3,000 Debian bookworm binary-package descriptions, 500 from each of the sections admin,
graphics, net, sound, text and utils (sampled with a fixed seed). text = short description
+ " " + long description truncated to about 600 characters. Task: predict the section from
the text. TF-IDF + a linear SVM scores about 0.77-0.84 accuracy. Descriptions are under
each package's free licence.
""",
)

_DEBIAN_SECTIONS_DESCR = _descr(
    "Debian package descriptions, 58 sections, power law (debian_sections)",
    """
24,186 Debian bookworm binary-package descriptions from all 58 sections with at least 10
packages, subsampled per section (n if n <= 25 else max(25, round(0.4 n))) so the class
sizes keep their power law (2,506 down to 15). text = short description + " " + long
description truncated to about 300 characters. Split, stratified by section, into train
(~50 %), quantification (~25 %, to be used unlabelled) and test (~25 %), as the datasets of
Balikas et al. (IDA 2015). y_quantification is given for evaluation only.
""",
)

_NL_LEMMA_DESCR = _descr(
    "Dutch lemmatisation as suffix transformations (nl_lemma)",
    """
70,000 Dutch (form, lemma) pairs from spaCy lookups data 1.0.5 (nl_lemma_lookup, MIT),
lowercased, deduplicated, without pairs sharing no prefix, sampled with a fixed seed.
Features: the last 6 letters (end-1 = last letter ... end-6) and the first 2 letters
(start-1, start-2) of the form, "_" where the form is shorter. Class: "<k>:<s>", remove k
characters from the end of the form and append s (see apply_transformation). Memory-based
lemmatisation as in PSearch (Groenewald et al.). Encode X with OrdinalEncoder or
OneHotEncoder before KNeighborsClassifier or DecisionTreeClassifier.
""",
)


def load_debian_small(*, return_X_y: bool = False) -> Bunch | tuple[list[str], _np.ndarray]:
    """Load 3,000 Debian package descriptions from 6 sections (text classification).

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        Bunch with ``data`` (list of str, one text per package), ``target`` (ndarray of
        section names, dtype object), ``target_names`` (sorted section names), ``packages``
        (ndarray of package names), ``frame`` (DataFrame with columns package, section,
        text) and ``DESCR``. Rows are sorted by package name.

    Examples
    --------
    >>> from certa.datasets import load_debian_small
    >>> texts, sections = load_debian_small(return_X_y=True)
    >>> len(texts), sorted(set(sections))[:2]
    (3000, ['admin', 'graphics'])
    """
    _check_return_X_y(return_X_y)
    frame = _read("debian_small.tsv.gz").copy()
    data = frame["text"].tolist()
    target = frame["section"].to_numpy(dtype=object, copy=True)
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        target_names=_np.array(sorted(set(target)), dtype=object),
        packages=frame["package"].to_numpy(dtype=object, copy=True),
        frame=frame,
        DESCR=_DEBIAN_SMALL_DESCR,
    )


def load_debian_sections(
    *, return_X_y: bool = False
) -> Bunch | tuple[list[str], _np.ndarray, list[str], _np.ndarray, list[str], _np.ndarray]:
    """Load 24,186 Debian descriptions in 58 power-law sections, split train/quantification/test.

    For model selection by quantification bounds (Balikas et al., IDA 2015): train each
    candidate on the labelled ``train`` part, quantify on the unlabelled ``quantification``
    part, check on ``test``.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(X_train, y_train, X_quantification, y_quantification, X_test,
        y_test)`` instead of a Bunch.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        Bunch with ``X_train``, ``X_quantification``, ``X_test`` (lists of str),
        ``y_train``, ``y_quantification``, ``y_test`` (ndarrays of section names, dtype
        object; ``y_quantification`` is for evaluation only), ``target_names`` (sorted
        section names), ``frame`` (DataFrame with columns package, section, split, text)
        and ``DESCR``. Within each part rows are sorted by package name.

    Examples
    --------
    >>> from certa.datasets import load_debian_sections
    >>> d = load_debian_sections()
    >>> len(d.X_train) > len(d.X_quantification) == len(d.X_test)
    True
    """
    _check_return_X_y(return_X_y)
    frame = _read("debian_sections.tsv.gz").copy()
    parts: dict[str, object] = {}
    for split in _SPLITS:
        rows = frame[frame["split"] == split]
        parts[f"X_{split}"] = rows["text"].tolist()
        parts[f"y_{split}"] = rows["section"].to_numpy(dtype=object, copy=True)
    if return_X_y:
        return tuple(parts[f"{v}_{s}"] for s in _SPLITS for v in ("X", "y"))  # type: ignore[return-value]
    return Bunch(
        **parts,
        target_names=_np.array(sorted(set(frame["section"])), dtype=object),
        frame=frame,
        DESCR=_DEBIAN_SECTIONS_DESCR,
    )


def _nl_features(forms: _np.ndarray) -> _np.ndarray:
    """Letters at the fixed end/start positions of each form, padded with "_"."""
    width = _NL_END + _NL_START
    X = _np.full((len(forms), width), _NL_PAD, dtype="<U1")
    for i, form in enumerate(forms):
        tail = form[-_NL_END:][::-1]  # end-1 is the last letter
        X[i, : len(tail)] = list(tail)
        head = form[:_NL_START]
        X[i, _NL_END : _NL_END + len(head)] = list(head)
    return X


@_functools.cache
def _nl_cached() -> tuple[_pd.DataFrame, _np.ndarray]:
    frame = _read("nl_lemma.tsv.gz")
    return frame, _nl_features(frame["form"].to_numpy())


def load_nl_lemma(*, return_X_y: bool = False) -> Bunch | tuple[_np.ndarray, _np.ndarray]:
    """Load 70,000 Dutch word forms labelled with their form -> lemma suffix transformation.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        Bunch with ``data`` (ndarray of shape (70000, 8), dtype ``<U1``: the letters
        ``end-1`` (last) ... ``end-6`` and ``start-1``, ``start-2`` of each form, "_" where
        the form is too short), ``target`` (ndarray of class strings "<k>:<s>", dtype
        object), ``target_names`` (sorted classes), ``feature_names``, ``forms``,
        ``lemmas`` (ndarrays, dtype object), ``frame`` (DataFrame with columns form, lemma,
        class and one column per feature) and ``DESCR``. Rows are in random (fixed) order.

    Examples
    --------
    >>> from certa.datasets import apply_transformation, load_nl_lemma
    >>> d = load_nl_lemma()
    >>> d.data.shape
    (70000, 8)
    >>> apply_transformation(d.forms[0], d.target[0]) == d.lemmas[0]
    True
    """
    _check_return_X_y(return_X_y)
    cached_frame, cached_X = _nl_cached()
    X = cached_X.copy()
    y = cached_frame["class"].to_numpy(dtype=object, copy=True)
    if return_X_y:
        return X, y
    frame = cached_frame.copy()
    for j, name in enumerate(NL_LEMMA_FEATURE_NAMES):
        frame[name] = X[:, j].astype(object)
    return Bunch(
        data=X,
        target=y,
        target_names=_np.array(sorted(set(y)), dtype=object),
        feature_names=list(NL_LEMMA_FEATURE_NAMES),
        forms=frame["form"].to_numpy(dtype=object, copy=True),
        lemmas=frame["lemma"].to_numpy(dtype=object, copy=True),
        frame=frame,
        DESCR=_NL_LEMMA_DESCR,
    )


def apply_transformation(form: str, cls: str) -> str:
    """Apply a suffix transformation class "<k>:<s>" to a word form.

    Parameters
    ----------
    form : str
        The word form.
    cls : str
        The class: remove ``k`` characters from the end of ``form``, then append ``s``
        (``s`` may be empty and may itself contain ":").

    Returns
    -------
    str
        ``form[:len(form) - k] + s``.

    Raises
    ------
    TypeError
        If ``form`` or ``cls`` is not a str.
    ValueError
        If ``cls`` is not of the form "<k>:<s>" or ``k`` exceeds ``len(form)``.

    Examples
    --------
    >>> apply_transformation("liep", "3:open")
    'lopen'
    >>> apply_transformation("huizen", "3:s")
    'huis'
    """
    if not isinstance(form, str):
        raise TypeError(f"form must be a str, got {type(form).__name__}")
    if not isinstance(cls, str):
        raise TypeError(f"cls must be a str, got {type(cls).__name__}")
    match = _CLASS_RE.fullmatch(cls)
    if match is None:
        raise ValueError(f"cls must look like '<k>:<suffix>' with k a non-negative integer, got {cls!r}")
    k = int(match.group(1))
    if k > len(form):
        raise ValueError(f"cls {cls!r} removes {k} characters but form {form!r} has only {len(form)}")
    return form[: len(form) - k] + match.group(2)
