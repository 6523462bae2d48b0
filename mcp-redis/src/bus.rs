//! The message bus ([`RedisBus`]): what instances say to each other, on Redis pub/sub (sharded
//! on a Cluster whose nodes have it).

use std::time::Duration;

use futures_util::StreamExt as _;
use tokio_util::sync::CancellationToken;
use typed_mcp::transport::http::{BackplaneError, MessageBus};

use crate::connection::{self, CONNECTION_TIMEOUT, Subscriber};
use crate::{Redis, unavailable};

/// The [`MessageBus`] of a deployment on Redis: pub/sub channels `{prefix}:bus:{channel}`.
/// Nothing is stored; a message reaches the instances subscribed when it is published.
#[derive(Clone, Debug)]
pub struct RedisBus {
    redis: Redis,
}

impl RedisBus {
    /// The bus on `redis`.
    pub(crate) fn new(redis: Redis) -> Self {
        RedisBus { redis }
    }
}

impl Redis {
    /// Whether the bus uses sharded pub/sub: on a Cluster whose nodes know `SPUBLISH`
    /// (Redis 7 and later), each channel's messages then stay on the shard owning it instead of
    /// reaching every node. Asked once.
    async fn sharded(&self) -> Result<bool, redis::RedisError> {
        if !self.connection.is_cluster() {
            return Ok(false);
        }
        self.sharded
            .get_or_try_init(|| async {
                let info: Vec<Option<redis::Value>> =
                    redis::cmd("COMMAND").arg("INFO").arg("SPUBLISH").query_async(&mut self.connection()).await?;
                Ok(info.first().is_some_and(Option::is_some))
            })
            .await
            .copied()
    }
}

/// How long to wait before subscribing again after the subscription broke.
const RESUBSCRIBE_DELAY: Duration = Duration::from_millis(250);

impl MessageBus for RedisBus {
    fn publish<'a>(
        &'a self,
        channel: &'a str,
        payload: String,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), BackplaneError>> {
        Box::pin(async move { self.publish_counted(channel, payload).await.map(|_| ()) })
    }

    /// The count is the number of subscribers Redis delivered to; `None` on a Cluster without
    /// sharded pub/sub, where `PUBLISH` counts only the subscribers of the node it reached.
    fn publish_counted<'a>(
        &'a self,
        channel: &'a str,
        payload: String,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<usize>, BackplaneError>> {
        Box::pin(async move {
            let sharded = self.redis.sharded().await.map_err(unavailable)?;
            let command = if sharded { "SPUBLISH" } else { "PUBLISH" };
            let received = redis::cmd(command)
                .arg(self.redis.key("bus", channel))
                .arg(payload)
                .query_async::<i64>(&mut self.redis.connection())
                .await
                .map_err(unavailable)?;
            let counted = sharded || !self.redis.connection.is_cluster();
            Ok(counted.then(|| usize::try_from(received).unwrap_or(0)))
        })
    }

    fn subscribe(&self, channel: String, deliver: Box<dyn Fn(String) + Send + Sync>, stop: CancellationToken) {
        let redis = self.redis.clone();
        let channel = self.redis.key("bus", &channel);
        tokio::spawn(async move {
            let mut failing = false;
            let mut subscribed_before = false;
            while !stop.is_cancelled() {
                let subscribed = tokio::select! {
                    r = tokio::time::timeout(CONNECTION_TIMEOUT * 4, subscription(&redis, &channel)) => r,
                    () = stop.cancelled() => return,
                };
                match subscribed {
                    Ok(Ok(mut messages)) => {
                        if std::mem::replace(&mut failing, false) {
                            tracing::info!(channel, "subscribed again to the deployment's bus");
                        }
                        // What was published while the subscription was broken is lost: the
                        // empty message says so (see `MessageBus::subscribe`).
                        if std::mem::replace(&mut subscribed_before, true) {
                            deliver(String::new());
                        }
                        loop {
                            let message = tokio::select! {
                                m = messages.next() => m,
                                () = stop.cancelled() => return,
                            };
                            match message {
                                Some(Ok(payload)) => deliver(payload),
                                Some(Err(e)) => {
                                    tracing::warn!(error = %e, channel, "an unreadable message on the bus");
                                }
                                None => break,
                            }
                        }
                        tracing::warn!(channel, "the subscription to the deployment's bus broke");
                    }
                    Ok(Err(e)) => {
                        if !std::mem::replace(&mut failing, true) {
                            tracing::warn!(error = %e, channel, "cannot subscribe to the deployment's bus");
                        }
                    }
                    Err(_) => {
                        if !std::mem::replace(&mut failing, true) {
                            tracing::warn!(channel, "subscribing to the deployment's bus timed out");
                        }
                    }
                }
                tokio::select! {
                    () = tokio::time::sleep(RESUBSCRIBE_DELAY) => {}
                    () = stop.cancelled() => return,
                }
            }
        });
    }
}

/// The messages of one subscription, until it breaks.
type Messages = futures_util::stream::BoxStream<'static, Result<String, redis::RedisError>>;

/// Subscribes to `channel` on the topology's Redis: on one node, or the primary the Sentinels
/// name now, a classic subscription; on a Cluster, a sharded one (`SSUBSCRIBE`, on the shard
/// owning the channel, made again when that shard's master is lost or demoted) where the nodes
/// have it, else a classic one.
async fn subscription(redis: &Redis, channel: &str) -> Result<Messages, redis::RedisError> {
    let client = match &redis.subscriber {
        Subscriber::Single(client) => (**client).clone(),
        Subscriber::Sentinel(primary) => primary.client().await?,
        Subscriber::Cluster(nodes, certificates) => {
            let sharded = redis.sharded().await?;
            let (sender, pushes) = tokio::sync::mpsc::unbounded_channel();
            let client = connection::cluster_client(nodes, Some(sender), certificates.as_ref())?;
            let mut connection = client.get_async_connection().await?;
            if sharded {
                connection.ssubscribe(channel).await?;
            } else {
                connection.subscribe(channel).await?;
            }
            // Followed until the shard's master lets it go: it is killed (the connection to it
            // closes) or demoted (it unsubscribes its clients). The client resubscribes only once
            // a command of its own fails, and this connection sends none: the stream ends, and a
            // subscription is made again on the shard's new master.
            let ended = |kind: &redis::PushKind| {
                matches!(
                    kind,
                    redis::PushKind::Disconnection | redis::PushKind::SUnsubscribe | redis::PushKind::Unsubscribe
                )
            };
            let pushes = tokio_stream_of(pushes).take_while(move |push| std::future::ready(!ended(&push.kind)));
            let stream = pushes.filter_map(move |push| {
                // The connection lives as long as its messages are read.
                let _keep = &connection;
                let message = matches!(push.kind, redis::PushKind::Message | redis::PushKind::SMessage)
                    .then(|| push.data.into_iter().nth(1).map(redis::from_redis_value::<String>))
                    .flatten()
                    .map(|r| r.map_err(Into::into));
                std::future::ready(message)
            });
            return Ok(stream.boxed());
        }
    };
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    Ok(pubsub.into_on_message().map(|m| m.get_payload::<String>()).boxed())
}

/// The pushes of a cluster subscription as a stream.
fn tokio_stream_of(
    mut pushes: tokio::sync::mpsc::UnboundedReceiver<redis::PushInfo>,
) -> impl futures_util::Stream<Item = redis::PushInfo> + Send + 'static {
    futures_util::stream::poll_fn(move |cx| pushes.poll_recv(cx))
}
