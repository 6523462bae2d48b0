//! How the client sends a request in either era: in a session (traced when telemetry is on),
//! or in the 2026-07-28 era with its questions answered until the result is complete; pages of lists,
//! from the cache when the server's hints allow.

use std::future::Future;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::ClientError;
use super::connected::Client;
use super::era::Era2026;
use super::round_trip::{self, RoundTrip};
use crate::engine::RequestOptions;
use crate::protocol::{JsonObject, PaginatedParams};

/// The most pages a `list_all_*` call follows (a server repeating cursors must not loop it).
const MAX_PAGES: usize = 10_000;

impl Client {
    pub(super) fn options(
        &self,
        timeout: Option<Option<Duration>>,
        cancel: Option<CancellationToken>,
    ) -> RequestOptions {
        RequestOptions { timeout: timeout.unwrap_or(self.inner.request_timeout), cancel }
    }

    /// Sends any request and decodes its result as `R`, with the default timeout. In the
    /// 2026-07-28 era the request carries the client's `_meta`, and the server's questions
    /// (`input_required`) are answered by the handlers until the result is complete.
    pub async fn request<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, ClientError> {
        self.request_with(method, params, self.options(None, None)).await
    }

    pub(super) async fn request_with<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<R, ClientError> {
        match &self.inner.era_2026 {
            #[cfg(feature = "otel")]
            None if self.inner.traced.is_some() => self.traced_request(method, params, options).await,
            None => Ok(self.inner.peer.request(method, params, options).await?),
            Some(era_2026) => self.request_object(era_2026, method, params_object(params)?, options).await,
        }
    }

    /// A 2026-07-28 request whose parameters are an object already.
    pub(super) async fn request_object<R: DeserializeOwned>(
        &self,
        era_2026: &Era2026,
        method: &str,
        params: JsonObject,
        options: RequestOptions,
    ) -> Result<R, ClientError> {
        let result = self.round_trip(era_2026).request(method, params, options).await?;
        if result.task {
            // Only a request that declared the tasks extension is answered with a task.
            return Err(ClientError::UnexpectedResultType(round_trip::RESULT_TASK.to_owned()));
        }
        result.decode(method)
    }

    /// A 2025-era request in its `CLIENT` span, with the span's context in its `_meta`.
    #[cfg(feature = "otel")]
    async fn traced_request<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<R, ClientError> {
        let Some(traced) = &self.inner.traced else { unreachable!("checked by the caller") };
        let mut params = params_object(params)?;
        let version = Some(self.inner.init.protocol_version.as_str());
        let operation = traced.telemetry.sending(method, &mut params, version, traced.transport, traced.server());
        let outcome = self.inner.peer.request_raw(method, &params, options).await;
        operation.end(match &outcome {
            Ok(raw) => Ok(Some(raw.get())),
            Err(e) => Err(crate::telemetry::Failure::of_peer(e)),
        });
        let raw = outcome?;
        serde_json::from_str(raw.get()).map_err(|e| ClientError::Codec(format!("invalid `{method}` result: {e}")))
    }

    pub(super) fn round_trip<'a>(&'a self, era_2026: &'a Era2026) -> RoundTrip<'a> {
        RoundTrip {
            peer: &self.inner.peer,
            shared: &self.inner.shared,
            era_2026,
            max_rounds: self.inner.max_input_rounds,
            url_wait: self.inner.url_elicitation_timeout,
            #[cfg(feature = "otel")]
            traced: self.inner.traced.as_ref(),
        }
    }

    /// One page of a list, from the cache when the server's hints allow (2026-07-28 era).
    pub(super) async fn list_page<R: DeserializeOwned>(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<R, ClientError> {
        let Some(era_2026) = &self.inner.era_2026 else { return self.request(method, &page(cursor)).await };
        if let Some(kept) = era_2026.cache.get(method, cursor) {
            return decode_result(method, kept);
        }
        let params = params_object(&page(cursor))?;
        let result = self.round_trip(era_2026).request(method, params, self.options(None, None)).await?;
        let result: JsonObject = result.decode(method)?;
        era_2026.cache.put(method, cursor, &result);
        decode_result(method, result)
    }

    /// Sends any notification.
    pub async fn notify<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Result<(), ClientError> {
        Ok(self.inner.peer.notify(method, params).await?)
    }

    pub(super) async fn all_pages<T, F, Fut>(&self, mut page: F) -> Result<Vec<T>, ClientError>
    where
        F: FnMut(Option<String>) -> Fut,
        Fut: Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
    {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let (items, next) = page(cursor.take()).await?;
            all.extend(items);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(ClientError::Codec(format!("the server sent more than {MAX_PAGES} pages")))
    }
}

/// Request parameters as a JSON object (`null` for none).
pub(super) fn params_object<P: Serialize + ?Sized>(params: &P) -> Result<JsonObject, ClientError> {
    match serde_json::to_value(params) {
        Ok(serde_json::Value::Object(o)) => Ok(o),
        Ok(serde_json::Value::Null) => Ok(JsonObject::new()),
        Ok(other) => Err(ClientError::Codec(format!("request parameters must be a JSON object, not {other}"))),
        Err(e) => Err(ClientError::Codec(format!("request parameters could not be encoded: {e}"))),
    }
}

/// A 2026-07-28 result read as `R`.
pub(super) fn decode_result<R: DeserializeOwned>(method: &str, result: JsonObject) -> Result<R, ClientError> {
    serde_json::from_value(serde_json::Value::Object(result))
        .map_err(|e| ClientError::Codec(format!("invalid `{method}` result: {e}")))
}

fn page(cursor: Option<&str>) -> PaginatedParams {
    PaginatedParams { cursor: cursor.map(str::to_owned) }
}
