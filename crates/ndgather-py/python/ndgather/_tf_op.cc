// ndgather's ops as TensorFlow ops (issue 55): `NdgatherOp` runs any op of ndgather's
// registry by name, and `NdgatherGrad` its gradient. `ndgather._tf` compiles this file on
// demand against the installed TensorFlow (tf.sysconfig's flags) and links it to ndgather's
// extension, whose C ABI (`tf_kernel.rs`) runs the op; TensorFlow loads it with
// tf.load_op_library. Every check of the op's inputs and attributes is the core's.

#include <cstdint>
#include <string>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"

#include "_kernel_abi.h"

namespace {

using tensorflow::DataTypeCanUseMemcpy;
using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;
using tensorflow::TensorShape;

// What the allocation callback needs: the kernel's context, and its status on failure.
struct Allocation {
  OpKernelContext* ctx;
  absl::Status status;
};

// Called from the core's Rust frames: nothing may unwind through them.
int32_t Allocate(void* p, int64_t rank, const int64_t* dims, void** data) noexcept try {
  auto* a = static_cast<Allocation*>(p);
  TensorShape shape;
  for (int64_t d = 0; d < rank; ++d) {
    a->status = shape.AddDimWithStatus(dims[d]);
    if (!a->status.ok()) return static_cast<int32_t>(a->status.code());
  }
  Tensor* out = nullptr;
  a->status = a->ctx->allocate_output(0, shape, &out);
  if (!a->status.ok()) return static_cast<int32_t>(a->status.code());
  *data = const_cast<char*>(out->tensor_data().data());
  return 0;
} catch (...) {
  return static_cast<int32_t>(absl::StatusCode::kResourceExhausted);
}

// The attributes both ops share, read once when the kernel is made.
class NdgatherKernel : public OpKernel {
 public:
  explicit NdgatherKernel(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("op", &op_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("arity", &arity_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("attr_names", &names_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("attr_values", &values_));
    OP_REQUIRES(ctx, names_.size() == values_.size(),
                absl::InvalidArgumentError("ndgather: attr_names and attr_values differ in length"));
    // The C ABI's strings end at a NUL: one inside is refused, rather than read as the text
    // before it (a graph's attributes need not come from ndgather's Python).
    bool nul = op_.find('\0') != std::string::npos;
    for (const auto& s : names_) nul = nul || s.find('\0') != std::string::npos;
    for (const auto& s : values_) nul = nul || s.find('\0') != std::string::npos;
    OP_REQUIRES(ctx, !nul,
                absl::InvalidArgumentError("ndgather: a NUL character in the op's name or "
                                           "attributes"));
    for (const auto& s : names_) name_ptrs_.push_back(s.c_str());
    for (const auto& s : values_) value_ptrs_.push_back(s.c_str());
  }

 protected:
  // A failure's message is written into `error`, of kError bytes.
  static constexpr size_t kError = 2048;

  // The call over the kernel's inputs `args` (their dimensions kept in `dims`).
  absl::Status Call(OpKernelContext* ctx, std::vector<TfBuffer>* args,
                    std::vector<std::vector<int64_t>>* dims, TfCall* call, char* error) {
    tensorflow::OpInputList list;
    TF_RETURN_IF_ERROR(ctx->input_list("args", &list));
    args->resize(list.size());
    dims->resize(list.size());
    for (int k = 0; k < list.size(); ++k) {
      const Tensor& t = list[k];
      if (!DataTypeCanUseMemcpy(t.dtype())) {
        return absl::InvalidArgumentError(
            "ndgather: argument " + std::to_string(k) + " is of dtype " +
            tensorflow::DataTypeString(t.dtype()) +
            ", which a graph cannot hand to ndgather (strings and resources are not read here)");
      }
      for (int d = 0; d < t.dims(); ++d) (*dims)[k].push_back(t.dim_size(d));
      (*args)[k] = TfBuffer{static_cast<int32_t>(t.dtype()), t.dims(), (*dims)[k].data(),
                            const_cast<char*>(t.tensor_data().data())};
    }
    *call = TfCall{sizeof(TfCall),
                   op_.c_str(),
                   name_ptrs_.data(),
                   value_ptrs_.data(),
                   static_cast<int64_t>(names_.size()),
                   arity_.data(),
                   static_cast<int64_t>(arity_.size()),
                   args->data(),
                   static_cast<int64_t>(args->size()),
                   nullptr,
                   0,
                   0,
                   error,
                   kError};
    error[0] = 0;
    return absl::OkStatus();
  }

  // Builds the call over the kernel's inputs, then runs it (`Run`).
  void Compute(OpKernelContext* ctx) final {
    std::vector<TfBuffer> args;
    std::vector<std::vector<int64_t>> dims;
    TfCall call;
    char error[kError];
    OP_REQUIRES_OK(ctx, Call(ctx, &args, &dims, &call, error));
    Run(ctx, &call, dims, error);
  }

  // The op's own part of Compute: its result or its gradients, by the core's C ABI.
  virtual void Run(OpKernelContext* ctx, TfCall* call,
                   const std::vector<std::vector<int64_t>>& dims, char* error) = 0;

  // The status of the core's answer `code`, with its message in `error`.
  static absl::Status Answer(int32_t code, const char* error) {
    if (code == 0) return absl::OkStatus();
    return absl::Status(static_cast<absl::StatusCode>(code), error);
  }

  std::string op_;
  std::vector<int64_t> arity_;
  std::vector<std::string> names_, values_;
  std::vector<const char*> name_ptrs_, value_ptrs_;
};

class NdgatherForward : public NdgatherKernel {
 public:
  explicit NdgatherForward(OpKernelConstruction* ctx) : NdgatherKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Tout", &out_));
  }

  void Run(OpKernelContext* ctx, TfCall* call, const std::vector<std::vector<int64_t>>&,
           char* error) override {
    call->out_dtype = static_cast<int32_t>(out_);
    Allocation allocation{ctx, absl::OkStatus()};
    int32_t code = ndgather_tf_forward(call, &allocation, &Allocate);
    OP_REQUIRES_OK(ctx, allocation.status);
    OP_REQUIRES_OK(ctx, Answer(code, error));
  }

 private:
  tensorflow::DataType out_;
};

class NdgatherBackward : public NdgatherKernel {
 public:
  explicit NdgatherBackward(OpKernelConstruction* ctx) : NdgatherKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("wrt", &wrt_));
  }

