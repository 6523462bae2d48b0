//! Compile-time diagnostics of `#[prompt]` and `#[resource]`, as trybuild snapshots.
//!
//! When the toolchain changes the wording of its own messages, re-bless with
//! `TRYBUILD=overwrite cargo test -p tests --test integration macros_ui_prompt_resource::` and review the diff.

#[test]
fn prompt_and_resource_macro_diagnostics() {
    let t = trybuild::TestCases::new();
    // Paths are relative to this crate's directory (`tests/`), where cargo runs its tests.
    t.compile_fail("ui/prompt/*.rs");
    t.compile_fail("ui/resource/*.rs");
    t.pass("ui/prompt/pass/*.rs");
    t.pass("ui/resource/pass/*.rs");
}
