//! What the OpenAPI document says about requests beyond their bodies: the path
//! parameters of the routes, the problem answers they share, and the schema of the
//! metadata filter. Read by the routes' `#[utoipa::path]` attributes.
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::IntoParams;

/// `{space}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct SpacePath {
    // Its pattern is stated from `cairn::bounds::MAX_SPACE_LEN` by `routes/openapi.rs`.
    /// Space name (one per user, agent or tenant).
    space: String,
}

/// `{session}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct SessionPath {
    /// Session id (percent-encode `/`).
    session: String,
}

/// `{message}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct MessagePath {
    message: String,
}

/// `{id}` of a memory.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct IdPath {
    /// Memory (unit) id, e.g. `round:s1:0`.
    id: String,
}

/// `{speaker}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct SpeakerPath {
    /// Speaker name.
    speaker: String,
}

/// `{name}` of an entity.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct EntityPath {
    /// Entity name or alias.
    name: String,
}

/// `{index}` of a trajectory state.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct StatePath {
    /// 0-based state index.
    index: String,
}

/// `{id}` of a trajectory.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct TrajectoryPath {
    /// Trajectory id.
    id: String,
}

/// The `Idempotency-Key` header of the writes (read by `routes::idempotency::write_options`).
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct IdempotencyHeader {
    /// A key the client chooses for this request (e.g. a UUID), sent again on every retry of it. Within 24 hours, a request repeating a key with the same body is answered with the first answer (same status and body, header `Idempotency-Replayed: true`) and writes nothing; the same key with a different body is refused (422 `idempotency_key_reused`).
    #[param(
        rename = "Idempotency-Key",
        required = false,
        nullable = false,
        min_length = 1,
        max_length = 255,
        pattern = "^[\\x21-\\x7e]+$"
    )]
    idempotency_key: Option<String>,
}

/// The metadata filter: free JSON the library parses (`cairn::parse_filter`), so its
/// schema is this description rather than a type's fields.
pub struct FilterDoc;

impl utoipa::PartialSchema for FilterDoc {
    fn schema() -> RefOr<utoipa::openapi::Schema> {
        let description = "Explicit `{\"field\":\"metadata.user_id\",\"op\":\"eq\",\"value\":\"u1\"}` combined with `and`/`or`/`not`, or shorthand `{\"user_id\":\"u1\",\"score\":{\"gte\":3}}`. Operators: eq ne gt gte lt lte in nin contains. Fields: session_id, group, occurred_at, recorded_at, metadata.<path>; any other name means metadata.<name>.";
        RefOr::T(utoipa::openapi::Schema::Object(
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::Object)
                .description(Some(description))
                .build(),
        ))
    }
}

impl utoipa::ToSchema for FilterDoc {
    fn name() -> std::borrow::Cow<'static, str> {
        "Filter".into()
    }
}

/// Problem answers (`application/problem+json`, schema `Problem`), one component each,
/// so each route lists the ones it can give by name.
macro_rules! problem_responses {
    ($($name:ident => $description:expr;)*) => {$(
        pub struct $name;
        impl<'s> utoipa::ToResponse<'s> for $name {
            fn response() -> (&'s str, RefOr<Response>) {
                let content = ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("Problem")))
                    .build();
                let response = ResponseBuilder::new()
                    .description($description)
                    .content("application/problem+json", content)
                    .build();
                (stringify!($name), RefOr::T(response))
            }
        }
    )*};
}

problem_responses! {
    BadRequest => "Malformed JSON (`malformed_json`) or unreadable body";
    Unauthorized => "Missing, unknown or revoked key (`unauthorized`)";
    Forbidden => "The key may not touch this space (`forbidden`) or is read-only (`read_only_key`)";
    NotFound => "`space_not_found`, `not_found`, `memory_not_found`";
    Conflict => "The input contradicts what is stored (`conflict`): a stored message id sent with other content, a session header that differs from the stored one, a trajectory id stored with other states. `field` names the part in conflict; nothing was written.";
    TooLarge => "The request asks for more work than one request may (`payload_too_large`: the body; `batch_too_large`: sessions or trajectories; `too_much_work`: messages and states; `text_too_long`: one text field; `session_too_large`: the session it writes to would hold more than 8 MiB of messages, `cairn::bounds::MAX_SESSION_BYTES`, so continue in a new session). `field` names what to split; send it in several requests.";
    UnsupportedMediaType => "Body is not JSON (`unsupported_media_type`)";
    Invalid => "Well-formed but invalid: wrong type or unknown field (`invalid_field`), failed validation (`invalid_input`), limits (`batch_too_large`, `text_too_long`); `field` names the input `field` is the JSON path of the field at fault (`messages[2].text`, `sessions[1].date`, `filter.and[0].op`); `idempotency_key_reused` when an `Idempotency-Key` came with a different body.";
    Internal => "Server failure (`internal`); details only in the server log";
}
