//! What a server fn refuses with, as both sides see it.

use leptos::prelude::ServerFnError;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorEncoding, ServerFnErrorErr};
use leptos::server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType};
use serde::{Deserialize, Serialize};

/// Every server fn's error. On the wire it is `server_fn`'s own error text
/// (`ServerError|…`, `Args|…`), so a script or an older page reads it as
/// before; on the page it shows as the text a person can act on, without
/// the transport's "error running server function:" prefix. On the server
/// it is made from a `ServiceError` (see `rpc::ctx`), with the REST API's
/// status and only text that is safe to show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpcError(ServerFnError);

impl RpcError {
    /// A refusal with `message` as its whole text.
    pub fn refused(message: impl Into<String>) -> Self {
        Self(ServerFnError::ServerError(message.into()))
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            ServerFnError::ServerError(message) => f.write_str(message),
            other => other.fmt(f),
        }
    }
}

impl std::error::Error for RpcError {}

impl FromServerFnError for RpcError {
    type Encoder = RpcErrorEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        Self(ServerFnError::from_server_fn_error(value))
    }
}

/// `server_fn`'s own error encoding, for `RpcError`.
pub struct RpcErrorEncoding;

impl ContentType for RpcErrorEncoding {
    const CONTENT_TYPE: &'static str = ServerFnErrorEncoding::CONTENT_TYPE;
}

impl FormatType for RpcErrorEncoding {
    const FORMAT_TYPE: Format = ServerFnErrorEncoding::FORMAT_TYPE;
}

impl Encodes<RpcError> for RpcErrorEncoding {
    type Error = std::fmt::Error;

    fn encode(output: &RpcError) -> Result<Bytes, Self::Error> {
        ServerFnErrorEncoding::encode(&output.0)
    }
}

impl Decodes<RpcError> for RpcErrorEncoding {
    type Error = String;

    fn decode(bytes: Bytes) -> Result<RpcError, Self::Error> {
        ServerFnErrorEncoding::decode(bytes).map(RpcError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_reads_as_its_text_and_travels_as_server_fns_own_format() {
        let refused = RpcError::refused("sign in first");
        assert_eq!(refused.to_string(), "sign in first");
        let wire = refused.ser();
        assert_eq!(&wire[..], b"ServerError|sign in first");
        assert_eq!(RpcError::de(wire), refused);
    }

    #[test]
    fn transport_failures_keep_their_kind() {
        let args = RpcError::from_server_fn_error(ServerFnErrorErr::Args("quantity".into()));
        assert!(args.ser().starts_with(b"Args|"));
        assert!(args.to_string().contains("quantity"));
        let garbage = RpcError::de(Bytes::from_static(b"no delimiter"));
        assert!(garbage.to_string().contains("deserializing"), "{garbage}");
    }
}
