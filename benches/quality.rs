//! Crowd quality benchmark: `cargo bench --bench quality` (add `--profile
//! dev` for a debug build). Starts the server on a temp SQLite file with a
//! 700-item link study (7 bundles of 100), writes BENCH_PARTICIPANTS
//! (default 2,000) finished participants of 100 answers each straight into
//! the file (200k answers: simulated people of accuracy 0.55–0.95, times of
//! 1–20 s), then times the dashboard and the approve list (flags and
//! Dawid–Skene over every answer) as library calls and over HTTP. Each run
//! first adds one answer, so the approve list's first call recomputes its
//! scores (its second reuses them). Prints min/median of BENCH_RUNS
//! (default 5) runs beside the target (≤ 200 ms each) and the load average.
#[path = "../tests/api/crowd_kit.rs"]
#[allow(dead_code)]
mod crowd_kit;
#[path = "../tests/api/helpers.rs"]
mod helpers;

use hardneg::domain::rng::SplitMix64;
use helpers::TestApp;
use std::time::{Duration, Instant};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

const VALUES: [&str; 5] = ["0", "1", "2", "3", "none"];
const SHOWN: [&str; 5] = ["A", "B", "C", "D", "none"];

/// Writes `n` participants who each finished a bundle of 100 items.
async fn fill(db: &sqlx::AnyPool, study: i64, n: usize) {
    let bundles: Vec<(i64, Vec<i64>)> = {
        let rows: Vec<(i64, i64)> =
            sqlx::query_as("SELECT bundle, instance_id FROM bundle_items WHERE study_id = ? ORDER BY bundle, position")
                .bind(study)
                .fetch_all(db)
                .await
                .unwrap();
        let mut out: Vec<(i64, Vec<i64>)> = Vec::new();
        for (b, i) in rows {
            match out.last_mut() {
                Some((last, items)) if *last == b => items.push(i),
                _ => out.push((b, vec![i])),
            }
        }
        out
    };
    let mut rng = SplitMix64::new(7);
    let t0 = hardneg::store::db::now_secs() - 3 * 3600;
    let mut tx = db.begin().await.unwrap();
    let mut next_task: i64 =
        sqlx::query_scalar("SELECT coalesce(max(id), 0) + 1 FROM tasks").fetch_one(&mut *tx).await.unwrap();
    for p in 0..n {
        let (bundle, items) = &bundles[p % bundles.len()];
        let arrived = t0 + p as i64 * 3;
        let user = sqlx::query_scalar::<_, i64>(
            "INSERT INTO users (username, role, password_hash, created_at) VALUES (?, 'participant', '!', ?) RETURNING id",
        )
        .bind(format!("p{study}-{}", p + 1))
        .bind(arrived)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO participants (user_id, study_id, number, platform_pid, arrived_at, consented_at) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(user)
        .bind(study)
        .bind(p as i64 + 1)
        .bind(format!("PID{p:06}"))
        .bind(arrived)
        .bind(arrived)
        .execute(&mut *tx)
        .await
        .unwrap();
        let ended = arrived + 100 * 6;
        sqlx::query(
            "INSERT INTO leases (study_id, bundle, user_id, state, leased_at, expires_at, ended_at) VALUES (?, ?, ?, 'completed', ?, ?, ?)",
        )
        .bind(study)
        .bind(bundle)
        .bind(user)
        .bind(arrived)
        .bind(arrived + 3600)
        .bind(ended)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query("INSERT INTO participations (study_id, user_id, total, done) VALUES (?, ?, ?, ?)")
            .bind(study)
            .bind(user)
            .bind(items.len() as i64)
            .bind(items.len() as i64)
            .execute(&mut *tx)
            .await
            .unwrap();
        let accuracy = 0.55 + 0.4 * rng.next_f64();
        let rows: Vec<(i64, i64, usize, usize, i64)> = items
            .iter()
            .enumerate()
            .map(|(k, &instance)| {
                let truth = (instance as usize * 7) % 5;
                let value = if rng.next_f64() < accuracy { truth } else { rng.below(5) };
                let shown = if value == 4 { 4 } else { rng.below(4) };
                (next_task + k as i64, instance, value, shown, 1000 + rng.below(19_000) as i64)
            })
            .collect();
        next_task += rows.len() as i64;
        let mut q = sqlx::QueryBuilder::new(
            "INSERT INTO tasks (id, study_id, user_id, instance_id, query, position, seed, done) ",
        );
        q.push_values(rows.iter().enumerate(), |mut r, (k, row)| {
            r.push_bind(row.0)
                .push_bind(study)
                .push_bind(user)
                .push_bind(row.1)
                .push_bind(0)
                .push_bind(k as i64)
                .push_bind(k as i64)
                .push_bind(1);
        });
        let (sql, args) = hardneg::store::db::numbered(&mut q).unwrap();
        sqlx::query_with(&sql, args).execute(&mut *tx).await.unwrap();
        let mut q = sqlx::QueryBuilder::new(
            "INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at) ",
        );
        q.push_values(rows.iter().enumerate(), |mut r, (k, row)| {
            r.push_bind(row.0)
                .push_bind(study)
                .push_bind(user)
                .push_bind(row.1)
                .push_bind(SHOWN[row.3])
                .push_bind(VALUES[row.2])
                .push_bind("[0,1,2,3]")
                .push_bind(row.4)
                .push_bind(arrived + 6 * (k as i64 + 1));
        });
        let (sql, args) = hardneg::store::db::numbered(&mut q).unwrap();
        sqlx::query_with(&sql, args).execute(&mut *tx).await.unwrap();
    }
    tx.commit().await.unwrap();
}

