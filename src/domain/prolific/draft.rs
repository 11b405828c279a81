//! The draft study hardneg sends (`POST /api/v1/studies/`, the reference's
//! `CreateStudy`), made from a link study: the join link with Prolific's
//! three placeholders, completion codes mapped from hardneg's outcomes,
//! reward, places, times, devices and the group block list.
use super::spec::ProlificSettings;
use crate::domain::crowd::ids::PROLIFIC_PARAMS;
use crate::domain::ids::StudyId;
use serde_json::{json, Value};

/// What the draft is made from.
#[derive(Debug, Clone)]
pub struct DraftInput<'a> {
    pub study_id: StudyId,
    pub name: &'a str,
    /// hardneg's name for it on Prolific: a retried publish finds its draft by it.
    pub internal_name: &'a str,
    pub consent: &'a str,
    /// The origin participants reach hardneg at, and the join path (`/join/{token}`).
    pub origin: &'a str,
    pub join_path: &'a str,
    pub completion_code: &'a str,
    /// The screen-out code, when the study can screen out, and whether it
    /// has attention checks (their screen-outs are reviewed by hand).
    pub screen_out_code: Option<&'a str>,
    pub attention_checks: bool,
    pub full_code: Option<&'a str>,
    pub reward_cents: u64,
    pub places: u64,
    pub settings: &'a ProlificSettings,
    /// Prolific ids of the participant groups to block.
    pub block_group_ids: &'a [String],
}

/// The reason sent with the full code's return request.
pub const FULL_RETURN: &str = "The study was full when you arrived: please return it";
/// The reason sent with the comprehension screen-out's return request.
pub const COMPREHENSION_RETURN: &str = "You did not pass the comprehension check: please return the study";

/// The internal name of hardneg's study `id` whose spec hashes to `spec_hash`.
pub fn internal_name(id: i64, spec_hash: &str) -> String {
    format!("hardneg-study-{id}-{}", &spec_hash[..spec_hash.len().min(12)])
}

pub fn completion_codes(d: &DraftInput) -> Vec<Value> {
    let completed = if d.settings.auto_approve { "AUTOMATICALLY_APPROVE" } else { "MANUALLY_REVIEW" };
    let mut codes = vec![json!({
        "code": d.completion_code, "code_type": "COMPLETED", "actor": "participant",
        "actions": [{ "action": completed }],
    })];
    if let Some(code) = d.screen_out_code {
        // One code for both screen-outs: with attention checks it is reviewed by hand (and a comprehension
        // failure is asked to return by `hardneg prolific decide`); with the comprehension check alone, a return.
        let action = if d.attention_checks {
            json!({ "action": "MANUALLY_REVIEW" })
        } else {
            json!({ "action": "REQUEST_RETURN", "return_reason": COMPREHENSION_RETURN })
        };
        codes.push(json!({ "code": code, "code_type": "SCREENED_OUT", "actor": "participant", "actions": [action] }));
    }
    if let Some(code) = d.full_code {
        codes.push(json!({
            "code": code, "code_type": "OTHER", "actor": "participant",
            "actions": [{ "action": "REQUEST_RETURN", "return_reason": FULL_RETURN }],
        }));
    }
    codes
}

/// The origin the study URL sent to Prolific starts with: the server's
/// configured public origin (`serve --public-origin`, behind a proxy),
/// else the researcher's browser's own (its `Origin`, which the
/// cross-site check already matched to this server), else `http://` and
/// the `Host` the request came to.
/// A browser's origin or a `Host` that is not `host[:port]` is passed over.
pub fn study_origin(public: Option<&str>, browser: Option<&str>, host: Option<&str>) -> String {
    let browser = browser.and_then(|b| check_origin(b).ok());
    let host = host.and_then(|h| check_origin(&format!("http://{h}")).ok());
    match (public, browser, host) {
        (Some(p), _, _) => p.trim_end_matches('/').to_string(),
        (None, Some(b), _) => b,
        (None, None, Some(h)) => h,
        (None, None, None) => "http://127.0.0.1:3000".to_string(),
    }
}

