//! Compile-time diagnostics of `#[derive(Elicit)]`, as trybuild snapshots.
//!
//! When the toolchain changes the wording of its own messages, re-bless with
//! `TRYBUILD=overwrite cargo test -p tests --test integration macros_ui_elicit::` and review the diff.

#[test]
fn elicit_derive_diagnostics() {
    let t = trybuild::TestCases::new();
    // Paths are relative to this crate's directory (`tests/`), where cargo runs its tests.
    t.compile_fail("ui/elicit/*.rs");
    t.pass("ui/elicit/pass/*.rs");
}
