//! `hardneg prolific …`: publish, sync, status, decide, bonuses, pause,
//! resume, stop and places of a link study on Prolific (docs/prolific.md).
use super::prolific_print::{cost_line, print_figures, print_status};
use super::prolific_wait::{e, flush, flush_round};
use crate::domain::ids::StudyId;
use crate::domain::prolific::money::cents;
use crate::prolific::{self, bonus, decide, publish, status, sync};
use anyhow::Context;
use clap::Subcommand;
use sqlx::AnyPool;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Subcommand)]
pub enum ProlificCommand {
    /// Make the draft from the link study (found again after a crash), show Prolific's cost, publish.
    Publish {
        study: StudyId,
        /// Print the draft and hardneg's figures; send nothing.
        #[arg(long)]
        dry_run: bool,
        /// Make the draft and show its cost, but do not publish.
        #[arg(long, conflicts_with = "dry_run")]
        draft_only: bool,
        /// The origin participants reach hardneg at (the join link's).
        #[arg(long, env = "HARDNEG_PUBLIC_ORIGIN", default_value = "http://127.0.0.1:3000")]
        base_url: String,
        #[arg(long)]
        workspace: Option<String>,
        #[arg(long)]
        project: Option<String>,
        /// A participant group (by name) whose members may not take part; repeatable.
        #[arg(long = "block-group", value_name = "NAME")]
        block_groups: Vec<String>,
    },
    /// Page Prolific's submissions into hardneg and reconcile (returns and time-outs free their places).
    Sync { study: StudyId },
    /// Prolific's counts beside hardneg's, mismatches with what to do, budget, open outbox.
    Status {
        study: StudyId,
        #[arg(long)]
        json: bool,
    },
    /// Approve (bulk), reject (with reasons), ask screen-outs to return; then send through the outbox.
    Decide {
        study: StudyId,
        /// List exactly the requests that would be sent; send nothing.
        #[arg(long)]
        dry_run: bool,
        /// The participant group approved finishers join (by name; made when missing); default the spec's `group`.
        #[arg(long)]
        group: Option<String>,
        #[arg(long)]
        workspace: Option<String>,
    },
    /// Bonuses from a CSV (`id,amount`, the id a PROLIFIC_PID or a submission id) or one amount each.
    Bonus {
        study: StudyId,
        /// The round's name: the same round again pays nobody twice.
        #[arg(long)]
        round: String,
        #[arg(long, required_unless_present = "each", conflicts_with = "each")]
        csv: Option<PathBuf>,
        /// This amount (e.g. 0.50) to every approved submission.
        #[arg(long)]
        each: Option<String>,
        #[arg(long)]
        dry_run: bool,
    },
    /// Pause recruiting.
    Pause { study: StudyId },
    /// Resume a paused study.
    Resume { study: StudyId },
    /// Stop the study for good.
    Stop { study: StudyId },
    /// Raise the places on Prolific to TOTAL (within the spec's budget cap).
    Places { study: StudyId, total: u64 },
    /// Send what the outbox holds (and read back what is unconfirmed) until it is settled.
    Flush {
        study: StudyId,
        /// First make the rows Prolific refused (`failed`) pending again (their cause fixed).
        #[arg(long)]
        retry_failed: bool,
    },
    /// Run a fake Prolific API in memory, checked against Prolific's reference
    /// (docs/prolific.md, "The fake Prolific"); prints `fake prolific listening on http://ADDR`.
    Fake {
        #[arg(long, default_value = "127.0.0.1:0")]
        bind: SocketAddr,
        /// The API token clients must send (`Authorization: Token …`); default: a new one, printed on standard error.
        #[arg(long, env = "HARDNEG_FAKE_PROLIFIC_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// The workspace's webhook signing secret from the start (else one is made by POST /api/v1/hooks/secrets/).
        #[arg(long, env = "HARDNEG_FAKE_PROLIFIC_WEBHOOK_SECRET", hide_env_values = true)]
        webhook_secret: Option<String>,
        /// How long bulk approvals and bonus payments wait before they are carried out (POST /_fake/tick: at once).
        #[arg(long, default_value_t = 500)]
        async_delay_ms: u64,
    },
}

