"""A stable fingerprint of a callable or a value: a hash of what decides the result of calling it.

:func:`cluster_sim.sweep.run_grid` keys its cache with it, so two sweeps share a cached point only
if their run and metrics functions would compute the same thing. Equal inputs give the same
fingerprint in every process (nothing depends on ``id``, string hashing or line numbers), and any
change that can change a result gives another one:

* a **function** by its module, qualified name and code (bytecode, constants, the names it uses,
  nested functions' code, recursively), its defaults, its closure's values and the globals it
  names, each fingerprinted in turn (a helper it calls, a constant it reads). Functions of the
  ``cluster_sim`` package go by name: run_grid's key holds a digest of the package's source. A
  library's (the standard library, site-packages) go by name and the library's version. Closures
  and defaults are runtime values, so they are fingerprinted wherever the code lives.
* a ``functools.partial`` by its function, arguments and keywords; a bound method by its function
  and its object; a callable object by its class and its state (its dataclass fields or
  ``__dict__`` and ``__slots__``); a class defined outside a library by its bases and attributes.
* a **value** by a representation that is exact: numbers by ``repr``, containers item by item,
  numpy arrays by dtype, shape and a hash of their bytes, pandas objects column by column (numbers
  by their bytes, other values by ``pd.util.hash_pandas_object``) with their labels and dtypes,
  dataclasses by their fields, modules by name.

What has no stable state (a generator or an iterator, an open file, a socket, a random generator,
an object whose state lives in C where Python cannot read it) raises :class:`Unfingerprintable`,
which says where it was found: a cache must refuse rather than guess.

>>> def area(config, scale=2.0):
...     return scale * config.width
>>> fingerprint(area) == fingerprint(area)
True
>>> import functools
>>> fingerprint(functools.partial(area, scale=3.0)) != fingerprint(functools.partial(area, scale=4.0))
True
>>> fingerprint(iter([1, 2]))
Traceback (most recent call last):
...
cluster_sim.fingerprint.Unfingerprintable: an iterator (it changes as it is read)
"""

from __future__ import annotations

import collections.abc
import ctypes
import dataclasses
import datetime
import decimal
import enum
import fractions
import functools
import hashlib
import io
import operator
import os
import pathlib
import platform
import random
import site
import socket
import sys
import sysconfig
import types
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["fingerprint", "Unfingerprintable"]

