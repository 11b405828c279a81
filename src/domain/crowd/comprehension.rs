//! The comprehension check before the bundle (Prolific's rule: two
//! attempts). Questions about the instructions with their right answers; a
//! failed first attempt sends the participant back to the instructions, a
//! failed second one ends its participation with the screen-out code.
use super::field::FieldError;
use serde::{Deserialize, Serialize};

/// Attempts a participant gets.
pub const MAX_ATTEMPTS: i64 = 2;

/// One question as the spec writes it: `{question, options = [...], answer}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub question: String,
    pub options: Vec<String>,
    /// One of `options`.
    pub answer: String,
}

pub fn check_questions(questions: &[Question]) -> Result<(), FieldError> {
    for (i, q) in questions.iter().enumerate() {
        let bad = |m: &str| FieldError { field: "link.comprehension", message: format!("question {}: {m}", i + 1) };
        if q.question.trim().is_empty() {
            return Err(bad("the question text is empty"));
        }
        if q.options.len() < 2 {
            return Err(bad("needs at least two options"));
        }
        if q.options.iter().any(|o| o.trim().is_empty()) {
            return Err(bad("an option is empty"));
        }
        let mut seen = std::collections::HashSet::new();
        if !q.options.iter().all(|o| seen.insert(o)) {
            return Err(bad("an option is listed twice"));
        }
        if !q.options.contains(&q.answer) {
            return Err(bad(&format!("answer {:?} is not one of its options", q.answer)));
        }
    }
    Ok(())
}

/// Whether every question got its right option; `chosen` holds one option index per question.
pub fn grade(questions: &[Question], chosen: &[usize]) -> Result<bool, String> {
    if chosen.len() != questions.len() {
        return Err(format!("{} answers given for {} questions", chosen.len(), questions.len()));
    }
    let mut all_right = true;
    for (i, (q, &c)) in questions.iter().zip(chosen).enumerate() {
        let option = q.options.get(c).ok_or_else(|| format!("question {}: no option {c}", i + 1))?;
        all_right &= *option == q.answer;
    }
    Ok(all_right)
}

/// What an attempt leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAttempt {
    /// On to the bundle (a place is leased now).
    Passed,
    /// The instructions again, then the last attempt.
    ReadAgain,
    /// Ended with the screen-out code; the participant is asked to return the study.
    ScreenedOut,
}

/// `attempt` is 1-based.
pub fn after_attempt(attempt: i64, passed: bool) -> AfterAttempt {
    match (passed, attempt >= MAX_ATTEMPTS) {
        (true, _) => AfterAttempt::Passed,
        (false, false) => AfterAttempt::ReadAgain,
        (false, true) => AfterAttempt::ScreenedOut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(options: &[&str], answer: &str) -> Question {
        Question {
            question: "Which image do you pick when none matches?".into(),
            options: options.iter().map(|o| o.to_string()).collect(),
            answer: answer.into(),
        }
    }

    #[test]
    fn grading_needs_every_question_right() {
        let qs = [q(&["A", "None"], "None"), q(&["yes", "no", "maybe"], "no")];
        assert_eq!(grade(&qs, &[1, 1]), Ok(true));
        assert_eq!(grade(&qs, &[0, 1]), Ok(false));
        assert_eq!(grade(&qs, &[1, 2]), Ok(false));
        assert_eq!(grade(&qs, &[1]).unwrap_err(), "1 answers given for 2 questions");
        assert_eq!(grade(&qs, &[1, 3]).unwrap_err(), "question 2: no option 3");
        assert_eq!(grade(&[], &[]), Ok(true));
    }

    #[test]
    fn two_attempts_then_screened_out() {
        assert_eq!(after_attempt(1, true), AfterAttempt::Passed);
        assert_eq!(after_attempt(2, true), AfterAttempt::Passed);
        assert_eq!(after_attempt(1, false), AfterAttempt::ReadAgain);
        assert_eq!(after_attempt(2, false), AfterAttempt::ScreenedOut);
        assert_eq!(after_attempt(3, false), AfterAttempt::ScreenedOut);
    }

    #[test]
    fn bad_questions_are_refused_by_number() {
        assert!(check_questions(&[q(&["a", "b"], "a")]).is_ok());
        let cases = [
            (q(&["a"], "a"), "question 1: needs at least two options"),
            (q(&["a", "b"], "c"), "question 1: answer \"c\" is not one of its options"),
            (q(&["a", "a"], "a"), "question 1: an option is listed twice"),
            (q(&["a", " "], "a"), "question 1: an option is empty"),
            (Question { question: " ".into(), ..q(&["a", "b"], "a") }, "question 1: the question text is empty"),
        ];
        for (bad, want) in cases {
            let e = check_questions(&[bad]).unwrap_err();
            assert_eq!((e.field, e.message.as_str()), ("link.comprehension", want));
        }
    }
}