  void Run(OpKernelContext* ctx, TfCall* call, const std::vector<std::vector<int64_t>>& dims,
           char* error) override {
    // One gradient per input in `wrt`, of its shape; the core checks that they are the
    // inputs of a dtype with a gradient.
    tensorflow::OpOutputList grads;
    OP_REQUIRES_OK(ctx, ctx->output_list("grads", &grads));
    OP_REQUIRES(ctx, static_cast<size_t>(grads.size()) == wrt_.size(),
                absl::InvalidArgumentError("ndgather: one gradient per wrt input"));
    std::vector<TfBuffer> rets(wrt_.size());
    std::vector<std::vector<int64_t>> ret_dims(wrt_.size());
    for (size_t k = 0; k < wrt_.size(); ++k) {
      int64_t w = wrt_[k];
      OP_REQUIRES(ctx, w >= 0 && w < static_cast<int64_t>(dims.size()),
                  absl::InvalidArgumentError("ndgather: wrt names no argument"));
      const Tensor& input = ctx->input(static_cast<int>(w));
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, grads.allocate(static_cast<int>(k), input.shape(), &out));
      OP_REQUIRES(ctx, out->dtype() == input.dtype(),
                  absl::InvalidArgumentError("ndgather: a gradient's dtype is its input's"));
      ret_dims[k] = dims[w];
      rets[k] = TfBuffer{static_cast<int32_t>(out->dtype()), out->dims(), ret_dims[k].data(),
                         const_cast<char*>(out->tensor_data().data())};
    }
    call->rets = rets.data();
    call->n_rets = static_cast<int64_t>(rets.size());
    OP_REQUIRES_OK(ctx, Answer(ndgather_tf_backward(call), error));
  }

 private:
  std::vector<int64_t> wrt_;
};

}  // namespace

REGISTER_OP("NdgatherOp")
    .Input("args: Targs")
    .Output("out: Tout")
    .Attr("Targs: list(type) >= 0")
    .Attr("Tout: type")
    .Attr("op: string")
    .Attr("arity: list(int) >= 0")
    .Attr("attr_names: list(string) = []")
    .Attr("attr_values: list(string) = []")
    // The output's static shape as integers (-1 an unknown size; a rank of -1 unknown), not
    // a `shape` attribute, which TensorFlow's forward mode inside tf.function cannot trace.
    .Attr("out_dims: list(int) = []")
    .Attr("out_rank: int = -1")
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      // The op's own inference, which ndgather._tf ran when it built the node.
      std::vector<int64_t> dims;
      int64_t rank = -1;
      TF_RETURN_IF_ERROR(c->GetAttr("out_dims", &dims));
      TF_RETURN_IF_ERROR(c->GetAttr("out_rank", &rank));
      if (rank < 0) {
        c->set_output(0, c->UnknownShape());
        return absl::OkStatus();
      }
      // A hand-made node may disagree with itself: refused, never an exception.
      if (static_cast<int64_t>(dims.size()) != rank) {
        return absl::InvalidArgumentError("ndgather: out_dims must have out_rank entries");
      }
      for (int64_t d : dims) {
        if (d < -1) {
          return absl::InvalidArgumentError(
              "ndgather: out_dims holds a size below -1 (-1 is an unknown size)");
        }
      }
      tensorflow::PartialTensorShape shape;
      TF_RETURN_IF_ERROR(tensorflow::PartialTensorShape::BuildPartialTensorShape(dims, &shape));
      tensorflow::shape_inference::ShapeHandle out;
      TF_RETURN_IF_ERROR(c->MakeShapeFromPartialTensorShape(shape, &out));
      c->set_output(0, out);
      return absl::OkStatus();
    });

REGISTER_OP("NdgatherGrad")
    .Input("args: Targs")
    .Output("grads: Tgrads")
    .Attr("Targs: list(type) >= 2")
    .Attr("Tgrads: list(type) >= 0")
    .Attr("op: string")
    .Attr("arity: list(int) >= 0")
    .Attr("attr_names: list(string) = []")
    .Attr("attr_values: list(string) = []")
    .Attr("wrt: list(int) >= 0")
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      std::vector<int64_t> wrt;
      TF_RETURN_IF_ERROR(c->GetAttr("wrt", &wrt));
      // A hand-made node may disagree with itself: refused, never an exception.
      if (static_cast<int64_t>(wrt.size()) != c->num_outputs()) {
        return absl::InvalidArgumentError("ndgather: one gradient per wrt input");
      }
      for (size_t k = 0; k < wrt.size(); ++k) {
        if (wrt[k] < 0 || wrt[k] >= c->num_inputs()) {
          return absl::InvalidArgumentError("ndgather: wrt names no argument");
        }
        c->set_output(static_cast<int>(k), c->input(static_cast<int>(wrt[k])));
      }
      return absl::OkStatus();
    });

REGISTER_KERNEL_BUILDER(Name("NdgatherOp").Device(tensorflow::DEVICE_CPU), NdgatherForward);
REGISTER_KERNEL_BUILDER(Name("NdgatherGrad").Device(tensorflow::DEVICE_CPU), NdgatherBackward);
