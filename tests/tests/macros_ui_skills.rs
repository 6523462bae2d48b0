//! Compile-time diagnostics of `embed_skills!`, as trybuild snapshots.
//!
//! When the toolchain changes the wording of its own messages, re-bless with
//! `TRYBUILD=overwrite cargo test -p tests --test integration macros_ui_skills::` and review the diff.

#[test]
fn embed_skills_diagnostics() {
    let t = trybuild::TestCases::new();
    // Paths are relative to this crate's directory (`tests/`), where cargo runs its tests.
    t.compile_fail("ui/skills/*.rs");
}
