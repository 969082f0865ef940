"""The base of the generated records (``roomchat._records``): written once, for all.

A record holds the answer as core decoded it (a dict with the service's field names:
core has checked every declared field's type and kept the unknown ones) and reads
each attribute from it on access, as the native models do. Records are frozen,
compare equal when they are of one class and hold the same answer, hash, pickle as
their wire form, and show in ``repr`` only the fields a generated class lists in
``_shown`` (ids, names, flags, numbers: never a URL, a token or free text).
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Tuple, Type, TypeVar, cast

from ._errors import ValidationError

__all__ = ["Record"]

_R = TypeVar("_R", bound="Record")


def _copy(value: Any) -> Any:
    """A deep copy of JSON (dicts, lists and scalars)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _frozen(value: Any) -> Any:
    """JSON as something hashable."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _show(value: Any) -> str:
    """A value for ``repr``: text shortened to 40 characters."""
    if isinstance(value, str) and len(value) > 40:
        return repr(value[:37]) + "..."
    if isinstance(value, list):
        return f"<{len(value)} {type(value[0]).__name__ if value else 'items'}>"
    return repr(value)


_SCALARS: Dict[str, Tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
}


class Record:
    """A typed record of an answer. Made by the client, or by ``from_dict``."""

    __slots__ = ("_wire",)

    #: (wire name, attribute, type): type is string, boolean, integer, number, json, a
    #: record's name, or ``[Record]`` for a list of them.
    _fields: ClassVar[Tuple[Tuple[str, str, str], ...]] = ()
    #: The attributes ``repr`` shows.
    _shown: ClassVar[Tuple[str, ...]] = ()

    _wire: Dict[str, Any]

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is made by the client, or by {type(self).__name__}.from_dict(...)")

    @classmethod
    def _from_wire(cls: Type[_R], wire: Dict[str, Any]) -> _R:
        """The record of an answer core has decoded (its types are checked)."""
        record = object.__new__(cls)
        object.__setattr__(record, "_wire", wire)
        return record

    @classmethod
    def from_dict(cls: Type[_R], data: Mapping[str, Any]) -> _R:
        """A record from its wire form (as ``to_dict`` gives it): a declared field of the
        wrong type raises ``ValidationError``; ``None`` counts as absent."""
        return cls._from_wire(cls._checked(data, cls.__name__))

    @classmethod
    def _checked(cls, data: Any, where: str) -> Dict[str, Any]:
        if not isinstance(data, Mapping):
            raise TypeError(f"{where} must be a mapping (the record's wire form), not {type(data).__name__}")
        wire: Dict[str, Any] = {}
        for key, value in data.items():
            if not isinstance(key, str):
                raise TypeError(f"{where} has a key that is not a str")
            wire[key] = _copy(value)
        for name, _, kind in cls._fields:
            value = wire.get(name)
            if value is None:
                wire.pop(name, None)
                continue
            if kind.startswith("["):
                inner = cls._record_class(kind[1:-1])
                if not isinstance(value, list):
                    raise ValidationError(f"not the wire form of {where}: {name} must be a list")
                wire[name] = [inner._checked(v, f"{where}.{name}[{i}]") for i, v in enumerate(value)]
            elif kind in _SCALARS:
                types = _SCALARS[kind]
                if isinstance(value, bool) and bool not in types or not isinstance(value, types):
                    raise ValidationError(f"not the wire form of {where}: {name} must be a {kind}")
            elif kind != "json":
                wire[name] = cls._record_class(kind)._checked(value, f"{where}.{name}")
        return wire

    @classmethod
    def _record_class(cls, name: str) -> Type[Record]:
        record = getattr(sys.modules[cls.__module__], name)
        return cast(Type[Record], record)

    # ---- typed reads, for the generated properties ------------------------------------------

    def _str(self, name: str) -> Optional[str]:
        return cast(Optional[str], self._wire.get(name))

    def _bool(self, name: str) -> Optional[bool]:
        return cast(Optional[bool], self._wire.get(name))

    def _int(self, name: str) -> Optional[int]:
        return cast(Optional[int], self._wire.get(name))

    def _float(self, name: str) -> Optional[float]:
        value = self._wire.get(name)
        return None if value is None else float(value)

    def _json(self, name: str) -> Any:
        return _copy(self._wire.get(name))

    def _record(self, name: str, record: Type[_R]) -> Optional[_R]:
        value = self._wire.get(name)
        return None if value is None else record._from_wire(value)

    def _records(self, name: str, record: Type[_R]) -> Optional[List[_R]]:
        value = self._wire.get(name)
        return None if value is None else [record._from_wire(v) for v in value]

    # ---- the record as a whole ----------------------------------------------------------

    @property
    def extra(self) -> Dict[str, Any]:
        """Every other field the service sent (a new dict on each access)."""
        declared = {name for name, _, _ in self._fields}
        return {k: _copy(v) for k, v in self._wire.items() if k not in declared}

    def to_dict(self) -> Dict[str, Any]:
        """The record with the service's field names, unknown fields included."""
        return cast(Dict[str, Any], _copy(self._wire))

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self).from_dict, (self.to_dict(),))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._wire == other._wire

    def __hash__(self) -> int:
        return hash((type(self).__name__, _frozen(self._wire)))

    def __repr__(self) -> str:
        shown = ((name, getattr(self, name)) for name in self._shown)
        return f"{type(self).__name__}({', '.join(f'{n}={_show(v)}' for n, v in shown if v is not None)})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: its attributes cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: its attributes cannot be deleted")