/// An origin given for the study URL (the API's `origin`, the CLI's
/// `--base-url`): `http(s)://host[:port]`, a trailing `/` dropped; a path,
/// a query or another scheme would send Prolific's participants elsewhere.
pub fn check_origin(given: &str) -> Result<String, String> {
    let o = given.trim().trim_end_matches('/');
    let rest = o.strip_prefix("https://").or_else(|| o.strip_prefix("http://"));
    let bad = |why: &str| {
        Err(format!("the origin {given:?} {why}: give http(s)://host[:port], as participants reach hardneg"))
    };
    match rest {
        None => bad("is not http:// or https://"),
        Some("") => bad("has no host"),
        Some(r) if r.contains(['/', '?', '#', '@', ' ', '\\']) || r.chars().any(char::is_control) => {
            bad("has more than a host and port")
        }
        Some(r) => match host_and_port(r) {
            Ok(()) => Ok(o.to_string()),
            Err(why) => bad(why),
        },
    }
}

/// `host[:port]`: a name of letters, digits, `-` and `.` (an IDN in its
/// own letters or as punycode), an IPv4 address, or an IPv6 one in
/// brackets; a port from 1 to 65535.
fn host_and_port(r: &str) -> Result<(), &'static str> {
    let (host, port) = match r.strip_prefix('[') {
        Some(v6) => {
            let (addr, rest) = v6.split_once(']').ok_or("has an unclosed [")?;
            addr.parse::<std::net::Ipv6Addr>().map_err(|_| "has no IPv6 address in its [ ]")?;
            match rest {
                "" => ("v6", None),
                _ => ("v6", Some(rest.strip_prefix(':').ok_or("has more than a host and port")?)),
            }
        }
        None => match r.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (r, None),
        },
    };
    let name_ok = |h: &str| {
        !h.is_empty()
            && h.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_alphanumeric() || c == '-')
            })
    };
    if !name_ok(host.trim_end_matches('.')) {
        return Err("has no valid host name");
    }
    match port {
        None => Ok(()),
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) && matches!(p.parse::<u32>(), Ok(1..=65535)) => Ok(()),
        Some(_) => Err("has a port outside 1 to 65535"),
    }
}

