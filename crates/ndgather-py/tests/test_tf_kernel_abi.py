"""The C ABI that TensorFlow's op kernels call (``tf_kernel.rs``), and PyTorch's C++ kernel
(``torch_kernel.rs``), called here through ctypes as ``_tf_op.cc`` and ``_torch_op.cc`` call
them, with neither framework: results, and every hostile call refused with a message and a
status code (PyTorch's: an exception class), never a crash. The structs mirror
``_tf_op.cc``'s."""

import ctypes as C

import numpy as np
import pytest

from ndgather import _core

INVALID_ARGUMENT = 3
# The class numbers of the PyTorch kernel's failures (errors.rs's `Class::builtin`).
RUNTIME_ERROR, VALUE_ERROR, INDEX_ERROR, TYPE_ERROR, MEMORY_ERROR = 1, 2, 3, 4, 6
# TensorFlow's DataType numbers of the dtypes used here.
TF = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3,
      np.dtype(np.int64): 9, np.dtype(np.bool_): 10}
NP = {v: k for k, v in TF.items()}


class Buffer(C.Structure):
    _fields_ = [("dtype", C.c_int32), ("rank", C.c_int64), ("dims", C.POINTER(C.c_int64)),
                ("data", C.c_void_p)]


class Call(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("op", C.c_char_p),
                ("attr_names", C.POINTER(C.c_char_p)), ("attr_values", C.POINTER(C.c_char_p)),
                ("attrs", C.c_int64), ("arity", C.POINTER(C.c_int64)), ("arities", C.c_int64),
                ("args", C.POINTER(Buffer)), ("n_args", C.c_int64),
                ("rets", C.POINTER(Buffer)), ("n_rets", C.c_int64), ("out_dtype", C.c_int32),
                ("error", C.c_void_p), ("error_len", C.c_size_t)]


ALLOCATE = C.CFUNCTYPE(C.c_int32, C.c_void_p, C.c_int64, C.POINTER(C.c_int64),
                       C.POINTER(C.c_void_p))
LIB = C.CDLL(_core.__file__)
LIB.ndgather_tf_forward.argtypes = [C.c_void_p, C.c_void_p, ALLOCATE]
LIB.ndgather_tf_forward.restype = C.c_int32
LIB.ndgather_tf_backward.argtypes = [C.c_void_p]
LIB.ndgather_tf_backward.restype = C.c_int32


def test_the_extension_exports_both_kernels():
    forward, backward = _core.tf_kernels()
    assert forward == C.cast(LIB.ndgather_tf_forward, C.c_void_p).value
    assert backward == C.cast(LIB.ndgather_tf_backward, C.c_void_p).value


class Caller:
    """One call's memory, kept alive until the call returns."""

    def __init__(self, op, args, attrs=(), arity=None, out=np.float32, rets=()):
        self.keep = []
        self.error = C.create_string_buffer(512)
        names = (C.c_char_p * max(len(attrs), 1))(*[n.encode() for n, _ in attrs])
        values = (C.c_char_p * max(len(attrs), 1))(*[v.encode() for _, v in attrs])
        arity = [1] * len(args) if arity is None else arity
        self.arity = (C.c_int64 * max(len(arity), 1))(*arity)
        self.args = self.buffers(args)
        self.rets = self.buffers(rets)
        self.call = Call(C.sizeof(Call), op if isinstance(op, bytes) else op.encode(), names,
                         values, len(attrs), self.arity, len(arity), self.args, len(args),
                         self.rets, len(rets), TF.get(np.dtype(out), 7), C.addressof(self.error), 512)
        self.keep += [names, values]
        self.result = None

    def buffers(self, arrays):
        out = (Buffer * max(len(arrays), 1))()
        for k, a in enumerate(arrays):
            dims = (C.c_int64 * max(a.ndim, 1))(*a.shape)
            self.keep += [a, dims]
            out[k] = Buffer(TF.get(a.dtype, 7), a.ndim, dims, a.ctypes.data)
        return out

    def forward(self, allocate=None):
        def default(_ctx, rank, dims, data):
            shape = [dims[k] for k in range(rank)]
            self.result = np.full(shape, -7, NP[self.call.out_dtype])
            data[0] = self.result.ctypes.data
            return 0
        self.callback = ALLOCATE(allocate or default)
        return LIB.ndgather_tf_forward(C.byref(self.call), None, self.callback)

    def message(self):
        return self.error.value.decode()


