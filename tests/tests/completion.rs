//! Completion end to end, in process: suggestions for prompt arguments and template
//! variables from registered completers, the 100-value limit, errors, and the capability.

use serde_json::{Value, json};
use tests::serve::{connect, connect_with};
use tests::stdio::error_code;
use typed_mcp::prelude::*;
use typed_mcp::server::CompletionCall;

/// Translates text.
///
/// # Arguments
/// * `text` - What to translate.
/// * `language` - Into which language.
#[prompt]
fn translate(text: String, language: String) -> String {
    format!("Translate into {language}: {text}")
}

/// One ticket of a project.
#[resource("tickets://{project}/{number}")]
fn ticket(project: String, number: u32) -> String {
    format!("{project}#{number}")
}

fn server() -> Server {
    let numbers = Completer::new(|call: CompletionCall| async move {
        let project = call.context.get("project").cloned().unwrap_or_default();
        let all: Vec<String> = (1..=250).map(|n| n.to_string()).filter(|n| n.starts_with(&call.value)).collect();
        Ok::<_, ErrorObject>(if project == "tiny" { all.into_iter().take(2).collect() } else { all })
    });
    Server::builder("complete", "1.0.0")
        .prompts(prompts![translate])
        .resource(<ticket as typed_mcp::resource::ResourceFn>::definition().complete("number", numbers))
        .complete_prompt_argument("translate", "language", Completer::values(["English", "Esperanto", "French"]))
        .complete_template_variable("tickets://{project}/{number}", "project", Completer::values(["mcp", "tiny"]))
        .build()
        .expect("valid server")
}

fn prompt_ref(argument: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": "translate"}, "argument": {"name": argument, "value": value}})
}

fn template_ref(argument: &str, value: &str, context: Value) -> Value {
    json!({
        "ref": {"type": "ref/resource", "uri": "tickets://{project}/{number}"},
        "argument": {"name": argument, "value": value},
        "context": {"arguments": context}
    })
}

#[tokio::test]
async fn completes_prompt_arguments() {
    let (mut client, init) = connect_with(&server(), json!({})).await;
    assert_eq!(init["capabilities"]["completions"], json!({}));
    assert_eq!(
        client.result("completion/complete", prompt_ref("language", "e")).await,
        json!({"completion": {"values": ["English", "Esperanto"]}})
    );
    assert_eq!(
        client.result("completion/complete", prompt_ref("language", "Fr")).await,
        json!({"completion": {"values": ["French"]}})
    );
    // A declared argument without a completer has no suggestions.
    assert_eq!(
        client.result("completion/complete", prompt_ref("text", "hel")).await,
        json!({"completion": {"values": []}})
    );
}

#[tokio::test]
async fn completes_template_variables_with_context_and_at_most_100_values() {
    let mut client = connect(&server()).await;
    assert_eq!(
        client.result("completion/complete", template_ref("project", "m", json!({}))).await,
        json!({"completion": {"values": ["mcp"]}})
    );
    let many = client.result("completion/complete", template_ref("number", "", json!({"project": "mcp"}))).await;
    let values = many["completion"]["values"].as_array().unwrap();
    assert_eq!(values.len(), 100);
    assert_eq!((&values[0], &values[99]), (&json!("1"), &json!("100")));
    assert_eq!((&many["completion"]["total"], &many["completion"]["hasMore"]), (&json!(250), &json!(true)));
    assert_eq!(
        client.result("completion/complete", template_ref("number", "2", json!({"project": "tiny"}))).await,
        json!({"completion": {"values": ["2", "20"]}})
    );
}

#[tokio::test]
async fn unknown_references_are_invalid_params() {
    let mut client = connect(&server()).await;
    let cases = [
        (
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
            "unknown prompt: `nope`",
        ),
        (prompt_ref("tone", ""), "prompt `translate` has no argument `tone`"),
        (
            json!({"ref": {"type": "ref/resource", "uri": "tickets://{x}"}, "argument": {"name": "x", "value": ""}}),
            "unknown resource template: `tickets://{x}`",
        ),
        (
            template_ref("owner", "", json!({})),
            "resource template `tickets://{project}/{number}` has no variable `owner`",
        ),
    ];
    for (params, message) in cases {
        let response = client.request("completion/complete", params.clone()).await;
        assert_eq!(response["error"], json!({"code": -32602, "message": message}), "{params}");
    }
    let response = client.request("completion/complete", json!({"ref": {"type": "ref/tool", "name": "x"}})).await;
    assert_eq!(error_code(&response), -32602);
}

#[tokio::test]
async fn the_capability_is_declared_only_with_a_completer() {
    let server = Server::builder("c", "1").prompts(prompts![translate]).resources(resources![ticket]).build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert!(init["capabilities"].get("completions").is_none(), "{init}");
    let response = client.request("completion/complete", prompt_ref("language", "")).await;
    assert_eq!(error_code(&response), -32601);
}

#[tokio::test]
async fn the_capability_can_be_declared_for_completers_added_later() {
    let server = Server::builder("c", "1").prompts(prompts![translate]).completions().build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"]["completions"], json!({}));
    let response = client.request("completion/complete", prompt_ref("language", "E")).await;
    assert_eq!(response["result"]["completion"]["values"], json!([]), "{response}");
}

#[tokio::test]
async fn completers_for_unknown_targets_fail_the_build() {
    let err = Server::builder("c", "1")
        .prompts(prompts![translate])
        .complete_prompt_argument("translate", "tone", Completer::values(["x"]))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a completer is registered for `tone` of prompt `translate`, which has no such argument"
    );
    let err = Server::builder("c", "1")
        .complete_template_variable("x://{a}", "a", Completer::values(["x"]))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a completer is registered for `a` of resource template `x://{a}`, which has no such argument"
    );
}
