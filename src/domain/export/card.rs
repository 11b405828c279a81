//! The README.md dataset card written beside an export: what was exported
//! and how, the funnel it came through, and agreement per annotator pair.
//! Its YAML header lets `datasets.load_dataset(DIR)` find the split files.
use super::split::RowCounts;
use super::{Format, Stage};
use crate::domain::category::Category;
use crate::domain::funnel::{Funnel, StageCounts};
use crate::domain::ids::StudyId;
use std::fmt::Write;

/// Cohen's kappa of one annotator pair on their shared items.
#[derive(Debug, Clone, PartialEq)]
pub struct KappaRow {
    pub a: String,
    pub b: String,
    pub n: usize,
    pub observed: f64,
    pub expected: f64,
    pub kappa: Option<f64>,
    /// Why kappa is undefined, when it is.
    pub reason: Option<String>,
}

/// A study the exported instances went through, with its provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyCard {
    /// "Step 3" or "Step 4".
    pub step: &'static str,
    pub id: StudyId,
    pub name: String,
    pub kind: String,
    pub seed: u64,
    pub spec_hash: String,
    pub resolve: String,
    pub mapping: String,
    pub pairs: Vec<KappaRow>,
    pub mean_kappa: Option<f64>,
}

pub struct Card<'a> {
    pub dataset: &'a str,
    pub stage: Stage,
    pub format: Format,
    /// `datasets.normalize`: how captions were normalised at import.
    pub normalize: &'a str,
    pub command: &'a str,
    pub version: &'a str,
    /// The rows file of each split, parallel to `counts.splits`.
    pub files: &'a [String],
    pub counts: &'a RowCounts,
    pub images: u64,
    pub funnel: &'a Funnel,
    pub studies: &'a [StudyCard],
    /// The split seed, when there are several splits.
    pub split_seed: Option<u64>,
}

fn stage_meaning(stage: Stage) -> &'static str {
    match stage {
        Stage::Candidates => "every imported instance with its candidate images",
        Stage::Step3 => "Step 3 survivors; the negative image is the candidate the answers chose",
        Stage::Final => "Step 3 survivors that Step 4 kept (the real image matches the caption best)",
    }
}

fn num(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "undefined".into())
}

/// YAML accepts JSON strings, which quote anything a name may hold.
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn funnel_row(out: &mut String, name: &str, c: &StageCounts) {
    let _ = writeln!(
        out,
        "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
        c.candidates,
        c.step3_kept,
        c.step3_discarded,
        c.step3_open,
        c.step4_kept,
        c.step4_ambiguous,
        c.step4_both,
        c.step4_open
    );
}

/// The dataset card: a Hugging Face YAML header, then one section per
/// part (summary, rows per category, curation funnel, studies and
/// agreement, columns).
pub fn dataset_card(c: &Card<'_>) -> String {
    let mut o = String::new();
    header(&mut o, c);
    row_counts(&mut o, c);
    funnel(&mut o, c);
    studies(&mut o, c);
    let _ = writeln!(o, "## Columns\n");
    let _ = writeln!(o, "{COLUMNS}");
    o
}

/// What the export's columns mean (the card's last section).
const COLUMNS: &str = "`image`, `caption`, `negative_caption`, `negative_image`, `type`, `subtype` follow BiVLC. Provenance: `instance_id`, `instance_key`, the captions as imported (`*_orig`), and per step the answers (`*_votes`, annotator:value), how the item was settled (`*_resolved_by`: single, unanimous, first, primary, adjudication, dawid_skene, mace, adaptive), whether its annotators agreed (`*_agreement`: single, agreed, disagreed) and the settled value's posterior when a crowd model or adaptive overlap's stop rule settled it (`*_posterior`, empty otherwise) and the model that gave it (`*_posterior_model`: `dawid_skene`, `mace`, or `earned_reliability` for adaptive overlap's stop rule; their posteriors are not comparable). The candidates stage lists `candidate_0`..`candidate_3` instead. Image columns hold paths relative to this directory; in parquet they are `{bytes, path}` structs that `datasets` decodes as images.";

