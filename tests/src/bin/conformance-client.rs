//! A client for the client scenarios of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written with `typed_mcp::client`.
//!
//! The suite starts a test server for a scenario and runs this program with the server's URL as
//! the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`:
//!
//! ```sh
//! npx @modelcontextprotocol/conformance client --scenario tools_call \
//!     --command "cargo run -q -p tests --bin conformance-client"
//! ```
//!
//! The suite names the revision under test in `MCP_CONFORMANCE_PROTOCOL_VERSION`: `2026-07-28`
//! makes the client speak the 2026-07-28 era, anything else a session (`initialize`). Some
//! scenarios pass more in `MCP_CONFORMANCE_CONTEXT` (JSON), such as the tool calls to make.
//!
//! Scenarios: `initialize`, `tools_call`, `elicitation-sep1034-client-defaults` (accepts every
//! form with nothing filled in, so the schema's defaults are what is sent), `sse-retry`,
//! `json-schema-2020-12-preservation`, and for the 2026-07-28 era `request-metadata`,
//! `sep-2322-client-request-state` (questions in `input_required` results),
//! `http-standard-headers`, `http-custom-headers`, `http-invalid-tool-headers` and
//! `json-schema-ref-no-deref`; the skills extension's `sep-2640-client-no-prefetch` (lists the
//! skills and reads no file) and `sep-2640-client-verify-digest`, `-verify-size` and
//! `-verify-frontmatter` (loads the first skill, then reads its files, each verified; content
//! that fails verification stops it); and every `auth/*` scenario: the client authorizes with
//! [`OAuth`] (discovery, registration, PKCE, scopes, step-up), playing the person's part
//! itself (it follows the authorization endpoint's redirect without a browser), with the
//! pre-registered credentials the suite passes in the context when it does, and the client ID
//! metadata document URL the suite expects; with the grant the context calls for (client
//! credentials with a secret or a private key, enterprise-managed authorization, workload
//! identity), and DPoP-bound tokens for `auth/dpop*`. Logs go to stderr (`RUST_LOG`).

use std::error::Error;
use std::process::ExitCode;

use serde_json::{Value, json};
use typed_mcp::client::oauth::{
    ClientCredentials, EnterpriseAuthorization, OAuth, OAuthError, SigningKey, TokenSource, authorizer_fn,
};
use typed_mcp::client::{Client, ClientBuilder, ElicitationModes, ProtocolEra, elicitation_fn, sampling_fn};
use typed_mcp::protocol::{
    CreateMessageResult, ElicitResult, Role, Root, SamplingContent, SamplingMessageContent, era_2026,
};

/// The client: the era the suite asks for, and every capability (forms are accepted with their
/// defaults, a boolean `confirmed` set; the model answers "ok"; one root).
fn client() -> ClientBuilder {
    let era = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok(era_2026::PROTOCOL_VERSION_2026_07_28) => ProtocolEra::Y2026,
        _ => ProtocolEra::Y2025,
    };
    Client::builder("mcp-sdk-conformance-client", env!("CARGO_PKG_VERSION"))
        .protocol_era(era)
        .elicitation(elicitation_fn(ElicitationModes::ALL, |request| async move {
            tracing::info!(message = request.message(), "elicitation request");
            match request.as_form() {
                Some(form) => {
                    let mut content = form.defaults();
                    if form.fields().any(|f| f == "confirmed") {
                        content.insert("confirmed".into(), json!(true));
                    }
                    form.accept(content).unwrap_or_else(|_| ElicitResult::accept(Default::default()))
                }
                None => ElicitResult::accept_url(),
            }
        }))
        .sampling(sampling_fn(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingMessageContent::Single(SamplingContent::text("ok")),
                model: "conformance-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        }))
        .roots(vec![Root { uri: "file:///conformance".into(), name: Some("conformance".into()), meta: None }])
}

/// What the suite passes in `MCP_CONFORMANCE_CONTEXT`, if anything.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT").ok().and_then(|c| serde_json::from_str(&c).ok()).unwrap_or(Value::Null)
}

/// Arguments that fit a tool's input schema: a value of each property's type.
fn arguments_for(schema: &typed_mcp::protocol::JsonObject) -> Value {
    let mut arguments = serde_json::Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let value = match property.get("type").and_then(Value::as_str) {
                Some("string") => json!("value"),
                Some("integer") => json!(1),
                Some("number") => json!(1.5),
                Some("boolean") => json!(true),
                _ => continue,
            };
            arguments.insert(name.clone(), value);
        }
    }
    Value::Object(arguments)
}

/// Connects, lists the tools, and calls the first with `{a, b}` (the suite's `add_numbers`).
async fn tools_call(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    if let Some(tool) = tools.first() {
        let result = client.call_tool(&tool.name, json!({"a": 2, "b": 3})).await?;
        tracing::info!(tool = %tool.name, ?result, "called");
    }
    client.close().await;
    Ok(())
}

