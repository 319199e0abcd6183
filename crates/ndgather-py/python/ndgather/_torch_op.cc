// ndgather's ops as C++ kernels of PyTorch (issue 55): the kernels of the typed custom ops
// that `ndgather._torch` defines for each op of the registry, `ndgather::<op>.native`,
// `<op>.with_grad` and `<op>.grad` (their schemas the op's inputs, each a tensor, an optional
// one or a list, then its attributes' one string), and the autograd kernel of `.with_grad`
// (the op's gradient formula), which compiled code calls with no Python body between. One
// boxed kernel serves every op: it reads the op's name from its schema and its inputs from
// the call's stack. `ndgather._torch` compiles this file on demand against the installed
// PyTorch and links it to ndgather's extension, whose C ABI (`torch_kernel.rs`) runs any op
// of the registry by name. Every check of the op's inputs and attributes is the core's; its
// errors are raised as the built-in class of ndgather's own (a ValueError for an
// InvalidArgumentError).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros_like.h>
#include <c10/util/Exception.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/FuncTorchTLS.h>
#include <ATen/LegacyBatchedTensorImpl.h>
#include <ATen/LegacyVmapTransforms.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/grad_mode.h>
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

// The op's attributes, `name=text` each, separated by `;` or a line break, read as the
// Python op's `_split` reads them (an item without `=` is a name with empty text); PyTorch's
// own item for sparse gradients is the Python side's (the core's op has no such attribute).
void SplitAttrs(c10::string_view attrs, std::vector<std::string>* names,
                std::vector<std::string>* values) {
  size_t at = 0;
  while (at <= attrs.size()) {
    size_t end = attrs.find_first_of(";\n", at);
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

// Whether a schema's argument is a list of tensors (`Tensor[]` or `Tensor[]?`).
bool IsList(const c10::Argument& argument) {
  c10::TypePtr type = argument.type();
  if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return type->kind() == c10::TypeKind::ListType;
}

// The registry's name of a typed op (`ndgather::gather` → `gather`).
std::string RegistryName(const c10::OperatorHandle& op) {
  const std::string& qualified = op.schema().name();
  return qualified.substr(qualified.find("::") + 2);
}

// The op's inputs on a stack (each a tensor, none, or a list of tensors) as their tensors,
// flat, and each input's count of them: the C ABI's arguments and arities.
struct Inputs {
  std::vector<at::Tensor> tensors;
  std::vector<int64_t> arity;

  Inputs(c10::ArrayRef<c10::IValue> values, const c10::OperatorHandle& op) {
    for (const c10::IValue& value : values) {
      if (value.isNone()) {
        arity.push_back(0);
      } else if (value.isTensor()) {
        tensors.push_back(value.toTensor());
        arity.push_back(1);
      } else {
        TORCH_CHECK_TYPE(value.isTensorList(), "ndgather: ", op.schema().name(),
                         ": an input is not a tensor, a list of tensors or None");
        std::vector<at::Tensor> list = value.toTensorVector();
        tensors.insert(tensors.end(), list.begin(), list.end());
        arity.push_back(static_cast<int64_t>(list.size()));
      }
    }
  }
};

// A call of the C ABI: the op's name, its inputs' arities and its attributes, and its tensors
// as buffers (contiguous, with their own values: a conjugate or negative view resolved), kept
// alive for the call.
class Call {
 public:
  // A call of the op on `inputs`, each of their tensors an argument; where not `data`, each
  // only as its dtype (a query of the op's facts: under torch.func's transforms a tensor
  // may be a wrapper with no storage to read).
  Call(std::string name, c10::string_view attrs, const Inputs& inputs, bool data = true)
      : op_(std::move(name)), arities_(inputs.arity), data_(data) {
    NoNul(attrs, "attributes");
    SplitAttrs(attrs, &names_, &values_);
    for (size_t k = 0; k < names_.size(); ++k) {
      name_ptrs_.push_back(names_[k].c_str());
      value_ptrs_.push_back(values_[k].c_str());
    }
    for (const at::Tensor& t : inputs.tensors) Arg(t);
  }

  // Adds `t`, the call's next tensor, as an argument.
  void Arg(const at::Tensor& t) {
    size_t k = args_.size();
    // (PyTorch passes None for a required tensor as an undefined one.)
    TORCH_CHECK_TYPE(t.defined(), "ndgather: ", op_, ": input tensor ", k,
                     " is None, where the op takes a tensor");
    TORCH_CHECK_VALUE(t.device().is_cpu(), "ndgather: ", op_, ": input tensor ", k, " is on ",
                      t.device().str(), "; ndgather's op runs on the CPU");
    int32_t code = CodeOf(t.scalar_type());
    TORCH_CHECK_TYPE(code >= 0, "ndgather: ", op_, ": input tensor ", k, " is of dtype ",
                     t.scalar_type(), ", which ndgather does not read");
    if (!data_) {
      args_.push_back({code, 0, nullptr, nullptr});
      return;
    }
    // (Each resolve is an op of the dispatcher: called only where a bit is set.)
    at::Tensor r = t.is_conj() ? t.resolve_conj() : t;
    if (r.is_neg()) r = r.resolve_neg();
    held_.push_back(r.contiguous());
    const at::Tensor& c = held_.back();
    args_.push_back({code, c.dim(), c.sizes().data(), const_cast<void*>(c.const_data_ptr())});
  }

  // Adds `t`, a new contiguous tensor, as a result the core writes.
  void Ret(const at::Tensor& t) {
    rets_.push_back({CodeOf(t.scalar_type()), t.dim(), t.sizes().data(), t.mutable_data_ptr()});
  }

  const TfCall* get() {
    call_ = {sizeof(TfCall),
             op_.c_str(),
             name_ptrs_.data(),
             value_ptrs_.data(),
             static_cast<int64_t>(names_.size()),
             arities_.data(),
             static_cast<int64_t>(arities_.size()),
             args_.data(),
             static_cast<int64_t>(args_.size()),
             rets_.data(),
             static_cast<int64_t>(rets_.size()),
             0,
             error_,
             sizeof error_};
    return &call_;
  }

  // Raises the failure that the ABI's answer `kind` numbers, if any.
  void Check(int32_t kind) const {
    if (kind != 0) Raise(kind, error_);
  }

  const std::string& op() const { return op_; }

 private:
  std::string op_;
  std::vector<int64_t> arities_;
  bool data_;
  std::vector<std::string> names_, values_;
  std::vector<const char*> name_ptrs_, value_ptrs_;
  std::vector<at::Tensor> held_;
  std::vector<TfBuffer> args_, rets_;
  TfCall call_{};
  char error_[4096] = {0};
};

// Whether the core gives `t` a gradient (its dtype table's `grad` role).
bool HasGrad(const at::Tensor& t) {
  return ndgather_kernel_has_grad(CodeOf(t.scalar_type())) == 1;
}

// The kernel of `<op>.native` and `<op>.with_grad`: the op's result, from its inputs and
// attributes on the stack.
void Forward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, n);
  Call call(RegistryName(op), args[n - 1].toStringView(), Inputs(args.slice(0, n - 1), op));
  Allocation a;
  call.Check(ndgather_torch_forward(call.get(), &a, &Allocate));
  TORCH_CHECK(a.out.has_value(), "ndgather: internal error: ", call.op(), " gave no result");
  torch::jit::drop(*stack, n);
  torch::jit::push(*stack, *std::move(a.out));
}