/// The YAML header (name, split files) and the summary table.
fn header(o: &mut String, c: &Card<'_>) {
    let _ = writeln!(
        o,
        "---\npretty_name: {}\nconfigs:\n- config_name: default\n  data_files:",
        yaml_str(&format!("{} ({})", c.dataset, c.stage.as_str()))
    );
    for (split, file) in c.counts.splits.iter().zip(c.files) {
        let _ = writeln!(o, "  - split: {}\n    path: {}", yaml_str(split), yaml_str(file));
    }
    let _ = writeln!(o, "---\n\n# {}: {} stage\n", c.dataset, c.stage.as_str());
    let _ = writeln!(o, "Exported by hardneg {} with\n\n    {}\n", c.version, c.command);
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(o, "| stage | `{}`: {} |", c.stage.as_str(), stage_meaning(c.stage));
    let _ = writeln!(
        o,
        "| format | `{}` (load with `datasets.load_dataset(\"{}\", data_files=...)` or `load_dataset(DIR)`) |",
        c.format.as_str(),
        c.format.hf_builder()
    );
    let _ = writeln!(o, "| rows | {} |", c.counts.total());
    let _ = writeln!(o, "| images | {} files under `images/`, named by SHA-256 of their bytes |", c.images);
    let _ = writeln!(
        o,
        "| caption normalisation | `{}` (original captions in `caption_orig`, `negative_caption_orig`) |",
        c.normalize
    );
    let files: Vec<String> = c.counts.splits.iter().zip(c.files).map(|(s, f)| format!("{s}: `{f}`")).collect();
    let seed = c.split_seed.map(|s| format!(" (stratified by type/subtype, seed {s})")).unwrap_or_default();
    let _ = writeln!(o, "| files | {}{seed} |", files.join(", "));
}

/// Rows per type and subtype, per split.
fn row_counts(o: &mut String, c: &Card<'_>) {
    let _ = writeln!(o, "\n## Rows per type and subtype\n");
    let _ = writeln!(o, "| type | subtype | {} | total |", c.counts.splits.join(" | "));
    let _ = writeln!(o, "|---|---|{}---|", "---|".repeat(c.counts.splits.len()));
    for (cat, cells) in &c.counts.cells {
        let cols: Vec<String> = cells.iter().map(u64::to_string).collect();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            cat.neg_type,
            cat.subtype,
            cols.join(" | "),
            cells.iter().sum::<u64>()
        );
    }
    let totals: Vec<String> = c.counts.per_split().iter().map(u64::to_string).collect();
    let _ = writeln!(o, "| **all** | | {} | {} |", totals.join(" | "), c.counts.total());
}

/// What each curation step kept and dropped, overall and per subtype.
fn funnel(o: &mut String, c: &Card<'_>) {
    let _ = writeln!(o, "\n## Curation funnel\n");
    let _ = writeln!(
        o,
        "Step 3 study: {}. Step 4 study: {}.\n",
        c.funnel.step3_study.as_deref().unwrap_or("none"),
        c.funnel.step4_study.as_deref().unwrap_or("none")
    );
    let _ = writeln!(o, "| category | candidates | Step 3 kept | Step 3 discarded | Step 3 open | Step 4 kept | Step 4 ambiguous | Step 4 both | Step 4 open |");
    let _ = writeln!(o, "|---|---|---|---|---|---|---|---|---|");
    funnel_row(o, "**all**", &c.funnel.overall);
    for cat in Category::ALL {
        if let Some(counts) = c.funnel.by_subtype.get(&cat.to_string()) {
            funnel_row(o, &cat.to_string(), counts);
        }
    }
    if let Some(p) = c.funnel.overall.removed_percent() {
        let _ = writeln!(o, "\n{p:.1}% of the candidates were removed by the two steps.");
    }
}