/// Runs a `hardneg prolific` command; only the fake runs without hardneg's database.
pub async fn run(data_dir: &std::path::Path, command: ProlificCommand) -> anyhow::Result<()> {
    if let ProlificCommand::Fake { bind, token, webhook_secret, async_delay_ms } = command {
        let token = token.unwrap_or_else(|| {
            let token = format!("{:032x}", rand::random::<u128>());
            eprintln!("fake prolific token: {token}");
            token
        });
        let async_delay = Duration::from_millis(async_delay_ms);
        return prolific::fake::run(prolific::fake::Options { bind, token, webhook_secret, async_delay }).await;
    }
    let db = &super::open_existing(data_dir).await?;
    match command {
        ProlificCommand::Publish { study, dry_run, draft_only, base_url, workspace, project, block_groups } => {
            let over = publish::Overrides { workspace, project, block_groups, currency: None };
            let base_url = crate::domain::prolific::draft::check_origin(&base_url)
                .map_err(|e| anyhow::anyhow!("--base-url: {e}"))?;
            publish_command(db, study, (dry_run, draft_only), &base_url, &over).await
        }
        ProlificCommand::Sync { study } => {
            let client = prolific::connect(db).map_err(e)?;
            let r = sync::sync(&client, study).await.map_err(e)?;
            println!(
                "synced {} submissions in {} pages in {:.2} s; {} hardneg places freed",
                r.submissions, r.pages, r.seconds, r.freed
            );
            let (raised, stopped) = prolific::after_sync(&client, study).await.map_err(e)?;
            if let Some(total) = raised {
                println!("places raised to {total} (auto_increase)");
            }
            if stopped {
                println!("stopped on Prolific: hardneg needs nobody more (more places make it active again)");
            }
            Ok(())
        }
        ProlificCommand::Status { study, json } => {
            let s = status::status(db, study).await.map_err(e)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                print_status(&s);
            }
            Ok(())
        }
        ProlificCommand::Decide { study, dry_run, group, workspace } => {
            decide_command(db, study, dry_run, group, workspace).await
        }
        ProlificCommand::Bonus { study, round, csv, each, dry_run } => {
            bonus_command(db, study, &round, (csv.as_deref(), each.as_deref()), dry_run).await
        }
        ProlificCommand::Pause { study } => transition(db, study, "PAUSE").await,
        ProlificCommand::Resume { study } => transition(db, study, "START").await,
        ProlificCommand::Stop { study } => transition(db, study, "STOP").await,
        ProlificCommand::Places { study, total } => {
            let client = prolific::connect(db).map_err(e)?;
            // Not `total`: a larger raise (another server's) may have come first.
            let places = publish::increase_places(&client, study, total).await.map_err(e)?;
            println!("study {study} now has {places} places on Prolific");
            Ok(())
        }
        ProlificCommand::Flush { study, retry_failed } => {
            let client = prolific::connect(db).map_err(e)?;
            if retry_failed {
                println!("{} failed row(s) to send again", prolific::outbox::retry_failed(db, study).await.map_err(e)?);
            }
            flush(&client, study).await?;
            // A script must tell a settled outbox from one still waiting.
            match prolific::outbox::open_rows(client.db(), study).await.map_err(e)? {
                0 => Ok(()),
                n => anyhow::bail!("{n} outbox row(s) still open: run `hardneg prolific flush {study}` again later"),
            }
        }
        ProlificCommand::Fake { .. } => unreachable!("the fake is run above, without a database"),
    }
}

/// `publish`: the dry run's draft, or the draft with Prolific's cost, then PUBLISH (unless `--draft-only`).
async fn publish_command(
    db: &AnyPool,
    study: StudyId,
    (dry_run, draft_only): (bool, bool),
    base_url: &str,
    over: &publish::Overrides,
) -> anyhow::Result<()> {
    if dry_run {
        let plan = publish::dry_run_plan(db, study, base_url, over).await.map_err(e)?;
        println!("POST /api/v1/studies/ (dry run: nothing sent)");
        println!("{}", serde_json::to_string_pretty(&plan.body)?);
        print_figures(&plan);
        return Ok(());
    }
    let client = prolific::connect(db).map_err(e)?;
    let (plan, pid, cost) = publish::prepare(&client, study, base_url, over).await.map_err(e)?;
    print_figures(&plan);
    println!("study on Prolific: {pid} ({})", plan.internal_name);
    println!("Prolific's cost:   {}", cost_line(&cost));
    if draft_only {
        println!("not published (--draft-only): run `hardneg prolific publish {study}` to publish");
        return Ok(());
    }
    // As Prolific now has it: a study published, stopped or completed
    // before stays so (an audit).
    let status = publish::transition(&client, study, "PUBLISH").await.map_err(e)?;
    match status.as_str() {
        "ACTIVE" => println!("published: study {pid} is open to participants"),
        other => println!("published: study {pid} is {other} on Prolific, not open to participants"),
    }
    Ok(())
}