/// Connects, lists the tools, and closes.
async fn initialize(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    tracing::info!(server = ?client.server_info(), version = client.protocol_version(), "initialized");
    client.list_tools(None).await?;
    client.close().await;
    Ok(())
}

/// Accepts the server's form without filling anything in: the client completes the content
/// with the schema's defaults before sending it (SEP-1034).
async fn elicitation_defaults(url: &str) -> Result<(), Box<dyn Error>> {
    let accept_untouched = elicitation_fn(ElicitationModes::FORM, |request| async move {
        tracing::info!(message = request.message(), "elicitation request; accepting the defaults");
        ElicitResult::accept(Default::default())
    });
    let client = client().elicitation(accept_untouched).connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    let name = "test_client_elicitation_defaults";
    if !tools.iter().any(|t| t.name == name) {
        return Err(format!("the server does not offer `{name}`").into());
    }
    let result = client.call_tool(name, json!({})).await?;
    tracing::info!(?result, "called");
    client.close().await;
    Ok(())
}

/// Calls the tool whose response stream the server closes early; the transport resumes it
/// with `GET` and `Last-Event-ID` after the server's `retry` delay.
async fn sse_retry(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    let tool = tools.first().ok_or("the server offers no tool")?;
    let result = client.call_tool(&tool.name, json!({})).await?;
    tracing::info!(?result, "called");
    client.close().await;
    Ok(())
}

/// Echoes the focal tool's input schema back exactly as received.
async fn schema_preservation(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    let focal = tools.iter().find(|t| t.name == "json_schema_2020_12_tool").ok_or("no focal tool")?;
    client.call_tool("json_schema_echo", json!({"schema": focal.input_schema})).await?;
    client.close().await;
    Ok(())
}

/// Calls each tool the scenario's context lists, with its arguments (after listing the tools,
/// which tells the client which arguments go into headers).
async fn context_tool_calls(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    client.list_all_tools().await?;
    let context = context();
    let calls = context["toolCalls"].as_array().cloned().unwrap_or_default();
    for call in calls {
        let name = call["name"].as_str().ok_or("a tool call without a name")?;
        let result = client.call_tool(name, call["arguments"].clone()).await?;
        tracing::info!(tool = name, ?result, "called");
    }
    client.close().await;
    Ok(())
}

/// Lists the tools and calls every one the client accepts (tools with invalid `x-mcp-header`
/// declarations are left out by the client).
async fn call_every_tool(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    for tool in client.list_all_tools().await? {
        let result = client.call_tool(&tool.name, arguments_for(&tool.input_schema)).await?;
        tracing::info!(tool = %tool.name, ?result, "called");
    }
    client.close().await;
    Ok(())
}

/// Uses every kind of request that names something, so each carries its standard headers.
async fn standard_headers(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    for tool in client.list_all_tools().await? {
        client.call_tool(&tool.name, json!({})).await?;
    }
    for resource in client.list_all_resources().await? {
        client.read_resource(&resource.uri).await?;
    }
    for prompt in client.list_all_prompts().await? {
        client.get_prompt(&prompt.name, &[]).await?;
    }
    client.close().await;
    Ok(())
}

/// Calls the tools whose results ask for input (with and without `requestState`), one that
/// does not (at the same time), and one whose result has no `resultType`.
async fn request_state(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    client.list_all_tools().await?;
    let (echoed, unrelated) = tokio::join!(
        client.call_tool("test_mrtr_echo_state", json!({})),
        client.call_tool("test_mrtr_unrelated", json!({}))
    );
    tracing::info!(?echoed, ?unrelated, "called");
    echoed?;
    unrelated?;
    client.call_tool("test_mrtr_no_state", json!({})).await?;
    client.call_tool("test_mrtr_no_result_type", json!({})).await?;
    client.close().await;
    Ok(())
}

/// Lists the server's skills as a host does when it connects, and reads none of their files
/// (nothing is fetched before a skill is loaded).
async fn skills_listed(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    for skill in client.list_skills().await? {
        tracing::info!(uri = %skill.uri, name = ?skill.name(), "listed");
    }
    client.close().await;
    Ok(())
}

/// Lists the skills, loads the first (its `SKILL.md`, verified against the listing) and then
/// reads its other files, each verified: content that fails a check stops it there.
async fn skill_loaded(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    let skills = client.list_skills().await?;
    let entry = skills.first().ok_or("the server lists no skill")?;
    let loaded = client.load_skill(entry).await;
    let skill = match loaded {
        Ok(skill) => skill,
        Err(e) => {
            client.close().await;
            return Err(e.into());
        }
    };
    tracing::info!(name = skill.name(), "loaded");
    for file in skill.files() {
        let bytes = client.read_skill_file(&skill.entry, &file.uri).await?;
        tracing::info!(uri = %file.uri, bytes = bytes.len(), "read");
    }
    client.close().await;
    Ok(())
}

