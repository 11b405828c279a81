//! The server's connections, for the open internet: axum's own `serve` sets
//! no timer, so a client that never finishes its request headers (or leaves
//! a keep-alive connection idle) holds a socket for ever, and a few thousand
//! of them exhaust the process's file descriptors (slowloris). Here every
//! HTTP/1 connection gets a header-read timeout (also the idle keep-alive
//! timeout: hyper starts it whenever it waits for the next request), the
//! number of connections is capped below the descriptor limit, one peer
//! address may hold only a share of them, a request body must keep
//! arriving (`slow_body`), and a stop waits a bounded time for open
//! connections.
use super::slow_body::{BodyRate, RateLimited};
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

/// Descriptors kept for the database, images and exports.
const RESERVED_FDS: u64 = 256;
/// A stop waits this long for open requests before closing what is left.
const DRAIN: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections at once; further clients wait in the listen backlog.
    pub total: usize,
    /// Connections at once from one address; one more is closed at once.
    pub per_address: usize,
    /// Time to send a request's headers, and to start the next one on a kept-alive connection.
    pub header_timeout: Duration,
    /// How fast a request's body must keep arriving.
    pub body_rate: BodyRate,
}

impl Limits {
    /// From the descriptor limit (raised to its hard limit first), unless
    /// `HARDNEG_MAX_CONNECTIONS`, `HARDNEG_MAX_CONNECTIONS_PER_ADDRESS` or
    /// `HARDNEG_HEADER_TIMEOUT_SECS` say otherwise (docs/security.md).
    /// Behind a trusted proxy every connection has the proxy's address, so
    /// its share is the whole cap.
    pub fn from_env(behind_proxy: bool) -> Limits {
        let fds = raise_fd_limit();
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok()).filter(|&n| n > 0);
        let total = env("HARDNEG_MAX_CONNECTIONS").unwrap_or(fds.saturating_sub(RESERVED_FDS).clamp(64, 65_536));
        let share = if behind_proxy { total } else { (total / 8).max(32) };
        let per_address = env("HARDNEG_MAX_CONNECTIONS_PER_ADDRESS").unwrap_or(share);
        let header_timeout = Duration::from_secs(env("HARDNEG_HEADER_TIMEOUT_SECS").unwrap_or(20));
        Limits {
            total: total as usize,
            per_address: per_address as usize,
            header_timeout,
            body_rate: BodyRate::from_env(),
        }
    }
}

/// Raises the soft limit on open files to the hard one; the soft limit after.
fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    lim.rlim_cur
}

/// Open connections per peer address.
#[derive(Default)]
struct PerAddress(Mutex<HashMap<IpAddr, usize>>);

/// One connection of an address, given back when the connection ends.
struct AddressSlot(Arc<PerAddress>, IpAddr);

impl PerAddress {
    fn take(this: &Arc<PerAddress>, ip: IpAddr, most: usize) -> Option<AddressSlot> {
        let mut held = this.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = held.entry(ip).or_default();
        (*n < most).then(|| {
            *n += 1;
            AddressSlot(Arc::clone(this), ip)
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut held = self.0 .0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = held.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.1);
            }
        }
    }
}

/// Serves `app` on `listener` until `stop` resolves, then lets open
/// requests finish for up to [`DRAIN`].
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (stopping, stopped) = watch::channel(false);
    tokio::spawn(async move {
        stop.await;
        let _ = stopping.send(true);
    });
    let total = Arc::new(Semaphore::new(limits.total));
    let addresses = Arc::new(PerAddress::default());
    let mut stop_rx = stopped.clone();
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&total).acquire_owned() => p.expect("the semaphore is never closed"),
            _ = stop_rx.changed() => break,
        };
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and the like: wait for descriptors to come back.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop_rx.changed() => break,
        };
        let Some(slot) = PerAddress::take(&addresses, remote.ip(), limits.per_address) else {
            tracing::debug!(%remote, "closed: the address holds its share of connections");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let held = (permit, slot);
        tokio::spawn(connection(stream, remote, app.clone(), limits, held, stopped.clone()));
    }
    drop(listener);
    let open = limits.total - total.available_permits();
    if open > 0 && tokio::time::timeout(DRAIN, total.acquire_many(limits.total as u32)).await.is_err() {
        let left = limits.total - total.available_permits();
        tracing::warn!(left, "stopping with connections still open after {}s", DRAIN.as_secs());
    }
}

/// A request's line and headers fit in this (more is a 431): hyper's own
/// cap, about 400 kB, let an unfinished head hold half a megabyte per
/// connection (an audit: +519 MB for 1,000 connections from one address).
/// A browser's head, cookies included, is a few kilobytes.
pub const MAX_HEAD_BYTES: usize = 32 * 1024;

async fn connection(
    stream: tokio::net::TcpStream,
    remote: SocketAddr,
    app: Router,
    limits: Limits,
    _held: (OwnedSemaphorePermit, AddressSlot),
    mut stop: watch::Receiver<bool>,
) {
    let body_rate = limits.body_rate;
    let service = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        req.extensions_mut().insert(ConnectInfo(remote));
        app.clone().oneshot(req.map(|body| axum::body::Body::new(RateLimited::new(body, body_rate))))
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).max_buf_size(MAX_HEAD_BYTES);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let mut draining = *stop.borrow();
    if draining {
        conn.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            done = conn.as_mut() => {
                if let Err(e) = done {
                    tracing::debug!(%remote, "connection ended: {e}");
                }
                return;
            }
            _ = stop.changed(), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}
