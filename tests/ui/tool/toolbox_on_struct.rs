use typed_mcp::prelude::*;

#[toolbox]
pub(crate) struct Calc {
    base: i64,
}

fn main() {
    let _ = Calc { base: 1 }.base;
}
