//! A `text/event-stream` body as the Streamable HTTP client reads it: any bytes, from a server
//! that may be hostile. Checked besides "no panic": the body gives the same events, last event
//! id and retry delay whether it arrives at once or in chunks (of lengths read from the input),
//! and what the parser holds never exceeds its limit (read from the first byte).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    typed_mcp::fuzzing::check_sse(data);
});
