//! The answer matrix in the dense form both models iterate over: answers
//! grouped by item (one sort), people and seen classes renumbered `0..`.
use super::{AggregateError, Options};

pub(super) struct Prepared {
    pub k: usize,
    /// Dense item index → item id (ascending).
    pub items: Vec<u64>,
    /// Dense person index → person id (ascending).
    pub people: Vec<u64>,
    /// Seen class index → label; the model works over these only.
    pub classes: Vec<usize>,
    pub unseen: Vec<usize>,
    /// Item i's answers are `starts[i]..starts[i + 1]` of `person`/`label`.
    pub starts: Vec<usize>,
    pub person: Vec<u32>,
    /// Seen class index of each answer.
    pub label: Vec<u32>,
    pub per_person: Vec<usize>,
    /// Per dense item: its gold class (seen class index), if clamped.
    pub gold: Vec<Option<u32>>,
}

impl Prepared {
    pub fn new(
        answers: &[(u64, u64, usize)],
        k: usize,
        gold: &[(u64, usize)],
        opts: &Options,
    ) -> Result<Prepared, AggregateError> {
        if k < 2 {
            return Err(AggregateError::TooFewClasses(k));
        }
        if opts.max_iter == 0 {
            return Err(AggregateError::ZeroOption("max_iter"));
        }
        if opts.restarts == 0 {
            return Err(AggregateError::ZeroOption("restarts"));
        }
        if answers.is_empty() {
            return Err(AggregateError::NoAnswers);
        }
        if let Some((index, &(item, person, label))) = answers.iter().enumerate().find(|(_, a)| a.2 >= k) {
            return Err(AggregateError::LabelOutOfRange { index, item, person, label, k });
        }
        if let Some(&(item, label)) = gold.iter().find(|g| g.1 >= k) {
            return Err(AggregateError::GoldOutOfRange { item, label, k });
        }
        let dedup = last_answers(answers);

        let mut people: Vec<u64> = dedup.iter().map(|r| r.1).collect();
        people.sort_unstable();
        people.dedup();
        let mut seen = vec![false; k];
        dedup.iter().for_each(|r| seen[r.2] = true);
        gold.iter().for_each(|g| seen[g.1] = true);
        let classes: Vec<usize> = (0..k).filter(|&c| seen[c]).collect();
        let unseen: Vec<usize> = (0..k).filter(|&c| !seen[c]).collect();
        let mut class_index = vec![u32::MAX; k];
        for (i, &c) in classes.iter().enumerate() {
            class_index[c] = i as u32;
        }

        let mut items = Vec::new();
        let mut starts = Vec::new();
        let mut person = Vec::with_capacity(dedup.len());
        let mut label = Vec::with_capacity(dedup.len());
        let mut per_person = vec![0usize; people.len()];
        for (x, &(item, who, l)) in dedup.iter().enumerate() {
            if items.last() != Some(&item) {
                items.push(item);
                starts.push(x);
            }
            let w = people.binary_search(&who).expect("collected above");
            per_person[w] += 1;
            person.push(w as u32);
            label.push(class_index[l]);
        }
        starts.push(dedup.len());

        let min = opts.min_answers_per_person.max(1);
        if let Some((w, &n)) = per_person.iter().enumerate().find(|(_, &n)| n < min) {
            return Err(AggregateError::TooFewAnswers { person: people[w], answers: n, min });
        }
        let mut gold_of = vec![None; items.len()];
        for &(item, l) in gold {
            let i = items.binary_search(&item).map_err(|_| AggregateError::GoldWithoutAnswers { item })?;
            gold_of[i] = Some(class_index[l]);
        }
        Ok(Prepared { k, items, people, classes, unseen, starts, person, label, per_person, gold: gold_of })
    }

    pub fn answers(&self) -> usize {
        self.person.len()
    }

    /// Sets gold items' rows of the n × kc posterior to their known class.
    pub fn clamp_gold(&self, q: &mut [f64]) {
        let kc = self.classes.len();
        for (i, g) in self.gold.iter().enumerate() {
            if let Some(g) = *g {
                let row = &mut q[i * kc..(i + 1) * kc];
                row.iter_mut().for_each(|x| *x = 0.0);
                row[g as usize] = 1.0;
            }
        }
    }

    /// Majority-vote shares per item (each row sums to 1), gold clamped.
    pub fn vote_shares(&self) -> Vec<f64> {
        let kc = self.classes.len();
        let mut q = vec![0.0; self.items.len() * kc];
        for i in 0..self.items.len() {
            let n = (self.starts[i + 1] - self.starts[i]) as f64;
            for x in self.starts[i]..self.starts[i + 1] {
                q[i * kc + self.label[x] as usize] += 1.0 / n;
            }
        }
        self.clamp_gold(&mut q);
        q
    }
}

/// One answer per (item, person), sorted by both; of repeated answers the
/// later one wins (a stable sort keeps the last last).
pub(super) fn last_answers(answers: &[(u64, u64, usize)]) -> Vec<(u64, u64, usize)> {
    let mut rows = answers.to_vec();
    rows.sort_by_key(|&(item, person, _)| (item, person));
    let mut dedup: Vec<(u64, u64, usize)> = Vec::with_capacity(rows.len());
    for r in rows {
        match dedup.last_mut() {
            Some(last) if (last.0, last.1) == (r.0, r.1) => *last = r,
            _ => dedup.push(r),
        }
    }
    dedup
}

/// Column means of an n × kc matrix.
pub(super) fn class_means(q: &[f64], kc: usize) -> Vec<f64> {
    let n = (q.len() / kc).max(1) as f64;
    let mut m = vec![0.0; kc];
    for row in q.chunks(kc) {
        for (c, &x) in row.iter().enumerate() {
            m[c] += x;
        }
    }
    m.iter_mut().for_each(|x| *x /= n);
    m
}
