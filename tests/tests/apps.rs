//! MCP Apps (`io.modelcontextprotocol/ui`) end to end, in process, in both eras: a tool's
//! `_meta.ui` in `tools/list`, the view served as `text/html;profile=mcp-app` with its
//! `_meta.ui`, the extension in both sides' capabilities, the client's host-side helpers, a
//! call from a client without apps, and what `build()` refuses.

use serde_json::{Value, json};
use tests::serve::connect_with;
use typed_mcp::apps::{self, Permissions, ToolUi, Visibility};
use typed_mcp::client::{Client, ProtocolEra};
use typed_mcp::prelude::*;
use typed_mcp::testing;

const VIEW: &str = "<!doctype html><title>Board</title><p>Board</p>";

/// Shows the board.
#[tool(ui = "ui://board/view.html", read_only)]
fn show_board(ctx: Context) -> String {
    let apps = apps::client_supports(&ctx);
    format!("The board has 2 tasks: write, test. (apps: {apps})")
}

/// Moves a task (the view calls this).
#[tool(visibility = "app")]
fn move_task(id: u32, position: u32) -> String {
    format!("moved {id} to {position}")
}

/// Only the model calls this.
#[tool(visibility = ["model"])]
fn summarize() -> &'static str {
    "two tasks"
}

/// The board's view.
#[resource("ui://board/view.html", app, connect_domains = ["https://api.example.com"], permissions = ["clipboard_write"], prefers_border)]
fn board_view() -> &'static str {
    VIEW
}

fn server() -> Server {
    Server::builder("board", "1.0.0")
        .tools(tools![show_board, move_task, summarize])
        .resources(resources![board_view])
        .resource(
            AppResource::html("ui://board/help.html", "<!doctype html><p>Help</p>")
                .title("Help")
                .resource_domains(["https://*.cdn.example"])
                .permissions(Permissions::new().camera())
                .into(),
        )
        .tool(
            ToolDef::new_sync("help", json!({"type": "object"}).as_object().cloned().unwrap(), |_| {
                Ok::<_, ErrorObject>("Press a card to move it.")
            })
            .ui("ui://board/help.html")
            .visibility(Visibility::ModelAndApp),
        )
        .build()
        .expect("a valid server")
}

async fn connect(era: ProtocolEra, apps: bool) -> Client {
    let builder = testing::client().protocol_era(era);
    let builder = if apps { builder.apps() } else { builder };
    builder.connect_in_process(&server()).await.unwrap_or_else(|e| panic!("cannot connect in {era:?}: {e}"))
}

const ERAS: [ProtocolEra; 2] = [ProtocolEra::Y2025, ProtocolEra::Y2026];

#[tokio::test]
async fn tools_list_carries_the_view_and_visibility_in_both_eras() {
    for era in ERAS {
        let client = connect(era, true).await;
        let tools = client.list_all_tools().await.unwrap();
        let meta = |name: &str| {
            let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name} is listed in {era:?}"));
            Value::Object(tool.meta.clone().unwrap_or_default())
        };
        assert_eq!(
            meta("show_board"),
            json!({"ui": {"resourceUri": "ui://board/view.html"}, "ui/resourceUri": "ui://board/view.html"}),
            "{era:?}"
        );
        assert_eq!(meta("move_task"), json!({"ui": {"visibility": ["app"]}}), "{era:?}");
        assert_eq!(meta("summarize"), json!({"ui": {"visibility": ["model"]}}), "{era:?}");
        assert_eq!(
            meta("help"),
            json!({"ui": {"resourceUri": "ui://board/help.html", "visibility": ["model", "app"]}, "ui/resourceUri": "ui://board/help.html"}),
            "{era:?}"
        );

        let with_views = client.list_app_tools().await.unwrap();
        let names: Vec<&str> = with_views.iter().map(|(t, _)| t.name.as_str()).collect();
        assert_eq!(names, ["show_board", "move_task", "summarize", "help"], "{era:?}");
        let model: Vec<String> = client.list_model_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(model, ["show_board", "summarize", "help"], "the app-only tool is hidden from the model ({era:?})");
        let (_, ui) = with_views.iter().find(|(t, _)| t.name == "move_task").unwrap();
        assert_eq!(ui.visibility(), Some(Visibility::App));
        assert!(ui.callable_by_app() && !ui.visible_to_model());
        client.close().await;
    }
}

