//! The arguments of a `tools/call`, as the server reads them: a scan for where each member
//! of the object starts and ends (no JSON tree is built). Checked besides "no panic": on any
//! input, the scanner and serde_json agree on whether it is an arguments object (or `null`),
//! and on every member's name and value text, in order.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        typed_mcp::fuzzing::check_arguments(text);
    }
});
