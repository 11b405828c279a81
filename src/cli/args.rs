//! The command line's arguments, as clap parses them; `mod.rs` runs them.
use super::ImportCommand;
use crate::domain::ids::{ParticipantId, StudyId};
use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "hardneg", version, about = "Human curation of vision-language compositionality benchmarks")]
pub struct Cli {
    /// Holds the SQLite file (unless --database names another) and the image store.
    #[arg(long, global = true, env = "HARDNEG_DATA_DIR", default_value = "./hardneg-data")]
    pub data_dir: PathBuf,
    /// The database: `postgres://user:password@host/db` for PostgreSQL (servers
    /// sharing it share the data dir's images too), or `sqlite://PATH`.
    /// Default: the SQLite file `hardneg.sqlite` in the data dir.
    #[arg(long, global = true, env = "HARDNEG_DATABASE")]
    pub database: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Serves connections (the app, the fake Prolific) rather than printing a report.
    pub fn serves(&self) -> bool {
        matches!(
            self.command,
            Command::Serve(_) | Command::Prolific { command: super::prolific::ProlificCommand::Fake { .. } }
        )
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the web application.
    Serve(ServeArgs),
    /// Manage accounts.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// A consistent copy of the database and images into a new directory,
    /// taken while the server runs (docs/deploy.md).
    Backup {
        /// The new directory to write; it must not exist.
        dest: PathBuf,
        /// An earlier backup on the same file system: images it holds are hard-linked, not copied.
        #[arg(long)]
        link_dest: Option<PathBuf>,
    },
    /// Brings a backup back into --data-dir, which must hold no database.
    Restore {
        /// A directory written by `hardneg backup`.
        src: PathBuf,
    },
    /// Every dataset with its curation funnel (candidates → Step 3 → Step 4).
    Datasets {
        /// Print the JSON of GET /api/v1/datasets instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Manage studies.
    Study {
        #[command(subcommand)]
        command: StudyCommand,
    },
    /// Import datasets.
    Import {
        #[command(subcommand)]
        command: ImportCommand,
    },
    /// Model results.
    Results {
        #[command(subcommand)]
        command: ResultsCommand,
    },
    /// Inter-annotator agreement on a study: Cohen's kappa per pair, mean, Fleiss, Krippendorff's alpha.
    Agreement(AgreementArgs),
    /// The statistics of a study whose kind reports them (odd-one-out: accuracy per subset).
    Report {
        study: StudyId,
        /// Print the JSON of GET /api/v1/studies/{id}/report instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Blind text-only audit of a dataset stage: how often a scorer that sees only the captions picks the positive (docs/audit.md).
    Audit {
        dataset: String,
        /// candidates, step3 or final; default: the furthest the dataset's curation reached (as the API).
        #[arg(long)]
        stage: Option<String>,
        /// A command speaking the text-score part of the scorer protocol, run with `sh -c`;
        /// without it the built-in baselines (length, word-frequency) run.
        #[arg(long, requires = "name")]
        external: Option<String>,
        /// The external scorer's name on the dataset page and in the card (re-running it replaces its result).
        #[arg(long)]
        name: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Score a dataset with a model: a Hugging Face CLIP directory run in-process, or an external scorer.
    Score {
        /// Directory with config.json, model.safetensors and tokenizer.json.
        #[arg(long, required_unless_present = "external", conflicts_with = "external")]
        model_dir: Option<PathBuf>,
        /// A command speaking the scorer protocol (docs/scorer-protocol.md), run with `sh -c`.
        #[arg(long)]
        external: Option<String>,
        /// The run's name in comparisons (re-scoring the same name replaces the run).
        #[arg(long)]
        name: String,
        #[arg(long)]
        dataset: String,
        /// auto (CUDA when built with it and present, else CPU), cpu or cuda.
        #[arg(long, default_value = "auto")]
        device: String,
        /// Images or captions per forward pass.
        #[arg(long, default_value_t = 32)]
        batch: usize,
        /// The products' precision: f32, or bf16/f16 as PyTorch's autocast (for --model-dir; docs/scoring.md).
        #[arg(long, default_value = "f32")]
        dtype: String,
    },
    /// Export curated instances: rows (BiVLC columns + provenance), images/ and a README.md card (docs/export.md).
    Export {
        dataset: String,
        /// A new or empty directory.
        #[arg(long)]
        out: PathBuf,
        /// csv, jsonl or parquet.
        #[arg(long)]
        format: String,
        /// candidates, step3 or final.
        #[arg(long, default_value = "final")]
        stage: String,
        /// `test` (one named file) or `train=0.8,val=0.2` (seeded, stratified by type/subtype).
        #[arg(long)]
        split: Option<String>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Prefix CSV cells starting with = + - @ tab or CR with ' so spreadsheets show them as text
        /// (every CSV file of the export; JSON Lines and Parquet rows stay exact).
        #[arg(long)]
        spreadsheet_safe: bool,
    },
    /// A link study's participants: number, bundle, lease state, progress.
    Participants {
        study: StudyId,
        #[arg(long)]
        csv: bool,
        /// Add PROLIFIC_PIDs and the platform's study and session ids (personal data).
        #[arg(long)]
        with_platform_ids: bool,
        /// Print the approve list as CSV instead: flags and a suggested decision per participant (docs/crowd.md).
        #[arg(long, conflicts_with_all = ["csv", "with_platform_ids", "discard"])]
        approve_list: bool,
        /// Discard this participant's finished copy: its answers stay stored but no longer count,
        /// and its bundle goes to a new participant.
        #[arg(long, value_name = "PARTICIPANT_NUMBER", conflicts_with_all = ["csv", "with_platform_ids"])]
        discard: Option<ParticipantId>,
    },
    /// Publish, sync, decide and pay a link study through Prolific's API (docs/prolific.md).
    Prolific {
        #[command(subcommand)]
        command: super::prolific::ProlificCommand,
    },
    /// Compare models (and chance) on a dataset: I2T, T2I, Group and finer scores.
    Compare {
        #[arg(long)]
        dataset: String,
        /// Only these human-baseline studies (repeatable); default: every one of the dataset.
        #[arg(long = "baseline", value_name = "STUDY_ID")]
        baselines: Vec<i64>,
        /// Measure the models on a curation stage's instances only (candidates, step3 or final),
        /// as a paper reports them; default: every instance with an outcome.
        #[arg(long)]
        stage: Option<String>,
        /// Print the JSON of GET /api/v1/compare instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum ResultsCommand {
    /// Import per-instance results (BiVLC results CSV, or raw similarities c0_i0, c1_i0, c0_i1, c1_i1).
    Import {
        #[arg(long)]
        model: String,
        /// Dataset to match rows to; created text-only from the rows when it does not exist.
        #[arg(long, default_value = "bivlc")]
        dataset: String,
        file: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Add an account; the password is read from standard input.
    Add {
        name: String,
        #[arg(long)]
        role: String,
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// A new password, read from standard input; ends the account's sessions.
    Password {
        name: String,
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// Another role (admin, researcher or annotator); ends the account's sessions.
    Role { name: String, role: String },
    /// Ends every session of the account (a running server sees it within seconds).
    SignOut { name: String },
    /// No more logins and no session for the account, until `enable`.
    Disable { name: String },
    /// Lets a disabled account log in again.
    Enable { name: String },
}

#[derive(Subcommand)]
pub enum StudyCommand {
    /// Create a study from a TOML spec (see docs/study-spec.md).
    Create { spec: PathBuf },
    /// A link study's join URL with Prolific's placeholders, and its completion code and URL.
    Link {
        study: StudyId,
        /// A new token: the old link stops working.
        #[arg(long)]
        rotate: bool,
        /// The origin participants reach the server at.
        #[arg(long, env = "HARDNEG_PUBLIC_ORIGIN", default_value = "http://127.0.0.1:3000")]
        base_url: String,
    },
    /// Stop new arrivals to a link study.
    Close { study: StudyId },
    /// A link study's dashboard: places, participants, rate, ETA and cost.
    Status {
        study: StudyId,
        /// Print the JSON of GET /api/v1/studies/{id}/dashboard.
        #[arg(long)]
        json: bool,
    },
}

/// `hardneg serve`'s options.
#[derive(clap::Args)]
pub struct ServeArgs {
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub bind: SocketAddr,
    /// Load the embedded demo dataset and study (and, on an empty database, demo accounts).
    #[arg(long)]
    pub demo: bool,
    /// Number of demo instances, at least 1 (a multiple of 7 covers all categories evenly).
    #[arg(long, default_value_t = crate::demo::DEFAULT_COUNT, value_parser = at_least_one)]
    pub demo_size: usize,
    /// The built client (pkg/hardneg.<hash>.js, .wasm, .css), for development;
    /// default: the site compiled into this binary, else ./target/site.
    #[arg(long, env = "HARDNEG_SITE_DIR")]
    pub site_dir: Option<PathBuf>,
    /// Mark the session cookie `Secure` (only sent over HTTPS): set it behind TLS.
    #[arg(long)]
    pub secure_cookies: bool,
    /// The origin browsers reach the app at through a proxy (e.g.
    /// https://hardneg.example.org); state-changing requests from any
    /// other origin than this or the request's Host are refused.
    #[arg(long, env = "HARDNEG_PUBLIC_ORIGIN")]
    pub public_origin: Option<String>,
    /// Behind a reverse proxy: take the client address from the right-most
    /// `X-Forwarded-For` entry (for the login backoff) and mark cookies
    /// `Secure` on requests with `X-Forwarded-Proto: https`. Never set it
    /// when clients can reach the server directly: they could forge both.
    #[arg(long)]
    pub trust_proxy: bool,
    /// Password checks run at once (each holds ~19 MiB for a moment);
    /// default: one per core. Logins that wait --login-wait-ms for one get 503.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub login_checks: Option<u16>,
    /// How long a login may wait for a free password check, in ms.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub login_wait_ms: u64,
}

/// `hardneg agreement`'s options.
#[derive(clap::Args)]
pub struct AgreementArgs {
    pub study: StudyId,
    /// `full` (every answer its own category) or `binary` (keeps vs drops: BiVLC Step 3's any image vs None).
    /// Default: the mapping the study's spec chose.
    #[arg(long)]
    pub mapping: Option<String>,
    /// Print the JSON of GET /api/v1/studies/{id}/agreement instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Bootstrap resamples for the 95% intervals (0: none).
    #[arg(long, default_value_t = crate::domain::agreement::DEFAULT_RESAMPLES)]
    pub resamples: usize,
    /// Seed of the resampling. Default: the study's seed.
    #[arg(long)]
    pub seed: Option<u64>,
}

/// A count that must not be 0 (refused by clap, before anything is written).
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}
