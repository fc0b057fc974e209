"""Stable, content-based fingerprints of what determines a run's scores.

A store is resumed only by the run that wrote it, recognised by a fingerprint. The fingerprint
must change when anything that changes the scores changes (the data, the estimator's parameters
however deeply nested, the body of a user function, the values its closure captures, a global
constant it reads) and must not change between processes or Python sessions for the same code
and data (no memory addresses, no ``id()``, no hash-randomised set order, no truncated reprs).

:func:`token` maps an object to a nested tuple of plain values; :func:`stable_hash` hashes that
with joblib (md5 of a pickle of plain values: deterministic).

What is hashed, by kind:

* numbers, strings, bytes, ``None``: themselves (with their type);
* numpy arrays, scipy sparse matrices, pandas objects: their content (joblib's hash);
* lists, tuples, dicts, sets: their elements (dict items and sets in a sorted order);
* functions: the bytecode, constants (nested code objects recursively), names, argument
  names, defaults, keyword defaults, closure cell values, and the globals the code refers
  to: functions and classes recursively, constants (numbers, strings, tuples of them) by
  value, modules by name, mutable objects (a dict used as a cache or counter, an array, a
  model) by type only, since they may change while the run goes on. Functions of the
  standard library, installed packages and certa are identified by name. File names and line
  numbers are left out, so moving a function in its file keeps its fingerprint;
* bound methods: the function and the object; ``functools.partial``: function, args, keywords;
* scikit-learn estimators (anything with ``get_params``): the class and ``get_params(deep=False)``,
  recursively (nested estimators, arrays), and what ``set_fit_request(...)`` and the like asked
  (metadata routing), when anything was;
* classes: those of the standard library, installed packages and certa by qualified name; the
  user's own classes (a callable-class scorer, a subclass of ``LogisticRegression``) also by
  their code: every function defined in the class body (methods, static and class methods,
  property accessors, methods under ``functools.lru_cache``) hashed as functions are, class
  attributes (constants and containers by value, other objects by type), and their bases the
  same way (so a user base class counts, an installed one by name);
* builtins: their qualified name;
* other objects: the class (as above) and their ``__dict__`` (``__slots__`` values), recursively.

What Python adds to a class or an object lazily, on first use, is left out, so using a run's
objects does not change its fingerprint (issue 31 item 1): ``__slotnames__`` (added to a class by
the first pickle or copy of an instance, so by any run with ``n_jobs >= 2``), the caches of
``abc`` and ``typing.Protocol``, annotation caches, the values ``functools.cached_property`` keeps
in an object (its code counts) and what ``functools.lru_cache`` has cached (its function counts).

Not covered: the state of mutable globals (a dict a function reads is hashed by its type only,
since it may change while the run goes on), code reached only through an object's attributes
that are not functions or classes (a callable stored in a mutable global), and the code of
installed packages (identified by name: upgrading scikit-learn does not change a fingerprint).
"""
from __future__ import annotations

import functools
import sys
import types
from typing import Any

import numpy as np
from joblib import hash as joblib_hash

_PRIMITIVE = (type(None), bool, int, float, complex, str, bytes)
_MAX_DEPTH = 60


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', repr(type(obj))))}"


def _sorted_tokens(tokens: list) -> tuple:
    return tuple(sorted(tokens, key=repr))