def test_a_gather_runs_into_the_allocated_result():
    params = np.arange(12, dtype=np.float32).reshape(3, 4)
    ids = np.array([2, 0, 7], np.int64)
    c = Caller("gather", [params, ids], [("axis", "1"), ("bad_indices", "clamp")])
    assert c.forward() == 0, c.message()
    np.testing.assert_array_equal(c.result, params[:, [2, 0, 3]])


def test_a_shape_from_values_runs_into_a_new_tensor_then_the_result():
    c = Caller("segment_sum", [np.array([1.0, 2.0, 4.0], np.float32),
                               np.array([0, 0, 3], np.int32)])
    assert c.forward() == 0, c.message()
    np.testing.assert_array_equal(c.result, [3.0, 0.0, 0.0, 4.0])


@pytest.mark.parametrize("backward, refused_with", [
    ("ndgather_tf_backward", INVALID_ARGUMENT),  # TensorFlow's status code
    ("ndgather_torch_backward", VALUE_ERROR),  # PyTorch's kernel's class number
])
def test_the_gradient_is_written_into_the_given_buffers(backward, refused_with):
    backward = getattr(LIB, backward)
    params = np.arange(6, dtype=np.float64).reshape(3, 2)
    ids = np.array([1, 1], np.int32)
    out = params[ids]
    grad = np.zeros_like(params)
    c = Caller("gather", [params, ids, out, np.ones_like(out)], arity=[1, 1], rets=[grad])
    assert backward(C.byref(c.call)) == 0, c.message()
    np.testing.assert_array_equal(grad, [[0, 0], [2, 2], [0, 0]])
    # One result per input with a gradient: none more.
    c = Caller("gather", [params, ids, out, np.ones_like(out)], arity=[1, 1],
               rets=[grad, grad.copy()])
    assert backward(C.byref(c.call)) == refused_with
    assert "one per input with a gradient" in c.message()
    assert backward(None) == refused_with


def refused(c, match, allocate=None):
    code = c.forward(allocate)
    assert code == INVALID_ARGUMENT, (code, c.message())
    assert match in c.message(), c.message()


def test_hostile_calls_are_refused_with_a_message():
    f32, ids = np.ones((2, 2), np.float32), np.array([0], np.int64)
    refused(Caller("gahter", [f32, ids]), "gather_nd")
    refused(Caller(b"\xff\xfe", [f32, ids]), "not UTF-8")
    refused(Caller("gather", [f32, ids], [("axis", "x")]), 'attribute "axis" takes an integer')
    refused(Caller("gather", [f32, ids], [("colour", "red")]), "colour")
    refused(Caller("gather", [f32, ids], arity=[2]), "takes one tensor")
    refused(Caller("gather", [f32, ids], arity=[1, 1, 1]), "arities")
    refused(Caller("gather", [f32, ids], arity=[-1, 3]), "negative arities")
    refused(Caller("gather", [np.array(["a"]), ids]), "strings")
    c = Caller("gather", [f32, ids])
    c.args[0].rank = -1
    refused(c, "argument 0: -1 of them")
    dims = (C.c_int64 * 2)(-2, 3)
    c = Caller("gather", [f32, ids])
    c.args[0].dims = dims
    refused(c, "dimensions [-2, 3]")
    dims = (C.c_int64 * 2)(1 << 62, 1 << 62)
    c = Caller("gather", [f32, ids])
    c.args[0].dims = dims
    refused(c, "overflows")
    c = Caller("gather", [f32, ids])
    c.args[0].data = None
    refused(c, "no data")
    c = Caller("gather", [f32, ids])
    c.call.attrs = 1 << 40
    c.call.attr_names = None
    refused(c, "attribute names")
    c = Caller("gather", [f32, ids], out=np.int32)
    refused(c, "dtype")


