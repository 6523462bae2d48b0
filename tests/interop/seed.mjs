// The `elicitation` example's two tools, as the seed (mcp-go's elicitation guide) has them:
// what every TypeScript client script checks of them, whichever client, era and transport
// drives them. A session here is `{ requests, answer, call }`: the elicitation requests seen so
// far, a way to queue the answer to the next one, and a tool call.

import { check, errorText, okText, sameJson } from "./checks.mjs";

/** Checks `create_project`'s form: fields in order, required list, enum, default. */
export function checkProjectForm(params) {
  check(params.message === "Please provide the project details.", "create_project's message", params.message);
  const schema = params.requestedSchema;
  check(schema.type === "object", "requestedSchema is an object", schema);
  check(sameJson(Object.keys(schema.properties), ["projectName", "framework", "includeTests"]), "the fields are projectName, framework, includeTests, in that order", Object.keys(schema.properties));
  check(sameJson(schema.required, ["projectName"]), "only projectName is required", schema.required);
  const { projectName, framework, includeTests } = schema.properties;
  check(projectName.type === "string" && projectName.minLength === 1, "projectName is a string of at least one character", projectName);
  check(framework.type === "string", "framework is a string", framework);
  const options = framework.enum ?? framework.oneOf?.map((option) => option.const);
  check(sameJson(options, ["react", "vue", "angular", "none"]), "framework is one of react, vue, angular, none", framework);
  check(includeTests.type === "boolean" && includeTests.default === true, "includeTests is a boolean defaulting to true", includeTests);
}

/** Checks `process_data`'s confirmation for data of `length` characters. */
export function checkConfirmation(params, length) {
  check(params.message === `The data is ${length} characters long. Continue?`, "the confirmation names the length", params.message);
  const schema = params.requestedSchema;
  check(sameJson(Object.keys(schema.properties), ["proceed"]), "the confirmation asks for proceed alone", schema);
  check(schema.properties.proceed.type === "boolean", "proceed is a boolean", schema.properties.proceed);
  check(sameJson(schema.required, ["proceed"]), "proceed is required", schema.required);
}

/** `create_project` answered with accept (whole, partial, invalid), decline and cancel. */
export async function createProject({ requests, answer, call }, label = "") {
  console.log(`${label}create_project`);
  const asked = requests.length;
  answer(() => ({ action: "accept", content: { projectName: "demo", framework: "vue", includeTests: false } }));
  let text = okText(await call("create_project"));
  check(requests.length === asked + 1, "create_project asked one question", requests.length - asked);
  checkProjectForm(requests.at(-1));
  check(text === "Created project 'demo' with framework: vue", "accept returns the seed's text", text);

  answer(() => ({ action: "accept", content: { projectName: "bare" } }));
  text = okText(await call("create_project"));
  check(text === "Created project 'bare' with framework: none", "without a framework it is none", text);

  // The server checks accepted content against the schema it sent.
  answer(() => ({ action: "accept", content: { projectName: "" } }));
  text = errorText(await call("create_project"));
  check(text.includes("projectName"), "an empty projectName (minLength 1) is refused, naming the field", text);

  answer(() => ({ action: "accept", content: { projectName: "p", framework: "ember" } }));
  text = errorText(await call("create_project"));
  check(text.includes("framework"), "a framework outside the enum is refused, naming the field", text);

  answer(() => ({ action: "decline" }));
  text = okText(await call("create_project"));
  check(text === "Project creation cancelled: the user declined.", "decline is a plain-text result", text);

  answer(() => ({ action: "cancel" }));
  text = errorText(await call("create_project"));
  check(text === "Project creation cancelled by the user.", "cancel is a tool error", text);
}

/** `process_data`: short data at once; long data after `proceed`, in every answer. */
export async function processData({ requests, answer, call }, label = "") {
  console.log(`${label}process_data`);
  const asked = requests.length;
  let text = okText(await call("process_data", { data: "hello" }));
  check(text === "Processed 5 characters" && requests.length === asked, "short data is processed without a question", text);

  const long = "x".repeat(150);
  answer(() => ({ action: "accept", content: { proceed: true } }));
  text = okText(await call("process_data", { data: long }));
  check(requests.length === asked + 1, "long data asks for confirmation", requests.length - asked);
  checkConfirmation(requests.at(-1), 150);
  check(text === "Processed 150 characters", "proceed: true processes the data", text);

  answer(() => ({ action: "accept", content: { proceed: false } }));
  text = okText(await call("process_data", { data: long }));
  check(text === "The user chose not to proceed.", "proceed: false stops", text);

  for (const action of ["decline", "cancel"]) {
    answer(() => ({ action }));
    text = okText(await call("process_data", { data: long }));
    check(text === "Processing cancelled by the user.", `${action} cancels processing`, text);
  }

  answer(() => ({ action: "accept", content: {} }));
  text = errorText(await call("process_data", { data: long }));
  check(text.includes("proceed"), "accepting without the required proceed is refused, naming the field", text);
}

/** Both tools, as the seed shows them. */
export async function seedTools(session, label = "") {
  await createProject(session, label);
  await processData(session, label);
}
