"""In-place tensor APIs (`paddle.scatter_(buf, i, v)`, `x.add_(y)`,
`paddle.assign(y, output=x)`, `x.zero_()`, ...) while a forward or backward is built.

In a static graph (paddle 3.3.1 and 2.6.2 python/paddle/utils/inplace_utils.py
`_inplace_apis_in_dygraph_only_`) such an API runs its out-of-place twin with a warning
and returns a new value; `x` itself is left as it was, so code that discards the result
(`paddle.scatter_(buf, idx, val)`, then reads `buf`) reads the tensor before the write:
wrong values, no error (the framework's own to_static too). `paddle.assign(y, output=x)`
builds PIR's `assign_out_`, whose result is a new value as well, and `zero_` does not
exist on static tensors (`fill_` neither: it stays an AttributeError, at the user's line).

dy2static already follows one kind of in-place write, `x[i] = v`: it records `x` → the
write's result per program (3.3.1 `parameter_recorder._global_inplace_map`, 2.6.2
`ProgramTranslator._inplace_map`), and converted code reads every name through
`convert_load`, which returns the latest value. While forward or backward is built,
`followed` makes the in-place APIs record their writes there too, so later reads of `x`
(`buf`, `bufs[0]`, `ctx.saved_tensor()`'s results) see the write as eager does; the
tensors the runtime takes from the body (forward's result, what ctx carries, backward's
result) are read through it too (`latest`). Two writes stay loud, naming the user's line:
a decorated in-place API reached through a name the runtime does not swap (`from paddle
import scatter_`), and, in forward, a write into a tensor forward did not make (an
argument of `apply`, a parameter), which eager makes visible to the caller and a static
graph cannot.
"""
import contextlib
import functools
import re
import types
from typing import Any, Callable, Dict, Iterator, List, Tuple

import paddle

from . import framework, patch
from .core import scope
from .frames import called_from_user, refusal

# Not followed: `paddle.where_(condition, x, y)` writes into its second argument (so its
# warning refuses it), `requires_grad_` sets a flag on the tensor it returns, and `set_`
# and `resize_` have no static form.
_NOT_FOLLOWED = {"where_", "requires_grad_", "set_", "resize_"}
_WARNING = re.compile(r"In static graph mode, (\w+)\(\) is the same as")


def _is_static(value: Any) -> bool:
    return isinstance(value, framework.static_types())


def latest(value: Any) -> Any:
    """`value` as the in-place writes followed so far in the body being built left it
    (itself if none, or if no body is being built)."""
    body = scope.current().body
    if body is None or not _is_static(value):
        return value
    return body.adapter.latest(value)


def _check_target(body: scope.Body, target: Any, api: str) -> None:
    from paddle.base.framework import Parameter

    if isinstance(target, Parameter) or any(body.adapter.same(target, value) for value in body.foreign):
        raise refusal(
            body.cls, body.method,
            f"writes into a tensor it did not make ({api}: an argument of apply or a parameter) in "
            "place; eager changes the caller's tensor too, which a static graph cannot: write into "
            "a copy (x = x.clone()) and return it",
        )
    if body.adapter.viewed(target):
        raise refusal(
            body.cls, body.method,
            f"writes in place ({api}) into a tensor that is a view of another or has one (a slice, "
            "a transpose, a squeeze, ...); eager's write reaches the other tensor too, which a static "
            "graph's cannot: write into a copy (row = y[0].clone()) or build the result out of place "
            "(paddle.scatter, paddle.concat, paddle.where)",
        )


