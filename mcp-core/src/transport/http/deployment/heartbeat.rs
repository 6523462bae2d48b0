//! An instance's heartbeat in a shared deployment: its presence renewed every beat, and the
//! records of its sessions in use every [`RECORDS_RENEWAL`](super::backplane::RECORDS_RENEWAL).
//!
//! Two parts. The *renewals*, on the server's runtime, list the sessions in use (replicas
//! included, whose owners are told) and show that the runtime makes progress. The *beats* write
//! to the store: on a thread of their own when the registry can give them connections of their
//! own ([`SessionRegistry::for_heartbeat`]), so that a runtime whose workers are busy, or a host
//! that is overloaded for a moment, does not let the lease lapse and have the instance's
//! sessions taken over while it serves them. A process that is stopped, or a runtime that made
//! no progress for [`RUNTIME_STALL_LIMIT`], beats no more.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::backplane::Backplane;
use super::forwarder::record_of;
use super::store::SessionRegistry;
use crate::transport::http::Shared;
use crate::transport::http::session::HttpSession;

/// How long the server's runtime may make no progress before this instance stops renewing its
/// presence (its sessions are then taken over within a lease): longer than any pause a busy
/// runtime has, short enough that a runtime stuck for good does not hold its sessions long.
pub const RUNTIME_STALL_LIMIT: Duration = Duration::from_secs(5);

/// What the renewals and the beats share.
struct Link {
    /// When the renewals last ran (milliseconds after `epoch`).
    progress: AtomicU64,
    epoch: Instant,
    /// The sessions in use to record again with the next beat.
    pending: Mutex<Vec<String>>,
}

impl Link {
    fn tick(&self) {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.progress.store(now, Ordering::Relaxed);
    }

    /// Keeps `sessions` for the next beat, with those not written yet.
    fn keep(&self, sessions: Vec<String>) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.extend(sessions);
            pending.sort_unstable();
            pending.dedup();
        }
    }

    /// The sessions to write with this beat.
    fn take(&self) -> Vec<String> {
        self.pending.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default()
    }

    /// How long the server's runtime has shown no progress.
    fn stalled_for(&self) -> Duration {
        self.epoch.elapsed().saturating_sub(Duration::from_millis(self.progress.load(Ordering::Relaxed)))
    }
}

