//! Exporting curated instances: which instances a stage keeps, the row shape
//! (BiVLC's columns plus provenance), seeded stratified splits and the
//! dataset card. Pure; `datasets::export` streams the rows and copies files.
use super::category::Category;
use super::resolution::{Posterior, ResolvedBy};
use super::survey::Verdict;
use serde::Serialize;
use std::borrow::Cow;

pub mod card;
pub mod split;

/// How far down the curation funnel the exported instances are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Every imported instance with its candidate images.
    Candidates,
    /// Step 3 survivors: the negative image is the candidate the answers chose.
    Step3,
    /// Step 3 survivors that Step 4 kept (the real image wins).
    Final,
}

impl Stage {
    pub const ALL: [Stage; 3] = [Stage::Candidates, Stage::Step3, Stage::Final];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Candidates => "candidates",
            Stage::Step3 => "step3",
            Stage::Final => "final",
        }
    }

    pub fn parse(s: &str) -> Result<Stage, String> {
        Stage::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown stage {s:?} (candidates, step3 or final)"))
    }

    /// Whether an instance belongs to the stage, given its Step 3 and Step 4
    /// verdicts (`None`: no final answer, or not an item of that step).
    pub fn keeps(self, step3: Option<Verdict>, step4: Option<Verdict>) -> bool {
        match self {
            Stage::Candidates => true,
            Stage::Step3 => step3 == Some(Verdict::Kept),
            Stage::Final => step3 == Some(Verdict::Kept) && step4 == Some(Verdict::Kept),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Csv,
    Jsonl,
    Parquet,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Csv, Format::Jsonl, Format::Parquet];

    /// Also the file extension.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
            Format::Parquet => "parquet",
        }
    }

    pub fn parse(s: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown format {s:?} (csv, jsonl or parquet)"))
    }

    /// The `datasets` builder that reads this format (for the card).
    pub fn hf_builder(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "json",
            Format::Parquet => "parquet",
        }
    }
}

/// One annotator's stored answer to an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vote {
    pub annotator: String,
    pub value: String,
}

/// `annotator1:2;annotator2:none`: the CSV (and parquet) form of a vote list.
pub fn votes_text(votes: &[Vote]) -> String {
    votes.iter().map(|v| format!("{}:{}", v.annotator, v.value)).collect::<Vec<_>>().join(";")
}

/// Whether an item's answers agreed, as a flag per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgreementFlag {
    /// No answer (a researcher decided without one).
    Unanswered,
    Single,
    Agreed,
    Disagreed,
}

impl AgreementFlag {
    pub fn of(votes: &[Vote]) -> AgreementFlag {
        match votes {
            [] => AgreementFlag::Unanswered,
            [_] => AgreementFlag::Single,
            [first, rest @ ..] if rest.iter().all(|v| v.value == first.value) => AgreementFlag::Agreed,
            _ => AgreementFlag::Disagreed,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AgreementFlag::Unanswered => "none",
            AgreementFlag::Single => "single",
            AgreementFlag::Agreed => "agreed",
            AgreementFlag::Disagreed => "disagreed",
        }
    }
}

pub fn resolved_by_str(by: ResolvedBy) -> &'static str {
    match by {
        ResolvedBy::Single => "single",
        ResolvedBy::Unanimous => "unanimous",
        ResolvedBy::First => "first",
        ResolvedBy::Primary => "primary",
        ResolvedBy::Adjudication => "adjudication",
        ResolvedBy::DawidSkene => "dawid_skene",
        ResolvedBy::Mace => "mace",
        ResolvedBy::Adaptive => "adaptive",
    }
}

/// What one step's answers said about an instance.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// In answer order (earliest first).
    pub votes: Vec<Vote>,
    pub resolved_by: ResolvedBy,
    /// The settled value's posterior and its model, when a crowd model or
    /// adaptive overlap's stop rule settled it.
    pub posterior: Option<Posterior>,
}

