//! Answer round trip benchmark: `cargo bench --bench roundtrip`.
//! Starts the release server on a temp SQLite file and drives the JSON API
//! over loopback: each round trip is GET next + POST answer (the answer is
//! durable when acknowledged). Prints throughput and latency percentiles for
//!
//! 1. N annotators with no think time (default 50), and
//! 2. M annotators each answering every 2 s (default 500).
//!
//! Environment: BENCH_CLOSED_USERS, BENCH_OPEN_USERS, BENCH_SECONDS, BENCH_ITEMS.
#[path = "../tests/api/helpers.rs"]
mod helpers;

use hardneg::api_types::TaskView;
use helpers::TestApp;
use serde_json::json;
use std::time::{Duration, Instant};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

struct Annotator {
    client: reqwest::Client,
}

impl Annotator {
    /// One round trip: fetch the next task and answer it. None when finished.
    async fn round_trip(&self, base: &str, study: i64) -> Option<Duration> {
        let start = Instant::now();
        let res = self.client.get(format!("{base}/api/v1/studies/{study}/next")).send().await.ok()?;
        if res.status() != 200 {
            return None;
        }
        let id = res.json::<TaskView>().await.ok()?.task_id;
        let res = self
            .client
            .post(format!("{base}/api/v1/tasks/{id}/answer"))
            .json(&json!({"option": "A", "elapsed_ms": 900}))
            .send()
            .await
            .ok()?;
        assert_eq!(res.status(), 200, "answer refused");
        let _ = res.bytes().await;
        Some(start.elapsed())
    }

    /// Arrival: starting the study (creates the queue), then a round trip.
    async fn arrive(&self, base: &str, study: i64) -> Option<Duration> {
        let start = Instant::now();
        let res = self.client.post(format!("{base}/api/v1/studies/{study}/start")).send().await.ok()?;
        assert_eq!(res.status(), 200, "start refused");
        self.round_trip(base, study).await?;
        Some(start.elapsed())
    }
}

fn report(name: &str, mut lat: Vec<Duration>, wall: Duration) {
    lat.sort();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).copied().unwrap_or_default()
    };
    println!(
        "{name}: {} round trips in {:.1} s = {:.0}/s; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        lat.len(),
        wall.as_secs_f64(),
        lat.len() as f64 / wall.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        lat.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

async fn make_annotators(app: &TestApp, prefix: &str, n: usize) -> Vec<Annotator> {
    let db = hardneg::store::db::open_pool(&app.data_dir.join("hardneg.sqlite")).await.unwrap();
    let password = "benchmark password";
    let mut created = Vec::new();
    for i in 0..n {
        let db = db.clone();
        let name = format!("{prefix}{i}");
        created.push(tokio::spawn(async move {
            hardneg::accounts::add_user(&db, &name, hardneg::domain::role::Role::Annotator, password).await.unwrap();
        }));
    }
    for c in created {
        c.await.unwrap();
    }
    let mut logins = Vec::new();
    for i in 0..n {
        let url = app.url("/api/v1/session");
        let name = format!("{prefix}{i}");
        logins.push(tokio::spawn(async move {
            let client = reqwest::Client::builder().cookie_store(true).pool_max_idle_per_host(4).build().unwrap();
            let res = client.post(url).json(&json!({"username": name, "password": password})).send().await.unwrap();
            assert_eq!(res.status(), 204);
            Annotator { client }
        }));
    }
    let mut out = Vec::new();
    for l in logins {
        out.push(l.await.unwrap());
    }
    out
}

/// Runs every annotator until the deadline: back to back when `period` is
/// None, else once per period with starts spread over one period.
/// Every annotator's arrival at once: starting the study creates its queue.
async fn arrive(base: &str, study: i64, annotators: Vec<Annotator>) -> (Vec<Annotator>, Vec<Duration>, Duration) {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for a in annotators {
        let base = base.to_string();
        tasks.push(tokio::spawn(async move {
            let d = a.arrive(&base, study).await.expect("a first task");
            (a, d)
        }));
    }
    let (mut back, mut lat) = (Vec::new(), Vec::new());
    for t in tasks {
        let (a, d) = t.await.unwrap();
        back.push(a);
        lat.push(d);
    }
    (back, lat, start.elapsed())
}

/// The first round trip of each annotator (arrival: its queue is created) is
/// reported apart from the steady state.
async fn drive(
    base: &str,
    study: i64,
    annotators: Vec<Annotator>,
    length: Duration,
    period: Option<Duration>,
) -> (Vec<Duration>, Vec<Duration>, Duration) {
    let start = Instant::now();
    let deadline = start + length;
    let n = annotators.len().max(1) as u32;
    let mut tasks = Vec::new();
    for (i, a) in annotators.into_iter().enumerate() {
        let base = base.to_string();
        tasks.push(tokio::spawn(async move {
            let mut tick = period.map(|p| tokio::time::interval_at(tokio::time::Instant::now() + p * i as u32 / n, p));
            let mut lat = Vec::new();
            let mut first = None;
            loop {
                if let Some(t) = tick.as_mut() {
                    t.tick().await;
                }
                if Instant::now() >= deadline {
                    break;
                }
                if first.is_none() {
                    match a.arrive(&base, study).await {
                        Some(d) => first = Some(d),
                        None => break,
                    }
                    continue;
                }
                match a.round_trip(&base, study).await {
                    Some(d) => lat.push(d),
                    None => break,
                }
            }
            (first, lat)
        }));
    }
    let (mut arrivals, mut lat) = (Vec::new(), Vec::new());
    for t in tasks {
        let (first, rest) = t.await.unwrap();
        arrivals.extend(first);
        lat.extend(rest);
    }
    (arrivals, lat, start.elapsed())
}

#[tokio::main]
async fn main() {
    let closed_users = env_or("BENCH_CLOSED_USERS", 50);
    let open_users = env_or("BENCH_OPEN_USERS", 500);
    let seconds = env_or("BENCH_SECONDS", 10) as u64;
    let items = env_or("BENCH_ITEMS", 700).to_string();
    let tmp = tempfile::tempdir().unwrap();
    eprintln!("starting server with {items} demo items…");
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", &items]);
    let study = 1;
    println!("cores: {}", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));

    // 1. Closed loop, no think time.
    let annotators = make_annotators(&app, "closed", closed_users).await;
    let (arrivals, lat, wall) = drive(&app.base, study, annotators, Duration::from_secs(seconds), None).await;
    report(&format!("closed loop, {closed_users} annotators, no think time"), lat, wall);
    report("  (their first round trips, which create each queue)", arrivals, wall);

    // 2. Open loop: every annotator answers every 2 s, starts spread over 2 s.
    let annotators = make_annotators(&app, "open", open_users).await;
    let (annotators, arrivals, wall) = arrive(&app.base, study, annotators).await;
    report(&format!("arrival of {open_users} annotators at once (queues created)"), arrivals, wall);
    let period = Some(Duration::from_secs(2));
    let (arrivals, lat, wall) = drive(&app.base, study, annotators, Duration::from_secs(seconds.max(10)), period).await;
    report(&format!("open loop, {open_users} annotators answering every 2 s"), lat, wall);
    report("  (their first round trips in this phase)", arrivals, wall);
}
