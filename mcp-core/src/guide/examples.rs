//! # The examples
//!
//! The repository's `examples/` directory holds complete programs, one file each, that build
//! with the published crates alone; run one from a clone with
//! `cargo run -p examples --bin NAME`. `examples/README.md` lists them with what each shows.