/// `decide`: sync, then every participant's action and the requests, sent through the outbox.
async fn decide_command(
    db: &AnyPool,
    study: StudyId,
    dry_run: bool,
    group: Option<String>,
    workspace: Option<String>,
) -> anyhow::Result<()> {
    let (client, stale) = prolific::sync_before_deciding(db, study, dry_run).await.map_err(e)?;
    if let Some(why) = stale {
        eprintln!("{why}");
    }
    let group_id = prolific::groups::finishers_group(db, client.as_ref(), study, group, workspace).await.map_err(e)?;
    let d = decide::decide_study(db, study, group_id.as_deref(), dry_run).await.map_err(e)?;
    for l in &d.lines {
        println!(
            "{:>5} {:<26} {:<18} {:<16} {}",
            l.participant,
            l.platform_id,
            l.prolific_status.as_deref().unwrap_or("-"),
            l.status,
            serde_json::to_string(&l.action)?
        );
    }
    if !d.discarded.is_empty() {
        let who: Vec<String> = d.discarded.iter().map(i64::to_string).collect();
        println!(
            "discarded with their rejection: participant(s) {} (their answers no longer count; their bundles are free again)",
            who.join(", ")
        );
    }
    if !d.kept.is_empty() {
        let who: Vec<String> = d.kept.iter().map(i64::to_string).collect();
        println!(
            "rejected, copies kept: participant(s) {} (a later study was built on this study's outcomes, which stay as they are)",
            who.join(", ")
        );
    }
    println!("{} request(s){}:", d.requests.len(), if dry_run { " would be sent (dry run)" } else { "" });
    for r in &d.requests {
        let body = r.body.as_ref().map(|b| b.to_string()).unwrap_or_default();
        println!("  {} {} {}", r.method, r.path, body);
    }
    if let Some(c) = client {
        flush(&c, study).await?;
    }
    Ok(())
}

/// `bonus`: a round from a CSV or one amount each, stored, then set up and paid.
async fn bonus_command(
    db: &AnyPool,
    study: StudyId,
    round: &str,
    (csv, each): (Option<&std::path::Path>, Option<&str>),
    dry_run: bool,
) -> anyhow::Result<()> {
    let text = match csv {
        Some(p) => std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        None => String::new(),
    };
    let source = match each {
        Some(a) => bonus::Source::EachApproved(
            crate::domain::prolific::money::parse_money(a)
                .map_err(|m| e(crate::error::ServiceError::Invalid(format!("--each: {m}"))))?,
        ),
        None => bonus::Source::Csv(&text),
    };
    // Fresh statuses first: a bonus goes to submissions approved on Prolific.
    // A dry run syncs too when it can (a read), else says what it read.
    let client = match prolific::connect(db) {
        Ok(c) => Some(c),
        Err(_) if dry_run => None,
        Err(err) => return Err(e(err)),
    };
    match &client {
        Some(c) => match sync::sync(c, study).await {
            Ok(_) => {}
            Err(err) if dry_run => println!("could not sync ({err}): {}", stale_words(db, study).await?),
            Err(err) => return Err(e(err)),
        },
        None => println!("no Prolific token: {}", stale_words(db, study).await?),
    }
    let lines = bonus::read(db, study, source).await.map_err(e)?;
    let plan = bonus::plan(db, study, round, lines, dry_run).await.map_err(e)?;
    println!(
        "round {:?}: {} bonuses, {} in all, {} new{}",
        plan.round,
        plan.bonuses.len(),
        cents(plan.total_cents),
        plan.new.len(),
        if dry_run { " (dry run: nothing stored or sent)" } else { "" }
    );
    if dry_run {
        // Only what the round does not hold yet is set up and paid.
        for chunk in plan.new.chunks(crate::domain::prolific::decide::BONUS_SETUP_MAX) {
            println!("  POST /api/v1/submissions/bonus-payments/ csv_bonuses:");
            print!("{}", prolific::actions::bonus_csv(chunk));
            println!("  POST /api/v1/bulk-bonus-payments/<its id>/pay/");
        }
        return Ok(());
    }
    // Its own rows only: an approval waiting on an active submission, or
    // another round's pay, is not this round's.
    match client {
        Some(c) => flush_round(&c, study, &plan.round).await,
        None => Ok(()),
    }
}

/// What a dry run that could not sync planned from: the last sync, and when.
async fn stale_words(db: &AnyPool, study: StudyId) -> anyhow::Result<String> {
    let synced_at = prolific::status::status(db, study).await.map_err(e)?.synced_at;
    Ok(match synced_at {
        Some(at) => format!("planned from the statuses of the last sync (Unix time {at})"),
        None => "planned from stored statuses; Prolific's were never synced".to_string(),
    })
}

async fn transition(db: &AnyPool, study: StudyId, action: &str) -> anyhow::Result<()> {
    let client = prolific::connect(db).map_err(e)?;
    publish::transition(&client, study, action).await.map_err(e)?;
    println!("{action}: done");
    Ok(())
}
