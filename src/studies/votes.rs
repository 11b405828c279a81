//! Every counted answer of a study, kept compactly beside its outcomes in
//! the order resolution read them (instance, then answer time, then task),
//! so a reader that lists them (the export's vote columns) need not read
//! and sort the study's answers again.
use std::collections::{HashMap, HashSet};

/// The answers of each item of a study, item by item in the outcomes' order.
#[derive(Debug, Default)]
pub struct Votes {
    names: HashMap<i64, String>,
    /// The distinct stored values (a kind has a handful), and their indexes.
    values: Vec<String>,
    index: HashMap<String, u32>,
    /// (annotator id, index into `values`), every item's answers in a row.
    rows: Vec<(i64, u32)>,
    /// Where each item's answers end in `rows`.
    ends: Vec<u32>,
    /// Annotators whose answers the study's model was fitted without
    /// (places adaptive overlap ended as uninformative).
    outside_model: HashSet<i64>,
}

impl Votes {
    /// Empty, with the annotators' names the answers will be shown with.
    pub fn new(names: HashMap<i64, String>) -> Votes {
        Votes { names, ..Votes::default() }
    }

    /// Marks `who` as left out of the study's model fit.
    pub fn leave_out_of_model(&mut self, who: HashSet<i64>) {
        self.outside_model = who;
    }

    /// Whether the model was fitted with `annotator`'s answers.
    pub fn in_model(&self, annotator: i64) -> bool {
        !self.outside_model.contains(&annotator)
    }

    /// Every annotator's name by id.
    pub fn names(&self) -> &HashMap<i64, String> {
        &self.names
    }

    /// One more answer of the current item.
    pub fn push(&mut self, annotator: i64, value: &str) {
        let index = match self.index.get(value) {
            Some(&i) => i,
            None => {
                self.values.push(value.to_string());
                self.index.insert(value.to_string(), self.values.len() as u32 - 1);
                self.values.len() as u32 - 1
            }
        };
        self.rows.push((annotator, index));
    }

    /// Closes the current item (it may have no answers).
    pub fn end_item(&mut self) {
        self.ends.push(self.rows.len() as u32);
    }

    /// Every answer as (item's position, annotator id, value), item by item.
    pub fn each(&self) -> impl Iterator<Item = (usize, i64, &str)> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|&e| e as usize));
        self.ends.iter().zip(starts).enumerate().flat_map(move |(item, (&end, start))| {
            self.rows[start..end as usize]
                .iter()
                .map(move |&(user, value)| (item, user, self.values[value as usize].as_str()))
        })
    }

    /// The answers of the `item`-th item as (annotator name, value); an
    /// annotator without a name shows as `user <id>`.
    pub fn of(&self, item: usize) -> impl Iterator<Item = (String, &str)> + '_ {
        let start = item.checked_sub(1).map_or(0, |i| self.ends[i] as usize);
        let end = self.ends.get(item).map_or(start, |&e| e as usize);
        self.rows[start..end].iter().map(|&(user, value)| {
            let name = self.names.get(&user).cloned().unwrap_or_else(|| format!("user {user}"));
            (name, self.values[value as usize].as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_item_lists_its_own_answers_in_order_with_names() {
        let names = HashMap::from([(1, "ann".to_string()), (2, "bob".to_string())]);
        let mut v = Votes::new(names);
        v.push(1, "2");
        v.push(2, "none");
        v.end_item();
        v.end_item(); // an item nobody answered
        v.push(2, "2");
        v.push(7, "0");
        v.end_item();
        let list = |i| v.of(i).map(|(n, val)| format!("{n}:{val}")).collect::<Vec<_>>();
        assert_eq!(list(0), ["ann:2", "bob:none"]);
        assert!(list(1).is_empty());
        assert_eq!(list(2), ["bob:2", "user 7:0"]);
        assert!(list(3).is_empty(), "past the last item");
        let all: Vec<_> = v.each().collect();
        assert_eq!(all, [(0, 1, "2"), (0, 2, "none"), (2, 2, "2"), (2, 7, "0")]);
        assert_eq!(v.values, ["2", "none", "0"], "values are stored once each");
    }
}
