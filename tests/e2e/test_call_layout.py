"""The runtime's Paddle-free parts: the call layout (layout.py) and the patch table (patch.py),
on plain Python values (a stand-in tensor class), no program built."""
import os
import types

import pytest

import pylayer2static_runtime as p2s
from pylayer2static_runtime import patch
from pylayer2static_runtime.core import layout
from pylayer2static_runtime.core.errors import PyLayerContractError


class T:
    """A stand-in tensor."""

    def __init__(self, name: str, shape=(2,)) -> None:
        self.name = name
        self.shape = list(shape)

    def __repr__(self) -> str:
        return self.name


def is_tensor(value) -> bool:
    return isinstance(value, T)


class Affine:
    """A PyLayer's shape, as the layout reads it: forward's signature."""

    @staticmethod
    def forward(ctx, x, /, w, b, *, scale, shift=0.5):
        return x


def builder(x, w, b, *, scale, shift=p2s.DEFAULT):
    """What pylayer2static generates for Affine (tests/golden/*/expected.py)."""
    return layout.CallLayout(Affine, (x, w, b), {"scale": scale, "shift": shift})


def through_apply(*args, **kwargs):
    """The call as `apply` makes it: the arguments marked, then the builder's binding."""
    marked_args, marked_kwargs = layout.written(args, kwargs)
    return builder(*marked_args, **marked_kwargs)


def test_forward_gets_the_builders_binding_with_defaults_resolved() -> None:
    x, w, b = T("x"), T("w"), T("b")
    call = through_apply(x, b=b, scale=2.0, w=w)
    args, kwargs = call.forward_call(call.arguments)
    assert args == (x, w, b)
    assert kwargs == {"scale": 2.0, "shift": 0.5}


def test_arguments_keep_the_order_written_which_eager_gives_gradients_in() -> None:
    x, w, b = T("x"), T("w"), T("b")
    call = through_apply(x, b=b, scale=2.0, w=w)
    assert call.arguments == [x, b, 2.0, w]
    assert call.labels == ["argument 1", "argument 'b'", "argument 'scale'", "argument 'w'"]


def test_the_call_as_written_comes_back_for_reload_to_make_again() -> None:
    x, w, b = T("x"), T("w"), T("b")
    call = through_apply(x, b=b, scale=2.0, w=w)
    assert call.written_call(call.arguments) == ((x,), {"b": b, "scale": 2.0, "w": w})


def test_forward_call_takes_the_arguments_replaced() -> None:
    call = through_apply(T("x"), b=T("b"), scale=2.0, w=T("w"))
    x2, b2, w2 = T("x2"), T("b2"), T("w2")
    args, kwargs = call.forward_call([x2, b2, 3.0, w2])
    assert args == (x2, w2, b2)
    assert kwargs == {"scale": 3.0, "shift": 0.5}


def test_a_default_left_out_is_no_argument_and_one_passed_is() -> None:
    x, w, b = T("x"), T("w"), T("b")
    assert len(through_apply(x, w, b, scale=1.0).arguments) == 4
    assert through_apply(x, w, b, scale=1.0, shift=0.0).arguments[-1] == 0.0


def test_the_call_used_directly_is_the_call_as_written() -> None:
    x, w, b = T("x"), T("w"), T("b")
    call = layout.CallLayout(Affine, (x,), {"b": b, "w": w, "scale": 1.0})
    assert call.arguments == [x, b, w, 1.0]
    assert call.forward_call(call.arguments) == ((x,), {"b": b, "w": w, "scale": 1.0})
    assert call.labels[0] == "argument 1"


def test_default_without_a_default_and_a_call_forward_refuses_are_contract_errors() -> None:
    with pytest.raises(PyLayerContractError, match="forward parameter 'w' has no default"):
        layout.CallLayout(Affine, (T("x"), p2s.DEFAULT, T("b")), {"scale": 1.0})
    with pytest.raises(PyLayerContractError, match="cannot call forward"):
        layout.CallLayout(Affine, (T("x"),), {})


def test_flat_slots_follow_eager() -> None:
    a, b, c, d = T("a"), T("b"), T("c"), T("d")
    flat = layout.flat_slots([a, [b, (c,)], 3, {"k": d}], is_tensor)
    assert flat.leaves == [a, b, c, 3, d]
    assert flat.positions == [0, 1, 2, 4]
    # a list slot holds only the tensors directly in it; the dict's tensor has no slot
    assert flat.slots == [layout.Slot(0, False, (0,)), layout.Slot(1, True, (1,))]
    assert flat.with_tensors([d, c, b, a]) == [d, c, b, 3, a]


def test_output_gradients_grouped_per_slot_and_repeats_in_their_last_place() -> None:
    slots = [layout.Slot(0, False, (0,)), layout.Slot(1, True, (1, 2))]
    assert layout.slot_gradients(["g0", "g1", "g2"], slots) == ["g0", ["g1", "g2"]]
    y, z = T("y"), T("z")
    assert layout.last_places([y, z, y], lambda p, q: p is q) == [2, 1, 2]
    assert layout.result_items((y, z)) == [y, z] and layout.result_items(y) == [y]


def test_shapes_conflict_only_where_known() -> None:
    assert layout.shapes_conflict([2, 3], [2, 4])
    assert layout.shapes_conflict([2], [2, 1])
    assert not layout.shapes_conflict([-1, 3], [2, 3])
    assert not layout.shapes_conflict(None, [2])


def test_every_listed_patch_is_made_by_its_module() -> None:
    runtime = os.path.dirname(patch.__file__)
    for key, listed in patch.PATCHES.items():
        with open(os.path.join(runtime, listed.module), encoding="utf-8") as f:
            assert f'"{key}"' in f.read(), f"{key} is listed but {listed.module} never makes it"
        assert listed.scope in ("process", "build") and "paddle" in listed.read_from


def test_a_patch_not_listed_is_refused() -> None:
    owner = types.SimpleNamespace(f=len)
    with pytest.raises(KeyError):
        patch.install("no.such.patch", owner, "f", lambda f: f)
    with pytest.raises(KeyError):
        with patch.swapped("no.such.patch", owner, "f", abs):
            pass
    assert owner.f is len


def test_install_is_once_and_swapped_restores_what_was_there() -> None:
    owner = types.SimpleNamespace(f=len)
    patch.install("body.autograd_backward", owner, "f", lambda f: lambda *a: ("wrapped", f(*a)))
    first = owner.f
    patch.install("body.autograd_backward", owner, "f", lambda f: lambda *a: ("twice", f(*a)))
    assert owner.f is first and owner.f([1]) == ("wrapped", 1)

    class Base:
        def m(self):
            return "base"

    class Kind(Base):
        pass

    with patch.swapped("eager_only.no_data", Kind, "m", lambda self: "swapped"):
        assert Kind().m() == "swapped"
    assert "m" not in vars(Kind) and Kind().m() == "base"