/// Each study's settings and its pairs' Cohen's kappa.
fn studies(o: &mut String, c: &Card<'_>) {
    let _ = writeln!(o, "\n## Studies and agreement\n");
    if c.studies.is_empty() {
        // Protocol studies (A/B, ranking, triplet checks…) have their own section.
        let _ = writeln!(o, "No curation study (Step 3 or Step 4) has run on this dataset.");
    }
    for s in c.studies {
        let _ = writeln!(o, "### {}: {} (study {})\n", s.step, s.name, s.id);
        let _ = writeln!(o, "- kind `{}`, seed {}, disagreements resolved by `{}`", s.kind, s.seed, s.resolve);
        let _ = writeln!(o, "- spec SHA-256 `{}`", s.spec_hash);
        let _ = writeln!(o, "- Cohen's kappa per pair on their shared items, `{}` mapping:\n", s.mapping);
        if s.pairs.is_empty() {
            let _ = writeln!(o, "No item was answered by two annotators.\n");
            continue;
        }
        let _ =
            writeln!(o, "| annotator A | annotator B | n | observed | expected | kappa |\n|---|---|---|---|---|---|");
        for p in &s.pairs {
            let why = p.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
            let _ = writeln!(
                o,
                "| {} | {} | {} | {:.3} | {:.3} | {}{why} |",
                p.a,
                p.b,
                p.n,
                p.observed,
                p.expected,
                num(p.kappa)
            );
        }
        let _ = writeln!(o, "\nMean kappa over pairs: {}.\n", num(s.mean_kappa));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::funnel::FunnelBuilder;
    use crate::domain::survey::Verdict;

    #[test]
    fn card_names_the_files_counts_funnel_and_kappa() {
        let mut counts = RowCounts::new(vec!["train".into(), "val".into()]);
        counts.add(Category::ALL[0], 0);
        counts.add(Category::ALL[0], 1);
        counts.add(Category::ALL[5], 0);
        let mut fb = FunnelBuilder::default();
        for c in [Category::ALL[0], Category::ALL[0], Category::ALL[5], Category::ALL[5]] {
            fb.candidates(c, 1);
            fb.step3(c, Some(Verdict::Kept));
        }
        let funnel = fb.build("bivlc", Some("S3".into()), None);
        let studies = [StudyCard {
            step: "Step 3",
            id: StudyId::new(4),
            name: "S3".into(),
            kind: "four_image".into(),
            seed: 11,
            spec_hash: "ab".repeat(32),
            resolve: "first".into(),
            mapping: "binary".into(),
            pairs: vec![KappaRow {
                a: "ana".into(),
                b: "bo".into(),
                n: 10,
                observed: 0.9,
                expected: 0.5,
                kappa: Some(0.8),
                reason: None,
            }],
            mean_kappa: Some(0.8),
        }];
        let files = ["train.parquet".to_string(), "val.parquet".to_string()];
        let text = dataset_card(&Card {
            dataset: "bivlc",
            stage: Stage::Step3,
            format: Format::Parquet,
            normalize: "nfc",
            command: "hardneg export bivlc --out DIR --format parquet --stage step3 --split train=0.5,val=0.5 --seed 3",
            version: "0.1.0",
            files: &files,
            counts: &counts,
            images: 6,
            funnel: &funnel,
            studies: &studies,
            split_seed: Some(3),
        });
        assert!(text.starts_with("---\npretty_name: \"bivlc (step3)\"\n"), "{text}");
        assert!(text.contains("  - split: \"val\"\n    path: \"val.parquet\"\n"), "{text}");
        assert!(text.contains("| replace | obj | 1 | 1 | 2 |"), "{text}");
        assert!(text.contains("| add | obj | 1 | 0 | 1 |"), "{text}");
        assert!(text.contains("| **all** | | 2 | 1 | 3 |"), "{text}");
        assert!(text.contains("| **all** | 4 | 4 | 0 | 0 | 0 | 0 | 0 | 0 |"), "{text}");
        assert!(text.contains("| ana | bo | 10 | 0.900 | 0.500 | 0.800 |"), "{text}");
        assert!(text.contains(&"ab".repeat(32)));
        assert!(text.contains("caption normalisation | `nfc`"));
        assert!(text.contains("seed 3"));
        assert!(text.contains("hardneg 0.1.0"));
    }
}
