//! Sequences packed row after row into one matrix for the CPU layers, with
//! each distinct prefix of tokens computed once (`Seqs::shared`): every
//! caption starts with the start token, and a hard negative usually repeats
//! its positive's first words ("A cat and dog…" / "A cat and a dog…").
//! Exact under a causal mask, where a position's state depends only on the
//! tokens up to it: a later sequence reads those rows of an earlier one.
use std::collections::HashMap;

/// Where each position of each sequence lives in the packed matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Seqs {
    lens: Vec<usize>,
    /// Each sequence's first position of its own; those before it are rows
    /// of earlier sequences.
    own: Vec<usize>,
    /// Each sequence's first own row: its own rows follow one another.
    start: Vec<usize>,
    /// The row of every position, sequence after sequence (`at`).
    path: Vec<usize>,
    /// Where each sequence's positions start in `path`.
    at: Vec<usize>,
    rows: usize,
}

impl Seqs {
    /// Sequences of `lens` rows each, one after another, nothing shared.
    pub fn plain(lens: &[usize]) -> Self {
        let starts = prefix_sums(lens);
        let rows = lens.iter().sum();
        Seqs {
            lens: lens.to_vec(),
            own: vec![0; lens.len()],
            start: starts.clone(),
            path: (0..rows).collect(),
            at: starts,
            rows,
        }
    }

    /// The token sequences `seqs` with every distinct prefix one row, and
    /// each row's (token, position). Only for a causal encoder.
    pub fn shared(seqs: &[&[u32]]) -> (Self, Vec<(u32, u32)>) {
        let lens: Vec<usize> = seqs.iter().map(|s| s.len()).collect();
        let at = prefix_sums(&lens);
        let (mut rows, mut path) = (Vec::new(), Vec::with_capacity(lens.iter().sum()));
        let (mut own, mut start) = (Vec::with_capacity(seqs.len()), Vec::with_capacity(seqs.len()));
        // (row of the previous position, or none at position 0; token) -> row.
        let mut trie: HashMap<(Option<usize>, u32), usize> = HashMap::new();
        for seq in seqs {
            let mut parent = None;
            let first_new = rows.len();
            let mut shared = 0;
            for (pos, &token) in seq.iter().enumerate() {
                let row = *trie.entry((parent, token)).or_insert_with(|| {
                    rows.push((token, pos as u32));
                    rows.len() - 1
                });
                if row < first_new {
                    shared = pos + 1;
                }
                path.push(row);
                parent = Some(row);
            }
            own.push(shared);
            start.push(first_new);
        }
        let n = rows.len();
        (Seqs { lens, own, start, path, at, rows: n }, rows)
    }

    /// Rows computed.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Sequences.
    pub fn count(&self) -> usize {
        self.lens.len()
    }

    pub fn len(&self, seq: usize) -> usize {
        self.lens[seq]
    }

    pub fn longest(&self) -> usize {
        self.lens.iter().copied().max().unwrap_or(0)
    }

    /// Whether no sequence reads another's rows.
    pub fn is_plain(&self) -> bool {
        self.own.iter().all(|&o| o == 0)
    }

    /// The row of position `pos` of sequence `seq`.
    pub fn row(&self, seq: usize, pos: usize) -> usize {
        assert!(pos < self.lens[seq], "Seqs: position {pos} of a sequence of {}", self.lens[seq]);
        self.path[self.at[seq] + pos]
    }

    /// The rows of sequence `seq`'s positions.
    pub fn path(&self, seq: usize) -> &[usize] {
        &self.path[self.at[seq]..][..self.lens[seq]]
    }

    /// Sequence `seq`'s own positions: the first, how many, and its row
    /// (the others follow it).
    pub fn own(&self, seq: usize) -> (usize, usize, usize) {
        (self.own[seq], self.lens[seq] - self.own[seq], self.start[seq])
    }

    /// Each sequence's last position.
    pub fn last_positions(&self) -> Vec<usize> {
        self.lens.iter().map(|l| l.saturating_sub(1)).collect()
    }

    /// Whether sequence `seq`'s rows are all its own, one after another.
    pub fn contiguous(&self, seq: usize) -> bool {
        self.own[seq] == 0
    }
}

fn prefix_sums(lens: &[usize]) -> Vec<usize> {
    lens.iter().scan(0, |row, &len| Some(std::mem::replace(row, *row + len))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_sequences_follow_one_another() {
        let s = Seqs::plain(&[3, 1, 2]);
        assert_eq!((s.rows(), s.count(), s.longest()), (6, 3, 3));
        assert!(s.is_plain() && (0..3).all(|q| s.contiguous(q)));
        assert_eq!((s.row(0, 2), s.row(1, 0), s.row(2, 1)), (2, 3, 5));
        assert_eq!(s.own(2), (0, 2, 4));
    }

    #[test]
    fn shared_prefixes_are_computed_once() {
        let (s, rows) = Seqs::shared(&[&[9, 1, 2, 3], &[9, 1, 5], &[9, 1, 2, 3], &[7, 1], &[9, 1, 2, 4]]);
        // 9 1 2 3 | 5 | (all shared) | 7 1 | 4
        assert_eq!(rows, [(9, 0), (1, 1), (2, 2), (3, 3), (5, 2), (7, 0), (1, 1), (4, 3)]);
        assert_eq!(s.rows(), 8);
        assert!(!s.is_plain());
        assert!((0..5).all(|q| (0..s.len(q)).map(|p| s.row(q, p)).eq(s.path(q).iter().copied())));
        assert_eq!(
            [s.path(0), s.path(1), s.path(2), s.path(3), s.path(4)],
            [&[0, 1, 2, 3][..], &[0, 1, 4], &[0, 1, 2, 3], &[5, 6], &[0, 1, 2, 7]]
        );
        assert_eq!(
            [s.own(0), s.own(1), s.own(2), s.own(3), s.own(4)],
            [(0, 4, 0), (2, 1, 4), (4, 0, 5), (0, 2, 5), (3, 1, 7)]
        );
        assert!(s.contiguous(0) && !s.contiguous(1) && s.contiguous(3));
    }

    #[test]
    fn nothing_shared_is_plain() {
        let (s, rows) = Seqs::shared(&[&[1, 2], &[2, 1], &[]]);
        assert_eq!(s, Seqs::plain(&[2, 2, 0]));
        assert_eq!(rows, [(1, 0), (2, 1), (2, 0), (1, 1)]);
    }

    #[test]
    #[should_panic(expected = "position 2 of a sequence of 2")]
    fn a_position_past_the_end_is_refused() {
        Seqs::plain(&[2]).row(0, 2);
    }
}
