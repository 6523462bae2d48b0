use typed_mcp::prelude::*;

struct Counter {
    start: i64,
}

#[toolbox]
impl Counter {
    /// Adds `n` to the start.
    #[tool]
    async fn bump(&mut self, n: i64) -> i64 {
        self.start += n;
        self.start
    }

    /// Consumes the counter.
    #[tool]
    fn finish(self) -> i64 {
        self.start
    }

    /// Boxed.
    #[tool]
    fn boxed(self: Box<Self>) -> i64 {
        self.start
    }
}

fn main() {
    let _ = Server::builder("t", "1").toolbox(Counter { start: 1 });
}
