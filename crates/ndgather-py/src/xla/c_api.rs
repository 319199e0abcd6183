//! The C API of XLA's FFI (`xla/ffi/api/c_api.h`, which jaxlib ships), as far as the
//! handlers of `super` read and write it: each struct's fields as the header declares them
//! (a C enum is an `int`), their sizes as `XLA_FFI_STRUCT_SIZE` computes them, and the
//! enumerations' values. `xla_layout` gives the sizes and offsets to a test that compiles
//! the header with a C compiler and compares.

use ndgather::DType;
use pyo3::prelude::*;
use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};

#[repr(C)]
pub(super) struct ExtensionBase {
    pub(super) struct_size: usize,
    pub(super) kind: i32,
    pub(super) next: *mut ExtensionBase,
}

#[repr(C)]
pub(super) struct ApiVersion {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) major_version: i32,
    pub(super) minor_version: i32,
}

/// `XLA_FFI_Error`: opaque, made by the API's `XLA_FFI_Error_Create`.
#[repr(C)]
pub(super) struct XlaError {
    pub(super) _opaque: [u8; 0],
}

#[repr(C)]
pub(super) struct ErrorCreateArgs {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) message: *const c_char,
    pub(super) errc: i32,
}

pub(super) type ErrorCreate = unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut XlaError;

/// `XLA_FFI_Api`, up to the one function the handlers call.
#[repr(C)]
pub(super) struct Api {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) api_version: ApiVersion,
    pub(super) internal_api: *const c_void,
    pub(super) error_create: Option<ErrorCreate>,
}

#[repr(C)]
pub(super) struct Args {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) size: i64,
    pub(super) types: *const i32,
    pub(super) args: *const *mut c_void,
}

#[repr(C)]
pub(super) struct ByteSpan {
    pub(super) ptr: *const c_char,
    pub(super) len: usize,
}

#[repr(C)]
pub(super) struct Attrs_ {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) size: i64,
    pub(super) types: *const i32,
    pub(super) names: *const *const ByteSpan,
    pub(super) attrs: *const *mut c_void,
}

#[repr(C)]
pub(super) struct CallFrame {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) api: *const Api,
    pub(super) ctx: *mut c_void,
    pub(super) stage: i32,
    pub(super) args: Args,
    pub(super) rets: Args,
    pub(super) attrs: Attrs_,
}

#[repr(C)]
pub(super) struct Buffer {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut ExtensionBase,
    pub(super) dtype: i32,
    pub(super) data: *mut c_void,
    pub(super) rank: i64,
    pub(super) dims: *const i64,
}

#[repr(C)]
pub(super) struct Scalar {
    pub(super) dtype: i32,
    pub(super) value: *mut c_void,
}

#[repr(C)]
pub(super) struct Array {
    pub(super) dtype: i32,
    pub(super) size: usize,
    pub(super) data: *mut c_void,
}

#[repr(C)]
pub(super) struct Metadata {
    pub(super) struct_size: usize,
    pub(super) api_version: ApiVersion,
    pub(super) traits: u32,
}

#[repr(C)]
pub(super) struct MetadataExtension {
    pub(super) extension_base: ExtensionBase,
    pub(super) metadata: *mut Metadata,
}

/// `XLA_FFI_STRUCT_SIZE`: the size of a struct up to the end of its last field.
macro_rules! struct_size {
    ($t:ty, $last:ident, $last_t:ty) => {
        offset_of!($t, $last) + size_of::<$last_t>()
    };
}

pub(super) const CALL_FRAME_SIZE: usize = struct_size!(CallFrame, attrs, Attrs_);
pub(super) const API_SIZE: usize = struct_size!(Api, error_create, Option<ErrorCreate>);
pub(super) const BUFFER_SIZE: usize = struct_size!(Buffer, dims, *const i64);
pub(super) const ARGS_SIZE: usize = struct_size!(Args, args, *const *mut c_void);
pub(super) const ATTRS_SIZE: usize = struct_size!(Attrs_, attrs, *const *mut c_void);
pub(super) const METADATA_SIZE: usize = struct_size!(Metadata, traits, u32);
pub(super) const METADATA_EXTENSION_SIZE: usize =
    struct_size!(MetadataExtension, metadata, *mut Metadata);
pub(super) const API_VERSION_SIZE: usize = struct_size!(ApiVersion, minor_version, i32);
pub(super) const EXTENSION_BASE_SIZE: usize = struct_size!(ExtensionBase, next, *mut ExtensionBase);
pub(super) const ERROR_CREATE_ARGS_SIZE: usize = struct_size!(ErrorCreateArgs, errc, i32);

