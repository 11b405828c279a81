//! Prolific from hardneg (docs/prolific.md): the pure rules. The `[prolific]`
//! spec table, the reward and Prolific's minimum pay, places and times,
//! Prolific's submission statuses and what each means for a hardneg place,
//! the outbox's states, back-off with jitter, and what a decision sends.
//! The shell in `crate::prolific` does the IO.
pub mod backoff;
pub mod decide;
pub mod draft;
pub mod money;
pub mod outbox;
pub mod spec;
pub mod status;
pub mod transitions;
