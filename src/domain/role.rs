//! Account roles and what each may do.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Researcher,
    Annotator,
    /// A crowd worker who arrived by a study's link: no password, admitted
    /// to its own bundle of that one study and nothing else.
    Participant,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Admin, Role::Researcher, Role::Annotator, Role::Participant];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Researcher => "researcher",
            Role::Annotator => "annotator",
            Role::Participant => "participant",
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

    /// Made by arriving through a link, never by `user add`, and never logs in with a password.
    pub fn is_participant(self) -> bool {
        self == Role::Participant
    }

    /// The page areas this role may open, as (path, link text) for the
    /// header's navigation; the page guard allows exactly these.
    pub fn areas(self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        if self.may_annotate() {
            out.push(("/annotate", "Your studies"));
        }
        if self.may_research() {
            out.extend([
                ("/research", "Studies"),
                ("/research/compare", "Compare models"),
                ("/research/import", "Import"),
            ]);
        }
        if self.may_administer() {
            out.push(("/admin", "Administration"));
        }
        out
    }

    /// Where a user lands after logging in.
    pub fn home(self) -> &'static str {
        match self {
            Role::Admin => "/admin",
            Role::Researcher => "/research",
            Role::Annotator => "/annotate",
            // The participant's page is per study: /take/{study}.
            Role::Participant => "/",
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
    fn every_area_in_the_navigation_is_one_the_role_may_open() {
        let paths = |r: Role| r.areas().into_iter().map(|(p, _)| p).collect::<Vec<_>>();
        assert_eq!(paths(Role::Admin), ["/research", "/research/compare", "/research/import", "/admin"]);
        assert_eq!(paths(Role::Researcher), ["/research", "/research/compare", "/research/import"]);
        assert_eq!(paths(Role::Annotator), ["/annotate"]);
        assert!(paths(Role::Participant).is_empty(), "a participant only has their study link");
        for r in Role::ALL {
            assert!(r == Role::Participant || paths(r).contains(&r.home()), "{r:?}'s home is in its navigation");
        }
    }

    #[test]
    fn permissions_by_role() {
        assert!(Role::Annotator.may_annotate() && !Role::Annotator.may_research());
        assert!(Role::Researcher.may_research() && !Role::Researcher.may_annotate());
        assert!(Role::Admin.may_research() && Role::Admin.may_administer());
        assert!(!Role::Researcher.may_administer());
        let p = Role::Participant;
        assert!(p.is_participant() && !p.may_annotate() && !p.may_research() && !p.may_administer());
        assert!(Role::ALL.iter().filter(|r| r.is_participant()).count() == 1);
    }
}
