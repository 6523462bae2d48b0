use typed_mcp::prelude::*;

struct Calc;

#[toolbox]
impl Clone for Calc {
    /// Clones.
    #[tool]
    fn clone(&self) -> Self {
        Calc
    }
}

fn main() {
    let _ = Server::builder("t", "1").toolbox(Calc);
}