/// The API version of the header the structs above follow (the layout test compares it with
/// jaxlib's `XLA_FFI_API_MAJOR` and `_MINOR`): XLA refuses a handler of another major version,
/// or of a minor version newer than its own.
pub(super) const API_MAJOR: i32 = 0;
pub(super) const API_MINOR: i32 = 3;

pub(super) const EXTENSION_METADATA: i32 = 1;
pub(super) const STAGE_EXECUTE: i32 = 3;
pub(super) const KIND_BUFFER: i32 = 1;
pub(super) const ATTR_ARRAY: i32 = 1;
pub(super) const ATTR_SCALAR: i32 = 3;
pub(super) const ATTR_STRING: i32 = 4;
pub(super) const ERROR_INVALID_ARGUMENT: i32 = 3;
pub(super) const ERROR_INTERNAL: i32 = 13;

/// XLA's element types (`XLA_FFI_DataType`) and the core's.
pub(super) const DTYPES: &[(i32, &str, DType)] = &[
    (1, "PRED", DType::Bool),
    (2, "S8", DType::I8),
    (3, "S16", DType::I16),
    (4, "S32", DType::I32),
    (5, "S64", DType::I64),
    (6, "U8", DType::U8),
    (7, "U16", DType::U16),
    (8, "U32", DType::U32),
    (9, "U64", DType::U64),
    (10, "F16", DType::F16),
    (11, "F32", DType::F32),
    (12, "F64", DType::F64),
    (15, "C64", DType::C64),
    (16, "BF16", DType::BF16),
    (18, "C128", DType::C128),
    (19, "F8E5M2", DType::F8E5M2),
    (20, "F8E4M3FN", DType::F8E4M3),
];
pub(super) const S64: i32 = 5;
pub(super) const F64: i32 = 12;
pub(super) const PRED: i32 = 1;
pub(super) const U8: i32 = 6;

