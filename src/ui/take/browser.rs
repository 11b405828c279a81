//! The few browser calls these pages need, through `js_sys::Reflect` so no
//! further `web-sys` features are compiled. On the server they do nothing.
#[cfg(feature = "hydrate")]
fn property(target: &wasm_bindgen::JsValue, name: &str) -> Option<wasm_bindgen::JsValue> {
    js_sys::Reflect::get(target, &name.into()).ok().filter(|v| !v.is_undefined() && !v.is_null())
}

/// The page's origin as the browser sees it, e.g. `https://hardneg.example.org`.
pub fn origin() -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        property(&js_sys::global(), "location").and_then(|l| property(&l, "origin")).and_then(|o| o.as_string())
    }
    #[cfg(not(feature = "hydrate"))]
    None
}

/// Puts `text` on the clipboard; false when the browser refuses (no HTTPS, no permission).
pub fn copy_text(text: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let clipboard = property(&js_sys::global(), "navigator").and_then(|n| property(&n, "clipboard"));
        let Some(clipboard) = clipboard else { return false };
        let Some(write) = property(&clipboard, "writeText").and_then(|f| f.dyn_into::<js_sys::Function>().ok()) else {
            return false;
        };
        write.call1(&clipboard, &text.into()).is_ok()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = text;
        false
    }
}