#: how deep values may nest (a function's global's attribute's closure ...) before we refuse
MAX_DEPTH = 100
_POINTER = ctypes.sizeof(ctypes.c_void_p)
_PACKAGE = os.path.dirname(os.path.realpath(__file__)) + os.sep
_LIBRARIES = tuple(sorted({os.path.realpath(p) + os.sep for p in
                           [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
                           + site.getsitepackages() + [site.getusersitepackages()]}))
# exact types written as their repr (an int subclass may carry more than its value)
_SCALARS = (type(None), bool, int, float, complex, str, bytes, fractions.Fraction, decimal.Decimal, range, slice,
            datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone)
_TUPLEGETTER = type(collections.namedtuple("_Pair", "a b").a)
# a class's attributes that do not decide what its methods compute (or hold line numbers)
_CLASS_SKIP = frozenset({"__dict__", "__weakref__", "__doc__", "__module__", "__qualname__", "__annotations__",
                         "__dataclass_fields__", "__dataclass_params__", "__match_args__", "__firstlineno__",
                         "__static_attributes__", "__orig_bases__", "__parameters__", "__type_params__",
                         "__slotnames__", "_abc_impl"})  # (copyreg and abc cache these on the class)


class Unfingerprintable(ValueError):
    """A value with no stable state; ``what`` describes it, ``where`` is the path that led to it."""

    def __init__(self, what: str, where: list[str]):
        super().__init__(what if not where else f"{' -> '.join(where)} is {what}")
        self.what = what
        self.where = where


def fingerprint(obj: Any) -> str:
    """The sha256 (hex) of ``obj``'s stable representation; :class:`Unfingerprintable` if it has none."""
    walk = _Walk()
    try:
        structure = walk.value(obj)
    except Unfingerprintable:
        raise
    except RecursionError:
        raise Unfingerprintable("nested too deeply to fingerprint", walk.where) from None
    except Exception as err:  # reading it failed (a property that raises, a broken __getattr__): no stable state
        raise Unfingerprintable(f"something that raised {type(err).__name__} ({err}) as it was read",
                                walk.where) from None
    return hashlib.sha256(repr(structure).encode()).hexdigest()


# ---- where code comes from -------------------------------------------------------------------------
def _file_origin(filename: str) -> str:
    """'package' (cluster_sim: its source digest is in the key), 'library' or 'user'."""
    if filename.startswith("<frozen "):  # the standard library's frozen modules (os, posixpath, ...)
        return "library"
    if filename.startswith("<"):  # a notebook cell, exec'd or generated code
        return "user"
    path = os.path.realpath(filename)
    if path.startswith(_PACKAGE):
        return "package"
    return "library" if path.startswith(_LIBRARIES) else "user"


@functools.cache
def _module_origin(name: str) -> str:
    if name == "cluster_sim" or name.startswith("cluster_sim."):
        return "package"
    top = name.partition(".")[0]
    module = sys.modules.get(name)
    if top in sys.builtin_module_names or (module is not None and getattr(module, "__file__", None) is None
                                           and top in sys.stdlib_module_names):
        return "library"
    file = getattr(module, "__file__", None)
    return _file_origin(file) if file else "user"  # __main__ in a notebook has no file


@functools.cache
def _library_version(module: str) -> str:
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names or top == "builtins":
        return f"python {platform.python_version()}"
    return str(getattr(sys.modules.get(top), "__version__", ""))


def _importable_name(obj) -> tuple[str, str] | None:
    """(module, qualified name) when ``obj`` is what a library's (or this package's) module holds under
    its name: a C function or a numpy dispatcher has no code to read, but its name and version say it."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    if isinstance(obj, (type, types.FunctionType)) or _module_origin(module) == "user":
        return None  # classes and Python functions are read whole, unless they are a library's (below)
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return (module, qualname) if found is obj else None


def _global_names(code: types.CodeType) -> set[str]:
    """The names a function's code (and the code nested in it) may read from its globals."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _python_level(cls: type) -> bool:
    """Whether an instance's whole state is in its ``__dict__`` and slots: no class of its MRO adds
    room at the C level (random.Random's Mersenne Twister, a file's buffer, a lock do)."""
    for klass in cls.__mro__[:-1]:
        if klass.__itemsize__:
            return False
        slots = klass.__dict__.get("__slots__", ())
        slots = (slots,) if isinstance(slots, str) else tuple(slots)
        room = sum(s not in ("__dict__", "__weakref__") for s in slots)
        room += ("__dict__" in klass.__dict__) + ("__weakref__" in klass.__dict__)
        if klass.__basicsize__ - klass.__base__.__basicsize__ > room * _POINTER:
            return False
    return True


def _slot_names(cls: type):
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in ((slots,) if isinstance(slots, str) else slots):
            if name not in ("__dict__", "__weakref__"):
                yield name


# ---- the walk --------------------------------------------------------------------------------------
class _Walk:
    """One fingerprint: a nested structure of strings and numbers, built depth first."""

    def __init__(self, where: list[str] | None = None):
        self.seen: dict[int, int] = {}  # id -> order of first visit: a second visit (a cycle) is a reference
        self.keep: list = []  # what seen holds stays alive, so no id is reused during the walk
        self.where: list[str] = list(where or [])

    def refuse(self, what: str):
        raise Unfingerprintable(what, list(self.where))

    def at(self, label: str, obj):
        self.where.append(label)
        if len(self.where) > MAX_DEPTH:
            self.refuse("nested too deeply to fingerprint")
        out = self.value(obj)
        self.where.pop()
        return out

    def value(self, obj):
        t = type(obj)
        if t in _SCALARS or obj is Ellipsis or obj is NotImplemented:
            return (t.__qualname__, repr(obj))
        if isinstance(obj, np.generic):
            return ("numpy", obj.dtype.str, obj.tobytes().hex())
        if isinstance(obj, pathlib.PurePath):
            return (t.__qualname__, str(obj))
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__)
        if isinstance(obj, types.CodeType):
            return self.code(obj)
        if isinstance(obj, np.dtype):
            return ("dtype", repr(obj))
        named = _importable_name(obj)
        if named is not None:  # numpy.mean, math.sqrt, ...: what a library's module holds under that name
            module, qualname = named
            if _module_origin(module) == "package":
                return ("importable", module, qualname)
            return ("importable", module, qualname, _library_version(module))
        if t is tuple or t is frozenset:  # immutable: a cycle needs a mutable part, which is guarded below
            return self.container(obj)
        if id(obj) in self.seen:
            return ("ref", self.seen[id(obj)])
        self.seen[id(obj)] = len(self.seen)
        self.keep.append(obj)
        if isinstance(obj, type):
            return self.cls(obj)
        if isinstance(obj, types.FunctionType):
            return self.function(obj)
        return self.other(obj)

    def container(self, obj):
        t = type(obj)
        if isinstance(obj, (set, frozenset)):
            # in an order that does not depend on string hashing, which differs between processes
            items = sorted(obj, key=lambda v: repr(_Walk(self.where + ["an item"]).value(v)))
            return (t.__qualname__, [self.at("an item", v) for v in items])
        if isinstance(obj, dict):
            return (t.__qualname__, [(self.at("a key", k), self.at(f"item {k!r}", v)) for k, v in obj.items()])
        if all(type(v) in (int, float, str, bool, type(None)) for v in obj):
            return (t.__qualname__, repr(obj))  # plain data: one repr (a long list of floats is common)
        return (t.__qualname__, [self.at(f"item {i}", v) for i, v in enumerate(obj)])

    def code(self, code: types.CodeType):
        # not its file name or line numbers: a notebook cell run again compiles to another file and line
        consts = [self.code(c) if isinstance(c, types.CodeType) else self.at("a constant", c) for c in code.co_consts]
        return ("code", hashlib.sha256(code.co_code).hexdigest(), consts, code.co_names, code.co_varnames,
                code.co_freevars, code.co_cellvars, code.co_argcount, code.co_posonlyargcount,
                code.co_kwonlyargcount, code.co_flags)

    def function(self, fn: types.FunctionType):
        code = fn.__code__
        head = ("function", fn.__module__, fn.__qualname__)
        cells = []
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                contents = cell.cell_contents
            except ValueError:  # not assigned yet
                cells.append((name, "empty"))
            else:
                cells.append((name, self.at(f"its closure variable {name!r}", contents)))
        runtime = (self.at("its defaults", fn.__defaults__), self.at("its keyword defaults", fn.__kwdefaults__), cells)
        origin = _file_origin(code.co_filename)
        if origin == "package":
            return head + ("package",) + runtime
        if origin == "library":
            return head + (_library_version(fn.__module__),) + runtime
        globals_ = fn.__globals__
        read = [(name, self.at(f"its global {name!r}", globals_[name]))
                for name in sorted(_global_names(code)) if name in globals_]
        return head + (self.code(code),) + runtime + (read,)

    def cls(self, cls: type):
        name = f"{cls.__module__}.{cls.__qualname__}"
        origin = _module_origin(cls.__module__)
        if origin == "package":
            return ("class", name)
        if origin == "library":
            return ("class", name, _library_version(cls.__module__))
        bases = [self.at("its base class", b) for b in cls.__bases__]
        attrs = [(key, self.at(f"its class attribute {key!r}", attr)) for key, attr in cls.__dict__.items()
                 if key not in _CLASS_SKIP and not isinstance(attr, (types.MemberDescriptorType,
                                                                     types.GetSetDescriptorType))]
        return ("class", name, bases, attrs)

    def other(self, obj):
        t = type(obj)
        if isinstance(obj, (tuple, list, dict, set, frozenset)):
            extra = ([self.at("its default factory", obj.default_factory)]
                     if isinstance(obj, collections.defaultdict) else [])
            state = self.state(obj) if t not in (list, dict, set) else []
            return ("container", self.at("its class", t), self.container(obj), extra, state)
        if isinstance(obj, types.MethodType):
            return ("method", self.at("its function", obj.__func__), self.at("its object", obj.__self__))
        if isinstance(obj, types.BuiltinFunctionType):  # len, math.sqrt, or a C method bound to an object
            owner = obj.__self__
            if owner is None or isinstance(owner, types.ModuleType):
                module = getattr(obj, "__module__", None) or getattr(owner, "__name__", "builtins")
                return ("builtin", module, obj.__qualname__, _library_version(module))
            return ("builtin method", obj.__qualname__, self.at("its object", owner))
        if isinstance(obj, types.MethodWrapperType):
            return ("method wrapper", obj.__name__, self.at("its object", obj.__self__))
        if isinstance(obj, (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType,
                            types.MemberDescriptorType, types.GetSetDescriptorType)):
            return ("descriptor", obj.__name__, self.at("its class", obj.__objclass__))
        if isinstance(obj, np.ufunc):
            return ("ufunc", obj.__name__, _library_version("numpy"))
        if isinstance(obj, (functools.partial, functools.partialmethod)):
            return ("partial", self.at("its function", obj.func), self.at("its arguments", obj.args),
                    self.at("its keywords", obj.keywords), self.state(obj))
        if isinstance(obj, (staticmethod, classmethod)):
            return (t.__qualname__, self.at("its function", obj.__func__))
        if isinstance(obj, property):
            return ("property", self.at("its getter", obj.fget), self.at("its setter", obj.fset),
                    self.at("its deleter", obj.fdel))
        if isinstance(obj, functools.cached_property):
            return ("cached_property", self.at("its function", obj.func))
        if isinstance(obj, _TUPLEGETTER):  # a namedtuple's field
            return ("tuplegetter", self.at("its field", obj.__reduce__()[1]))
        if isinstance(obj, (operator.itemgetter, operator.attrgetter, operator.methodcaller)):
            return (t.__qualname__, self.at("its arguments", obj.__reduce__()[1:]))
        if hasattr(obj, "__wrapped__") and hasattr(obj, "cache_info"):  # functools.lru_cache / cache
            return ("lru_cache", self.at("the function it caches", obj.__wrapped__))
        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                data = self.at("its items", obj.tolist())
            else:
                data = hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()
            return ("ndarray", self.at("its class", t), repr(obj.dtype.descr), obj.shape, data,
                    self.state(obj) if t is not np.ndarray else [])
        if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
            return self.pandas(obj)
        if isinstance(obj, enum.Enum):
            return ("enum", self.at("its class", t), obj.name, self.at("its value", obj._value_))
        if dataclasses.is_dataclass(obj):
            fields = [(f.name, self.at(f"its field {f.name!r}", getattr(obj, f.name, "<unset>")))
                      for f in dataclasses.fields(obj)]
            return ("dataclass", self.at("its class", t), fields)
        self.refuse_unstable(obj)
        if not _python_level(t):
            self.refuse(f"an object of type {t.__module__}.{t.__qualname__}, whose state Python cannot read")
        return ("object", self.at("its class", t), self.state(obj))

    def refuse_unstable(self, obj):
        if isinstance(obj, (types.GeneratorType, types.AsyncGeneratorType, types.CoroutineType)):
            self.refuse(f"a {type(obj).__name__} (it changes as it is read)")
        if isinstance(obj, io.IOBase):
            self.refuse("an open file")
        if isinstance(obj, socket.socket):
            self.refuse("a socket")
        if isinstance(obj, (np.random.Generator, np.random.BitGenerator, np.random.RandomState, random.Random)):
            self.refuse("a random generator (its state changes with every draw: derive a run's randomness "
                        "from its config's seed)")
        if isinstance(obj, collections.abc.Iterator):
            self.refuse("an iterator (it changes as it is read)")

    def state(self, obj) -> list:
        """An object's attributes: its slots, then its ``__dict__`` by name."""
        out = [(name, self.at(f"its attribute {name!r}", getattr(obj, name)))
               for name in _slot_names(type(obj)) if hasattr(obj, name)]
        attrs = getattr(obj, "__dict__", None)
        if attrs:
            out += [(name, self.at(f"its attribute {name!r}", attrs[name])) for name in sorted(attrs, key=str)]
        return out

    def pandas(self, obj):
        index = obj if isinstance(obj, pd.Index) else obj.index
        columns = ([obj.iloc[:, i] for i in range(obj.shape[1])] if isinstance(obj, pd.DataFrame)
                   else [obj] if isinstance(obj, pd.Series) else [])
        try:
            digests = [_values_digest(c) for c in columns] + [_values_digest(index)]
        except TypeError as err:  # values pandas cannot hash (lists in an object column, ...)
            self.refuse(f"a pandas {type(obj).__name__} whose values pandas cannot hash ({err})")
        labels = [self.at("its index names", list(index.names)), str(index.dtype)]
        if not isinstance(obj, pd.Index):
            labels.append(self.at("its attrs", dict(obj.attrs)))
        if isinstance(obj, pd.DataFrame):
            labels += [self.at("its columns", list(obj.columns)), [str(d) for d in obj.dtypes]]
        elif isinstance(obj, pd.Series):
            labels += [self.at("its name", obj.name), str(obj.dtype)]
        return ("pandas", type(obj).__qualname__, len(obj), digests, labels)


def _values_digest(values: pd.Series | pd.Index) -> str:
    """Numbers and times by their bytes (exact: pandas' hash makes -0.0 and 0.0 one), the rest by
    ``pd.util.hash_pandas_object``."""
    if isinstance(values.dtype, np.dtype) and values.dtype.kind in "biufcmM":
        data = np.ascontiguousarray(values.to_numpy()).tobytes()
    else:
        data = np.asarray(pd.util.hash_pandas_object(values, index=False)).tobytes()
    return hashlib.sha256(data).hexdigest()
