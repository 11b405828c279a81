//! Researcher page: upload candidates (CSV or JSONL in the BiVLC Step 2
//! schema) with their positive and negative images. The upload goes to
//! `POST /api/v1/datasets/import` through XMLHttpRequest, whose upload
//! events drive the progress bar; the import itself is one transaction on
//! the server, so a refused file leaves nothing behind.
use leptos::prelude::*;

/// What the page shows: upload progress (bytes sent, total) and the outcome.
#[derive(Clone, Default)]
struct UploadState {
    sent: f64,
    total: f64,
    busy: bool,
    outcome: Option<Result<String, String>>,
}

#[component]
pub fn ImportPage() -> impl IntoView {
    let state = RwSignal::new(UploadState::default());
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if state.get_untracked().busy {
            return;
        }
        state.set(UploadState { busy: true, ..Default::default() });
        #[cfg(feature = "hydrate")]
        if let Err(e) = client::upload(state) {
            state.set(UploadState { outcome: Some(Err(e)), ..Default::default() });
        }
    };
    let percent = move || {
        let s = state.get();
        if s.total > 0.0 {
            (100.0 * s.sent / s.total).round()
        } else {
            0.0
        }
    };
    view! {
        <leptos_meta::Title text="Import candidates"/>
        <h1>"Import candidates"</h1>
        <super::NeedsScript/>
        <p>"A CSV or JSONL file with the columns " <code>"filename, caption, negative_caption, type, subtype, index, hn_img_0 … hn_img_3"</code>
           ", the positive images it names (" <code>"filename"</code> ") and the generated negatives (" <code>"hn_img_*"</code>
           "). Select all files of each folder. Nothing is stored unless the whole file is valid."</p>
        <form class="import" on:submit=on_submit>
            <label>"Dataset name (default: the file name) " <input type="text" name="dataset" id="import-dataset"/></label>
            <label>"Caption normalisation "
                <select name="normalize" id="import-normalize">
                    <option value="bivlc" selected>"bivlc (as the released BiVLC captions)"</option>
                    <option value="preserve-entities">"preserve-entities (keep names and acronyms)"</option>
                    <option value="none">"none"</option>
                </select>
            </label>
            <label>"Candidates file " <input type="file" id="import-file" accept=".csv,.jsonl,.json" required/></label>
            <label>"Positive images " <input type="file" id="import-positives" accept="image/png,image/jpeg" multiple required/></label>
            <label>"Negative images " <input type="file" id="import-negatives" accept="image/png,image/jpeg" multiple required/></label>
            <button type="submit" disabled=move || state.get().busy>"Import"</button>
        </form>
        <div class="upload" hidden=move || { let s = state.get(); !s.busy && s.total == 0.0 }>
            <progress max="100" value=percent aria-label="Upload progress"></progress>
            <span class="percent">{move || format!("{}%", percent())}</span>
            {move || state.get().busy.then(|| view! { <span>" uploading, then importing…"</span> })}
        </div>
        {move || state.get().outcome.map(|o| match o {
            Ok(msg) => view! { <p class="imported" role="status">{msg}</p> }.into_any(),
            Err(msg) => view! { <pre class="error import-error" role="alert">{msg}</pre> }.into_any(),
        })}
    }
}

#[cfg(feature = "hydrate")]
mod client {
    use super::UploadState;
    use leptos::prelude::*;
    use wasm_bindgen::{closure::Closure, JsCast};
    use web_sys::{FormData, HtmlInputElement, HtmlSelectElement, ProgressEvent, XmlHttpRequest};

    fn input(id: &str) -> Result<HtmlInputElement, String> {
        let doc = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
        doc.get_element_by_id(id).and_then(|e| e.dyn_into().ok()).ok_or_else(|| format!("no input #{id}"))
    }

    fn js(e: wasm_bindgen::JsValue) -> String {
        e.as_string().unwrap_or_else(|| format!("{e:?}"))
    }

    /// Appends every selected file of an input under one form field name.
    fn add_files(form: &FormData, field: &str, id: &str) -> Result<(), String> {
        if let Some(files) = input(id)?.files() {
            for k in 0..files.length() {
                if let Some(f) = files.get(k) {
                    form.append_with_blob_and_filename(field, &f, &f.name()).map_err(js)?;
                }
            }
        }
        Ok(())
    }

    pub fn upload(state: RwSignal<UploadState>) -> Result<(), String> {
        let form = FormData::new().map_err(js)?;
        let dataset = input("import-dataset")?.value();
        if !dataset.trim().is_empty() {
            form.append_with_str("dataset", dataset.trim()).map_err(js)?;
        }
        let doc = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
        if let Some(sel) =
            doc.get_element_by_id("import-normalize").and_then(|e| e.dyn_into::<HtmlSelectElement>().ok())
        {
            form.append_with_str("normalize", &sel.value()).map_err(js)?;
        }
        add_files(&form, "file", "import-file")?;
        add_files(&form, "positive", "import-positives")?;
        add_files(&form, "negative", "import-negatives")?;

        let xhr = XmlHttpRequest::new().map_err(js)?;
        xhr.open("POST", "/api/v1/datasets/import").map_err(js)?;
        xhr.set_request_header("Accept", "application/json").map_err(js)?;
        let on_progress = Closure::<dyn FnMut(ProgressEvent)>::new(move |e: ProgressEvent| {
            if e.length_computable() {
                state.update(|s| {
                    s.sent = e.loaded();
                    s.total = e.total();
                });
            }
        });
        xhr.upload().map_err(js)?.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
        on_progress.forget();
        let done_xhr = xhr.clone();
        let on_done = Closure::<dyn FnMut()>::new(move || {
            let status = done_xhr.status().unwrap_or(0);
            let body = done_xhr.response_text().ok().flatten().unwrap_or_default();
            let outcome = summarise(status, &body);
            state.update(|s| {
                s.busy = false;
                s.sent = s.total.max(1.0);
                s.total = s.total.max(1.0);
                s.outcome = Some(outcome);
            });
        });
        xhr.set_onloadend(Some(on_done.as_ref().unchecked_ref()));
        on_done.forget();
        xhr.send_with_opt_form_data(Some(&form)).map_err(js)
    }

    fn summarise(status: u16, body: &str) -> Result<String, String> {
        let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        if status == 200 || status == 201 {
            let n = json["instances"].as_u64().unwrap_or(0);
            let ds = json["dataset"].as_str().unwrap_or("?");
            if json["already_imported"].as_bool() == Some(true) {
                Ok(format!("{ds}: this file was already imported; nothing changed."))
            } else {
                Ok(format!("Imported {n} instances into dataset {ds}."))
            }
        } else if status == 0 {
            Err("the upload did not reach the server".into())
        } else {
            Err(json["error"].as_str().map(str::to_string).unwrap_or_else(|| format!("HTTP {status}: {body}")))
        }
    }
}
