// The checks the interop scripts share: each passing check prints one `ok:` line, the first
// failing one throws `CheckFailed` with what was expected and what came.

export class CheckFailed extends Error {}

export function check(condition, what, detail) {
  if (!condition) {
    throw new CheckFailed(detail === undefined ? what : `${what}: got ${JSON.stringify(detail)}`);
  }
  console.log(`  ok: ${what}`);
}

export const sameJson = (actual, expected) => JSON.stringify(actual) === JSON.stringify(expected);
export const sameMembers = (actual, expected) => sameJson([...actual].sort(), [...expected].sort());

/** The text of a result's one text content block. */
export function textOf(result) {
  check(Array.isArray(result.content) && result.content.length === 1, "result has one content block", result.content);
  check(result.content[0].type === "text", "content block is text", result.content[0]);
  return result.content[0].text;
}

/** The text of a result that is not an error. */
export function okText(result) {
  check(!result.isError, "result is not an error", result);
  return textOf(result);
}

/** The text of a result marked `isError: true`. */
export function errorText(result) {
  check(result.isError === true, "result is an error (isError: true)", result);
  return textOf(result);
}

/** Runs `scenario` on a connected session, checks what the session saw, and closes it. */
export async function runSession(session, scenario) {
  try {
    await scenario(session);
    session.verify();
  } finally {
    await session.client.close();
  }
}

// Counts the client's `notifications/elicitation/complete` by elicitation id; `waitForCompletion(id)`
// resolves once the one for `id` has arrived, and fails after `waitMs`. `on` is what the SDK
// registers the handler for: the method name (SDK v2), or the notification's schema (SDK v1).
export function watchCompletions(client, waitMs, on = "notifications/elicitation/complete") {
  const completed = new Map();
  const waiting = new Map();
  client.setNotificationHandler(on, (notification) => {
    const id = notification.params.elicitationId;
    completed.set(id, (completed.get(id) ?? 0) + 1);
    waiting.get(id)?.();
  });
  const waitForCompletion = (id) =>
    new Promise((resolve, reject) => {
      if (completed.has(id)) return resolve();
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new CheckFailed(`no notifications/elicitation/complete for ${id} within ${waitMs} ms`));
      }, waitMs);
      waiting.set(id, () => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve();
      });
    });
  return { completed, waitForCompletion };
}
