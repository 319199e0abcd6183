// ndgather's op as a C++ kernel of PyTorch (issue 55): the CPU kernel of the custom ops
// `ndgather::op_native` and `op_native_with_grad`, which `ndgather._torch` defines and calls
// under `torch.compile`, so
// that compiled code calls the core with no Python body between. `ndgather._torch` compiles
// this file on demand against the installed PyTorch and links it to ndgather's extension,
// whose C ABI (`torch_kernel.rs`) runs any op of the registry by name. Every check of the
// op's inputs and attributes is the core's; its errors are raised as the built-in class of
// ndgather's own (a ValueError for an InvalidArgumentError).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "_kernel_abi.h"

namespace {

// PyTorch's dtypes by TensorFlow's DataType numbers, the ABI's (tf_kernel.rs's TF_DTYPES).
constexpr std::pair<c10::ScalarType, int32_t> kDtypes[] = {
    {c10::ScalarType::Float, 1},         {c10::ScalarType::Double, 2},
    {c10::ScalarType::Int, 3},           {c10::ScalarType::Byte, 4},
    {c10::ScalarType::Short, 5},         {c10::ScalarType::Char, 6},
    {c10::ScalarType::ComplexFloat, 8},  {c10::ScalarType::Long, 9},
    {c10::ScalarType::Bool, 10},         {c10::ScalarType::BFloat16, 14},
    {c10::ScalarType::UInt16, 17},       {c10::ScalarType::ComplexDouble, 18},
    {c10::ScalarType::Half, 19},         {c10::ScalarType::UInt32, 22},
    {c10::ScalarType::UInt64, 23},       {c10::ScalarType::Float8_e5m2, 24},
    {c10::ScalarType::Float8_e4m3fn, 25},
};

int32_t CodeOf(c10::ScalarType type) {
  for (const auto& [t, code] : kDtypes) {
    if (t == type) return code;
  }
  return -1;
}

std::optional<c10::ScalarType> TypeOf(int32_t code) {
  for (const auto& [t, c] : kDtypes) {
    if (c == code) return t;
  }
  return std::nullopt;
}

// The result, allocated when the core knows its shape and dtype.
struct Allocation {
  std::optional<at::Tensor> out;
};

// Called from the core's Rust frames: nothing may unwind through them.
int32_t Allocate(void* p, int32_t dtype, int64_t rank, const int64_t* dims,
                 void** data) noexcept try {
  auto* a = static_cast<Allocation*>(p);
  auto type = TypeOf(dtype);
  if (!type || rank < 0 || (rank > 0 && dims == nullptr)) return 1;
  a->out = at::empty(c10::IntArrayRef(dims, static_cast<size_t>(rank)),
                     at::TensorOptions().dtype(*type));
  *data = a->out->mutable_data_ptr();
  return 0;
} catch (...) {
  return 1;
}

// The op's attributes, a line `name=text` each, read as the Python op's `_split` reads them
// (a line without `=` is a name with empty text); PyTorch's own line for sparse gradients is
// the Python side's (the core's op has no such attribute).
void SplitAttrs(c10::string_view attrs, std::vector<std::string>* names,
                std::vector<std::string>* values) {
  size_t at = 0;
  while (at <= attrs.size()) {
    size_t end = attrs.find('\n', at);
    if (end == c10::string_view::npos) end = attrs.size();
    c10::string_view line = attrs.substr(at, end - at);
    if (!line.empty() && line != "torch_sparse_grad=true") {
      size_t eq = line.find('=');
      names->emplace_back(line.substr(0, eq));
      values->emplace_back(eq == c10::string_view::npos ? c10::string_view() : line.substr(eq + 1));
    }
    at = end + 1;
  }
}

// The C ABI's strings end at a NUL: one inside a name or the attributes is refused, rather
// than read as the text before it.
void NoNul(c10::string_view text, const char* what) {
  TORCH_CHECK_VALUE(text.find('\0') == c10::string_view::npos,
                    "ndgather: a NUL character in the op's ", what);
}

// Raises the core's failure as the built-in class it numbers (errors.rs's `Class::builtin`).
[[noreturn]] void Raise(int32_t kind, const char* message) {
  switch (kind) {
    case 2:
      TORCH_CHECK_VALUE(false, message);
    case 3:
      TORCH_CHECK_INDEX(false, message);
    case 4:
      TORCH_CHECK_TYPE(false, message);
    case 5:
      TORCH_CHECK_NOT_IMPLEMENTED(false, message);
    case 6:
      TORCH_CHECK_WITH(OutOfMemoryError, false, message);
    default:
      TORCH_CHECK(false, message);
  }
  // (Each check above throws.)
  throw std::logic_error(message);
}

at::Tensor Op(at::TensorList inputs, at::IntArrayRef arity, c10::string_view name,
              c10::string_view attrs) {
  // Contiguous tensors with their own values (a conjugate or negative view resolved),
  // kept alive for the call.
  std::vector<at::Tensor> held;
  std::vector<TfBuffer> args;
  held.reserve(inputs.size());
  args.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const at::Tensor& t = inputs[k];
    TORCH_CHECK_VALUE(t.device().is_cpu(), "ndgather: ", std::string(name),
                      ": input tensor ", k, " is on ", t.device().str(),
                      "; ndgather's op runs on the CPU");
    int32_t code = CodeOf(t.scalar_type());
    TORCH_CHECK_TYPE(code >= 0, "ndgather: ", std::string(name), ": input tensor ", k,
                     " is of dtype ", t.scalar_type(), ", which ndgather does not read");
    held.push_back(t.resolve_conj().resolve_neg().contiguous());
    const at::Tensor& c = held.back();
    args.push_back({code, c.dim(), c.sizes().data(), const_cast<void*>(c.const_data_ptr())});
  }
  NoNul(name, "name");
  NoNul(attrs, "attributes");
  std::vector<std::string> names, values;
  SplitAttrs(attrs, &names, &values);
  std::vector<const char*> name_ptrs, value_ptrs;
  for (size_t k = 0; k < names.size(); ++k) {
    name_ptrs.push_back(names[k].c_str());
    value_ptrs.push_back(values[k].c_str());
  }
  std::string op(name);
  std::vector<int64_t> arities(arity.begin(), arity.end());
  char error[4096] = {0};
  TfCall call = {sizeof(TfCall),
                 op.c_str(),
                 name_ptrs.data(),
                 value_ptrs.data(),
                 static_cast<int64_t>(names.size()),
                 arities.data(),
                 static_cast<int64_t>(arities.size()),
                 args.data(),
                 static_cast<int64_t>(args.size()),
                 nullptr,
                 0,
                 0,
                 error,
                 sizeof error};
  Allocation a;
  int32_t kind = ndgather_torch_forward(&call, &a, &Allocate);
  if (kind != 0) Raise(kind, error);
  TORCH_CHECK(a.out.has_value(), "ndgather: internal error: ", op, " gave no result");
  return *std::move(a.out);
}

}  // namespace

// `op_native_with_grad` is the same kernel, under the gradient formula that
// `ndgather._torch` registers in Python.
TORCH_LIBRARY_IMPL(ndgather, CPU, m) {
  m.impl("op_native", &Op);
  m.impl("op_native_with_grad", &Op);
}

// No gradient: a backward through the op raises, rather than leaving the inputs' gradients
// unset. (PyTorch's C++ fallback; a Python autograd kernel would run on every call.)
TORCH_LIBRARY_IMPL(ndgather, Autograd, m) {
  m.impl("op_native", torch::autograd::autogradNotImplementedFallback());
}
