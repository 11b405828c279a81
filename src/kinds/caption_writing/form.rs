//! HNC's writing card without JavaScript (or before the wasm has loaded):
//! the card is a plain form posting here (`task_id`, `option` = `written` or
//! `skip:<reason>` from the button pressed, `positive`, `negative`,
//! `confirmed`). A stored answer sends the browser back to the survey
//! (303). Words outside the study's vocabulary come back on a page of their
//! own that names them, with the texts filled in to fix, and, when the
//! vocabulary only warns, a box to keep them; nothing is stored until then.
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
    Ok(match write(&p.state, &p.user, &a, None).await? {
        WriteOutcome::Stored(_) => Answered::Back,
        WriteOutcome::Unknown { words, strict } => {
            let action = format!("{}/write", p.page);
            Answered::Page(page::respond(StatusCode::OK, unknown_page(&a, &words, strict, &action, &p.page)))
        }
    })
}

/// The form again with the unknown words named per caption.
fn unknown_page(a: &WrittenAnswer, words: &[(String, Vec<String>)], strict: bool, action: &str, back: &str) -> String {
    let count = words.iter().map(|(_, w)| w.len()).sum::<usize>();
    let named: Vec<(String, String)> = words.iter().map(|(field, w)| (field.clone(), w.join(", "))).collect();
    let lead = match strict {
        true => "This study accepts only words from its vocabulary. Replace these:",
        false => "These words are outside the study's vocabulary. Fix them, or keep them:",
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
        "Words outside the vocabulary",
        None,
        view! {
            <section class="survey caption-writing" data-unknown-words=count>
                <h1>"Words outside the vocabulary"</h1>
                <p>{lead}</p>
                <ul class="unknown-words">
                    {named.into_iter().map(|(field, w)| view! { <li>{format!("{field}: ")}<mark>{w}</mark></li> }).collect_view()}
                </ul>
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
