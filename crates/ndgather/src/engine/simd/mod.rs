//! What the copy loops ask of the processor beyond plain loads and stores: prefetch hints
//! ([`prefetch`]), streaming stores ([`stream`]) and the AVX-512 gather instruction
//! ([`vector_gather`]).

pub(crate) mod prefetch;
pub(crate) mod stream;
pub(crate) mod vector_gather;
