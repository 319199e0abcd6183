// The C ABI of ndgather's extension that the kernels of its op libraries call: TensorFlow's
// (`_tf_op.cc`, through `tf_kernel.rs`) and PyTorch's (`_torch_op.cc`, through
// `torch_kernel.rs`). The layout of tf_kernel.rs's `TfBuffer` and `TfCall`.

#ifndef NDGATHER_KERNEL_ABI_H_
#define NDGATHER_KERNEL_ABI_H_

#include <cstddef>
#include <cstdint>

extern "C" {
struct TfBuffer {
  int32_t dtype;
  int64_t rank;
  const int64_t* dims;
  void* data;
};

struct TfCall {
  size_t struct_size;
  const char* op;
  const char* const* attr_names;
  const char* const* attr_values;
  int64_t attrs;
  const int64_t* arity;
  int64_t arities;
  const TfBuffer* args;
  int64_t n_args;
  const TfBuffer* rets;
  int64_t n_rets;
  int32_t out_dtype;
  char* error;
  size_t error_len;
};

typedef int32_t (*TfAllocate)(void* ctx, int64_t rank, const int64_t* dims, void** data);
int32_t ndgather_tf_forward(const TfCall* call, void* ctx, TfAllocate allocate);
int32_t ndgather_tf_backward(const TfCall* call);

typedef int32_t (*TorchAllocate)(void* ctx, int32_t dtype, int64_t rank, const int64_t* dims,
                                 void** data);
int32_t ndgather_torch_forward(const TfCall* call, void* ctx, TorchAllocate allocate);
int32_t ndgather_torch_backward(const TfCall* call);
int32_t ndgather_kernel_has_grad(int32_t dtype);
int32_t ndgather_kernel_grad_reads_output(const char* name);
int32_t ndgather_kernel_linear(const TfCall* call, int32_t* linear, char* attrs, size_t attrs_len);
}

#endif  // NDGATHER_KERNEL_ABI_H_
