//! A faithful fake of Prolific's researcher API for tests and demos
//! (`hardneg prolific fake`): the reference's paths, fields, enums, status
//! machines and error envelope, every request checked against the reference
//! (docs/reference/prolific-openapi.yml), simulated participants, signed
//! webhooks and faults on demand through a control API under `/_fake/`.
//! State lives in memory. It talks to hardneg only over HTTP and imports
//! none of hardneg's services. docs/prolific.md, "The fake Prolific".
mod bonuses;
mod control;
pub mod deliver;
mod faults;
mod groups;
mod hooks;
mod hooks_api;
mod ids;
mod jobs;
mod pages;
mod participants;
mod reply;
mod router;
mod rules;
pub mod schema;
mod server;
mod state;
mod studies;
mod submissions;
mod workspaces;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Options {
    pub bind: SocketAddr,
    pub token: String,
    /// The workspace's webhook signing secret from the start (else POST /api/v1/hooks/secrets/ makes one).
    pub webhook_secret: Option<String>,
    /// How long bulk approvals and bonus payments wait before they are carried out.
    pub async_delay: Duration,
}

pub struct Fake {
    token: String,
    /// `http://ADDR`, for the `_links` of paginated answers.
    base: String,
    state: Mutex<state::State>,
    /// Wakes the worker (jobs.rs) after a change.
    wake: tokio::sync::Notify,
}

/// Binds, prints `fake prolific listening on http://ADDR` (the one line on
/// standard output) and serves until SIGTERM or Ctrl-C.
pub async fn run(options: Options) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    tokio::task::spawn_blocking(schema::reference).await.context("parsing the embedded Prolific reference")?;
    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .with_context(|| format!("binding the fake Prolific to {}", options.bind))?;
    let addr = listener.local_addr()?;
    let fake = Arc::new(Fake {
        token: options.token,
        base: format!("http://{addr}"),
        state: Mutex::new(state::State::new(options.webhook_secret, options.async_delay)),
        wake: tokio::sync::Notify::new(),
    });
    println!("fake prolific listening on http://{addr}");
    std::io::stdout().flush()?;
    tokio::spawn(jobs::worker(fake.clone()));
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        served = server::serve(listener, fake) => served,
        _ = terminate.recv() => Ok(()),
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