def test_a_result_over_an_argument_is_refused():
    params = np.arange(8, dtype=np.float32)
    ids = np.array([1, 2], np.int64)
    c = Caller("gather", [params, ids])

    def over_params(_ctx, rank, dims, data):
        data[0] = params.ctypes.data
        return 0
    refused(c, "shares memory", over_params)
    np.testing.assert_array_equal(params, np.arange(8, dtype=np.float32))


def test_a_result_over_an_argument_is_refused_where_values_give_its_shape():
    data = np.array([1.0, 2.0, 4.0], np.float32)
    c = Caller("segment_sum", [data, np.array([0, 0, 1], np.int32)])

    def over_data(_ctx, rank, dims, out):
        out[0] = data.ctypes.data
        return 0
    refused(c, "shares memory", over_data)
    np.testing.assert_array_equal(data, [1.0, 2.0, 4.0])


def test_an_allocation_failure_keeps_its_code():
    c = Caller("gather", [np.ones(3, np.float32), np.array([0], np.int64)])
    assert c.forward(lambda *_: 8) == 8  # RESOURCE_EXHAUSTED


def test_a_short_struct_or_none_is_refused_and_the_message_fits_its_buffer():
    assert LIB.ndgather_tf_forward(None, None, ALLOCATE(lambda *_: 0)) == INVALID_ARGUMENT
    assert LIB.ndgather_tf_backward(None) == INVALID_ARGUMENT
    c = Caller("gather", [np.ones(3, np.float32), np.array([0], np.int64)])
    c.call.struct_size = 8
    assert c.forward() == INVALID_ARGUMENT
    c = Caller("gahter", [np.ones(3, np.float32), np.array([0], np.int64)])
    small = C.create_string_buffer(b"\x01" * 8)
    c.call.error, c.call.error_len = C.addressof(small), 5
    assert c.forward() == INVALID_ARGUMENT
    assert small.raw[4] == 0 and small.raw[5:] == b"\x01\x01\x01\x00"


# PyTorch's kernel: the allocation is told the dtype; a failure's number is its class.
TORCH_ALLOCATE = C.CFUNCTYPE(C.c_int32, C.c_void_p, C.c_int32, C.c_int64,
                             C.POINTER(C.c_int64), C.POINTER(C.c_void_p))
LIB.ndgather_torch_forward.argtypes = [C.c_void_p, C.c_void_p, TORCH_ALLOCATE]
LIB.ndgather_torch_forward.restype = C.c_int32


def torch_forward(c, allocate=None):
    def default(_ctx, dtype, rank, dims, data):
        c.result = np.full([dims[k] for k in range(rank)], -7, NP[dtype])
        data[0] = c.result.ctypes.data
        return 0
    c.callback = TORCH_ALLOCATE(allocate or default)
    return LIB.ndgather_torch_forward(C.byref(c.call), None, c.callback)


def test_the_extension_exports_the_pytorch_kernel():
    assert _core.torch_kernel() == tuple(
        C.cast(f, C.c_void_p).value for f in (LIB.ndgather_torch_forward,
                                             LIB.ndgather_torch_backward,
                                             LIB.ndgather_kernel_has_grad,
                                             LIB.ndgather_kernel_grad_reads_output,
                                             LIB.ndgather_kernel_linear))


LIB.ndgather_kernel_linear.argtypes = [C.c_void_p, C.POINTER(C.c_int32), C.c_char_p,
                                       C.c_size_t]