#[tokio::test]
async fn the_view_is_read_with_its_meta_in_both_eras() {
    for era in ERAS {
        let client = connect(era, true).await;
        assert!(client.server_supports_apps(), "{era:?}");
        let view = client.read_app_view("ui://board/view.html").await.unwrap();
        assert_eq!(view.html, VIEW);
        assert_eq!(view.mime_type, apps::MIME_TYPE);
        let csp = view.meta.csp.clone().expect("a policy");
        assert_eq!(csp.connect_domains, ["https://api.example.com"]);
        assert!(csp.resource_domains.is_empty());
        assert_eq!(view.meta.permissions, Some(Permissions::new().clipboard_write()));
        assert_eq!(view.meta.prefers_border, Some(true));

        let raw = client.read_resource("ui://board/view.html").await.unwrap();
        assert_eq!(
            serde_json::to_value(&raw.contents).unwrap(),
            json!([{
                "uri": "ui://board/view.html",
                "mimeType": "text/html;profile=mcp-app",
                "text": VIEW,
                "_meta": {"ui": {
                    "csp": {"connectDomains": ["https://api.example.com"]},
                    "permissions": {"clipboardWrite": {}},
                    "prefersBorder": true
                }}
            }]),
            "{era:?}"
        );
        let listed = client.list_all_resources().await.unwrap();
        let help = listed.iter().find(|r| r.uri == "ui://board/help.html").expect("the help view is listed");
        assert_eq!(help.mime_type.as_deref(), Some(apps::MIME_TYPE));
        assert_eq!(
            Value::Object(help.meta.clone().unwrap()),
            json!({"ui": {"csp": {"resourceDomains": ["https://*.cdn.example"]}, "permissions": {"camera": {}}}})
        );
        let help = client.read_app_view("ui://board/help.html").await.unwrap();
        assert_eq!(help.html, "<!doctype html><p>Help</p>");
        assert_eq!(help.meta.permissions, Some(Permissions::new().camera()));
        client.close().await;
    }
}

#[tokio::test]
async fn the_client_declares_the_extension_when_asked_and_tools_answer_in_text_either_way() {
    for era in ERAS {
        for declared in [true, false] {
            let client = connect(era, declared).await;
            let result = client.call_tool("show_board", json!({})).await.unwrap();
            assert_eq!(result.is_error, None);
            assert_eq!(
                result.content,
                vec![Content::text(format!("The board has 2 tasks: write, test. (apps: {declared})"))],
                "{era:?}, extension declared: {declared}"
            );
            client.close().await;
        }
    }
}

#[tokio::test]
async fn both_sides_declare_the_extension_on_the_wire() {
    let declared = testing::client().apps().capabilities();
    assert_eq!(
        serde_json::to_value(&declared).unwrap(),
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    );
    let (_, init) = connect_with(&server(), json!({})).await;
    assert_eq!(
        init["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
    );
    let plain = Server::builder("plain", "1.0.0").tools(tools![summarize_plain]).build().unwrap();
    let (_, init) = connect_with(&plain, json!({})).await;
    assert_eq!(init["capabilities"].get("extensions"), None, "a server without apps declares nothing");
}

/// Not an app.
#[tool]
fn summarize_plain() -> &'static str {
    "two tasks"
}

#[tokio::test]
async fn a_view_that_is_not_one_is_refused_by_the_client() {
    let client = connect(ProtocolEra::Y2025, true).await;
    let not_ui = client.read_app_view("https://board/view.html").await.unwrap_err();
    assert!(not_ui.to_string().contains("not a `ui://` URI"), "{not_ui}");
    let plain = Server::builder("p", "1")
        .resource(ResourceDef::new("ui://p/page", "page", |_| async { Ok::<_, ErrorObject>("<p>") }))
        .build()
        .unwrap();
    let client = testing::client().apps().connect_in_process(&plain).await.unwrap();
    let error = client.read_app_view("ui://p/page").await.unwrap_err();
    assert!(error.to_string().contains("not an MCP App's view"), "{error}");
    assert!(!client.server_supports_apps());
}

fn empty_schema() -> typed_mcp::protocol::JsonObject {
    json!({"type": "object"}).as_object().cloned().unwrap()
}

fn tool_showing(uri: &str) -> ToolDef {
    ToolDef::new_sync("show", empty_schema(), |_| Ok::<_, ErrorObject>("shown")).ui(uri)
}

#[test]
fn build_refuses_a_view_that_is_missing_or_not_a_view() {
    let error = Server::builder("s", "1").tool(tool_showing("ui://board/none.html")).build().unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool `show` shows the view `ui://board/none.html`, but no resource is registered at that URI; register it with `#[resource(\"ui://board/none.html\", app)]` or `AppResource`"
    );
    let error = Server::builder("s", "1")
        .tool(tool_showing("ui://board/page"))
        .resource(ResourceDef::new("ui://board/page", "page", |_| async { Ok::<_, ErrorObject>("<p>") }))
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("is not an MCP App view (it has no `app` option)"), "{error}");
    let error = Server::builder("s", "1").tool(tool_showing("https://board/page")).build().unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool `show`: `https://board/page` is not a `ui://` URI; a view's URI starts with `ui://`"
    );
}