// The kernel of `<op>.grad`, whose stack holds the op's inputs, its output, the upstream
// gradient and the attributes: the core's gradient of each input tensor of a dtype with
// one, in order, each of its input's shape.
void Grad(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  TORCH_CHECK(n >= 3, "ndgather: internal error: ", op.schema().name(),
              " has no gradient's schema");
  auto args = torch::jit::last(*stack, n);
  Inputs inputs(args.slice(0, n - 3), op);
  Call call(RegistryName(op), args[n - 1].toStringView(), inputs);
  call.Arg(args[n - 3].toTensor());
  call.Arg(args[n - 2].toTensor());
  std::vector<at::Tensor> grads;
  for (const at::Tensor& t : inputs.tensors) {
    if (HasGrad(t)) {
      grads.push_back(at::empty(t.sizes(), at::TensorOptions().dtype(t.scalar_type())));
      call.Ret(grads.back());
    }
  }
  call.Check(ndgather_torch_backward(call.get()));
  torch::jit::drop(*stack, n);
  torch::jit::push(*stack, std::move(grads));
}

// The op's stack for `op` (`<op>.with_grad` or `<op>.grad`) from its inputs' tensors, flat,
// and their arities: each input as the schema takes it, a tensor, a list of them or none.
torch::jit::Stack Regrouped(const c10::OperatorHandle& op, const std::vector<at::Tensor>& flat,
                            const std::vector<int64_t>& arity) {
  const auto& arguments = op.schema().arguments();
  TORCH_CHECK(arguments.size() >= arity.size(), "ndgather: internal error: ",
              op.schema().name(), " does not take the op's inputs");
  torch::jit::Stack stack;
  size_t at = 0;
  for (size_t k = 0; k < arity.size(); ++k) {
    size_t count = static_cast<size_t>(arity[k]);
    TORCH_CHECK(at + count <= flat.size(), "ndgather: internal error: arities past the inputs");
    if (IsList(arguments[k])) {
      c10::List<at::Tensor> list;
      for (size_t j = 0; j < count; ++j) list.push_back(flat[at + j]);
      stack.emplace_back(std::move(list));
    } else if (count == 1) {
      stack.emplace_back(flat[at]);
    } else {
      stack.emplace_back();
    }
    at += count;
  }
  return stack;
}