LIB.ndgather_kernel_linear.restype = C.c_int32


def linear(op, args, attrs=(), arity=None, size=256):
    """The ABI's linear fact of a call: (status, linear flag, the tangent's attributes)."""
    c = Caller(op, args, attrs, arity)
    flag, text = C.c_int32(-5), C.create_string_buffer(b"\xff" * size, size)
    status = LIB.ndgather_kernel_linear(C.byref(c.call), C.byref(flag), text, size)
    return status, flag.value, text.value.decode(errors="replace"), c.error.value.decode()


def test_the_linear_fact_that_the_gradient_op_differentiates_by():
    table, ids = np.ones((4, 2), np.float32), np.array([3, 0], np.int64)
    assert linear("gather", [table, ids], [("batch_dims", "0")])[:3] == (0, 1, "batch_dims=0")
    # A fill is constant: the tangent's slice is zero.
    assert linear("gather", [table, ids], [("bad_indices", "fill"), ("fill_value", "2.5")]
                  )[:3] == (0, 1, "bad_indices=fill;fill_value=0")
    # Not linear: a max; a weight with a gradient outside the linear inputs; an update.
    segs = np.array([0, 1, 0, 1], np.int64)
    assert linear("unsorted_segment_max", [table, segs], [("num_segments", "2")])[:2] == (0, 0)
    bags = np.array([[3, 0]], np.int64)
    assert linear("embedding_bag", [table, bags, np.ones((1, 2), np.float32)],
                  [("mode", "sum")], arity=[1, 1, 0, 1])[:2] == (0, 0)
    assert linear("embedding_bag", [table, bags], [("mode", "sum")],
                  arity=[1, 1, 0, 0])[:2] == (0, 1)
    rows = np.array([[1]], np.int64)
    assert linear("tensor_scatter_nd_update", [table, rows, np.ones((1, 2), np.float32)]
                  )[:2] == (0, 0)
    assert linear("tensor_scatter_nd_add", [table, rows, np.ones((1, 2), np.float32)]
                  )[:2] == (0, 1)


def test_the_linear_fact_refuses_a_hostile_call():
    table, ids = np.ones((4, 2), np.float32), np.array([3, 0], np.int64)
    status, _, _, error = linear("gather", [table, ids], [("fill_value", "1.5")], size=8)
    assert status == VALUE_ERROR and "past the 8 given" in error
    status, _, _, error = linear("gahter", [table, ids])
    assert status != 0 and "gahter" in error
    status, _, _, error = linear("gather", [table, ids], [("batch_dims", "x")])
    assert status == VALUE_ERROR and "batch_dims" in error
    c = Caller("gather", [table, ids])
    for flag, text, size in ((None, C.create_string_buffer(8), 8),
                             (C.byref(C.c_int32()), None, 8),
                             (C.byref(C.c_int32()), C.create_string_buffer(8), 0)):
        assert LIB.ndgather_kernel_linear(C.byref(c.call), flag, text, size) == VALUE_ERROR
    assert LIB.ndgather_kernel_linear(None, C.byref(C.c_int32()), C.create_string_buffer(8),
                                      8) != 0


def test_which_inputs_get_a_gradient_and_which_gradients_read_the_output():
    has_grad = LIB.ndgather_kernel_has_grad
    has_grad.argtypes, has_grad.restype = [C.c_int32], C.c_int32
    assert [has_grad(code) for code in (1, 2, 19, 14, 8, 3, 9, 10, 25)] == \
        [1, 1, 1, 1, 1, 0, 0, 0, 0]
    assert [has_grad(code) for code in (0, 7, 999, -1)] == [-1] * 4  # (7 is TF's string)
    reads = LIB.ndgather_kernel_grad_reads_output
    reads.argtypes, reads.restype = [C.c_char_p], C.c_int32
    assert [reads(n) for n in (b"gather", b"unsorted_segment_max", b"segment_prod")] == \
        [0, 1, 1]
    assert [reads(n) for n in (None, b"gahter", b"\xff\xfe", b"")] == [-1] * 4


