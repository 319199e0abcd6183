//! Build-time only: see this crate's `Cargo.toml`. It has no code; its dependencies' features
//! are what it is for.
