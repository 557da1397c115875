"""Paddle's `recompute` in a static graph: one `pylayer` op that re-runs its function in backward.

`paddle.distributed.fleet.utils.recompute(function, *args, **kwargs)` (and `recompute_sequential`,
which calls it per segment) keeps only a block's inputs and runs the block again in backward,
to save activation memory. Its eager implementations do not build a static graph (paddle 3.3.1
and 2.6.2 python/paddle/distributed/fleet/recompute/recompute.py): `RecomputeFunction` reads the
tracer (`_has_grad`), accumulates `.grad` with `paddle.autograd.backward` and reads it back with
`_grad_ivar`; the non-reentrant form hooks eager's saved tensors. Outside dynamic mode 3.3.1
hands the function to auto-parallel's recompute marker (`auto_parallel/interface.py`), which
`paddle.jit.to_static` never acts on (no recompute in the program: the memory is spent), and
2.6.2 fails on the missing tracer (`AttributeError: 'NoneType' object has no attribute
'_has_grad'`).

So while a static graph is built (not in dynamic mode, not auto-parallel's own static mode), the
runtime's `recompute` builds `StaticRecompute`, a CheckpointFunction-style PyLayer, through
`builders.build_call`: forward runs the function under `no_grad` and saves its tensor arguments;
backward detaches them, runs the function again under `enable_grad` and returns `paddle.grad` of
its outputs over the arguments that need a gradient and over the parameters the function holds
(a Layer, a bound method's Layer, what a `functools.partial`, a closure or the module-level names
a function reads hold: `_parameters`),
which are the op's inputs too, so autodiff gives them the gradients. A parameter the function
reads that is none of those fails the build, naming it (`op.py`: backward reads a tensor that
reaches it neither as an argument nor through ctx). Its backward waits for its output gradients
before re-running (`op.py`, `core/regrad.py`), so one block's activations live at a time.

`use_reentrant` chooses between eager's two implementations, whose gradients are the same; in a
static graph both are this op. `preserve_rng_state` keeps a random op's draw equal in the re-run;
a static graph draws again, so a function whose re-run holds a random op (dropout) is refused
(`_refuse_random_ops`) rather than given another mask in backward than in forward. Keyword
arguments other than recompute's own go to the function, as in eager. In dynamic mode `recompute`
is Paddle's own.

Under SOT (`to_static(full_graph=False)`), which simulates the caller in dynamic mode, Paddle's
own would be simulated too: the non-reentrant form inlined (its saving silently lost), the
reentrant one a graph break at its `inspect.signature` (the block run eagerly). So where SOT can
record a call (`paddle.jit.marker.unified`, paddle 3.3.1) both functions are marked
(`sot.built_in_graph`): SOT records `recompute(function, *args, **kwargs)` as one call of its
graph, the tensor arguments its symbolic inputs, and builds it, not in dynamic mode, as above,
so the op is in SOT's graph. The function's parameters are read as under AST: as program
parameters through dy2static's parameter recorder (SOT infers the call's meta, and compiles its
graph, under `graph_tracing_guard`), the op's inputs, and so the values the re-run reads and
`paddle.grad` differentiates over; they need not be SOT's inputs. A parameter SOT's own code
also reads outside the call (a tied weight) is then two values of the program with one tensor's
data, each giving its gradient to the one eager parameter, which adds them up. A function
holding a random op is no error there: SOT breaks its graph at that call, which runs eagerly,
with eager's restored random state. Without the marker (2.6.2) SOT simulates Paddle's own and
breaks in it.
"""
import functools
import types
from typing import Any, Dict, Iterator, List, Tuple

import paddle

from . import builders, framework, patch, sot
from .core.errors import PyLayerContractError

_OWN_KEYWORDS = ("use_reentrant", "preserve_rng_state", "offload_indices")
_RANDOM_OPS = frozenset({
    "dropout", "fused_dropout_add", "uniform", "uniform_random", "gaussian", "gaussian_random",
    "randint", "randperm", "bernoulli", "multinomial", "rrelu", "truncated_gaussian_random",
    "class_center_sample", "poisson", "exponential_", "random_routing",
})
_DEPTH = 4