def test_the_pytorch_kernel_allocates_the_inferred_dtype():
    params = np.arange(6, dtype=np.float64).reshape(3, 2)
    c = Caller("gather", [params, np.array([2, 0], np.int32)], out=np.int32)
    assert torch_forward(c) == 0, c.message()
    assert c.result.dtype == np.float64
    np.testing.assert_array_equal(c.result, params[[2, 0]])
    c = Caller("segment_sum", [np.array([True, False]), np.array([0, 2], np.int64)])
    assert torch_forward(c) == VALUE_ERROR and "attr 'T' of bool" in c.message()
    c = Caller("segment_max", [np.array([1, 5, 2], np.int32), np.array([0, 0, 2], np.int64)])
    assert torch_forward(c) == 0, c.message()
    np.testing.assert_array_equal(c.result, [5, 0, 2])  # (TensorFlow: 0 for an empty segment)
    assert c.result.dtype == np.int32


def test_the_pytorch_kernels_failures_are_numbered_by_class():
    f32 = np.ones((2, 2), np.float32)
    cases = [
        (Caller("gather", [f32, np.array([0, 9], np.int64)]), VALUE_ERROR, "is not in [0, 2)"),
        (Caller("gather", [f32, np.array([0.5])]), TYPE_ERROR, "indices"),
        (Caller("gahter", [f32, np.array([0], np.int64)]), VALUE_ERROR, "gather_nd"),
        (Caller("take_along_axis", [f32, np.array([[0.5]])], [("axis", "1")]), INDEX_ERROR,
         "integer"),
        (Caller("scatter_reduce", [f32, np.array([[0]]), f32[:1]],
                [("dim", "0"), ("reduce", "average")]), RUNTIME_ERROR, "reduce argument"),
    ]
    for c, code, match in cases:
        assert torch_forward(c) == code, (code, c.message())
        assert match in c.message(), c.message()
    c = Caller("gather", [f32, np.array([0], np.int64)])
    assert torch_forward(c, lambda *_: 1) == MEMORY_ERROR
    assert "could not allocate" in c.message()
    assert LIB.ndgather_torch_forward(None, None, TORCH_ALLOCATE(lambda *_: 0)) == VALUE_ERROR
    c.call.struct_size = 8
    assert torch_forward(c) == VALUE_ERROR


def test_a_cxx_that_is_no_command_is_a_clear_error(monkeypatch):
    from ndgather import _native_build
    monkeypatch.setenv("CXX", "g++ '")
    with pytest.raises(RuntimeError, match="cannot be read as a command"):
        _native_build.compiler("PyTorch op")


def test_an_empty_result_of_a_huge_dimension_is_made_by_both_kernels():
    # Zero elements, however long the other axis: no overflow, wherever the zero sits.
    # (NumPy refuses such an array itself: the allocation records the shape it is asked.)
    data, seg = np.zeros((6, 0), np.float32), np.array([0, 1, 0, 1, 2, 2], np.int64)
    home = np.zeros(1, np.float32)
    for forward in (Caller.forward, torch_forward):
        c = Caller("unsorted_segment_sum", [data, seg], [("num_segments", str(2 ** 62))])

        def empty(*args):
            _, rank, dims, out = args[0], args[-3], args[-2], args[-1]
            c.asked = [dims[k] for k in range(rank)]
            out[0] = home.ctypes.data
            return 0
        assert forward(c, empty) == 0, c.message()
        assert c.asked == [2 ** 62, 0]
    c = Caller("unsorted_segment_sum", [np.zeros((6, 3), np.float32), seg],
               [("num_segments", str(2 ** 62))])
    assert torch_forward(c) == VALUE_ERROR and "overflows the address space" in c.message()
