use super::*;
use crate::api_types::{Progress, Prompt};
use crate::domain::ids::StudyId;
use crate::domain::rng::SplitMix64;
use crate::domain::survey::SurveyKind;

/// Characters a string is made of: every ASCII byte (each control, `"`,
/// `\`, DEL), two-, three- and four-byte UTF-8, and U+2028 (which
/// serde_json leaves as it is).
fn text(rng: &mut SplitMix64, max_len: usize) -> String {
    const WIDE: [char; 6] = ['é', 'ß', '€', '漢', '😀', '\u{2028}'];
    let len = rng.below(max_len + 1);
    (0..len)
        .map(|_| match rng.below(4) {
            0 => char::from(rng.below(0x80) as u8),
            1 => WIDE[rng.below(WIDE.len())],
            // Mostly plain text, as real captions and URLs are.
            _ => char::from(b'a' + rng.below(26) as u8),
        })
        .collect()
}

fn maybe(rng: &mut SplitMix64, max_len: usize) -> Option<String> {
    (rng.below(2) == 0).then(|| text(rng, max_len))
}

fn int(rng: &mut SplitMix64) -> i64 {
    match rng.below(4) {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => -(rng.below(1000) as i64),
        _ => rng.next_u64() as i64 >> rng.below(64),
    }
}

fn task(rng: &mut SplitMix64) -> TaskView {
    let kinds = SurveyKind::all();
    TaskView {
        task_id: TaskId::new(int(rng)),
        study_id: StudyId::new(int(rng)),
        kind: kinds[rng.below(kinds.len())],
        instructions: text(rng, 300),
        item_instructions: rng.below(2) == 1,
        prompt: Prompt { text: text(rng, 40), image_url: maybe(rng, 40) },
        options: (0..rng.below(6))
            .map(|_| OptionView {
                id: text(rng, 8),
                label: text(rng, 20),
                image_url: maybe(rng, 40),
                text: maybe(rng, 40),
                keys: (0..rng.below(3)).map(|_| text(rng, 3)).collect(),
            })
            .collect(),
        progress: Progress { done: int(rng), total: int(rng) },
        prefetch: (0..rng.below(5)).map(|_| text(rng, 40)).collect(),
    }
}

fn written(v: &impl WriteJson) -> String {
    let mut out = Vec::new();
    v.write_json(&mut out);
    String::from_utf8(out).expect("UTF-8")
}

fn serde(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("serialises")
}

#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    let mut rng = SplitMix64::new(7);
    for _ in 0..20_000 {
        let s = text(&mut rng, 40);
        let mut out = Vec::new();
        string(&mut out, &s);
        assert_eq!(String::from_utf8(out).unwrap(), serde(&s), "{s:?}");
    }
}

#[test]
fn every_byte_that_needs_an_escape_is_found_at_every_place_in_a_word() {
    for b in 0..0x80u8 {
        for at in 0..17 {
            let mut bytes = vec![b'x'; 17];
            bytes[at] = b;
            let s = String::from_utf8(bytes).unwrap();
            let mut out = Vec::new();
            string(&mut out, &s);
            assert_eq!(String::from_utf8(out).unwrap(), serde(&s), "byte {b:#x} at {at}");
        }
    }
}

#[test]
fn a_task_view_is_serde_jsons_to_the_byte_and_reads_back() {
    let mut rng = SplitMix64::new(11);
    for _ in 0..3_000 {
        let t = task(&mut rng);
        let json = written(&t);
        assert_eq!(json, serde(&t));
        assert_eq!(serde_json::from_str::<TaskView>(&json).unwrap(), t);
    }
}

#[test]
fn an_acknowledgement_with_and_without_the_next_task_is_serde_jsons() {
    let mut rng = SplitMix64::new(13);
    for i in 0..2_000 {
        let (task_id, option, duplicate) = (TaskId::new(int(&mut rng)), text(&mut rng, 12), i % 2 == 0);
        let ack = AnswerAck { task_id, option: option.clone(), duplicate };
        assert_eq!(written(&ack), serde(&ack));
        let next = (i % 3 != 0).then(|| task(&mut rng));
        let both = AnswerAckNext { task_id, option, duplicate, next };
        assert_eq!(written(&both), serde(&both));
    }
}