def token(obj: Any, _seen: frozenset = frozenset()) -> Any:
    """A plain, process-independent description of ``obj`` for hashing (see the module docstring)."""
    if isinstance(obj, _PRIMITIVE):
        return (type(obj).__name__, obj)
    if isinstance(obj, np.generic):
        return ("np", obj.dtype.str, obj.item() if obj.dtype.kind != "O" else token(obj.item(), _seen))
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return ("ndarray-object", obj.shape, tuple(token(v, _seen) for v in obj.ravel().tolist()))
        return ("ndarray", joblib_hash(obj))
    if _is_data_container(obj):
        return ("data", type(obj).__name__, joblib_hash(obj))
    oid = id(obj)
    if oid in _seen:
        return ("cycle", _qualname(type(obj)))
    seen = _seen | {oid}
    if isinstance(obj, (list, tuple)):
        if all(isinstance(v, _PRIMITIVE) for v in obj):
            return (type(obj).__name__, joblib_hash(list(obj)))
        return (type(obj).__name__, tuple(token(v, seen) for v in obj))
    if isinstance(obj, dict):
        return ("dict", _sorted_tokens([(token(k, seen), token(v, seen)) for k, v in obj.items()]))
    if isinstance(obj, (set, frozenset)):
        return ("set", _sorted_tokens([token(v, seen) for v in obj]))
    if isinstance(obj, types.CodeType):
        return _code_token(obj, seen)
    if isinstance(obj, types.FunctionType):
        return _function_token(obj, seen)
    if isinstance(obj, types.MethodType):
        return ("method", obj.__func__.__name__, token(obj.__func__, seen), token(obj.__self__, seen))
    if isinstance(obj, functools.partial):
        return ("partial", token(obj.func, seen), token(obj.args, seen), token(obj.keywords, seen))
    if isinstance(obj, types.ModuleType):
        return ("module", obj.__name__)
    if isinstance(obj, type):
        return _class_token(obj, seen)
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)) or type(obj).__name__ in (
            "method_descriptor", "wrapper_descriptor", "ufunc", "method-wrapper"):
        self_ = getattr(obj, "__self__", None)
        owner = None if self_ is None or isinstance(self_, types.ModuleType) else token(self_, seen)
        return ("builtin", _qualname(obj), owner)
    if hasattr(obj, "get_params") and callable(obj.get_params) and not isinstance(obj, type):
        try:
            params = obj.get_params(deep=False)
        except Exception:  # noqa: BLE001 - not a real estimator: fall through to its attributes
            params = None
        if params is not None:
            requests = _metadata_requests(obj)
            extra = () if requests is None else (("metadata-requests", token(requests, seen)),)
            return ("estimator", _class_token(type(obj), seen), token(params, seen)) + extra
    if len(seen) > _MAX_DEPTH:  # a deep object graph (e.g. a model held in a closure): its type only
        return ("deep", _qualname(type(obj)))
    state = _object_state(obj)
    if state is not None:
        return ("object", _class_token(type(obj), seen), token(state, seen))
    try:
        return ("opaque", _qualname(type(obj)), joblib_hash(obj))
    except Exception:  # noqa: BLE001 - unpicklable (a lock, a handle): identified by its type
        return ("unhashable", _qualname(type(obj)))


def _is_data_container(obj: Any) -> bool:
    mod = type(obj).__module__ or ""
    return mod.startswith(("pandas.", "scipy.sparse", "polars.", "pyarrow."))


def _metadata_requests(estimator: Any) -> Any:
    """What ``set_fit_request(...)`` and the like asked of a scikit-learn estimator (which metadata its
    fit, score, ... receive under metadata routing), or None when nothing was asked."""
    requests = getattr(estimator, "__dict__", {}).get("_metadata_request")
    if requests is None:
        return None
    try:
        return requests._serialize()
    except Exception:  # noqa: BLE001 - another scikit-learn version: identified by its type
        return ("unreadable", _qualname(type(requests)))


def _derived_attributes(cls: type) -> set[str]:
    """Names of ``functools.cached_property`` attributes: computed from the code and the rest of the state,
    they are kept in the object's ``__dict__`` after the first access, which changes nothing."""
    return {name for klass in cls.__mro__ for name, value in vars(klass).items()
            if isinstance(value, functools.cached_property)}


def _object_state(obj: Any) -> dict | None:
    if hasattr(obj, "__dict__"):
        derived = _derived_attributes(type(obj))
        return {k: v for k, v in vars(obj).items() if k not in derived}
    slots = [s for cls in type(obj).__mro__ for s in getattr(cls, "__slots__", ())]
    if slots:
        return {s: getattr(obj, s) for s in slots if hasattr(obj, s)}
    return None


def _code_token(code: types.CodeType, seen: frozenset) -> tuple:
    consts = tuple(_code_token(c, seen) if isinstance(c, types.CodeType) else token(c, seen) for c in code.co_consts)
    return ("code", code.co_name, code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_argcount, code.co_kwonlyargcount, code.co_flags)


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _is_library(obj: Any) -> bool:
    """Defined in the standard library, an installed package or certa: identified by name, not code."""
    name = getattr(obj, "__module__", None) or ""
    top = name.split(".")[0]
    if top in sys.stdlib_module_names or top in ("certa", "builtins"):
        return True
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None) or ""
    return "site-packages" in path or "dist-packages" in path