def _layers_in(value: Any, depth: int) -> Iterator[Any]:
    """The Layers `value` holds: itself, a bound method's instance, a partial's function and
    arguments, a function's closure cells and the module-level names it reads, the items of a
    list, tuple or dict."""
    if depth < 0 or value is None:
        return
    if isinstance(value, paddle.nn.Layer):
        yield value
    elif isinstance(value, types.MethodType):
        yield from _layers_in(value.__self__, depth - 1)
    elif isinstance(value, functools.partial):
        for inner in (value.func, *value.args, *value.keywords.values()):
            yield from _layers_in(inner, depth - 1)
    elif isinstance(value, types.FunctionType):
        for cell in value.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            yield from _layers_in(contents, depth - 1)
        for name in value.__code__.co_names:  # the module-level names it reads
            if name in value.__globals__:
                yield from _layers_in(value.__globals__[name], depth - 1)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _layers_in(inner, depth - 1)
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _layers_in(inner, depth - 1)


def _parameters(function: Any) -> List[Any]:
    """The trainable parameters of the Layers `function` holds, each once, in their order."""
    seen = set()
    params = []
    for layer in _layers_in(function, _DEPTH):
        for param in layer.parameters():
            if not param.stop_gradient and id(param) not in seen:
                seen.add(id(param))
                params.append(param)
    return params


@paddle.jit.not_to_static
def _refuse_random_ops(function: Any) -> None:
    """Refuse a function whose run, just built, holds a random op: its re-run in backward
    would draw anew, where eager's recompute restores the random state."""
    random = sorted(set(framework.block_ops_named(_RANDOM_OPS)))
    if random:
        raise PyLayerContractError(
            f"recompute({getattr(function, '__qualname__', type(function).__name__)}): the function "
            f"draws random numbers ({', '.join(random)}); in a static graph its re-run in backward "
            "would draw anew, where eager's recompute restores the random state: keep random ops "
            "(dropout) out of the recomputed function, or make them deterministic (p=0, eval mode)"
        )


@paddle.jit.not_to_static
def _call(function: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    return function(*args, **kwargs)


class StaticRecompute(paddle.autograd.PyLayer):
    """`recompute(function, *args, **kwargs)` as one op: `tensors` are the tensors of the
    arguments, then the function's parameters; `arguments` says where each goes (`_Arguments`)."""

    @staticmethod
    def forward(ctx: Any, function: Any, arguments: "_Arguments", *tensors: Any) -> Any:
        ctx.function = function
        ctx.arguments = arguments
        ctx.save_for_backward(*tensors)
        with paddle.no_grad():
            out = _call(function, *arguments.call(list(tensors)))
        _refuse_random_ops(function)
        return out

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        saved = list(ctx.saved_tensor())
        arguments = ctx.arguments
        inputs = []
        for value in saved[: arguments.count]:
            detached = value.detach()
            detached.stop_gradient = value.stop_gradient
            inputs.append(detached)
        params = saved[arguments.count:]
        with paddle.enable_grad():
            out = _call(ctx.function, *arguments.call(inputs + params))
        outputs = [o for o in (out if isinstance(out, (list, tuple)) else [out]) if _is_tensor(o)]
        pairs = [(o, g) for o, g in zip(outputs, grads) if not o.stop_gradient]
        wanted = [t for t in inputs if not t.stop_gradient] + params
        found = list(paddle.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True)) \
            if pairs and wanted else [None] * len(wanted)
        result = [None if t.stop_gradient else found.pop(0) for t in inputs]
        # A parameter the function holds but did not use gets zeros, not None: autodiff cannot add
        # a null gradient to the one the parameter gets elsewhere (paddle 3.3.1 `add_n`).
        result += [paddle.zeros_like(p) if g is None else g for p, g in zip(params, found)]
        return tuple(result)


