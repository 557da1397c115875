"""The layout of one PyLayer call, as eager `PyLayer.apply` sees it (no Paddle here).

Read from paddle 3.3.1 and 2.6.2 paddle/fluid/pybind/eager_py_layer.cc `pylayer_method_apply`
and paddle/fluid/eager/pylayer/py_layer_node.cc `GradNodePyLayer::operator()`:

- input slots: each argument, positional ones first and then the keywords in the order
  written, that is a tensor (one slot) or a list/tuple directly holding tensors (one slot
  whose gradient is a list); backward's return values go to them in that order;
- output slots: forward's result, or each item of it when it is a tuple or a list, that is
  a tensor or a list/tuple directly holding tensors; backward gets one gradient per slot.

The call flows one way. `apply` marks each argument of the call as written with its place
(`written`) and calls the class's builder with them; the generated builder binds them to
forward's parameters (`DEFAULT` for a parameter the call left out) and hands that binding
to `PyLayerOp`, which resolves `DEFAULT` (`bind`, the one place) and reads the call as
written back from the marks (`CallLayout`). What decides a tensor is the caller's
`is_tensor`: the layout works on any values.
"""
import inspect
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from . import structure
from .errors import contract_error

IsTensor = Callable[[Any], bool]


class _Default:
    """Sentinel type of `DEFAULT`."""

    _instance: Optional["_Default"] = None

    def __new__(cls) -> "_Default":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "pylayer2static_runtime.DEFAULT"

    def __reduce__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()
"""Stands for "forward's own default for this parameter" in generated builders."""


class Passed:
    """One argument of the call as written: its value, its place in the call, its keyword
    (None: positional), and how contract errors name it. Not a list or tuple, so a builder
    passes it on whole."""

    __slots__ = ("value", "place", "keyword")

    def __init__(self, value: Any, place: int, keyword: Optional[str]) -> None:
        self.value = value
        self.place = place
        self.keyword = keyword

    @property
    def label(self) -> str:
        return f"argument {self.place + 1}" if self.keyword is None else f"argument '{self.keyword}'"

    def __repr__(self) -> str:
        return f"Passed({self.label}: {self.value!r})"


def written(args: Tuple[Any, ...], kwargs: Dict[str, Any], first_place: int = 0) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """The call `(*args, **kwargs)` with each argument marked with its place in it: the
    positional ones first, then the keywords in the order written."""
    marked = tuple(Passed(value, first_place + i, None) for i, value in enumerate(args))
    place = first_place + len(args)
    return marked, {key: Passed(value, place + j, key) for j, (key, value) in enumerate(kwargs.items())}