/// A stored image as the export names it: by content hash, so each file is
/// written once however many rows use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub hash: String,
    pub mime: String,
    /// Size in bytes (bounds parquet row groups).
    pub bytes: u64,
}

impl ImageRef {
    pub fn file_name(&self) -> String {
        let ext = match self.mime.as_str() {
            "image/png" => "png",
            "image/jpeg" => "jpg",
            _ => "bin",
        };
        format!("{}.{ext}", self.hash)
    }

    /// Relative to the export directory, as the rows give it.
    pub fn path(&self) -> String {
        format!("images/{}", self.file_name())
    }
}

/// BiVLC generates four candidate images per instance; the candidates stage
/// has one column for each.
pub const MAX_CANDIDATES: usize = 4;

/// One exported instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub instance_id: i64,
    pub key: String,
    pub caption: String,
    pub negative_caption: String,
    pub caption_orig: String,
    pub negative_caption_orig: String,
    pub category: Category,
    /// The real image.
    pub image: Option<ImageRef>,
    /// The generated image Step 3 chose (empty in the candidates stage).
    pub negative_image: Option<ImageRef>,
    /// By slot; only the candidates stage fills it.
    pub candidates: Vec<ImageRef>,
    pub step3: Option<StepRecord>,
    pub step4: Option<StepRecord>,
}

impl Row {
    /// Every image file the row refers to.
    pub fn images(&self) -> impl Iterator<Item = &ImageRef> {
        self.image.iter().chain(&self.negative_image).chain(&self.candidates)
    }

    pub fn cell(&self, column: Column) -> Cell<'_> {
        let step = |s: Step| match s {
            Step::Step3 => self.step3.as_ref(),
            Step::Step4 => self.step4.as_ref(),
        };
        match column {
            Column::Image => Cell::Image(self.image.as_ref()),
            Column::Caption => text(&self.caption),
            Column::NegativeCaption => text(&self.negative_caption),
            Column::NegativeImage => Cell::Image(self.negative_image.as_ref()),
            Column::Type => text(self.category.neg_type.as_str()),
            Column::Subtype => text(self.category.subtype.as_str()),
            Column::InstanceId => Cell::Int(self.instance_id),
            Column::InstanceKey => text(&self.key),
            Column::CaptionOrig => text(&self.caption_orig),
            Column::NegativeCaptionOrig => text(&self.negative_caption_orig),
            Column::Candidate(slot) => Cell::Image(self.candidates.get(slot)),
            Column::Votes(s) => Cell::Votes(step(s).map(|r| r.votes.as_slice())),
            Column::ResolvedBy(s) => Cell::Text(step(s).map(|r| Cow::Borrowed(resolved_by_str(r.resolved_by)))),
            Column::Agreement(s) => Cell::Text(step(s).map(|r| Cow::Borrowed(AgreementFlag::of(&r.votes).as_str()))),
            // Six decimals: plenty for a probability, and the same text in every format.
            Column::Posterior(s) => {
                Cell::Text(step(s).and_then(|r| r.posterior).map(|p| Cow::Owned(format!("{:.6}", p.value))))
            }
            Column::PosteriorModel(s) => {
                Cell::Text(step(s).and_then(|r| r.posterior).map(|p| Cow::Borrowed(p.model.as_str())))
            }
        }
    }
}