pub fn draft(d: &DraftInput) -> Value {
    let s = d.settings;
    let origin = d.origin.trim_end_matches('/');
    let mut body = json!({
        "name": s.title.as_deref().unwrap_or(d.name),
        "internal_name": d.internal_name,
        "description": s.description.as_deref().unwrap_or(d.consent),
        "external_study_url": format!("{origin}{}?{PROLIFIC_PARAMS}", d.join_path),
        "prolific_id_option": "url_parameters",
        "completion_codes": completion_codes(d),
        "total_available_places": d.places,
        "estimated_completion_time": s.estimated_minutes.ceil() as u64,
        "maximum_allowed_time": s.maximum_allowed_minutes,
        "reward": d.reward_cents,
        "device_compatibility": s.devices,
        "study_labels": ["annotation"],
        "metadata": json!({ "hardneg_study": d.study_id, "internal_name": d.internal_name }).to_string(),
    });
    if !d.block_group_ids.is_empty() {
        body["filters"] = json!([{ "filter_id": "participant_group_blocklist", "selected_values": d.block_group_ids }]);
    }
    if let Some(p) = &s.project {
        body["project"] = json!(p);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::prolific::spec::{parse, ProlificSpec};

    fn settings(text: &str) -> ProlificSettings {
        parse(toml::from_str::<ProlificSpec>(text).unwrap(), 60).unwrap()
    }

    fn input<'a>(s: &'a ProlificSettings, groups: &'a [String]) -> DraftInput<'a> {
        DraftInput {
            study_id: StudyId::new(7),
            name: "BiVLC Step 3",
            internal_name: "hardneg-study-7-abc",
            consent: "I agree",
            origin: "https://h.example.org/",
            join_path: "/join/tok",
            completion_code: "C0DE1234",
            screen_out_code: Some("SCRN0001"),
            attention_checks: true,
            full_code: Some("FULL0001"),
            reward_cents: 400,
            places: 64,
            settings: s,
            block_group_ids: groups,
        }
    }

    #[test]
    fn a_given_origin_is_a_scheme_a_host_and_a_port_only() {
        assert_eq!(check_origin("https://h.example.org/").unwrap(), "https://h.example.org");
        assert_eq!(check_origin(" http://10.0.0.5:3000 ").unwrap(), "http://10.0.0.5:3000");
        for good in
            ["http://[::1]:3000", "http://[2001:db8::1]", "https://hardneg.example.org:65535", "http://localhost"]
        {
            assert_eq!(check_origin(good).unwrap(), good);
        }
        assert_eq!(check_origin("https://bücher.example").unwrap(), "https://bücher.example");
        for bad in [
            "javascript:alert(1)",
            "https://",
            "https://h.example.org/app",
            "ftp://h",
            "https://h?x=1",
            "https://u@h",
            "h.example.org",
            "http://evil.example:99999",
            "http://h:0",
            "http://h:",
            "http://h:80x",
            "http://a\"b<x>",
            "http://-h.example",
            "http://h..example",
            "http://[::1",
            "http://[nope]:80",
        ] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_study_url_starts_with_the_public_origin_then_the_browsers_then_the_host() {
        let public = Some("https://hardneg.example.org/");
        assert_eq!(
            study_origin(public, Some("http://10.0.0.5:3000"), Some("10.0.0.5:3000")),
            "https://hardneg.example.org"
        );
        assert_eq!(study_origin(None, Some("https://h.example.org"), Some("h.example.org")), "https://h.example.org");
        assert_eq!(study_origin(None, Some("null"), Some("127.0.0.1:3000")), "http://127.0.0.1:3000");
        assert_eq!(study_origin(None, None, Some("h.example.org:8080")), "http://h.example.org:8080");
        assert_eq!(study_origin(None, None, None), "http://127.0.0.1:3000");
        // A Host (or a browser origin) that is not host[:port] is passed over.
        assert_eq!(study_origin(None, None, Some("x/y?z")), "http://127.0.0.1:3000");
        assert_eq!(study_origin(None, Some("http://a\"b"), Some("h.example.org")), "http://h.example.org");
    }

    #[test]
    fn the_draft_carries_the_link_codes_and_figures() {
        let s = settings("estimated_minutes = 20\nproject = \"p1\"");
        let b = draft(&input(&s, &[]));
        assert_eq!(
            b["external_study_url"],
            "https://h.example.org/join/tok?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        );
        assert_eq!(b["prolific_id_option"], "url_parameters");
        assert_eq!((b["reward"].as_u64(), b["total_available_places"].as_u64()), (Some(400), Some(64)));
        assert_eq!((b["estimated_completion_time"].as_u64(), b["maximum_allowed_time"].as_u64()), (Some(20), Some(60)));
        assert_eq!(b["internal_name"], "hardneg-study-7-abc");
        assert_eq!(b["project"], "p1");
        assert_eq!(b["description"], "I agree");
        assert!(b.get("filters").is_none());
        let meta: Value = serde_json::from_str(b["metadata"].as_str().unwrap()).unwrap();
        assert_eq!(meta["hardneg_study"], 7);
        let codes = b["completion_codes"].as_array().unwrap();
        assert_eq!(codes.len(), 3);
        assert_eq!(codes[0]["code"], "C0DE1234");
        assert_eq!(codes[0]["actions"][0]["action"], "MANUALLY_REVIEW");
        assert_eq!(codes[1]["actions"][0]["action"], "MANUALLY_REVIEW", "attention screen-outs are reviewed");
        assert_eq!(codes[2]["actions"][0]["action"], "REQUEST_RETURN");
        for c in codes {
            for k in ["code", "code_type", "actions"] {
                assert!(c.get(k).is_some(), "{k} is required");
            }
        }
    }

    #[test]
    fn auto_approve_comprehension_only_block_list() {
        let s = settings("estimated_minutes = 5\nauto_approve = true\ndevices = [\"desktop\"]");
        let groups = ["g1".to_string(), "g2".to_string()];
        let mut i = input(&s, &groups);
        i.attention_checks = false;
        i.full_code = None;
        let b = draft(&i);
        let codes = b["completion_codes"].as_array().unwrap();
        assert_eq!(codes.len(), 2);
        assert_eq!(codes[0]["actions"][0]["action"], "AUTOMATICALLY_APPROVE");
        assert_eq!(codes[1]["actions"][0]["action"], "REQUEST_RETURN");
        assert_eq!(codes[1]["actions"][0]["return_reason"], COMPREHENSION_RETURN);
        assert_eq!(b["filters"][0]["filter_id"], "participant_group_blocklist");
        assert_eq!(b["filters"][0]["selected_values"], json!(["g1", "g2"]));
        assert_eq!(b["device_compatibility"], json!(["desktop"]));
        assert!(b.get("project").is_none());
        assert_eq!(internal_name(3, "0123456789abcdef"), "hardneg-study-3-0123456789ab");
        assert_eq!(internal_name(3, "ab"), "hardneg-study-3-ab");
    }
}