class _Arguments:
    """Where `recompute`'s arguments go: the positional and keyword arguments of the function,
    with each tensor's place, in them or in the tuples, lists and dicts they hold (a layer's
    `position_embeddings=(cos, sin)`), taken by the op's tensor of that index."""

    def __init__(self, args: Tuple[Any, ...], kwargs: Dict[str, Any], is_tensor: Any) -> None:
        self.tensors: List[Any] = []
        self.args = [self._place(a, is_tensor) for a in args]
        self.kwargs = {k: self._place(v, is_tensor) for k, v in kwargs.items()}
        self.count = len(self.tensors)

    def _place(self, value: Any, is_tensor: Any) -> Any:
        if is_tensor(value):
            self.tensors.append(value)
            return _Slot(len(self.tensors) - 1)
        if isinstance(value, (tuple, list)):
            return _rebuilt(value, [self._place(v, is_tensor) for v in value])
        if isinstance(value, dict):
            return {k: self._place(v, is_tensor) for k, v in value.items()}
        return value

    def call(self, tensors: List[Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        def fill(value: Any) -> Any:
            if isinstance(value, _Slot):
                return tensors[value.index]
            if isinstance(value, (tuple, list)):
                return _rebuilt(value, [fill(v) for v in value])
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            return value

        return tuple(fill(a) for a in self.args), {k: fill(v) for k, v in self.kwargs.items()}


def _rebuilt(value: Any, items: List[Any]) -> Any:
    """A list or tuple of `value`'s type holding `items` (a named tuple takes them one by one)."""
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


class _Slot:
    def __init__(self, index: int) -> None:
        self.index = index


def _is_tensor(value: Any) -> bool:
    return isinstance(value, (paddle.Tensor, *framework.static_types()))


def _in_auto_parallel_static() -> bool:
    """Whether auto-parallel's own static mode builds the program (paddle 3.x `ProcessMesh` sets
    `global_var._in_auto_parallel_`): its recompute marker is then the framework's to act on."""
    return bool(getattr(paddle.base.framework.global_var, "_in_auto_parallel_", False))


def _built(function: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """`recompute(function, *args, **kwargs)` as one `StaticRecompute` op, recompute's own
    keywords left out."""
    kwargs = {k: v for k, v in kwargs.items() if k not in _OWN_KEYWORDS}
    arguments = _Arguments(args, kwargs, _is_tensor)
    return builders.build_call(StaticRecompute, (function, arguments, *arguments.tensors, *_parameters(function)), {})


def static_recompute(eager: Any) -> Any:
    """`recompute` as Paddle's `eager` one in dynamic mode, else as one `StaticRecompute` op."""

    @sot.built_in_graph
    @functools.wraps(eager)
    def recompute(function: Any, *args: Any, **kwargs: Any) -> Any:
        if paddle.in_dynamic_mode() or _in_auto_parallel_static():
            return eager(function, *args, **kwargs)
        return _built(function, args, kwargs)

    return recompute


def static_recompute_sequential(eager: Any) -> Any:
    """`recompute_sequential` as Paddle's `eager` one in dynamic mode, else each segment but the
    last one `StaticRecompute` op, its output the next segment's input. Eager's passes the last
    segment `*args` of the previous segment's output tensor (paddle 3.3.1: its rows, a
    TypeError or a wrong result) or `args` as a tuple (2.6.2, with one segment): here a segment
    takes the one tensor it is given, as the function's documentation says."""

    @sot.built_in_graph
    @functools.wraps(eager)
    def recompute_sequential(ctx: Dict[str, Any], functions: Any, *args: Any, **kwargs: Any) -> Any:
        if paddle.in_dynamic_mode() or _in_auto_parallel_static():
            return eager(ctx, functions, *args, **kwargs)
        segments = ctx.get("segments", 1)
        layers = list(functions.children()) if isinstance(functions, paddle.nn.Sequential) else list(functions)
        size = len(layers) // segments

        def run(begin: int, end: int) -> Any:
            segment = layers[begin:end + 1]  # what the op's parameters are read from (`_parameters`)

            def do_run(value: Any) -> Any:
                for layer in segment:
                    value = layer(value)
                return value

            return do_run

        end = -1
        for begin in range(0, size * (segments - 1), size):
            end = begin + size - 1
            args = (_built(run(begin, end), args, kwargs),)
        return run(end + 1, len(layers) - 1)(*args)

    return recompute_sequential


_PATCHED = (
    ("recompute.fleet.recompute.recompute", "paddle.distributed.fleet.recompute.recompute"),
    ("recompute.fleet.recompute", "paddle.distributed.fleet.recompute"),
    ("recompute.incubate.fleet.recompute", "paddle.incubate.distributed.fleet"),
)
_PATCHED_SEQUENTIAL = (
    ("recompute.fleet.recompute.recompute_sequential", "paddle.distributed.fleet.recompute.recompute"),
    ("recompute.fleet.recompute_sequential", "paddle.distributed.fleet.recompute"),
    ("recompute.incubate.fleet.recompute_sequential", "paddle.incubate.distributed.fleet"),
)


def install() -> None:
    """Replace `recompute` and `recompute_sequential` where Paddle defines and re-exports them
    (`fleet.utils.recompute` calls the package's `recompute`)."""
    import importlib

    for key, name in _PATCHED:
        module = importlib.import_module(name)
        if hasattr(module, "recompute"):
            patch.install(key, module, "recompute", static_recompute)
    for key, name in _PATCHED_SEQUENTIAL:
        module = importlib.import_module(name)
        if hasattr(module, "recompute_sequential"):
            patch.install(key, module, "recompute_sequential", static_recompute_sequential)