fn text(s: &str) -> Cell<'_> {
    Cell::Text(Some(Cow::Borrowed(s)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    Step3,
    Step4,
}

impl Step {
    fn prefix(self) -> &'static str {
        match self {
            Step::Step3 => "step3",
            Step::Step4 => "step4",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    Image,
    Caption,
    NegativeCaption,
    NegativeImage,
    Type,
    Subtype,
    InstanceId,
    InstanceKey,
    CaptionOrig,
    NegativeCaptionOrig,
    Candidate(usize),
    Votes(Step),
    ResolvedBy(Step),
    Agreement(Step),
    Posterior(Step),
    /// Which model gave `Posterior` ([`crate::domain::resolution::PosteriorModel`]).
    PosteriorModel(Step),
}

/// What a column holds, which decides its encoding in each format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    Text,
    Int,
    /// A path in CSV and JSONL; `{bytes, path}` in parquet.
    Image,
    /// `a:1;b:none` in CSV and parquet; an array of `{annotator, value}` in JSONL.
    Votes,
}

impl Column {
    pub fn name(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Column::Image => "image",
            Column::Caption => "caption",
            Column::NegativeCaption => "negative_caption",
            Column::NegativeImage => "negative_image",
            Column::Type => "type",
            Column::Subtype => "subtype",
            Column::InstanceId => "instance_id",
            Column::InstanceKey => "instance_key",
            Column::CaptionOrig => "caption_orig",
            Column::NegativeCaptionOrig => "negative_caption_orig",
            Column::Candidate(slot) => return Cow::Owned(format!("candidate_{slot}")),
            Column::Votes(s) => return Cow::Owned(format!("{}_votes", s.prefix())),
            Column::ResolvedBy(s) => return Cow::Owned(format!("{}_resolved_by", s.prefix())),
            Column::Agreement(s) => return Cow::Owned(format!("{}_agreement", s.prefix())),
            Column::Posterior(s) => return Cow::Owned(format!("{}_posterior", s.prefix())),
            Column::PosteriorModel(s) => return Cow::Owned(format!("{}_posterior_model", s.prefix())),
        })
    }

    pub fn kind(self) -> ColumnKind {
        match self {
            Column::Image | Column::NegativeImage | Column::Candidate(_) => ColumnKind::Image,
            Column::InstanceId => ColumnKind::Int,
            Column::Votes(_) => ColumnKind::Votes,
            _ => ColumnKind::Text,
        }
    }
}

/// The columns of a stage, in file order: BiVLC's six first, then provenance.
pub fn columns(stage: Stage) -> Vec<Column> {
    columns_for(stage, MAX_CANDIDATES)
}

/// The columns with `candidates` candidate columns at stage `candidates`
/// (at least BiVLC's four; a dataset of prompts to rank has up to ten images).
pub fn columns_for(stage: Stage, candidates: usize) -> Vec<Column> {
    let mut cols = vec![
        Column::Image,
        Column::Caption,
        Column::NegativeCaption,
        Column::NegativeImage,
        Column::Type,
        Column::Subtype,
        Column::InstanceId,
        Column::InstanceKey,
        Column::CaptionOrig,
        Column::NegativeCaptionOrig,
    ];
    let step = |s| {
        [Column::Votes(s), Column::ResolvedBy(s), Column::Agreement(s), Column::Posterior(s), Column::PosteriorModel(s)]
    };
    match stage {
        Stage::Candidates => cols.extend((0..candidates.max(MAX_CANDIDATES)).map(Column::Candidate)),
        Stage::Step3 => cols.extend(step(Step::Step3)),
        Stage::Final => {
            cols.extend(step(Step::Step3));
            cols.extend(step(Step::Step4));
        }
    }
    cols
}

/// One value of a row, before a format encodes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Text(Option<Cow<'a, str>>),
    Int(i64),
    Image(Option<&'a ImageRef>),
    Votes(Option<&'a [Vote]>),
}

impl Cell<'_> {
    /// The flat text form (CSV; parquet for votes); `None` is an empty or null cell.
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Cell::Text(t) => t.as_deref().map(Cow::Borrowed),
            Cell::Int(i) => Some(Cow::Owned(i.to_string())),
            Cell::Image(img) => img.map(|i| Cow::Owned(i.path())),
            Cell::Votes(v) => v.map(|v| Cow::Owned(votes_text(v))),
        }
    }
}

/// A file-name-safe form of a dataset name (tar entries, download names).
pub fn safe_name(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(64)
        .collect();
    match cleaned.trim_start_matches('.') {
        "" => "dataset".to_string(),
        rest => rest.to_string(),
    }
}

#[cfg(test)]
mod tests;
