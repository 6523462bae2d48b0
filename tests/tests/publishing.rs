//! What publishing needs, as a test binary of its own: the packages would publish and build
//! from their `.crate` files, every feature builds, the documentation builds as docs.rs builds
//! it, and the README's program builds in a new project.
//!
//! These tests run cargo, which compiles for minutes on a small machine. Cargo runs test
//! binaries one after another, so keeping them out of `integration` keeps that load away from
//! the timing-sensitive tests there. Run them with `cargo test -p tests --test publishing`.

mod docs;
mod packaging;
