//! Account roles and what each may do.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Researcher,
    Annotator,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Admin, Role::Researcher, Role::Annotator];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Researcher => "researcher",
            Role::Annotator => "annotator",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Only annotators answer: researchers' and admins' clicks must never
    /// enter the data a paper reports.
    pub fn may_annotate(self) -> bool {
        self == Role::Annotator
    }

    /// Progress, distributions and (later) imports and exports.
    pub fn may_research(self) -> bool {
        matches!(self, Role::Researcher | Role::Admin)
    }

    pub fn may_administer(self) -> bool {
        self == Role::Admin
    }

    /// Where a user lands after logging in.
    pub fn home(self) -> &'static str {
        match self {
            Role::Admin => "/admin",
            Role::Researcher => "/research",
            Role::Annotator => "/annotate",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_names() {
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("root"), None);
    }

    #[test]
    fn permissions_by_role() {
        assert!(Role::Annotator.may_annotate() && !Role::Annotator.may_research());
        assert!(Role::Researcher.may_research() && !Role::Researcher.may_annotate());
        assert!(Role::Admin.may_research() && Role::Admin.may_administer());
        assert!(!Role::Researcher.may_administer());
    }
}