// `<op>.with_grad`'s autograd: the op's gradient formula (`ndgather._torch`'s `_backward`),
// in C++, so that compiled code calls the op with no Python between (a Python autograd
// kernel costs about 14 µs a call there). Both the op and its gradient are called through
// the dispatcher, so that torch.compile traces them, the gradient into its backward graph.
// The autograd Function sees the inputs' tensors, flat; the call's stack is passed on.
class WithGrad : public torch::autograd::Function<WithGrad> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList inputs,
                            const std::vector<int64_t>& arity, const c10::OperatorHandle& op,
                            torch::jit::Stack* stack) {
    std::string attrs(stack->back().toStringView());
    {
      // The op's `.native` overload, the same kernel: compiled code traced here then calls
      // it, rather than `.with_grad` through this Function again (about 3 µs a call).
      at::AutoDispatchBelowADInplaceOrView below;
      c10::Dispatcher::singleton()
          .findSchemaOrThrow(op.schema().name().c_str(), "native")
          .callBoxed(stack);
    }
    at::Tensor out = stack->back().toTensor();
    std::string name = RegistryName(op);
    // The output only where the gradient reads it (a max's does, a gather's not): a result
    // changed in place then still has a backward, as PyTorch's own gather's.
    bool reads = ndgather_kernel_grad_reads_output(name.c_str()) == 1;
    std::vector<at::Tensor> saved(inputs.begin(), inputs.end());
    if (reads) saved.push_back(out);
    ctx->save_for_backward(saved);
    ctx->saved_data["arity"] = arity;
    ctx->saved_data["op"] = op.schema().name();
    ctx->saved_data["attrs"] = std::move(attrs);
    ctx->saved_data["reads"] = reads;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list upstream) {
    auto grad = c10::Dispatcher::singleton().findSchemaOrThrow(
        ctx->saved_data["op"].toStringRef().c_str(), "grad");
    torch::autograd::variable_list saved = ctx->get_saved_variables();
    bool reads = ctx->saved_data["reads"].toBool();
    size_t n = saved.size() - (reads ? 1 : 0);
    std::vector<int64_t> arity = ctx->saved_data["arity"].toIntVector();
    TORCH_CHECK(grad.schema().arguments().size() == arity.size() + 3,
                "ndgather: internal error: ", grad.schema().name(),
                "'s gradient does not take its inputs");
    torch::jit::Stack stack = Regrouped(
        grad, std::vector<at::Tensor>(saved.begin(), saved.begin() + n), arity);
    // The output where the gradient reads it; else an empty tensor, not the upstream gradient
    // again, which compiled code would write into a second buffer of the output's size.
    stack.emplace_back(reads ? saved.back() : at::empty({0}, upstream[0].options()));
    stack.emplace_back(upstream[0]);
    stack.emplace_back(ctx->saved_data["attrs"].toStringRef());
    grad.callBoxed(&stack);
    std::vector<at::Tensor> grads = stack.back().toTensorVector();
    // A gradient per input tensor of a dtype with one, none for the others and for the
    // arities, the op and its stack.
    torch::autograd::variable_list out(n + 3);
    size_t j = 0;
    for (size_t k = 0; k < n && j < grads.size(); ++k) {
      if (HasGrad(saved[k])) out[k] = grads[j++];
    }
    return out;
  }
};