def _function_token(fn: types.FunctionType, seen: frozenset) -> tuple:
    if _is_library(fn):
        return ("library-function", _qualname(fn))
    closure = ()
    if fn.__closure__:
        values = []
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                values.append((name, token(cell.cell_contents, seen)))
            except ValueError:  # an empty cell
                values.append((name, None))
        closure = tuple(values)
    globs = fn.__globals__
    referenced = []
    for name in sorted(_global_names(fn.__code__)):
        if name in globs:
            referenced.append((name, _global_token(globs[name], seen)))
    return ("function", fn.__name__, _code_token(fn.__code__, seen), token(fn.__defaults__, seen),
            token(fn.__kwdefaults__, seen), closure, tuple(referenced))


# Entries of a class body that do not change behaviour, or that differ between processes or lines, and
# those Python adds to a class lazily, on first use (issue 31 item 1): ``__slotnames__`` (added by the
# first pickle or copy of an instance: any n_jobs >= 2 run pickles the user's objects), the annotation
# caches, and the caches and registries of ``abc`` (C and pure-Python) and ``typing.Protocol``.
_CLASS_NOISE = frozenset({"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__", "__firstlineno__",
                          "__static_attributes__", "__annotations__", "__orig_bases__", "__parameters__",
                          "_abc_impl", "__abstractmethods__", "__slotnames__", "__annotate__",
                          "__annotate_func__", "__annotations_cache__", "_abc_registry", "_abc_cache",
                          "_abc_negative_cache", "_abc_negative_cache_version", "__protocol_attrs__",
                          "__non_callable_proto_members__", "__callable_proto_members_only__"})


def _class_token(cls: type, seen: frozenset) -> tuple:
    """A class by name if it is a library's, else by its code: body functions, attributes, bases."""
    if _is_library(cls):
        return ("class", _qualname(cls))
    seen = seen | {id(cls)}  # a method that refers to its own class meets token()'s cycle check
    body = []
    for name, value in vars(cls).items():
        if name in _CLASS_NOISE:
            continue
        body.append((name, _attribute_token(value, seen)))
    bases = tuple(_class_token(b, seen) for b in cls.__bases__)
    return ("user-class", _qualname(cls), bases, _sorted_tokens(body))


def _attribute_token(value: Any, seen: frozenset) -> Any:
    """One entry of a user class body: code by content, constants and containers by value, other objects by type."""
    if isinstance(value, (staticmethod, classmethod)):
        return (type(value).__name__, _attribute_token(value.__func__, seen))
    if isinstance(value, property):
        return ("property", tuple(_attribute_token(f, seen) for f in (value.fget, value.fset, value.fdel)))
    if isinstance(value, functools.cached_property):
        return ("cached_property", _attribute_token(value.func, seen))
    if isinstance(value, functools.partialmethod):
        return ("partialmethod", _attribute_token(value.func, seen), token(value.args, seen),
                token(value.keywords, seen))
    wrapped = _wrapped_function(value)
    if wrapped is not None:  # a method under functools.lru_cache / cache (its code, not what it cached)
        return ("wrapped", _qualname(type(value)), _attribute_token(wrapped, seen))
    if value is None or isinstance(value, (_PRIMITIVE, np.generic, np.ndarray, list, tuple, dict, set, frozenset,
                                           types.FunctionType, type, functools.partial, types.ModuleType)):
        return token(value, seen)
    return ("attribute", _qualname(type(value)))


def _wrapped_function(value: Any) -> Any:
    """The function inside a decorator object that is not itself a function (``functools.lru_cache``,
    ``functools.cache``), or None."""
    if isinstance(value, types.FunctionType):
        return None
    try:
        wrapped = value.__dict__.get("__wrapped__") if hasattr(value, "__dict__") else None
    except Exception:  # noqa: BLE001 - an object whose __dict__ cannot be read
        return None
    return wrapped if isinstance(wrapped, (types.FunctionType, staticmethod, classmethod)) else None


def _global_token(value: Any, seen: frozenset) -> Any:
    """A global a function reads: code and constants by value, mutable state (a cache, a counter) by type only."""
    if isinstance(value, (_PRIMITIVE, np.generic, types.FunctionType, types.ModuleType, type, functools.partial)):
        return token(value, seen)
    wrapped = _wrapped_function(value)
    if wrapped is not None:  # a function under functools.lru_cache: its code, not its cache
        return ("wrapped", _qualname(type(value)), token(wrapped, seen))
    if isinstance(value, (tuple, frozenset)) and all(isinstance(v, _PRIMITIVE) for v in value):
        return token(value, seen)
    return ("mutable-global", _qualname(type(value)))


def stable_hash(obj: Any) -> str:
    """A hex digest of :func:`token` of ``obj``: equal for equal content, in any process."""
    return joblib_hash(token(obj))
