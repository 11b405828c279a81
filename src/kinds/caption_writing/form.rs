//! HNC's writing card without JavaScript (or before the wasm has loaded):
//! the card is a plain form posting here (`task_id`, `option` = `written` or
//! `skip:<reason>` from the button pressed, `positive`, `negative`,
//! `confirmed`). A stored answer sends the browser back to the survey
//! (303). Words outside the study's vocabulary come back on a page of their
//! own that names them, with the texts filled in to fix, and, when the
//! vocabulary only warns, a box to keep them; nothing is stored until then.
//! A pair the kind refuses (identical captions, a text too long) comes back
//! the same way (422) with the reason, the texts kept.
use crate::domain::ids::TaskId;
use crate::error::ServiceError;
use crate::state::AppState;
use super::write::{write, WriteOutcome, WrittenAnswer};
use crate::ui_kit::page;
use crate::ui_kit::survey_post::{on_survey_pages, Answered, SurveyPost};
use axum::http::StatusCode;
use axum::Router;
use leptos::prelude::*;
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    on_survey_pages("write", answer)
}

#[derive(Deserialize)]
struct WriteForm {
    task_id: TaskId,
    option: String,
    #[serde(default)]
    positive: String,
    #[serde(default)]
    negative: String,
    /// A checked box sends a value; an unchecked one sends nothing.
    #[serde(default)]
    confirmed: Option<String>,
}

async fn answer(p: SurveyPost<WriteForm>) -> Result<Answered, ServiceError> {
    p.in_study(p.form.task_id).await?;
    let form = p.form;
    let a = WrittenAnswer {
        task_id: form.task_id,
        option: form.option,
        positive: form.positive,
        negative: form.negative,
        confirmed: form.confirmed.is_some(),
    };
    let action = format!("{}/write", p.page);
    let refused = match write(&p.state, &p.user, &a, None).await {
        Ok(WriteOutcome::Stored(_)) => return Ok(Answered::Back),
        Ok(WriteOutcome::Unknown { words, strict }) => Refused::Unknown { words, strict },
        // The kind's own rules (e.g. identical captions): the texts come back to fix, not lost.
        Err(ServiceError::Invalid(message)) if a.option == "written" => Refused::Invalid(message),
        Err(e) => return Err(e),
    };
    let status = match refused {
        Refused::Unknown { .. } => StatusCode::OK,
        Refused::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
    };
    Ok(Answered::Page(page::respond(status, refill_page(&a, &refused, &action, &p.page))))
}

/// Why a written pair was not stored.
enum Refused {
    Unknown { words: Vec<(String, Vec<String>)>, strict: bool },
    Invalid(String),
}

/// The form again with the texts filled in and what to fix: the unknown
/// words named per caption, or the kind's refusal.
fn refill_page(a: &WrittenAnswer, refused: &Refused, action: &str, back: &str) -> String {
    // `strict`: no box to keep the words (none either for a refused pair).
    let (title, lead, named, strict, count) = match refused {
        Refused::Unknown { words, strict } => {
            let named: Vec<(String, String)> = words.iter().map(|(field, w)| (field.clone(), w.join(", "))).collect();
            let lead = match strict {
                true => "This study accepts only words from its vocabulary. Replace these:".to_string(),
                false => "These words are outside the study's vocabulary. Fix them, or keep them:".to_string(),
            };
            let count: usize = words.iter().map(|(_, w)| w.len()).sum();
            ("Words outside the vocabulary", lead, named, *strict, count)
        }
        Refused::Invalid(message) => ("Please fix the caption pair", message.clone(), Vec::new(), true, 0),
    };
    let input = |name: &'static str, label: &'static str, value: &str| {
        let value = value.to_string();
        view! {
            <label class="caption-box">
                <span>{label}</span>
                <input type="text" name=name maxlength="300" autocomplete="off" value=value/>
            </label>
        }
    };
    let positive = input("positive", "Positive caption (true of the image)", &a.positive);
    let negative = input("negative", "Negative caption (false of the image)", &a.negative);
    let (task, action, back) = (a.task_id.get(), action.to_string(), back.to_string());
    page::document(
        title,
        None,
        view! {
            <section class="survey caption-writing" data-unknown-words=count>
                <h1>{title}</h1>
                <p role="alert">{lead}</p>
                {(!named.is_empty()).then(|| view! {
                    <ul class="unknown-words">
                        {named.into_iter().map(|(field, w)| view! { <li>{format!("{field}: ")}<mark>{w}</mark></li> }).collect_view()}
                    </ul>
                })}
                <form class="writing-form" method="post" action=action>
                    <input type="hidden" name="task_id" value=task/>
                    {positive}
                    {negative}
                    {(!strict).then(|| view! {
                        <label class="confirm"><input type="checkbox" name="confirmed" value="1"/> " Keep these words"</label>
                    })}
                    <button type="submit" class="primary" name="option" value="written">"Submit pair"</button>
                </form>
                <p><a href=back>"Back to the survey"</a></p>
            </section>
        },
    )
}
