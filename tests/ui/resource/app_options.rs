use typed_mcp::prelude::*;

/// A view that is not at a `ui://` URI.
#[resource("https://board/view.html", app)]
fn not_ui() -> &'static str {
    "<p>"
}

/// A view's options without `app`.
#[resource("ui://board/a.html", connect_domains = ["https://api.example.com"], prefers_border)]
fn not_app() -> &'static str {
    "<p>"
}

/// A view with a MIME type of its own.
#[resource("ui://board/b.html", app, mime_type = "text/html")]
fn own_mime() -> &'static str {
    "<p>"
}

/// A view that is a template.
#[resource("ui://board/{id}", app)]
fn template(id: String) -> String {
    id
}

/// Origins that are not origins, and a permission that does not exist.
#[resource("ui://board/c.html", app, connect_domains = ["api.example.com", "https://a.example; script-src *"], permissions = ["camera", "usb"])]
fn bad_policy() -> &'static str {
    "<p>"
}

/// A misspelt option.
#[resource("ui://board/d.html", app, conect_domains = ["https://api.example.com"])]
fn misspelt() -> &'static str {
    "<p>"
}

fn main() {}