// `<op>.with_grad`'s autograd kernel, always through the autograd Function, which refuses
// forward-mode AD and functorch's transforms (a shortcut where no backward is recorded gave
// them zero tangents).
void ForwardWithGrad(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  Inputs inputs(torch::jit::last(*stack, n).slice(0, n - 1), op);
  at::Tensor out = WithGrad::apply(at::TensorList(inputs.tensors), inputs.arity, op, stack);
  // The forward left its result on the stack; the one autograd recorded takes its place.
  stack->back() = std::move(out);
}

// `<op>.grad`'s autograd where the op is linear in every input with a gradient and its
// gradient is its tangent's transpose (the core's `ndgather_kernel_linear`): the gradient is
// then linear in the upstream gradient and reads no input's value, so that its derivative
// with respect to the upstream gradient is the op's tangent (the op, with the tangent's
// attributes, on the cotangents), through `.with_grad` so that it is differentiated in turn,
// and the inputs', the output's, none. (`hessian`, a gradient penalty, `grad` of `grad` in
// eager autograd; torch.func's transforms run `ndgather._torch_func`'s.)
class GradOfGrad : public torch::autograd::Function<GradOfGrad> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                at::TensorList tensors,
                                                const std::vector<int64_t>& arity,
                                                const c10::OperatorHandle& op,
                                                torch::jit::Stack* stack,
                                                std::string tangent_attrs) {
    {
      at::AutoDispatchBelowADInplaceOrView below;
      op.callBoxed(stack);
    }
    // The op's inputs, without the output and the upstream gradient.
    ctx->save_for_backward(std::vector<at::Tensor>(tensors.begin(), tensors.end() - 2));
    ctx->saved_data["arity"] = arity;
    ctx->saved_data["op"] = op.schema().name();
    ctx->saved_data["attrs"] = std::move(tangent_attrs);
    return stack->back().toTensorVector();
  }

  static torch::autograd::variable_list backward(
      torch::autograd::AutogradContext* ctx, torch::autograd::variable_list cotangents) {
    const std::string& name = ctx->saved_data["op"].toStringRef();
    const std::string& attrs = ctx->saved_data["attrs"].toStringRef();
    torch::autograd::variable_list saved = ctx->get_saved_variables();
    // The tangent's inputs: each input with a gradient, its cotangent (zeros where none
    // reached it); the others, indices, as they are.
    std::vector<at::Tensor> given;
    size_t j = 0;
    for (const at::Tensor& t : saved) {
      if (!HasGrad(t)) {
        given.push_back(t);
        continue;
      }
      at::Tensor w = j < cotangents.size() ? cotangents[j] : at::Tensor();
      ++j;
      given.push_back(w.defined() ? w : at::zeros_like(t));
    }
    auto tangent = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), "with_grad");
    torch::jit::Stack stack = Regrouped(tangent, given, ctx->saved_data["arity"].toIntVector());
    stack.emplace_back(attrs);
    tangent.callBoxed(&stack);
    // None for the inputs and the output; the upstream gradient's; none for the arities,
    // the op, its stack and the attributes.
    torch::autograd::variable_list out(saved.size() + 2 + 4);
    out[saved.size() + 1] = stack.back().toTensor();
    return out;
  }
};

// A new autograd node, in the pointer this PyTorch holds nodes in: an intrusive one in
// newer releases, a shared one in older.
using NodePtr = std::remove_cvref_t<decltype(std::declval<at::TensorBase>().grad_fn())>;
template <typename N, typename Ptr>
struct NewNode;
template <typename N, typename T>
struct NewNode<N, std::shared_ptr<T>> {
  template <typename... A>
  static std::shared_ptr<T> Make(A&&... a) {
    return std::make_shared<N>(std::forward<A>(a)...);
  }
};
template <typename N, typename T>
struct NewNode<N, c10::intrusive_ptr<T>> {
  template <typename... A>
  static c10::intrusive_ptr<T> Make(A&&... a) {
    return c10::make_intrusive<N>(std::forward<A>(a)...);
  }
};

