//! The steps a participant's page leads through before its bundle
//! (consent, the kind's instructions, the practice items): the answer path
//! and the task path hold a participant to them too, so that a client
//! which skips the page stores nothing without the recorded consent.

/// How far a participant is through the steps before its bundle, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepsDone {
    pub consented: bool,
    pub instructed: bool,
    pub practice_done: i64,
}

impl StepsDone {
    /// Packed into one integer by the place's read (`studies::link`): 0 no
    /// consent, 1 no instructions, else 2 + the practice items done.
    pub fn unpack(packed: i64) -> Self {
        StepsDone { consented: packed >= 1, instructed: packed >= 2, practice_done: (packed - 2).max(0) }
    }

    /// The first step still missing before a study with `practice` items
    /// lets the participant answer its bundle (None: none is missing), in
    /// words for the refusal.
    pub fn missing(self, practice: usize) -> Option<&'static str> {
        if !self.consented {
            Some("accept the study's consent on the study's page first")
        } else if !self.instructed {
            Some("read the study's instructions on the study's page first")
        } else if self.practice_done < practice as i64 {
            Some("answer the practice items on the study's page first")
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_come_in_order_and_practice_counts_its_items() {
        assert_eq!(StepsDone::unpack(0).missing(0), Some("accept the study's consent on the study's page first"));
        assert_eq!(StepsDone::unpack(1).missing(0), Some("read the study's instructions on the study's page first"));
        assert_eq!(StepsDone::unpack(2).missing(0), None);
        assert_eq!(StepsDone::unpack(2).missing(2), Some("answer the practice items on the study's page first"));
        assert_eq!(StepsDone::unpack(3).missing(2), Some("answer the practice items on the study's page first"));
        assert_eq!(StepsDone::unpack(4).missing(2), None);
        assert_eq!(StepsDone::unpack(5), StepsDone { consented: true, instructed: true, practice_done: 3 });
        // Consent is asked before anything else, whatever else is done.
        let no_consent = StepsDone { consented: false, instructed: true, practice_done: 9 };
        assert!(no_consent.missing(0).unwrap().contains("consent"));
    }
}
