//! The copy engine, below the ops' shape checks: the index check, the parallel split and the
//! copy loops over flat row-major data ([`kernel`]), params of any layout read in place
//! ([`strided`]), whole ragged rows ([`ranges`]), strings ([`string_gather`]), the fill pass
//! ([`fill`]), callers' arrays of any layout ([`layout`]); and the machine's instructions the
//! loops use ([`simd`]). The memory the outputs live in is the layer below
//! ([`crate::mem`]). `unsafe` code lives there and in `simd`, each block beside its proof.

#[forbid(unsafe_code)]
pub(crate) mod fill;
#[forbid(unsafe_code)]
pub(crate) mod layout;
// Its tests call the AVX2 clones of its loops, which takes `unsafe` (the CPU is checked).
#[cfg_attr(not(test), forbid(unsafe_code))]
pub(crate) mod kernel;
#[forbid(unsafe_code)]
pub(crate) mod ranges;
#[allow(unsafe_code)]
pub(crate) mod simd;
#[forbid(unsafe_code)]
pub(crate) mod strided;
#[forbid(unsafe_code)]
pub(crate) mod string_gather;