def _marked(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """`args`/`kwargs` with every value that is neither marked nor `DEFAULT` marked, placed
    after the marked ones: a call made without `apply` (`PyLayerOp(cls, args, kwargs)`
    used directly, the generic builder) is the call as written."""
    values = list(args) + list(kwargs.values())
    first_place = 1 + max((v.place for v in values if isinstance(v, Passed)), default=-1)
    plain_args = [v for v in args if not isinstance(v, Passed) and v is not DEFAULT]
    plain_kwargs = {k: v for k, v in kwargs.items() if not isinstance(v, Passed) and v is not DEFAULT}
    marks_args, marks_kwargs = written(tuple(plain_args), plain_kwargs, first_place)
    it = iter(marks_args)
    return (
        tuple(v if isinstance(v, Passed) or v is DEFAULT else next(it) for v in args),
        {k: marks_kwargs.get(k, v) for k, v in kwargs.items()},
    )


def forward_signature(cls: type) -> inspect.Signature:
    """The signature of `cls.forward` without its context parameter."""
    sig = inspect.signature(cls.forward)
    params = list(sig.parameters.values())
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return sig  # forward(*args): ctx is args[0]; the rest binds as it is
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise contract_error(cls, "forward must take the context as its first parameter", "forward")
    return sig.replace(parameters=params[1:])


def bind(cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """Check that forward accepts the call; `DEFAULT` becomes forward's own default.

    Returns the call to make: unchanged when it holds no `DEFAULT` (a builder's binding, or
    the call as written on the generic path), else bound to forward's parameters in
    signature order. The one binding to forward's signature the runtime makes.
    """
    sig = forward_signature(cls)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise contract_error(cls, f"cannot call forward{sig}: {exc}", "forward") from None
    if not any(v is DEFAULT for v in list(args) + list(kwargs.values())):
        return tuple(args), dict(kwargs)
    for name, value in list(bound.arguments.items()):
        if value is DEFAULT:
            if sig.parameters[name].default is inspect.Parameter.empty:
                raise contract_error(cls, f"forward parameter '{name}' has no default", "forward")
            del bound.arguments[name]
    bound.apply_defaults()
    return bound.args, bound.kwargs


class CallLayout:
    """One call: forward's arguments as bound, and the arguments the call passed in the order
    written (eager's input slots follow that order; forward's own defaults are no input)."""

    def __init__(self, cls: type, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
        self._args, self._kwargs = bind(cls, *_marked(tuple(args), dict(kwargs)))
        self._passed = sorted((v for v in self._bound_values() if isinstance(v, Passed)), key=lambda p: p.place)
        self._index = {id(p): k for k, p in enumerate(self._passed)}
        self.arguments: List[Any] = [p.value for p in self._passed]
        """The passed arguments' values, in the order written."""

    @property
    def labels(self) -> List[str]:
        """How contract errors name each of `arguments`."""
        return [p.label for p in self._passed]

    def _bound_values(self) -> List[Any]:
        return list(self._args) + list(self._kwargs.values())

    def written_call(self, arguments: List[Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """The call as written, `(args, kwargs)`, with the passed arguments taken from
        `arguments` (as `self.arguments`): how `apply` would make it again (`pir/reload.py`)."""
        named = [(p.keyword, value) for p, value in zip(self._passed, arguments)]
        return tuple(v for k, v in named if k is None), {k: v for k, v in named if k is not None}

    def forward_call(self, arguments: List[Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """forward's `(args, kwargs)`, with the passed arguments taken from `arguments`
        (in the order written, as `self.arguments`)."""

        def value(v: Any) -> Any:
            return arguments[self._index[id(v)]] if isinstance(v, Passed) else v

        return tuple(value(v) for v in self._args), {k: value(v) for k, v in self._kwargs.items()}


class Slot(NamedTuple):
    """One gradient slot: a tensor, or a list/tuple directly holding tensors."""

    number: int  # which argument (inputs) or which item of forward's result (outputs)
    listed: bool  # a list/tuple: its gradients travel as a list
    tensors: Tuple[int, ...]  # its tensors, as indices into the op's inputs or outputs


class Flat(NamedTuple):
    """Values flattened: every leaf (depth first), eager's gradient slots among them, and
    where the tensors are (the op's inputs or outputs, in that order)."""

    leaves: List[Any]
    slots: List[Slot]
    positions: List[int]

    def tensors(self) -> List[Any]:
        return [self.leaves[p] for p in self.positions]

    def with_tensors(self, tensors: List[Any]) -> List[Any]:
        """The leaves, with the tensors replaced in order by `tensors`."""
        leaves = list(self.leaves)
        for pos, tensor in zip(self.positions, tensors):
            leaves[pos] = tensor
        return leaves


def flat_slots(items: List[Any], is_tensor: IsTensor) -> Flat:
    """The leaves of `items` (depth first) and eager's gradient slots among them."""
    leaves: List[Any] = []
    slots: List[Slot] = []
    count = 0
    for number, item in enumerate(items):
        members: List[int] = []
        for child in item if isinstance(item, (list, tuple)) else [item]:
            child_leaves = structure.flatten(child)
            direct = is_tensor(child)
            for leaf in child_leaves:
                if is_tensor(leaf):
                    if direct:
                        members.append(count)
                    count += 1
            leaves.extend(child_leaves)
        if members:
            slots.append(Slot(number, isinstance(item, (list, tuple)), tuple(members)))
    positions, _ = structure.split(leaves, is_tensor)
    return Flat(leaves, slots, positions)


def result_items(out: Any) -> List[Any]:
    """Forward's result as eager splits it into output slots."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def slot_gradients(grads: List[Any], slots: List[Slot]) -> List[Any]:
    """The output gradients grouped as eager passes them to backward: one per output slot."""
    return [[grads[i] for i in slot.tensors] if slot.listed else grads[slot.tensors[0]] for slot in slots]


def last_places(tensors: List[Any], same: Callable[[Any, Any], bool]) -> List[int]:
    """For each output tensor, the index of the last place it is returned in (`return y, y`
    is one tensor in eager, in the slot of its last place)."""
    return [max(j for j in range(i, len(tensors)) if same(tensors[j], tensors[i])) for i in range(len(tensors))]


def _known(shape: Any) -> Optional[List[int]]:
    try:
        return [int(d) for d in shape]
    except (TypeError, ValueError):
        return None


def shapes_conflict(a: Any, b: Any) -> bool:
    """Two static shapes that cannot be the same tensor's (-1: unknown until run time)."""
    sa, sb = _known(a), _known(b)
    if sa is None or sb is None:
        return False
    if len(sa) != len(sb):
        return True
    return any(x >= 0 and y >= 0 and x != y for x, y in zip(sa, sb))
