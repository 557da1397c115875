"""Flatten and rebuild nested Python structures (lists, tuples, dicts).

Leaves are everything that is not a list, tuple or dict; a structure is
rebuilt with the same container types (namedtuples included).
"""
from typing import Any, Callable, List, Tuple


def flatten(obj: Any) -> List[Any]:
    """Return the leaves of `obj` in depth-first order (dict values by key order)."""
    leaves: List[Any] = []
    _flatten_into(obj, leaves)
    return leaves


def _flatten_into(obj: Any, leaves: List[Any]) -> None:
    if isinstance(obj, (list, tuple)):
        for item in obj:
            _flatten_into(item, leaves)
    elif isinstance(obj, dict):
        for key in obj:
            _flatten_into(obj[key], leaves)
    else:
        leaves.append(obj)


def pack_as(structure: Any, leaves: List[Any]) -> Any:
    """Rebuild `structure` with its leaves replaced, in order, by `leaves`."""
    it = iter(leaves)
    result = _pack(structure, it)
    for _ in it:
        raise ValueError("pack_as: more leaves than the structure holds")
    return result


def _pack(obj: Any, it: Any) -> Any:
    if isinstance(obj, (list, tuple)):
        items = [_pack(item, it) for item in obj]
        if isinstance(obj, list):
            return items
        if hasattr(obj, "_fields"):  # namedtuple
            return type(obj)(*items)
        return type(obj)(items)
    if isinstance(obj, dict):
        return type(obj)((key, _pack(obj[key], it)) for key in obj)
    return next(it)


def map_leaves(fn: Callable[[Any], Any], obj: Any) -> Any:
    """Rebuild `obj` with `fn` applied to every leaf."""
    return pack_as(obj, [fn(leaf) for leaf in flatten(obj)])


def split(leaves: List[Any], is_tensor: Callable[[Any], bool]) -> Tuple[List[int], List[Any]]:
    """Return the positions and the values of the tensor leaves."""
    positions = [i for i, leaf in enumerate(leaves) if is_tensor(leaf)]
    return positions, [leaves[i] for i in positions]
