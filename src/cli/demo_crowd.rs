//! The demo's crowd study by link, with its checks and a few simulated
//! participants, so the research page's dashboard and approve list have
//! rows at once. Its items are twelve of the drawn demo scenes copied into a
//! dataset of their own ("demo-crowd", the known truth kept), so the demo's
//! Step 3 study stays the newest on "demo". The participants go through the
//! real services (arrival, consent, comprehension check, answers), as a
//! browser would: two finish (one too fast), one fails two attention checks
//! and is screened out, one is still working on the bundle given back. Half
//! the places stay free for whoever opens the link.
use crate::api_types::TaskView;
use crate::crowd::{self, Arrival, Stage};
use crate::domain::crowd::ids::PlatformIds;
use crate::domain::ids::StudyId;
use crate::kinds::REGISTRY;
use crate::state::{AppState, CrowdState};
use crate::store::clock::Clock;
use crate::store::{db, images::ImageStore, writer::Writer};
use crate::studies::create;
use crate::studies::tasks;
use anyhow::Context;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const DEMO_CROWD_DATASET: &str = "demo-crowd";
pub const DEMO_CROWD_STUDY: &str = "Demo: crowd study by link with checks";
/// Three bundles of four, two copies each: six places, three of them free
/// after the simulated participants, so a newcomer can join at once.
const ITEMS: i64 = 12;
const NONE_ANSWER: &str = "When no image shows everything in the description";

/// The spec; `{gold}` becomes two of the copied scenes' keys.
const SPEC: &str = r#"name = "Demo: crowd study by link with checks"
kind = "four_image"
dataset = "demo-crowd"
seed = 2024
access = "link"

[link]
bundle_size = 4
copies = 2
time_limit_minutes = 60
consent = "A demo of a crowd study: your answers are stored with an opaque number, never your name."
min_seconds_per_item = 1.0
hourly_wage = 12.0
platform_fee = 0.333
gold = [{gold}]
attention_checks = 3
max_failed_checks = 2
comprehension = [{ question = "When do you pick None?", options = ["Never", "When no image shows everything in the description"], answer = "When no image shows everything in the description" }]
"#;

/// How a simulated participant answers: by the demo's truth, in `ms` per
/// item, failing attention checks when `fails_checks`; at most `answers`.
struct Sim {
    pid: &'static str,
    ms: i64,
    fails_checks: bool,
    answers: usize,
}

const PARTICIPANTS: [Sim; 4] = [
    Sim { pid: "demo-crowd-careful", ms: 12_400, fails_checks: false, answers: usize::MAX },
    Sim { pid: "demo-crowd-hasty", ms: 600, fails_checks: false, answers: usize::MAX },
    Sim { pid: "demo-crowd-careless", ms: 3_100, fails_checks: true, answers: usize::MAX },
    Sim { pid: "demo-crowd-working", ms: 9_800, fails_checks: false, answers: 3 },
];

/// Seeds the study once (idempotent) from dataset `scenes`; without
/// twelve scenes there, nothing.
pub async fn seed_demo_crowd(db: &AnyPool, scenes: &str) -> anyhow::Result<()> {
    let exists: Option<i64> =
        sqlx::query_scalar("SELECT id FROM studies WHERE name = $1").bind(DEMO_CROWD_STUDY).fetch_optional(db).await?;
    let Some(keys) = copy_scenes(db, scenes).await? else { return Ok(()) };
    if exists.is_some() || keys.len() < 2 {
        return Ok(());
    }
    let gold: Vec<String> = keys.iter().take(2).map(|k| format!("{{ key = {k:?} }}")).collect();
    let spec = SPEC.replace("{gold}", &gold.join(", "));
    let study = create::parse_spec(&REGISTRY, &spec, 0)?;
    let id = create::create_study(db, &REGISTRY, &study, &spec).await.context("the demo crowd study")?;
    let (state, clock) = state(db).await?;
    let truth = truth(db).await?;
    let token = crowd::link(db, id).await?.token;
    // Arrivals ten minutes apart, the first 45 minutes ago: the charts,
    // bundle times and cost then look like a study under way.
    for (i, sim) in PARTICIPANTS.iter().enumerate() {
        let mut at = Shift { file: &clock, secs: -45 * 60 + 600 * i as i64 };
        let done = take_part(&state, &token, id, sim, &truth, &mut at).await;
        done.with_context(|| format!("demo participant {}", sim.pid))?;
    }
    std::fs::remove_file(&clock).ok();
    Ok(())
}

/// The seeding clock's offset from now, in its offset file.
struct Shift<'a> {
    file: &'a Path,
    secs: i64,
}

impl Shift<'_> {
    fn advance(&mut self, secs: i64) -> std::io::Result<()> {
        self.secs += secs;
        std::fs::write(self.file, self.secs.to_string())
    }
}