/// Target for each figure (issue 12): ≤ 200 ms on 2 cores.
const TARGET_MS: f64 = 200.0;

fn report(name: &str, mut runs: Vec<Duration>) {
    runs.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = ms(runs[runs.len() / 2]);
    let verdict = if median <= TARGET_MS { "met" } else { "NOT met" };
    println!(
        "{name}: min {:.1} ms, median {median:.1} ms over {} runs (target ≤ {TARGET_MS:.0} ms: {verdict})",
        ms(runs[0]),
        runs.len()
    );
}

/// One more answer by participant 1 (on an item of another bundle), as
/// arrives while a study runs: the approve list must recompute its scores.
async fn one_more_answer(db: &sqlx::AnyPool, study: i64, k: i64) {
    let (user, instance): (i64, i64) = sqlx::query_as(
        "SELECT p.user_id, b.instance_id FROM participants p JOIN leases l ON l.user_id = p.user_id
         JOIN bundle_items b ON b.study_id = p.study_id AND b.bundle != l.bundle
         WHERE p.study_id = ? AND p.number = 1 ORDER BY b.bundle, b.position LIMIT 1 OFFSET ?",
    )
    .bind(study)
    .bind(k)
    .fetch_one(db)
    .await
    .unwrap();
    let task = sqlx::query_scalar::<_, i64>(
        "INSERT INTO tasks (study_id, user_id, instance_id, query, position, seed, done) VALUES (?, ?, ?, 0, ?, 0, 1) RETURNING id",
    )
    .bind(study)
    .bind(user)
    .bind(instance)
    .bind(1000 + k)
    .fetch_one(db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO answers (task_id, study_id, user_id, instance_id, option_id, value, shown_order, elapsed_ms, answered_at)
         VALUES (?, ?, ?, ?, 'A', '0', '[0,1,2,3]', 5000, ?)",
    )
    .bind(task)
    .bind(study)
    .bind(user)
    .bind(instance)
    .bind(hardneg::store::db::now_secs())
    .execute(db)
    .await
    .unwrap();
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

#[tokio::main]
async fn main() {
    let n = env_or("BENCH_PARTICIPANTS", 2000);
    let runs = env_or("BENCH_RUNS", 5);
    let tmp = tempfile::tempdir().unwrap();
    eprintln!("starting server with 700 demo items…");
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "700"]);
    println!("cores: {}", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    println!("build: {}", if cfg!(debug_assertions) { "debug" } else { "release" });
    let researcher = app.login("researcher").await;
    // A spec takes at most 100 copies a bundle (MAX_COPIES): created with
    // 100, then given the copies the written participants fill, as the
    // participants themselves are written straight into the file.
    let (study, _) =
        crowd_kit::create_link_study(&app, &researcher, &crowd_kit::link_spec("bench quality", 100, &["copies = 100"]))
            .await;
    let db = hardneg::store::db::open_pool(&tmp.path().join("hardneg.sqlite")).await.unwrap();
    sqlx::query("UPDATE bundles SET copies_wanted = ? WHERE study_id = ?")
        .bind(n.div_ceil(7) as i64)
        .bind(study)
        .execute(&db)
        .await
        .unwrap();
    let start = Instant::now();
    fill(&db, study, n).await;
    let answers: i64 =
        sqlx::query_scalar("SELECT count(*) FROM answers WHERE study_id = ?").bind(study).fetch_one(&db).await.unwrap();
    eprintln!("wrote {n} participants, {answers} answers in {:.1} s", start.elapsed().as_secs_f64());
    println!("study: {n} participants, {answers} answers; load average {}", load_average());

    let now = hardneg::store::db::now_secs();
    let (mut dash, mut fresh, mut list, mut dash_http, mut list_http) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in 0..runs {
        one_more_answer(&db, study, k as i64).await;
        let t = Instant::now();
        let d = hardneg::crowd::dashboard(&db, study.into(), now).await.unwrap();
        dash.push(t.elapsed());
        assert_eq!(d.answers, answers + k as i64 + 1);
        let t = Instant::now();
        let rows = hardneg::crowd::approve_list(&db, hardneg::kinds::KINDS, study.into()).await.unwrap();
        fresh.push(t.elapsed());
        assert_eq!(rows.len(), n);
        let t = Instant::now();
        hardneg::crowd::approve_list(&db, hardneg::kinds::KINDS, study.into()).await.unwrap();
        list.push(t.elapsed());
        let t = Instant::now();
        let res = researcher.get(app.url(&format!("/api/v1/studies/{study}/dashboard"))).send().await.unwrap();
        assert_eq!(res.status(), 200);
        res.bytes().await.unwrap();
        dash_http.push(t.elapsed());
        let t = Instant::now();
        let res = researcher.get(app.url(&format!("/api/v1/studies/{study}/approve-list.csv"))).send().await.unwrap();
        assert_eq!(res.status(), 200);
        res.bytes().await.unwrap();
        list_http.push(t.elapsed());
    }
    report("dashboard (library call)", dash);
    report("approve list after a new answer: flags and Dawid–Skene recomputed (library call)", fresh);
    report("approve list, answers unchanged (library call)", list);
    report("GET /api/v1/studies/{id}/dashboard", dash_http);
    report("GET /api/v1/studies/{id}/approve-list.csv (server's first read of these answers)", list_http);
    println!("load average after: {}", load_average());
}
