//! The inspector: static assets (`crates/cairn-server/ui/`, plain ES modules, CSS and
//! HTML, no build step) built into the binary and served at `/ui`. The pages hold no
//! secret and no data: they sign in with an API key in the browser and call `/v1` like
//! any client, so the server's per-space checks are the inspector's too.
//!
//! Every answer carries a strict Content-Security-Policy: scripts, styles and requests
//! only from this origin, no inline script, no frames, nothing from elsewhere.
use crate::error::ApiError;
use crate::wire::doc::{Forbidden, NotFound};
use axum::extract::Path;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// The policy of every inspector answer.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// (file name, content type, bytes) of every asset.
const ASSETS: &[(&str, &str, &[u8])] = &[
    ("index.html", HTML, include_bytes!("../ui/index.html")),
    ("style.css", CSS, include_bytes!("../ui/style.css")),
    ("app.js", JS, include_bytes!("../ui/app.js")),
    ("api.js", JS, include_bytes!("../ui/api.js")),
    ("dom.js", JS, include_bytes!("../ui/dom.js")),
    ("spaces.js", JS, include_bytes!("../ui/spaces.js")),
    ("sessions.js", JS, include_bytes!("../ui/sessions.js")),
    ("facts.js", JS, include_bytes!("../ui/facts.js")),
    ("profiles.js", JS, include_bytes!("../ui/profiles.js")),
    (
        "trajectories.js",
        JS,
        include_bytes!("../ui/trajectories.js"),
    ),
    ("recall.js", JS, include_bytes!("../ui/recall.js")),
    ("memories.js", JS, include_bytes!("../ui/memories.js")),
    ("entities.js", JS, include_bytes!("../ui/entities.js")),
    ("favicon.svg", SVG, include_bytes!("../ui/favicon.svg")),
];

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const SVG: &str = "image/svg+xml";

fn asset(name: &str) -> Result<Response, ApiError> {
    let Some((_, kind, body)) = ASSETS.iter().find(|(n, _, _)| *n == name) else {
        return Err(ApiError::not_found(
            "not_found",
            format!("no inspector file {name:?}"),
        ));
    };
    let mut resp = (*body).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // A new binary brings new assets: revalidate rather than run stale modules.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(resp)
}

#[utoipa::path(
    get,
    path = "/ui",
    operation_id = "inspector",
    tag = "inspector",
    summary = "The inspector",
    description = "The memory inspector: a page that signs in with an API key (kept in the tab's sessionStorage, sent as a Bearer header) and browses what that key may see through this API. Built into the binary; no key needed to load it, none of its files hold data.",
    responses(
        (status = 200, description = "The page (HTML), with a strict Content-Security-Policy", body = String, content_type = "text/html"),
        (status = 403, response = Forbidden),
    ),
    security(()),
)]
pub async fn index() -> Result<Response, ApiError> {
    asset("index.html")
}

#[utoipa::path(
    get,
    path = "/ui/",
    operation_id = "inspectorSlash",
    tag = "inspector",
    summary = "The inspector (trailing slash)",
    description = "Same as `/ui`.",
    responses(
        (status = 200, description = "The page (HTML), with a strict Content-Security-Policy", body = String, content_type = "text/html"),
        (status = 403, response = Forbidden),
    ),
    security(()),
)]
pub async fn index_slash() -> Result<Response, ApiError> {
    index().await
}

#[utoipa::path(
    get,
    path = "/ui/{file}",
    operation_id = "inspectorFile",
    tag = "inspector",
    summary = "An inspector file",
    description = "A script module, the style sheet or the icon of the inspector, with the same Content-Security-Policy.",
    params(("file" = String, Path, description = "File name, e.g. `app.js`.")),
    responses(
        (status = 200, description = "The file", content(
            (String = "text/javascript"),
            (String = "text/css"),
            (String = "image/svg+xml"),
        )),
        (status = 404, response = NotFound),
        (status = 403, response = Forbidden),
    ),
    security(()),
)]
pub async fn file(Path(name): Path<String>) -> Result<Response, ApiError> {
    asset(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_an_asset_imports_is_served() {
        for (name, kind, body) in ASSETS {
            if *kind == SVG {
                continue;
            }
            let text = std::str::from_utf8(body).expect("assets are UTF-8");
            for line in text.lines() {
                let Some(rest) = line.split(" from \"./").nth(1) else {
                    continue;
                };
                let imported = rest.split('"').next().unwrap_or_default();
                assert!(
                    ASSETS.iter().any(|(n, _, _)| *n == imported),
                    "{name} imports {imported}, which is not served"
                );
            }
            assert!(
                !text.contains("http://") && !text.contains("https://"),
                "{name} names another origin"
            );
        }
    }
}
