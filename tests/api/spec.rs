//! Study specs and tar reading for the tests (part of `helpers.rs`).
use std::path::{Path, PathBuf};

/// A study spec (docs/study-spec.md): `Spec::new(name)` is a `four_image`
/// study on the demo dataset for every annotator; `toml()` renders it.
#[derive(Debug, Clone)]
pub struct Spec {
    name: String,
    kind: String,
    dataset: String,
    source: Option<String>,
    /// None: `"all"`, or left to the pairs when there are pairs.
    annotators: Option<Vec<String>>,
    seed: Option<u64>,
    resolve: Option<String>,
    pairs: Option<(Vec<[String; 2]>, usize)>,
    groups: Option<(String, usize)>,
    extra: Vec<String>,
}

impl Spec {
    pub fn new(name: &str) -> Spec {
        Spec {
            name: name.to_string(),
            kind: "four_image".into(),
            dataset: "demo".into(),
            source: None,
            annotators: None,
            seed: None,
            resolve: None,
            pairs: None,
            groups: None,
            extra: Vec::new(),
        }
    }

    pub fn kind(mut self, kind: &str) -> Spec {
        self.kind = kind.into();
        self
    }

    pub fn dataset(mut self, dataset: &str) -> Spec {
        self.dataset = dataset.into();
        self
    }

    /// The study whose survivors are this one's items (Step 4, human baseline).
    pub fn source(mut self, source: &str) -> Spec {
        self.source = Some(source.into());
        self
    }

    pub fn annotators(mut self, names: &[&str]) -> Spec {
        self.annotators = Some(names.iter().map(|n| n.to_string()).collect());
        self
    }

    pub fn seed(mut self, seed: u64) -> Spec {
        self.seed = Some(seed);
        self
    }

    pub fn resolve(mut self, rule: &str) -> Spec {
        self.resolve = Some(rule.into());
        self
    }

    /// `rule = "pairs"`: fixed pairs sharing `overlap` items.
    pub fn pairs(mut self, pairs: &[[&str; 2]], overlap: usize) -> Spec {
        self.pairs = Some((pairs.iter().map(|[a, b]| [a.to_string(), b.to_string()]).collect(), overlap));
        self
    }

    /// `rule = "groups"` (human baseline).
    pub fn groups(mut self, sample: usize, group_size: usize) -> Spec {
        self.groups = Some((sample.to_string(), group_size));
        self
    }

    /// `rule = "groups"` with `sample = "all"`: every survivor of the source.
    pub fn groups_all(mut self, group_size: usize) -> Spec {
        self.groups = Some(("\"all\"".into(), group_size));
        self
    }

    /// A raw top-level line, for specs that must be wrong.
    pub fn line(mut self, line: &str) -> Spec {
        self.extra.push(line.into());
        self
    }

    pub fn toml(&self) -> String {
        // Debug quoting is a valid TOML basic string for the printable names used here.
        let quoted = |s: &str| format!("{s:?}");
        let list = |names: &[String]| names.iter().map(|n| quoted(n)).collect::<Vec<_>>().join(", ");
        let mut out = format!(
            "name = {}\nkind = {}\ndataset = {}\n",
            quoted(&self.name),
            quoted(&self.kind),
            quoted(&self.dataset)
        );
        if let Some(source) = &self.source {
            out += &format!("source = {}\n", quoted(source));
        }
        match (&self.annotators, &self.pairs) {
            (Some(names), _) => out += &format!("annotators = [{}]\n", list(names)),
            (None, None) => out += "annotators = \"all\"\n",
            (None, Some(_)) => {}
        }
        if let Some(seed) = self.seed {
            out += &format!("seed = {seed}\n");
        }
        if let Some(rule) = &self.resolve {
            out += &format!("resolve = {}\n", quoted(rule));
        }
        for line in &self.extra {
            out += &format!("{line}\n");
        }
        if let Some((pairs, overlap)) = &self.pairs {
            let pairs: Vec<String> = pairs.iter().map(|p| format!("[{}]", list(p))).collect();
            out += &format!("[assignment]\nrule = \"pairs\"\npairs = [{}]\noverlap = {overlap}\n", pairs.join(", "));
        }
        if let Some((sample, group_size)) = &self.groups {
            out += &format!("[assignment]\nrule = \"groups\"\nsample = {sample}\ngroup_size = {group_size}\n");
        }
        out
    }

    /// Writes the spec to `dir/file` for `hardneg study create`; returns the path.
    pub fn write(&self, dir: &Path, file: &str) -> PathBuf {
        let path = dir.join(file);
        std::fs::write(&path, self.toml()).unwrap();
        path
    }
}

/// Reads a tar into (path, bytes) entries.
pub fn untar(bytes: &[u8]) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut at = 0;
    while at + 512 <= bytes.len() && bytes[at] != 0 {
        let h = &bytes[at..at + 512];
        let field = |r: std::ops::Range<usize>| String::from_utf8_lossy(&h[r]).trim_end_matches('\0').to_string();
        let (name, prefix) = (field(0..100), field(345..500));
        let size = u64::from_str_radix(field(124..135).trim(), 8).unwrap() as usize;
        let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        out.insert(path, bytes[at + 512..at + 512 + size].to_vec());
        at += 512 + size.div_ceil(512) * 512;
    }
    out
}
