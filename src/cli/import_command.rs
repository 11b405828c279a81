//! `hardneg import ...`: the dataset formats the command line takes.
use crate::domain::normalize::NormalizeMode;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ImportCommand {
    /// BiVLC Step 2 candidates, CSV or JSON Lines (.jsonl/.json), with their images (docs/import.md).
    Candidates {
        file: PathBuf,
        /// Where `filename` (the positive image) resolves.
        #[arg(long)]
        positives: PathBuf,
        /// Where `hn_img_0..hn_img_3` (the negative images) resolve.
        #[arg(long)]
        negatives: PathBuf,
        /// Dataset name; default: the file name without its extension.
        #[arg(long)]
        dataset: Option<String>,
        /// Caption normalisation: bivlc (as released), preserve-entities or none.
        #[arg(long, default_value = "bivlc")]
        normalize: NormalizeMode,
        /// Hard-link new images into the store instead of copying them: faster,
        /// but the store then shares the files, so never change them in place.
        #[arg(long)]
        link: bool,
    },
    /// SugarCrepe++ triplets for the odd-one-out kinds: `image, p1, p2, negative, type, subtype` (docs/import.md).
    Triplets {
        file: PathBuf,
        /// Where `image` resolves.
        #[arg(long)]
        images: PathBuf,
        /// Dataset name; default: the file name without its extension.
        #[arg(long)]
        dataset: Option<String>,
    },
    /// Prompts with 2–10 generated images to rank: `prompt, images, scores, type, subtype` (docs/import.md).
    Rankings {
        file: PathBuf,
        /// Where the names in `images` resolve.
        #[arg(long)]
        images: PathBuf,
        /// Dataset name; default: the file name without its extension.
        #[arg(long)]
        dataset: Option<String>,
    },
    /// HNC: images to write caption pairs for (`image, type`, optional `id`), or written pairs
    /// (also `caption, negative_caption`: a pair validation export) (docs/import.md).
    Pairs {
        file: PathBuf,
        /// Where `image` resolves.
        #[arg(long)]
        images: PathBuf,
        /// Dataset name; default: the file name without its extension.
        #[arg(long)]
        dataset: Option<String>,
    },
    /// SugarCrepe's A/B/Tie items: `caption, negative_a, source_a, negative_b, source_b, type` (docs/import.md).
    AbPairs {
        file: PathBuf,
        /// Dataset name; default: the file name without its extension.
        #[arg(long)]
        dataset: Option<String>,
    },
}
