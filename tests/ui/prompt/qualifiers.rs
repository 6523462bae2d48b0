use typed_mcp::prelude::*;

/// Constant.
#[prompt]
const fn constant() -> &'static str {
    "x"
}

/// Unsafe.
#[prompt]
unsafe fn risky() -> String {
    String::new()
}

/// Foreign.
#[prompt]
extern "C" fn foreign() -> &'static str {
    "x"
}

fn main() {}