/// The client ID metadata document URL the suite's authorization servers expect.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Where the authorization server sends the "browser" back to (never listened on: the
/// redirect is read from the authorization endpoint's answer).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The OAuth settings for an `auth/*` scenario, from what the suite passes in the context: a
/// private key (client credentials with `private_key_jwt`), an identity provider's ID token
/// (enterprise-managed authorization), a workload token (workload identity), a client secret
/// for a client-credentials scenario; else the authorization code flow, with DPoP for the
/// DPoP scenarios.
fn oauth(scenario: &str) -> Result<OAuth, Box<dyn Error>> {
    let context = context();
    let text = |name: &str| context[name].as_str().map(str::to_owned);
    let client_id = text("client_id");
    if let (Some(id), Some(pem)) = (&client_id, text("private_key_pem")) {
        return Ok(OAuth::private_key_jwt(id, SigningKey::from_pem(&pem)?));
    }
    if let (Some(endpoint), Some(idp_client), Some(id_token), Some(id)) =
        (text("idp_token_endpoint"), text("idp_client_id"), text("idp_id_token"), &client_id)
    {
        let client = ClientCredentials { client_id: id.clone(), client_secret: text("client_secret"), issuer: None };
        return Ok(OAuth::enterprise(EnterpriseAuthorization::new(
            endpoint,
            idp_client,
            TokenSource::fixed(id_token),
            client,
        )));
    }
    if let Some(token) = text("valid_jwt") {
        let mut oauth = OAuth::workload_identity(TokenSource::fixed(token));
        if let Some(id) = &client_id {
            oauth = oauth.client_credentials(ClientCredentials {
                client_id: id.clone(),
                client_secret: None,
                issuer: None,
            });
        }
        return Ok(oauth);
    }
    if let (true, Some(id), Some(secret)) =
        (scenario.starts_with("auth/client-credentials"), &client_id, text("client_secret"))
    {
        return Ok(OAuth::client_secret(id, secret));
    }
    let oauth = authorization_code()?;
    Ok(if scenario.starts_with("auth/dpop") { oauth.dpop() } else { oauth })
}

/// The authorization code flow: the "person" GETs the authorization URL and hands back where
/// the authorization server redirects to.
fn authorization_code() -> Result<OAuth, Box<dyn Error>> {
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
    let authorizer = authorizer_fn(REDIRECT_URI, move |url: String| {
        let browser = browser.clone();
        async move {
            let response = browser.get(&url).send().await.map_err(|e| OAuthError::Callback(e.to_string()))?;
            let location =
                response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).ok_or_else(|| {
                    OAuthError::Callback(format!("the authorization endpoint answered {}", response.status()))
                })?;
            Ok(location.to_owned())
        }
    });
    let mut oauth =
        OAuth::new(authorizer).client_name("mcp-sdk-conformance-client").client_metadata_url(CLIENT_METADATA_URL);
    let context = context();
    if let Some(client_id) = context["client_id"].as_str() {
        oauth = oauth.client_credentials(ClientCredentials {
            client_id: client_id.to_owned(),
            client_secret: context["client_secret"].as_str().map(str::to_owned),
            issuer: None,
        });
    }
    Ok(oauth)
}

/// Authorizes, lists the tools and calls each (the protected server's `test-tool`).
async fn authorized(scenario: &str, url: &str) -> Result<(), Box<dyn Error>> {
    // The suite starts its authorization server on a port of its choosing and names it only in
    // the MCP server's metadata: the credentials it hands out may go to whichever that is.
    let client = client().oauth(oauth(scenario)?.trust_any_issuer()).connect_http(url).await?;
    for tool in client.list_all_tools().await? {
        let result = client.call_tool(&tool.name, json!({})).await?;
        tracing::info!(tool = %tool.name, ?result, "called");
    }
    client.close().await;
    Ok(())
}

async fn run(scenario: &str, url: &str) -> Result<(), Box<dyn Error>> {
    match scenario {
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => initialize(url).await,
        "sep-2322-client-request-state" => request_state(url).await,
        "http-standard-headers" => standard_headers(url).await,
        "http-custom-headers" => context_tool_calls(url).await,
        "http-invalid-tool-headers" => call_every_tool(url).await,
        "tools_call" | "tools-call" => tools_call(url).await,
        "elicitation-sep1034-client-defaults" | "elicitation-defaults" => elicitation_defaults(url).await,
        "sse-retry" => sse_retry(url).await,
        "json-schema-2020-12-preservation" => schema_preservation(url).await,
        "sep-2640-client-no-prefetch" => skills_listed(url).await,
        "sep-2640-client-verify-digest" | "sep-2640-client-verify-size" | "sep-2640-client-verify-frontmatter" => {
            skill_loaded(url).await
        }
        s if s.starts_with("auth/") => authorized(s, url).await,
        s => Err(format!("unknown scenario `{s}`").into()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    tests::programs::init_logging();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server-url>   (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}