// Whether torch.func's transforms are active, where a C++ autograd Function is refused: at
// once where a tensor is one of their wrappers (the common case there: an exception costs
// more than the op); else by their check, whose stack is in a header that PyTorch ships
// without its dependencies.
bool Transformed(const std::vector<at::Tensor>& tensors) {
  for (const at::Tensor& t : tensors) {
    if (t.defined() && (t.key_set().has(c10::DispatchKey::FuncTorchGradWrapper) ||
                        t.key_set().has(c10::DispatchKey::FuncTorchBatched))) {
      return true;
    }
  }
  const auto& functorch = at::functorch::functorchTLSAccessor();
  if (!functorch) return false;
  try {
    functorch->checkSupportsCppAutogradFunction();
    return false;
  } catch (const c10::Error&) {
    return true;
  }
}

// The gradient op where its result has no derivative: a backward through it raises `why`,
// as PyTorch's C++ fallback does (whose nodes, unlike a C++ autograd Function, torch.func's
// transforms take), rather than leaving a gradient unset.
void Underived(const c10::OperatorHandle& op, torch::jit::Stack* stack,
               const std::vector<at::Tensor>& tensors, const std::string& why) {
  std::vector<at::Tensor> wanting;
  for (const at::Tensor& t : tensors) {
    if (t.defined() && t.requires_grad()) wanting.push_back(t);
  }
  auto node = NewNode<torch::autograd::Error, NodePtr>::Make(
      why, torch::autograd::collect_next_edges(wanting));
  {
    at::AutoDispatchBelowADInplaceOrView below;
    op.callBoxed(stack);
  }
  for (const at::Tensor& g : stack->back().toTensorVector()) {
    if (g.defined() && torch::autograd::isDifferentiableType(g.scalar_type())) {
      torch::autograd::set_history(g, node);
    }
  }
}

// `<op>.grad`'s autograd kernel: the gradient op itself where autograd records nothing;
// else through `GradOfGrad` where the op is linear, outside torch.func's transforms (which
// take no C++ autograd Function, and run their own); else with no derivative.
void GradWithGrad(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  auto args = torch::jit::last(*stack, n);
  Inputs inputs(args.slice(0, n - 3), op);
  std::vector<at::Tensor> tensors = inputs.tensors;
  tensors.push_back(args[n - 3].toTensor());
  tensors.push_back(args[n - 2].toTensor());
  // (Forward mode has no derivative of the gradient here: torch.func's transforms run their
  // own, where the op is linear. In the C++ fallback's words.)
  TORCH_CHECK_NOT_IMPLEMENTED(
      std::none_of(tensors.begin(), tensors.end(),
                   [](const at::Tensor& t) { return torch::autograd::isFwGradDefined(t); }),
      "Trying to use forward AD with ", op.schema().name(),
      " that does not support it because it has not been implemented yet.");
  bool records = torch::autograd::GradMode::is_enabled() &&
                 std::any_of(tensors.begin(), tensors.end(),
                             [](const at::Tensor& t) { return t.defined() && t.requires_grad(); });
  if (!records) {
    at::AutoDispatchBelowADInplaceOrView below;
    op.callBoxed(stack);
    return;
  }
  const std::string& qualified = op.schema().name();
  if (Transformed(tensors)) {
    Underived(op, stack, tensors, "derivative for " + qualified + " is not implemented");
    return;
  }
  Call call(RegistryName(op), args[n - 1].toStringView(), inputs, /*data=*/false);
  int32_t linear = 0;
  std::vector<char> attrs(4096 + args[n - 1].toStringView().size(), 0);
  call.Check(ndgather_kernel_linear(call.get(), &linear, attrs.data(), attrs.size()));
  if (!linear) {
    Underived(op, stack, tensors,
              "derivative for " + qualified +
                  " is not implemented: ndgather differentiates a gradient where the op is "
                  "linear in every input with a gradient (a gather, a sum, a scatter add), "
                  "not a max, a min, a product, a scatter update or weighted bags");
    return;
  }
  auto grads = GradOfGrad::apply(at::TensorList(tensors), inputs.arity, op, stack,
                                 std::string(attrs.data()));
  // The forward left its result on the stack; the one autograd recorded takes its place.
  stack->back() = std::move(grads);
}

