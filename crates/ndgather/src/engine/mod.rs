//! The copy engine, below the ops' shape checks: the index check, the parallel split and the
//! copy loops over flat row-major data ([`kernel`]), params of any layout read in place
//! ([`strided`]), whole ragged rows ([`ranges`]), strings ([`string_gather`]) and the fill pass ([`fill`]); the memory the
//! outputs live in ([`mem`]); and the machine's instructions the loops use ([`simd`]).
//! `unsafe` code lives in `mem` and `simd`, each block beside its proof.

#[forbid(unsafe_code)]
pub(crate) mod fill;
// Its tests call the AVX2 clones of its loops, which takes `unsafe` (the CPU is checked).
#[cfg_attr(not(test), forbid(unsafe_code))]
pub(crate) mod kernel;
#[allow(unsafe_code)]
pub(crate) mod mem;
#[forbid(unsafe_code)]
pub(crate) mod ranges;
#[allow(unsafe_code)]
pub(crate) mod simd;
#[forbid(unsafe_code)]
pub(crate) mod strided;
#[forbid(unsafe_code)]
pub(crate) mod string_gather;