/// The structs' sizes and offsets as this crate lays them out, which the tests compare with a
/// C compiler's reading of jaxlib's header.
#[pyfunction]
pub(crate) fn xla_layout() -> Vec<(String, usize)> {
    let dtypes = DTYPES
        .iter()
        .map(|&(value, name, _)| (format!("XLA_FFI_DataType_{name}"), value as usize));
    let fields = vec![
        ("XLA_FFI_CallFrame_STRUCT_SIZE", CALL_FRAME_SIZE),
        ("XLA_FFI_Buffer_STRUCT_SIZE", BUFFER_SIZE),
        ("XLA_FFI_Args_STRUCT_SIZE", ARGS_SIZE),
        ("XLA_FFI_Attrs_STRUCT_SIZE", ATTRS_SIZE),
        ("XLA_FFI_Metadata_STRUCT_SIZE", METADATA_SIZE),
        (
            "XLA_FFI_Metadata_Extension_STRUCT_SIZE",
            METADATA_EXTENSION_SIZE,
        ),
        ("XLA_FFI_Api_Version_STRUCT_SIZE", API_VERSION_SIZE),
        (
            "XLA_FFI_Error_Create_Args_STRUCT_SIZE",
            ERROR_CREATE_ARGS_SIZE,
        ),
        (
            "offsetof(XLA_FFI_CallFrame, stage)",
            offset_of!(CallFrame, stage),
        ),
        (
            "offsetof(XLA_FFI_CallFrame, args)",
            offset_of!(CallFrame, args),
        ),
        (
            "offsetof(XLA_FFI_CallFrame, rets)",
            offset_of!(CallFrame, rets),
        ),
        (
            "offsetof(XLA_FFI_CallFrame, attrs)",
            offset_of!(CallFrame, attrs),
        ),
        (
            "offsetof(XLA_FFI_Api, XLA_FFI_Error_Create)",
            offset_of!(Api, error_create),
        ),
        ("offsetof(XLA_FFI_Buffer, dtype)", offset_of!(Buffer, dtype)),
        ("offsetof(XLA_FFI_Buffer, data)", offset_of!(Buffer, data)),
        ("offsetof(XLA_FFI_Buffer, rank)", offset_of!(Buffer, rank)),
        ("offsetof(XLA_FFI_Attrs, names)", offset_of!(Attrs_, names)),
        (
            "offsetof(XLA_FFI_Metadata, traits)",
            offset_of!(Metadata, traits),
        ),
        ("sizeof(XLA_FFI_Scalar)", size_of::<Scalar>()),
        ("sizeof(XLA_FFI_Array)", size_of::<Array>()),
        ("sizeof(XLA_FFI_ByteSpan)", size_of::<ByteSpan>()),
        ("XLA_FFI_API_MAJOR", API_MAJOR as usize),
        ("XLA_FFI_Extension_Metadata", EXTENSION_METADATA as usize),
        ("XLA_FFI_ExecutionStage_EXECUTE", STAGE_EXECUTE as usize),
        ("XLA_FFI_ArgType_BUFFER", KIND_BUFFER as usize),
        ("XLA_FFI_AttrType_ARRAY", ATTR_ARRAY as usize),
        ("XLA_FFI_AttrType_SCALAR", ATTR_SCALAR as usize),
        ("XLA_FFI_AttrType_STRING", ATTR_STRING as usize),
        (
            "XLA_FFI_Error_Code_INVALID_ARGUMENT",
            ERROR_INVALID_ARGUMENT as usize,
        ),
        ("XLA_FFI_Error_Code_INTERNAL", ERROR_INTERNAL as usize),
        ("XLA_FFI_DataType_S64", S64 as usize),
        ("XLA_FFI_DataType_F64", F64 as usize),
        ("XLA_FFI_DataType_PRED", PRED as usize),
        ("XLA_FFI_DataType_U8", U8 as usize),
        ("XLA_FFI_API_MINOR", API_MINOR as usize),
        ("XLA_FFI_Extension_Base_STRUCT_SIZE", EXTENSION_BASE_SIZE),
        (
            "offsetof(XLA_FFI_Extension_Base, type)",
            offset_of!(ExtensionBase, kind),
        ),
        (
            "offsetof(XLA_FFI_Extension_Base, next)",
            offset_of!(ExtensionBase, next),
        ),
        (
            "offsetof(XLA_FFI_Api_Version, major_version)",
            offset_of!(ApiVersion, major_version),
        ),
        (
            "offsetof(XLA_FFI_Api_Version, minor_version)",
            offset_of!(ApiVersion, minor_version),
        ),
        (
            "offsetof(XLA_FFI_Api, api_version)",
            offset_of!(Api, api_version),
        ),
        (
            "offsetof(XLA_FFI_Error_Create_Args, message)",
            offset_of!(ErrorCreateArgs, message),
        ),
        (
            "offsetof(XLA_FFI_Error_Create_Args, errc)",
            offset_of!(ErrorCreateArgs, errc),
        ),
        (
            "offsetof(XLA_FFI_CallFrame, extension_start)",
            offset_of!(CallFrame, extension_start),
        ),
        (
            "offsetof(XLA_FFI_CallFrame, api)",
            offset_of!(CallFrame, api),
        ),
        ("offsetof(XLA_FFI_Args, size)", offset_of!(Args, size)),
        ("offsetof(XLA_FFI_Args, types)", offset_of!(Args, types)),
        ("offsetof(XLA_FFI_Args, args)", offset_of!(Args, args)),
        ("offsetof(XLA_FFI_Rets, rets)", offset_of!(Args, args)),
        ("sizeof(XLA_FFI_Rets)", size_of::<Args>()),
        ("offsetof(XLA_FFI_Attrs, size)", offset_of!(Attrs_, size)),
        ("offsetof(XLA_FFI_Attrs, types)", offset_of!(Attrs_, types)),
        ("offsetof(XLA_FFI_Attrs, attrs)", offset_of!(Attrs_, attrs)),
        ("offsetof(XLA_FFI_Buffer, dims)", offset_of!(Buffer, dims)),
        ("offsetof(XLA_FFI_Scalar, value)", offset_of!(Scalar, value)),
        ("offsetof(XLA_FFI_Array, size)", offset_of!(Array, size)),
        ("offsetof(XLA_FFI_Array, data)", offset_of!(Array, data)),
        ("offsetof(XLA_FFI_ByteSpan, len)", offset_of!(ByteSpan, len)),
        (
            "offsetof(XLA_FFI_Metadata, api_version)",
            offset_of!(Metadata, api_version),
        ),
        (
            "offsetof(XLA_FFI_Metadata_Extension, metadata)",
            offset_of!(MetadataExtension, metadata),
        ),
    ];
    fields
        .into_iter()
        .map(|(expr, value)| (expr.to_string(), value))
        .chain(dtypes)
        .collect()
}
