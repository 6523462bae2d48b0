//! URL-mode elicitations a server requires before it goes on (-32042): offered to the
//! elicitation handler, then waited for until the server reports them complete.

use std::time::Duration;

use super::connected::Client;
use super::{ClientError, ElicitationRequest, UrlRequest};
use crate::elicit::UrlElicitationRequired;
use crate::protocol::ElicitAction;

impl Client {
    /// Offers each elicitation of a -32042 error to the elicitation handler (as a URL-mode
    /// request: the user's consent to open it) and, if every one is accepted, waits until the
    /// server reports them all complete. `Ok(false)` when one was not accepted (or no handler
    /// supports URL mode); then nothing is awaited.
    pub async fn complete_url_elicitations(&self, required: &UrlElicitationRequired) -> Result<bool, ClientError> {
        let Some(handler) = self.inner.shared.elicitation.as_ref().filter(|h| h.modes().url) else {
            return Ok(false);
        };
        for e in &required.elicitations {
            let request = ElicitationRequest::Url(UrlRequest::new(&e.message, &e.elicitation_id, &e.url));
            if handler.elicit(request).await.action != ElicitAction::Accept {
                return Ok(false);
            }
        }
        let ids = required.elicitations.iter().map(|e| e.elicitation_id.as_str());
        self.wait_for_elicitations(ids, self.inner.url_elicitation_timeout).await?;
        Ok(true)
    }

    /// Waits until the server has sent `notifications/elicitation/complete` for every one of
    /// `ids` (completions that arrived earlier count), at most `timeout`.
    pub async fn wait_for_elicitations<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
        timeout: Duration,
    ) -> Result<(), ClientError> {
        let ids: Vec<String> = ids.into_iter().map(str::to_owned).collect();
        self.inner.shared.completions.wait(&ids, &self.inner.shared.closed, timeout).await
    }

    /// Whether the server has reported the URL-mode elicitation `id` complete.
    pub fn elicitation_completed(&self, id: &str) -> bool {
        self.inner.shared.completions.all_done(&[id.to_owned()])
    }
}
