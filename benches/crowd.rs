//! Crowd arrival benchmark: `cargo bench --bench crowd`. Starts the server
//! on a temp SQLite file with a link study and drives it over loopback as
//! Prolific would: BENCH_PARTICIPANTS (default 1,000) arrive spread evenly
//! over 10 s (`POST /join/{token}`, one transaction each), then each answers
//! its bundle at one answer per 2 s (GET next, then POST answer, durable
//! when acknowledged) until BENCH_SECONDS (default 40) have passed. Prints
//! arrival p50/p99 and answer p50/p99 (targets: arrival p99 <= 100 ms,
//! answer p99 <= 20 ms), and the CPU the server (and, on PostgreSQL, the
//! database's processes) spent over the run, per participant: on a machine
//! this busy the latencies swing from run to run, the CPU much less. With
//! BENCH_SECONDS=1 nearly all of it is arrivals. Printed figures, not a
//! timed test.
#[path = "../tests/api/crowd_kit.rs"]
#[allow(dead_code)]
mod crowd_kit;
#[path = "../tests/api/helpers.rs"]
mod helpers;

use helpers::TestApp;
use std::time::{Duration, Instant};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn report(name: &str, mut lat: Vec<Duration>) {
    lat.sort();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).copied().unwrap_or_default()
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name}: n={} p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        lat.len(),
        ms(pct(0.50)),
        ms(pct(0.99)),
        ms(lat.last().copied().unwrap_or_default())
    );
}

/// One participant: arrives at `at`, then answers every 2 s until `deadline`.
/// Returns (arrival latency, answer latencies).
async fn participant(
    app: &TestApp,
    token: &str,
    study: i64,
    i: usize,
    at: Instant,
    deadline: Instant,
) -> (Duration, Vec<Duration>) {
    tokio::time::sleep_until(at.into()).await;
    let client = crowd_kit::browser();
    let start = Instant::now();
    let (status, body) = crowd_kit::arrive_with(app, &client, token, &format!("BENCH{i:05}")).await;
    let arrival = start.elapsed();
    assert_eq!(status, 303, "arrival {i}: {body}");
    crowd_kit::start(app, &client, study).await;
    let mut answers = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tick.tick().await;
        if Instant::now() >= deadline {
            break;
        }
        let Some(task) = app.next_task(&client, study).await else { break };
        let start = Instant::now();
        let res = app.answer(&client, task.task_id, "A").await;
        assert_eq!(res.status(), 200);
        answers.push(start.elapsed());
    }
    (arrival, answers)
}

#[tokio::main]
async fn main() {
    let n = env_or("BENCH_PARTICIPANTS", 1000);
    let seconds = env_or("BENCH_SECONDS", 40) as u64;
    let tmp = tempfile::tempdir().unwrap();
    eprintln!("starting server with 700 demo items…");
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "700"]);
    println!("cores: {}", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let researcher = app.login("researcher").await;
    // 700 items in 35 bundles of 20; enough copies for every participant.
    let copies = n.div_ceil(35).to_string();
    let spec = crowd_kit::link_spec("bench crowd", 20, &[&format!("copies = {copies}")]);
    let (study, token) = crowd_kit::create_link_study(&app, &researcher, &spec).await;

    let start = Instant::now() + Duration::from_millis(200);
    let deadline = start + Duration::from_secs(seconds);
    let spread = Duration::from_secs(10);
    let app = std::sync::Arc::new(app);
    let cpu_before = (ticks(app.pid()), postgres_ticks());
    let runs = (0..n).map(|i| {
        let at = start + spread * i as u32 / n as u32;
        let (app, token) = (app.clone(), token.clone());
        tokio::spawn(async move { participant(&app, &token, study, i, at, deadline).await })
    });
    let results: Vec<_> =
        futures_util::future::join_all(runs).await.into_iter().map(|r| r.expect("a participant")).collect();
    let arrivals: Vec<Duration> = results.iter().map(|r| r.0).collect();
    let answers: Vec<Duration> = results.into_iter().flat_map(|r| r.1).collect();
    report(&format!("arrival of {n} participants within 10 s (POST /join)"), arrivals);
    report("answers at one per 2 s per participant (POST answer)", answers);
    let ms = |t: u64| t as f64 * 1e3 / clock_ticks_per_second() / n as f64;
    println!("server CPU per participant over the run: {:.2} ms", ms(ticks(app.pid()) - cpu_before.0));
    if helpers::on_postgres() {
        println!("PostgreSQL CPU per participant over the run: {:.2} ms", ms(postgres_ticks() - cpu_before.1));
    }
}

fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant of the system; no memory is passed.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }) as f64
}

/// A process's user and system CPU so far, in clock ticks (0 once it is gone).
fn ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12) // utime and stime: the 14th and 15th fields of the line
}

/// The CPU of every running process named `postgres` (the server and its
/// backends; a backend that exits during the run takes its share along).
fn postgres_ticks() -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "postgres"))
        .map(ticks)
        .sum()
}