#[test]
fn build_refuses_views_that_cannot_be_views() {
    let error = Server::builder("s", "1").resource(AppResource::html("app://board", "<p>").into()).build().unwrap_err();
    assert_eq!(
        error.to_string(),
        "view `app://board`: `app://board` is not a `ui://` URI; a view's URI starts with `ui://`"
    );
    let template = ResourceDef::template("ui://board/{id}", "board", |_| async { Ok::<_, ErrorObject>("<p>") })
        .app(typed_mcp::apps::UiResourceMeta::new());
    let error = Server::builder("s", "1").resource(template).build().unwrap_err();
    assert!(error.to_string().contains("cannot be a URI template"), "{error}");
    let bad_origin = AppResource::html("ui://board", "<p>").connect_domains(["https://a.example; script-src *"]);
    let error = Server::builder("s", "1").resource(bad_origin.into()).build().unwrap_err();
    assert!(
        error.to_string().starts_with(
            "view `ui://board`: in its content security policy, `https://a.example; script-src *` is not an origin"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_view_read_from_disk_is_read_at_each_request() {
    let dir = std::env::temp_dir().join(format!("typed-mcp-apps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("view.html");
    std::fs::write(&file, "<p>one</p>").unwrap();
    let server = Server::builder("s", "1").resource(AppResource::file("ui://dev/view", &file).into()).build().unwrap();
    let client = testing::client().apps().connect_in_process(&server).await.unwrap();
    assert_eq!(client.read_app_view("ui://dev/view").await.unwrap().html, "<p>one</p>");
    std::fs::write(&file, "<p>two</p>").unwrap();
    assert_eq!(client.read_app_view("ui://dev/view").await.unwrap().html, "<p>two</p>");
    std::fs::remove_file(&file).unwrap();
    let error = client.read_app_view("ui://dev/view").await.unwrap_err();
    assert!(error.to_string().contains("could not be read"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_tool_added_at_run_time_is_checked_like_one_at_build_time() {
    let server = Server::builder("s", "1").dynamic_tools().build().unwrap();
    let error = server.add_tool(tool_showing("ui://nothing/here")).await.unwrap_err();
    assert!(error.to_string().contains("no resource is registered at that URI"), "{error}");
}

#[test]
fn tool_ui_reads_what_the_macros_wrote() {
    let def = <show_board as typed_mcp::tool::ToolFn>::definition();
    let ui = def.app().expect("a view");
    assert_eq!(ui, ToolUi { resource_uri: Some("ui://board/view.html".into()), visibility: None });
    assert!(ui.visible_to_model());
}

/// The `apps` example over stdio, as a Rust host sees it in either era: the model's tools
/// without the app-only one, the view compiled in, a call from the view, and the form of
/// `plan_task` beside the app.
#[tokio::test]
async fn the_example_board_serves_its_view_and_answers_in_text_in_both_eras() {
    let binary = tests::interop::example_binary("apps");
    for era in ERAS {
        let mut command = tokio::process::Command::new(&binary);
        command.env("RUST_LOG", "warn");
        let script = testing::ElicitationScript::new().accept(json!({"title": "Plan the launch", "priority": "high"}));
        let client = testing::client()
            .protocol_era(era)
            .apps()
            .elicitation(script)
            .connect_stdio(command)
            .await
            .unwrap_or_else(|e| panic!("cannot start the apps example in {era:?}: {e}"));
        assert!(client.server_supports_apps());
        let model: Vec<String> = client.list_model_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(model, ["show_board", "add_task", "plan_task"], "{era:?}");

        let views = client.list_app_tools().await.unwrap();
        let uri = views.iter().find_map(|(_, ui)| ui.resource_uri.clone()).expect("a tool with a view");
        assert_eq!(uri, "ui://task-board/board.html");
        let view = client.read_app_view(&uri).await.unwrap();
        assert_eq!(view.html, include_str!("../../examples/apps/board.html"), "the view is compiled in");
        assert_eq!(view.meta.prefers_border, Some(true));
        assert_eq!(view.meta.csp, None, "the board reaches no other origin");

        let shown = client.call_tool("show_board", json!({})).await.unwrap();
        assert_eq!(
            shown.content,
            vec![Content::text(
                "The board has 2 task(s):\n1. Write the release notes (#1, High)\n2. Answer the issue about proxies (#2, Normal)"
            )]
        );
        assert_eq!(shown.structured_content.as_ref().unwrap()["tasks"][1]["title"], "Answer the issue about proxies");

        let planned = client.call_tool("plan_task", json!({})).await.unwrap();
        assert_eq!(
            planned.content[0],
            Content::text(
                "Added “Plan the launch” (#3).\n1. Write the release notes (#1, High)\n2. Answer the issue about proxies (#2, Normal)\n3. Plan the launch (#3, High)"
            ),
            "{era:?}"
        );
        let moved = client.call_tool("move_task", json!({"id": 3, "position": 1})).await.unwrap();
        let order: Vec<&str> = moved.structured_content.as_ref().unwrap()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap())
            .collect();
        assert_eq!(order, ["Plan the launch", "Write the release notes", "Answer the issue about proxies"]);
        let empty = client.call_tool("add_task", json!({"title": "  "})).await.unwrap();
        assert_eq!(empty.is_error, Some(true), "an empty title is the model's mistake to correct");
        client.close().await;
    }
}
