//! Crowd studies by link (docs/crowd.md), the shell around `domain::crowd`:
//! arrival, the participant's way through, and the researcher's view. The
//! join pages, the JSON API (`http::crowd`), the participant's pages and
//! the CLI all call these functions; every decision is read from stored rows.
pub mod approve;
pub mod arrive;
pub mod comprehension;
pub mod dashboard;
pub mod flow;
mod kept;
mod place;
pub mod research;
mod scores;
pub mod sessions;

pub use approve::{approve_list, discard, discard_in, outcomes_built_on, ApproveRow, Discard};
pub use arrive::{arrive, arrive_consenting, preview};
pub use comprehension::comprehension_answer;
pub use dashboard::dashboard;
pub use flow::{accept_consent, completion, instructions_read, practice_answer, return_study, stage};
pub use research::{bundles, close, link, participants, reopen, rotate};
// The link's stored rows: the study's lifecycle writes them (`studies::link`).
pub(crate) use crate::studies::link::{
    checks, lease_state, link_in, link_of_study, own_lease, own_place, setup, unknown_token, LinkRow, LINK_SL_COLUMNS,
};

mod views;
pub use views::*;
