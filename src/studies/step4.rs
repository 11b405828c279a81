//! "Start Step 4": the spec of a Step 4 study over a Step 3 study's
//! survivors, with the same people (annotators, or for a link study the
//! same link settings), assignment and resolution.
use crate::domain::assignment::Annotators;
use crate::domain::ids::StudyId;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::studies::meta::load_study_meta;
use sqlx::AnyPool;

/// `[link]` keys that belong to Step 3's task or to its Prolific study:
/// answers in Step 3's values (practice, gold), questions about Step 3's
/// instructions, and the codes Prolific knows Step 3 by. Step 4 gets its
/// own codes; the rest (bundles, copies, time limit, consent, pay, checks)
/// carries over.
const STEP3_ONLY: [&str; 6] = ["practice", "gold", "comprehension", "completion_code", "screen_out_code", "full_code"];

/// The spec of a Step 4 study over a Step 3 study's survivors, with the
/// same annotators, rule and resolution (what "Start Step 4" creates; kept
/// as TOML text so the study's provenance reads like any other).
pub async fn step4_spec(db: &AnyPool, kinds: &[SurveyKind], step3: StudyId, seed: u64) -> Result<String, ServiceError> {
    let meta = load_study_meta(db, kinds, step3).await?;
    let next = meta
        .kind
        .next_step_in(kinds)
        .ok_or_else(|| ServiceError::Invalid(format!("study {:?} is not a Step 3 study", meta.name)))?;
    let written: String =
        sqlx::query_scalar("SELECT spec FROM studies WHERE id = $1").bind(step3).fetch_one(db).await?;
    let written: toml::Table = toml::from_str(&written)
        .map_err(|e| ServiceError::internal(format!("study {step3}'s stored spec does not parse"), e))?;
    if written.get("access").and_then(|a| a.as_str()) == Some("link") {
        let name = crate::domain::names::next_step_name(&meta.name, meta.kind.label(), next.label());
        return link_spec(&written, &meta, &name, next, seed);
    }
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default(); // a JSON string is a TOML basic string
    let list = |names: &[String]| format!("[{}]", names.iter().map(|n| q(n)).collect::<Vec<_>>().join(", "));
    let mut spec = format!(
        "name = {}\nkind = {}\ndataset = {}\nsource = {}\nseed = {seed}\nresolve = {}\n",
        q(&crate::domain::names::next_step_name(&meta.name, meta.kind.label(), next.label())),
        q(next.name()),
        q(&meta.dataset),
        q(&meta.name),
        q(meta.resolve.as_str()),
    );
    if let Some(p) = &meta.primary {
        spec.push_str(&format!("primary = {}\n", q(p)));
    }
    match &meta.rule {
        crate::domain::assignment::AssignmentRule::Pairs { pairs, overlap } => {
            let pairs: Vec<String> = pairs.iter().map(|p| list(p.as_slice())).collect();
            spec.push_str(&format!(
                "[assignment]\nrule = \"pairs\"\npairs = [{}]\noverlap = {overlap}\n",
                pairs.join(", ")
            ));
        }
        crate::domain::assignment::AssignmentRule::Groups { .. } => {
            return Err(ServiceError::Invalid(format!("study {:?} is not a Step 3 study", meta.name)))
        }
        crate::domain::assignment::AssignmentRule::StratifiedSample { .. } => {
            return Err(ServiceError::Invalid(format!(
                "study {:?} gives each annotator a sample: Step 4 needs every item settled; write its spec by hand",
                meta.name
            )))
        }
        crate::domain::assignment::AssignmentRule::EachAnnotatorAll => {
            let annotators = match &meta.annotators {
                Annotators::All => "\"all\"".to_string(),
                Annotators::Named(n) => list(n),
                // Only pair validation studies leave people out; none has a Step 4.
                Annotators::AllBut(_) => {
                    return Err(ServiceError::Invalid(format!("study {:?} is not a Step 3 study", meta.name)))
                }
            };
            // Top-level keys must come before any table.
            spec = spec.replacen("seed = ", &format!("annotators = {annotators}\nseed = "), 1);
        }
    }
    Ok(spec)
}

/// A link Step 3 study's Step 4: its written spec with the new name, kind,
/// source and seed, and `[link]` without [`STEP3_ONLY`].
fn link_spec(
    written: &toml::Table,
    meta: &StudyMeta,
    name: &str,
    next: SurveyKind,
    seed: u64,
) -> Result<String, ServiceError> {
    let mut spec = toml::Table::new();
    let text = |s: &str| toml::Value::String(s.to_string());
    spec.insert("name".into(), text(name));
    spec.insert("kind".into(), text(next.name()));
    spec.insert("dataset".into(), text(&meta.dataset));
    spec.insert("source".into(), text(&meta.name));
    spec.insert("seed".into(), toml::Value::Integer(seed as i64));
    spec.insert("access".into(), text("link"));
    spec.insert("resolve".into(), text(meta.resolve.as_str()));
    if let Some(p) = &meta.primary {
        spec.insert("primary".into(), text(p));
    }
    if let Some(assignment) = written.get("assignment") {
        spec.insert("assignment".into(), assignment.clone());
    }
    let mut link = written.get("link").and_then(|l| l.as_table()).cloned().unwrap_or_default();
    STEP3_ONLY.iter().for_each(|key| drop(link.remove(*key)));
    spec.insert("link".into(), toml::Value::Table(link));
    toml::to_string(&spec).map_err(|e| ServiceError::internal("writing Step 4's spec", e))
}
