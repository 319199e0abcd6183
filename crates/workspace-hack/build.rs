// Cargo builds a crate's build-dependencies only for a build script; this one does nothing.
fn main() {}
