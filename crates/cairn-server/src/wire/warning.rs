//! What a read answered but wants its caller to know, as the wire writes it (a type of
//! its own: every read's answer carries it).
use serde::Serialize;
use utoipa::ToSchema;

/// Something a read answered but wants its caller to know (see `cairn::Warning`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Warning)]
pub struct WarningOut {
    /// Stable: unknown_filter_key.
    pub code: String,
    /// The request's field it is about, a JSON path (`filter.userid`).
    pub field: String,
    pub message: String,
}

impl From<cairn::Warning> for WarningOut {
    fn from(w: cairn::Warning) -> Self {
        let cairn::Warning {
            code,
            field,
            message,
        } = w;
        Self {
            code,
            field,
            message,
        }
    }
}

/// The warnings of a read, as the wire writes them.
pub fn warnings_out(ws: Vec<cairn::Warning>) -> Vec<WarningOut> {
    ws.into_iter().map(WarningOut::from).collect()
}