/// Copies the first twelve scenes (by key) into "demo-crowd", once;
/// the keys of those with a single right answer, or None when the demo has
/// fewer scenes.
async fn copy_scenes(db: &AnyPool, scenes: &str) -> anyhow::Result<Option<Vec<String>>> {
    let mut tx = crate::store::db::begin_write(db).await?;
    let copied: Option<i64> = sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1")
        .bind(DEMO_CROWD_DATASET)
        .fetch_optional(&mut *tx)
        .await?;
    // With each scene, how many of its candidates show the negative caption.
    let source: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT i.id, i.key, (SELECT count(*) FROM candidates c WHERE c.instance_id = i.id AND c.known_match = 1)
         FROM instances i JOIN datasets d ON d.id = i.dataset_id WHERE d.name = $1 ORDER BY i.key LIMIT $2",
    )
    .bind(scenes)
    .bind(ITEMS)
    .fetch_all(&mut *tx)
    .await?;
    if source.len() < ITEMS as usize {
        return Ok(None);
    }
    if copied.is_none() {
        let dataset = crate::store::dataset_rows::insert_dataset(&mut tx, DEMO_CROWD_DATASET, "none").await?;
        for (from, _, _) in &source {
            let to = sqlx::query_scalar::<_, i64>(
                "INSERT INTO instances (dataset_id, key, caption, negative_caption, caption_orig, negative_caption_orig,
                                        neg_type, subtype, positive_image)
                 SELECT $1, key, caption, negative_caption, caption_orig, negative_caption_orig, neg_type, subtype,
                        positive_image
                 FROM instances WHERE id = $2 RETURNING id",
            )
            .bind(dataset)
            .bind(from)
            .fetch_one(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO candidates (instance_id, slot, image, known_match)
                 SELECT $1, slot, image, known_match FROM candidates WHERE instance_id = $2",
            )
            .bind(to)
            .bind(from)
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await?;
    // Gold needs one right answer: one matching candidate, or none.
    Ok(Some(source.into_iter().filter(|s| s.2 <= 1).map(|(_, k, _)| k).collect()))
}

/// The services' state on the demo's database, for the seeding only, with
/// a clock shifted by the returned file (removed afterwards).
async fn state(db: &AnyPool) -> anyhow::Result<(AppState, PathBuf)> {
    let dir = &db::data_dir(db);
    let clock = dir.join("demo-crowd-clock");
    let images = ImageStore::new(dir.join("images"));
    let state = AppState::new(
        leptos::config::LeptosOptions::builder().output_name("hardneg").build(),
        db.clone(),
        Writer::open(&db::location_of(db)).await?,
        images,
        Default::default(),
        CrowdState { clock: Clock::with_offset_file(clock.clone()), ..Default::default() },
        crate::kinds::KINDS,
    );
    Ok((state, clock))
}

/// Each demo-crowd candidate image: whether it shows the negative caption.
async fn truth(db: &AnyPool) -> anyhow::Result<HashMap<String, bool>> {
    let rows: Vec<(String, crate::store::ids::Flag)> = sqlx::query_as(
        "SELECT c.image, c.known_match = 1 FROM candidates c JOIN instances i ON i.id = c.instance_id
         JOIN datasets d ON d.id = i.dataset_id WHERE d.name = $1",
    )
    .bind(DEMO_CROWD_DATASET)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(image, m)| (image, m.0)).collect())
}

async fn take_part(
    state: &AppState,
    token: &str,
    study: StudyId,
    sim: &Sim,
    truth: &HashMap<String, bool>,
    at: &mut Shift<'_>,
) -> anyhow::Result<()> {
    at.advance(0)?;
    let ids =
        PlatformIds { pid: sim.pid.to_string(), study: Some("demo".into()), session: Some(format!("{}-s", sim.pid)) };
    let user = match crowd::arrive_consenting(state, token, Some(&ids), true, None).await? {
        Arrival::Admitted { user, .. } => user,
        other => anyhow::bail!("not admitted: {other:?}"),
    };
    at.advance(40)?;
    crowd::instructions_read(state, &user, study).await?;
    if let Stage::Comprehension { questions, .. } = crowd::stage(state, &user, study).await? {
        let chosen: Vec<usize> =
            questions.iter().map(|q| q.options.iter().position(|o| o == NONE_ANSWER).unwrap_or(0)).collect();
        at.advance(15)?;
        crowd::comprehension_answer(state, &user, study, &chosen).await?;
    }
    for _ in 0..sim.answers {
        let Some(task) = tasks::next_task(state, &user, study).await? else { break };
        let option = choose(&task, sim.fails_checks, truth);
        at.advance((sim.ms + 999) / 1000)?;
        tasks::answer(state, &user, task.task_id, &option, Some(sim.ms)).await?;
        if matches!(crowd::stage(state, &user, study).await?, Stage::ScreenedOut { .. }) {
            return Ok(());
        }
    }
    if sim.answers == usize::MAX {
        // Asks for the code once every task is answered, as the page does.
        crowd::completion(state, &user, study).await?;
    }
    Ok(())
}

/// The demo's truth (the matching candidate, or None); on an attention check
/// the option it names, or when failing checks another one.
fn choose(task: &TaskView, fails_checks: bool, truth: &HashMap<String, bool>) -> String {
    let named = task.options.iter().find(|o| task.prompt.text.contains(&format!("select {} ", o.label)));
    if let Some(named) = named {
        let pick = if fails_checks { task.options.iter().find(|o| o.id != named.id) } else { Some(named) };
        return pick.map_or_else(|| named.id.clone(), |o| o.id.clone());
    }
    let shows = |o: &&crate::api_types::OptionView| {
        o.image_url.as_deref().and_then(|u| u.rsplit('/').next()).is_some_and(|h| truth.get(h) == Some(&true))
    };
    task.options.iter().find(shows).map_or_else(|| "none".to_string(), |o| o.id.clone())
}
