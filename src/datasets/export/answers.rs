//! Every counted answer of the stage's Step 3 (and, in the final stage,
//! Step 4) study, items the rows leave out (settled None, dropped, still
//! open) included: what the model's posteriors were fitted on, so they can
//! be refitted from the export alone (`step3-answers.csv`,
//! `step4-answers.csv`). Written from the answers the outcomes already hold
//! (`studies::votes`): no second read of the study.
use super::sink::io_err;
use crate::domain::export::Stage;
use crate::error::ServiceError;
use crate::studies::pipeline::Pipeline;
use std::io::Write;
use std::path::Path;

pub const COLUMNS: [&str; 4] = ["study", "instance_id", "annotator", "value"];

/// Writes the files into `out` and a section of the card; their names.
pub(super) fn write(p: &Pipeline, stage: Stage, out: &Path) -> Result<Vec<String>, ServiceError> {
    let steps = match stage {
        Stage::Candidates => 0,
        Stage::Step3 => 1,
        Stage::Final => 2,
    };
    let mut files = Vec::new();
    for (step, (study, votes)) in [&p.step3, &p.step4].into_iter().zip(&p.votes).enumerate().take(steps) {
        let Some((meta, outcomes)) = study else { continue };
        let file = format!("step{}-answers.csv", step + 3);
        let path = out.join(&file);
        let csv_err = |e: csv::Error| io_err("writing", &path, e);
        let mut w = csv::Writer::from_path(&path).map_err(csv_err)?;
        w.write_record(COLUMNS).map_err(csv_err)?;
        let (id, names) = (meta.id.to_string(), votes.names());
        // As the model: without the places adaptive overlap ended as uninformative.
        for (item, user, value) in votes.each().filter(|(_, user, _)| votes.in_model(*user)) {
            let instance = outcomes[item].instance_id.to_string();
            let name = names.get(&user).cloned().unwrap_or_else(|| format!("user {user}"));
            w.write_record([id.as_str(), &instance, &name, value]).map_err(csv_err)?;
        }
        w.flush().map_err(|e| io_err("writing", &path, e))?;
        files.push(file);
    }
    if !files.is_empty() {
        let path = out.join("README.md");
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).map_err(|e| io_err("opening", &path, e))?;
        let section = format!(
            "\n## Answers\n\n{}: every counted answer of the study (`study, instance_id, annotator, value`), \
             also on items the rows leave out, but not those of places adaptive overlap ended as \
             uninformative, which the model leaves out too; the posteriors in the rows were fitted on these.\n",
            files.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
        );
        f.write_all(section.as_bytes()).map_err(|e| io_err("writing", &path, e))?;
    }
    Ok(files)
}