// The typed ops' rule for PyTorch's legacy vmap (`torch._vmap_internals`, which
// `jacobian(vectorize=True)`, `hessian(vectorize=True)` and gradcheck's batched gradients
// run over the gradient op): the op once per element of the batch, each result stacked, as
// PyTorch's own fallback does, which takes no list of tensors in or out (a gradient op's
// result, an embedding's shards). torch.func's vmap runs `ndgather._torch_func`'s rules.
void LegacyBatched(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  std::vector<c10::IValue> args(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  torch::jit::drop(*stack, n);
  // The batched tensors, each by its argument and its place in a list (-1: none).
  std::vector<at::Tensor> batched;
  std::vector<std::pair<size_t, int64_t>> where;
  for (size_t k = 0; k < n; ++k) {
    if (args[k].isTensor()) {
      const at::Tensor& t = args[k].toTensor();
      if (t.defined() && at::maybeGetBatchedImpl(t)) {
        batched.push_back(t);
        where.emplace_back(k, -1);
      }
    } else if (args[k].isTensorList()) {
      std::vector<at::Tensor> list = args[k].toTensorVector();
      for (size_t j = 0; j < list.size(); ++j) {
        if (list[j].defined() && at::maybeGetBatchedImpl(list[j])) {
          batched.push_back(list[j]);
          where.emplace_back(k, static_cast<int64_t>(j));
        }
      }
    }
  }
  TORCH_CHECK(!batched.empty(), "ndgather: internal error: ", op.schema().name(),
              " batched with no batched tensor");
  // Each with every batch dimension of the call, first, in the same order.
  auto views = at::MultiBatchVmapTransform::logicalToPhysical(batched);
  const int64_t dims = views.front().numBatchDims();
  std::vector<int64_t> sizes(views.front().tensor().sizes().begin(),
                             views.front().tensor().sizes().begin() + dims);
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  TORCH_CHECK_NOT_IMPLEMENTED(count > 0, op.operator_name(),
                              ": vmap over an empty batch is not supported (nor is it by "
                              "PyTorch's own fallback)");
  const bool list = op.schema().returns()[0].type()->kind() == c10::TypeKind::ListType;
  std::vector<std::vector<at::Tensor>> results;
  for (int64_t e = 0; e < count; ++e) {
    std::vector<c10::IValue> element = args;
    for (size_t b = 0; b < batched.size(); ++b) {
      at::Tensor slice = views[b].tensor();
      for (int64_t d = 0, rest = e, stride = count; d < dims; ++d) {
        stride /= sizes[d];
        slice = slice.select(0, rest / stride);
        rest %= stride;
      }
      auto [k, j] = where[b];
      if (j < 0) {
        element[k] = slice;
      } else {
        std::vector<at::Tensor> tensors = element[k].toTensorVector();
        tensors[static_cast<size_t>(j)] = slice;
        element[k] = c10::List<at::Tensor>(tensors);
      }
    }
    for (c10::IValue& v : element) torch::jit::push(*stack, std::move(v));
    op.callBoxed(stack);
    c10::IValue out = torch::jit::pop(*stack);
    results.push_back(list ? out.toTensorVector() : std::vector<at::Tensor>{out.toTensor()});
  }
  std::vector<at::Tensor> logical;
  for (size_t r = 0; r < results.front().size(); ++r) {
    std::vector<at::Tensor> shards;
    for (const auto& each : results) {
      TORCH_CHECK(each.size() == results.front().size(), "ndgather: ", op.schema().name(),
                  ": the batch's elements give different numbers of results");
      shards.push_back(each[r]);
    }
    at::Tensor flat = at::stack(shards);
    std::vector<int64_t> shape = sizes;
    shape.insert(shape.end(), flat.sizes().begin() + 1, flat.sizes().end());
    logical.push_back(views.front().getPhysicalToLogicalMap().apply(flat.view(shape)));
  }
  if (list) {
    torch::jit::push(*stack, c10::List<at::Tensor>(logical));
  } else {
    torch::jit::push(*stack, logical.front());
  }
}

// Whether `type` is a tensor, an optional one, a list of them or an optional list.
bool IsTensors(c10::TypePtr type) {
  if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  if (auto list = type->cast<c10::ListType>()) type = list->getElementType();
  return type->kind() == c10::TypeKind::TensorType;
}

// Whether `schema` is a typed op's of the role `role`, as `ndgather._torch` writes them: the
// op's inputs, for `grad` its output and the upstream gradient, then the attributes' string;
// a tensor as the result, for `grad` a list of them.
bool IsTyped(const c10::FunctionSchema& schema, const std::string& role) {
  const auto& arguments = schema.arguments();
  const auto& returns = schema.returns();
  bool grad = role == "grad";
  if ((!grad && role != "native" && role != "with_grad") || arguments.empty() ||
      arguments.back().type()->kind() != c10::TypeKind::StringType || returns.size() != 1 ||
      (grad && arguments.size() < 3)) {
    return false;
  }
  for (size_t k = 0; k + 1 < arguments.size(); ++k) {
    bool plain = grad && k + 3 >= arguments.size();  // the output and the upstream gradient
    c10::TypePtr type = arguments[k].type();
    if (plain ? type->kind() != c10::TypeKind::TensorType : !IsTensors(type)) return false;
  }
  c10::TypePtr result = returns[0].type();
  return grad ? result->kind() == c10::TypeKind::ListType && IsTensors(result)
              : result->kind() == c10::TypeKind::TensorType;
}

// The typed ops that `ndgather._torch` defined, by their overloads' roles: only ops of the
// registry, with the schemas it writes, so that another library's ops in the namespace keep
// their own kernels.
template <typename Each>
void ForEachOp(Each each) {
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("ndgather::", 0) != 0) continue;
    std::string op = name.name.substr(10);
    std::optional<c10::OperatorHandle> handle = dispatcher.findOp(name);
    // (The registry knows the op where it can say whether its gradient reads its output.)
    if (!handle || !handle->hasSchema() || ndgather_kernel_grad_reads_output(op.c_str()) < 0 ||
        !IsTyped(handle->schema(), name.overload_name)) {
      continue;
    }
    each(op + "." + name.overload_name, name.overload_name);
  }
}

}  // namespace

