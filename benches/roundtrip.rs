//! Answer round trip benchmark: `cargo bench --bench roundtrip`.
//! Starts the release server on a temp SQLite file and drives the JSON API
//! over loopback: each round trip is GET next + POST answer (the answer is
//! durable when acknowledged). Prints throughput and latency percentiles for
//!
//! 1. N annotators with no think time (default 50),
//! 2. the same through the server functions the survey page calls
//!    (`answer_and_next`: one request per round trip), and
//! 3. M annotators each answering every 2 s (default 500).
//!
//! The server runs pinned to one core (`taskset -a -cp BENCH_CORE`, default
//! 0; `none` leaves it free) and the closed loops report its CPU time per
//! round trip (utime + stime from /proc), the figure that holds on a loaded
//! machine, beside the targets of issue 15.
//!
//! Environment: BENCH_CLOSED_USERS, BENCH_OPEN_USERS, BENCH_SECONDS, BENCH_ITEMS, BENCH_CORE.
#[path = "../tests/api/helpers.rs"]
mod helpers;

use hardneg::api_types::TaskView;
use hardneg::domain::ids::TaskId;
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

    /// One round trip through the survey page's server function: answer
    /// `task` and get the next one. None when finished.
    async fn sfn_round_trip(&self, base: &str, study: i64, task: TaskId) -> Option<(Duration, TaskId)> {
        let start = Instant::now();
        let path = <hardneg::ui::annotate::AnswerAndNext as leptos::server_fn::ServerFn>::PATH;
        let form = format!("study_id={study}&task_id={task}&option=A&elapsed_ms=900");
        let res = self
            .client
            .post(format!("{base}{path}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .ok()?;
        assert_eq!(res.status(), 200, "answer_and_next refused");
        let next = res.json::<Option<TaskView>>().await.ok()??;
        Some((start.elapsed(), next.task_id))
    }

    /// The survey page's first call: start the study and get the first task.
    async fn sfn_first(&self, base: &str, study: i64) -> Option<TaskId> {
        let path = <hardneg::ui::annotate::NextTask as leptos::server_fn::ServerFn>::PATH;
        let res = self
            .client
            .post(format!("{base}{path}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("study_id={study}"))
            .send()
            .await
            .ok()?;
        assert_eq!(res.status(), 200, "next_task refused");
        Some(res.json::<Option<TaskView>>().await.ok()??.task_id)
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

/// The server's CPU time so far (all threads), in µs.
fn cpu_us(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().map(|v| v.parse().unwrap_or(0.0)).collect();
    let ticks = f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0);
    // /proc counts in USER_HZ, 100 on Linux whatever the kernel's tick.
    ticks * 1e4
}

fn report_cpu(pid: u32, before: f64, round_trips: usize) {
    let per = (cpu_us(pid) - before) / round_trips.max(1) as f64;
    println!("  server CPU per round trip: {per:.0} µs (target: well under issue 15's ~670 µs)");
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

/// Closed loop through the server functions until the deadline.
async fn drive_sfn(base: &str, study: i64, annotators: Vec<Annotator>, length: Duration) -> (Vec<Duration>, Duration) {
    let start = Instant::now();
    let deadline = start + length;
    let mut tasks = Vec::new();
    for a in annotators {
        let base = base.to_string();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let Some(mut task) = a.sfn_first(&base, study).await else { return lat };
            while Instant::now() < deadline {
                match a.sfn_round_trip(&base, study, task).await {
                    Some((d, next)) => {
                        lat.push(d);
                        task = next;
                    }
                    None => break,
                }
            }
            lat
        }));
    }
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await.unwrap());
    }
    (lat, start.elapsed())
}

/// Pins every thread of the server to one core (threads made later inherit it).
fn pin(pid: u32) {
    let core = std::env::var("BENCH_CORE").unwrap_or_else(|_| "0".into());
    if core == "none" {
        return println!("server not pinned");
    }
    let ok = std::process::Command::new("taskset")
        .args(["-a", "-cp", &core, &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    println!("server pinned to core {core}: {}", if ok { "yes" } else { "NO (taskset failed)" });
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
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    pin(app.pid());

    // 1. Closed loop, no think time.
    let annotators = make_annotators(&app, "closed", closed_users).await;
    let cpu = cpu_us(app.pid());
    let (arrivals, lat, wall) = drive(&app.base, study, annotators, Duration::from_secs(seconds), None).await;
    let round_trips = lat.len() + arrivals.len();
    report(&format!("closed loop, {closed_users} annotators, no think time"), lat, wall);
    println!("  target (issue 15): >= 3,600/s pinned to one core, p99 <= 25 ms; before: 1,470-1,494/s, p99 48-52 ms");
    report_cpu(app.pid(), cpu, round_trips);
    report("  (their first round trips, which create each queue)", arrivals, wall);

    // 2. The same through the survey page's server functions.
    let annotators = make_annotators(&app, "sfn", closed_users).await;
    let cpu = cpu_us(app.pid());
    let (lat, wall) = drive_sfn(&app.base, study, annotators, Duration::from_secs(seconds)).await;
    let round_trips = lat.len();
    report(&format!("server functions (answer_and_next), {closed_users} annotators, no think time"), lat, wall);
    println!("  target (issue 15): >= 2x the figure before");
    report_cpu(app.pid(), cpu, round_trips);

    // 2. Open loop: every annotator answers every 2 s, starts spread over 2 s.
    let annotators = make_annotators(&app, "open", open_users).await;
    let (annotators, arrivals, wall) = arrive(&app.base, study, annotators).await;
    report(&format!("arrival of {open_users} annotators at once (queues created)"), arrivals, wall);
    let period = Some(Duration::from_secs(2));
    let (arrivals, lat, wall) = drive(&app.base, study, annotators, Duration::from_secs(seconds.max(10)), period).await;
    report(&format!("open loop, {open_users} annotators answering every 2 s"), lat, wall);
    report("  (their first round trips in this phase)", arrivals, wall);
}