/// A running heartbeat: stopped by [`stop`](Self::stop), which returns once no beat can reach
/// the store any more.
pub(crate) struct Heartbeat {
    renewals: tokio::task::AbortHandle,
    stop: CancellationToken,
    /// Completed when the beats ended.
    ended: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Heartbeat {
    /// Stops the heartbeat and waits for a beat under way to end (so that none announces the
    /// instance after it left).
    pub(crate) async fn stop(mut self) {
        self.renewals.abort();
        self.stop.cancel();
        if let Some(ended) = self.ended.take() {
            // A beat's command fails after the store's response timeout at worst.
            let _ = tokio::time::timeout(Duration::from_secs(5), ended).await;
        }
    }
}

/// Starts the heartbeat of the instance `shared` is (it has a backplane).
pub(crate) fn start(shared: &Arc<Shared>) -> Option<Heartbeat> {
    let forwarder = shared.forwarder.as_ref()?;
    let link = Arc::new(Link { progress: AtomicU64::new(0), epoch: Instant::now(), pending: Mutex::default() });
    let stop = CancellationToken::new();
    let weak = Arc::downgrade(shared);
    // Ending with the runtime (as when the process dies), the renewals stop the beats.
    let guard = stop.clone().drop_guard();
    let renewals = tokio::spawn(renewals(weak.clone(), link.clone(), guard)).abort_handle();
    let (done, ended) = tokio::sync::oneshot::channel();
    let main = tokio::runtime::Handle::current();
    let registry = forwarder.backplane.registry.clone();
    let stopping = stop.clone();
    let spawned = std::thread::Builder::new().name("mcp-heartbeat".into()).spawn(move || {
        match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime.block_on(async move {
                // Its own connections are made here, to run on this thread's runtime.
                let registry = registry.for_heartbeat().unwrap_or(registry);
                beats(weak, registry, link, stopping, main).await;
            }),
            Err(e) => tracing::error!(error = %e, "cannot start the heartbeat's runtime"),
        }
        let _ = done.send(());
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the heartbeat's thread");
    }
    Some(Heartbeat { renewals, stop, ended: Some(ended) })
}

/// On the server's runtime: shows it makes progress, and lists the sessions in use for the
/// beats every renewal period.
async fn renewals(shared: Weak<Shared>, link: Arc<Link>, _stops_beats: tokio_util::sync::DropGuard) {
    let mut since: Option<Instant> = None;
    loop {
        link.tick();
        let Some(s) = shared.upgrade() else { return };
        let Some(forwarder) = s.forwarder.as_ref() else { return };
        let (renew, every) = (forwarder.backplane.renew, forwarder.backplane.heartbeat);
        let now = Instant::now();
        if since.is_none_or(|since| now.duration_since(since) >= renew) {
            let from = since.unwrap_or(now);
            let mut active = Vec::new();
            if let Ok(sessions) = s.sessions.read() {
                active.extend(
                    sessions
                        .values()
                        .filter(|x| since.is_none() || x.last_active() >= from || x.in_flight() > 0)
                        .map(|x| x.id().to_owned()),
                );
            }
            active.extend(super::replicas::replicas_beat(&s, from));
            // With those not written yet (the store was unreachable), if any.
            link.keep(active);
            since = Some(now);
        }
        drop(s);
        tokio::time::sleep(every).await;
    }
}

/// Renews this instance's presence every heartbeat (with the records `link` holds), until
/// `stop`, the endpoint is gone, or (beats paused) while the server's runtime is stalled.
async fn beats(
    shared: Weak<Shared>,
    registry: Arc<dyn SessionRegistry>,
    link: Arc<Link>,
    stop: CancellationToken,
    main: tokio::runtime::Handle,
) {
    let mut failing = false;
    let mut first = true;
    let mut stalled = false;
    loop {
        if stop.is_cancelled() {
            return;
        }
        let Some(s) = shared.upgrade() else { return };
        let Some(forwarder) = s.forwarder.as_ref() else { return };
        let bp = forwarder.backplane.clone();
        let session_ttl = bp.session_ttl(s.config.idle_timeout);
        drop(s);
        let now = Instant::now();
        let stall = link.stalled_for();
        if stall > RUNTIME_STALL_LIMIT {
            if !std::mem::replace(&mut stalled, true) {
                tracing::error!(
                    ?stall,
                    "the server's runtime makes no progress: this instance stops renewing its presence, \
                     and its sessions will be served elsewhere"
                );
            }
        } else {
            if std::mem::replace(&mut stalled, false) {
                tracing::warn!("the server's runtime makes progress again: this instance renews its presence");
            }
            let active = link.take();
            match registry.heartbeat(&bp.instance, &bp.address, bp.lease, &active, session_ttl).await {
                Ok(known) => {
                    if std::mem::replace(&mut failing, false) {
                        tracing::info!("the shared session store is reachable again");
                    }
                    if !known && !first {
                        // This instance's announcement lapsed: so, most likely, did the others'.
                        if let Some(s) = shared.upgrade()
                            && let Some(forwarder) = &s.forwarder
                        {
                            forwarder.store_recovered();
                        }
                        reclaim(&shared, &*registry, &bp, session_ttl, &main).await;
                    }
                    if let Some(s) = shared.upgrade()
                        && let Some(forwarder) = &s.forwarder
                    {
                        forwarder.confirm(now);
                        forwarder.beat_answered();
                    }
                    first = false;
                }
                Err(e) => {
                    if !std::mem::replace(&mut failing, true) {
                        tracing::warn!(error = %e, "cannot renew this instance's presence in the shared session store");
                    }
                    // Written with a later beat.
                    link.keep(active);
                    if let Some(s) = shared.upgrade()
                        && let Some(forwarder) = &s.forwarder
                    {
                        forwarder.beat_answered();
                    }
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(bp.heartbeat) => {}
            () = stop.cancelled() => return,
        }
    }
}

/// Records again every session this instance holds, where the registry records no owner, and
/// ends here those another instance owns now. This instance's announcement had lapsed: the store
/// lost its records (it was restarted empty; without them the other instances would answer the
/// sessions' requests as for unknown sessions), or its beats did not reach the store for a lease
/// (it was stopped, or cut off), and the others may have taken some of its sessions over. The
/// sessions lost are out of the endpoint's table before this returns (so that no request is
/// served on them once the lease is confirmed); they are ended on the server's runtime, `main`.
async fn reclaim(
    shared: &Weak<Shared>,
    registry: &dyn SessionRegistry,
    bp: &Backplane,
    session_ttl: Duration,
    main: &tokio::runtime::Handle,
) {
    let records: Vec<(String, String)> = {
        let Some(s) = shared.upgrade() else { return };
        let Ok(sessions) = s.sessions.read() else { return };
        sessions.values().filter_map(|x| Some((x.id().to_owned(), record_of(x)?))).collect()
    };
    tracing::info!(sessions = records.len(), "this instance's lease lapsed: recording its sessions again");
    let mut lost = Vec::new();
    let mut kept = Vec::new();
    for (session, record) in &records {
        match registry.reclaim(session, &bp.instance, record, session_ttl).await {
            Ok(true) => kept.push(session),
            Ok(false) => lost.push(session.clone()),
            Err(e) => {
                tracing::warn!(error = %e, session, "cannot record a session again");
                break;
            }
        }
    }
    let Some(s) = shared.upgrade() else { return };
    // A session ended while its record was being written again (its release may have run just
    // before): released once more, or its record would outlive it until it expired.
    let ended_meanwhile: Vec<&String> = match s.sessions.read() {
        Ok(sessions) => kept.into_iter().filter(|id| !sessions.contains_key(id.as_str())).collect(),
        Err(_) => Vec::new(),
    };
    for session in ended_meanwhile {
        if let Err(e) = registry.release(session, &bp.instance).await {
            tracing::debug!(error = %e, session, "cannot forget a session ended while it was recorded again");
        }
    }
    let ended: Vec<Arc<HttpSession>> = match s.sessions.write() {
        Ok(mut sessions) => lost.iter().filter_map(|id| sessions.remove(id)).collect(),
        Err(_) => Vec::new(),
    };
    drop(s);
    if ended.is_empty() {
        return;
    }
    main.spawn(async move {
        for session in ended {
            tracing::info!(session = session.id(), "another instance took this session over: ending it here");
            // Its record and events are the new owner's now.
            session.close_keeping_events(true).await;
        }
    });
}