// `.with_grad` has the same kernel as `.native`, under the op's gradient formula.
TORCH_LIBRARY_IMPL(ndgather, CPU, m) {
  ForEachOp([&m](const std::string& op, const std::string& role) {
    if (role == "native" || role == "with_grad") {
      m.impl(op.c_str(), torch::CppFunction::makeFromBoxedFunction<&Forward>());
    } else if (role == "grad") {
      m.impl(op.c_str(), torch::CppFunction::makeFromBoxedFunction<&Grad>());
    }
  });
}

// Every typed op has the rule for PyTorch's legacy vmap, and so have the generic ops that
// run any op by name (a strided view's call, `torch.jit.trace`'s), whose inputs are a list.
TORCH_LIBRARY_IMPL(ndgather, Batched, m) {
  ForEachOp([&m](const std::string& op, const std::string&) {
    m.impl(op.c_str(), torch::CppFunction::makeFromBoxedFunction<&LegacyBatched>());
  });
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const char* generic : {"op", "op_grad"}) {
    if (dispatcher.findOp({std::string("ndgather::") + generic, ""})) {
      m.impl(generic, torch::CppFunction::makeFromBoxedFunction<&LegacyBatched>());
    }
  }
}

// `.native` has no gradient: a backward through it raises, rather than leaving the inputs'
// gradients unset (PyTorch's C++ fallback; a Python autograd kernel would run on every
// call). `.grad` has one where the op is linear (`GradOfGrad`).
TORCH_LIBRARY_IMPL(ndgather, Autograd, m) {
  ForEachOp([&m](const std::string& op, const std::string& role) {
    if (role == "native") {
      m.impl(op.c_str(), torch::autograd::autogradNotImplementedFallback());
    } else if (role == "with_grad") {
      m.impl(op.c_str(), torch::CppFunction::makeFromBoxedFunction<&ForwardWithGrad>());
    } else if (role == "grad") {
      m.impl(op.c_str(), torch::CppFunction::makeFromBoxedFunction<&GradWithGrad>());
    }
  });
}