def _following(fn: Callable[..., Any], api: str, target_of: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def inplace_api(*args: Any, **kwargs: Any) -> Any:
        # Its tensors as the writes so far left them: paddle 2.6.2 converted code reads a
        # method's receiver and keyword arguments without `convert_load`.
        args = tuple(latest(arg) for arg in args)
        kwargs = {key: latest(value) for key, value in kwargs.items()}
        target = target_of(args, kwargs)
        current = scope.current()
        if current.written_trial is not None:
            current.written_trial.in_place_write(api)

        def write() -> Any:
            with scope.entered(followed_calls=current.followed_calls + 1):
                return fn(*args, **kwargs)

        if current.body is None:
            return write()
        if _is_static(target):
            _check_target(current.body, target, api)
        return current.body.adapter.write_in_place(write, [*args, *kwargs.values()], target)

    # Called from converted code: dy2static must call it as it is, not convert it.
    return paddle.jit.not_to_static(inplace_api)


def _first(args: Any, kwargs: Any) -> Any:
    return args[0] if args else kwargs.get("x", kwargs.get("input"))


def _assign_output(args: Any, kwargs: Any) -> Any:
    return args[1] if len(args) > 1 else kwargs.get("output")


def _zero_(self: Any) -> Any:
    """`Tensor.zero_` on a static tensor: followed in a body; elsewhere missing, as static
    tensors have no `zero_` (the followers stay in place for a whole build)."""
    if scope.current().body is None:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'zero_'")
    return paddle.zeros_like(self)


# (owner, name) -> (the API, its follower): every body built (two per PyLayer call) follows
# some 430 APIs, and making their followers each time was most of a call's build time.
_FOLLOWERS: Dict[Tuple[Any, str], Tuple[Any, Callable[..., Any]]] = {}


def _follower(owner: Any, name: str, fn: Any, api: str, target_of: Callable[..., Any]) -> Callable[..., Any]:
    """The follower of `fn`, made once for as long as `owner.name` is that same `fn`."""
    known = _FOLLOWERS.get((owner, name))
    if known is None or known[0] is not fn:
        known = (fn, _following(fn, api, target_of))
        _FOLLOWERS[(owner, name)] = known
    return known[1]


class _LastSwaps:
    """What `_swaps` last found, kept while the owners list the same names and hold the same
    APIs: listing and filtering their names was most of the remaining cost of a body built."""

    listings: List[List[List[str]]] = []
    apis: List[Tuple[Any, str, Any]] = []  # (owner, name, the API found there)
    swaps: List[Tuple[Any, str, Callable[..., Any]]] = []


def _owners() -> List[Any]:
    return list(framework.static_types()) + [paddle, paddle.tensor, paddle.nn.functional]


def _listing(owner: Any) -> List[List[str]]:
    """What `dir(owner)` is made from, cheaper to make and to compare than its sorted result:
    the names of a class and of its bases (`type.__dir__`), or of a module without a
    `__dir__` of its own (`ModuleType.__dir__`); else `dir(owner)` itself."""
    if isinstance(owner, type) and type(owner).__dir__ is type.__dir__:
        return [list(vars(base)) for base in owner.__mro__]
    if isinstance(owner, types.ModuleType) and "__dir__" not in vars(owner):
        return [list(vars(owner))]
    return [dir(owner)]


def _swaps() -> List[Any]:
    """(owner, name, replacement) of every in-place API followed."""
    owners = _owners()
    listings = [_listing(owner) for owner in owners]
    if listings == _LastSwaps.listings and all(getattr(owner, name, None) is fn for owner, name, fn in _LastSwaps.apis):
        return _LastSwaps.swaps
    apis, swaps = [], []
    for owner in owners:
        for name in dir(owner):
            if name.endswith("_") and not name.startswith("_") and name not in _NOT_FOLLOWED:
                fn = getattr(owner, name, None)
                if callable(fn) and not isinstance(fn, type):
                    apis.append((owner, name, fn))
                    swaps.append((owner, name, _follower(owner, name, fn, name, _first)))
        if isinstance(owner, type):
            if not hasattr(owner, "zero_"):
                swaps.append((owner, "zero_", _follower(owner, "zero_", _zero_, "zero_", _first)))
    apis.append((paddle, "assign", paddle.assign))
    swaps.append((paddle, "assign", _follower(paddle, "assign", paddle.assign, "paddle.assign(..., output=)", _assign_output)))
    _LastSwaps.listings, _LastSwaps.apis, _LastSwaps.swaps = listings, apis, swaps
    return swaps


class _LoudWarnings:
    """`warnings` as `inplace_utils` sees it: the warning that an in-place API runs its
    out-of-place twin, from user code not going through a followed name, is an error."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def warn(self, message: Any, *args: Any, **kwargs: Any) -> None:
        match = _WARNING.match(str(message))
        current = scope.current()
        if match and current.followed_calls == 0 and current.body is not None:
            if called_from_user(0):
                api = match.group(1)
                raise refusal(
                    current.body.cls, current.body.method,
                    f"calls {api}(), an in-place API, under a name the runtime does not follow (it follows "
                    "in-place APIs called as paddle.NAME_, paddle.nn.functional.NAME_ or x.NAME_()); in a static graph it would "
                    f"not write its input, so later reads would be stale: call it as x.{api}(...) or "
                    f"paddle.{api}(...), or use the result of {api[:-1]}(...)",
                )
        self._real.warn(message, *args, **kwargs)


@contextlib.contextmanager
def followers_installed() -> Iterator[None]:
    """The in-place APIs' followers in place for the length of the block, unless they are
    already: a build installs them once (dy2static's program, PIR's autodiff, one `apply`), as
    swapping some 430 APIs in and out for every body was most of a small call's build time.
    Outside a body a follower is the API itself (`_following`)."""
    from paddle.utils import inplace_utils

    if scope.current().apis_followed:
        yield
        return
    with scope.entered(apis_followed=True), patch.swapped_all("inplace.apis", _swaps()), \
            contextlib.ExitStack() as stack:
        if not isinstance(inplace_utils.warnings, _LoudWarnings):
            stack.enter_context(
                patch.swapped("inplace.warnings", inplace_utils, "warnings", _LoudWarnings(inplace_utils.warnings)))
        yield


@contextlib.contextmanager
def followed(body: scope.Body) -> Iterator[None]:
    """While `body` is built: in-place APIs write as eager's do (see the module docstring);
    in forward, `body.foreign` (the op's inputs) may not be written into."""
    with followers_installed(), scope.entered(body=body):
        yield
