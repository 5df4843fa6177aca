//! The server fns' answer encoding: JSON, as `server_fn`'s own `Json`, but
//! decoded from text.
//!
//! Why: the browser decodes every answer type twice over — as a server fn's
//! answer (`server_fn` reads JSON from bytes) and as a resource's data in the
//! page's HTML on hydration (`codee` reads it from a string). serde_json
//! compiles its deserializer once per type *and* per reader, so each type was
//! in the WASM twice. Reading answers as text too leaves one copy (a tenth of
//! the raw WASM, 4 % after brotli). The wire format is unchanged.

use leptos::server_fn::{
    codec::Post, error::ServerFnErrorErr, Bytes, ContentType, Decodes, Encodes, Format, FormatType,
};
use serde::{de::DeserializeOwned, Serialize};

/// JSON read through `serde_json::from_str`, the reader resources use.
pub struct JsonTextEncoding;

/// What every server fn answers with (`#[server(output = JsonText)]`).
pub type JsonText = Post<JsonTextEncoding>;

impl ContentType for JsonTextEncoding {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for JsonTextEncoding {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for JsonTextEncoding {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: DeserializeOwned> Decodes<T> for JsonTextEncoding {
    type Error = ServerFnErrorErr;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        let text = std::str::from_utf8(&bytes).map_err(|e| ServerFnErrorErr::Deserialization(e.to_string()))?;
        serde_json::from_str(text).map_err(|e| ServerFnErrorErr::Deserialization(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip_as_plain_json() {
        let bytes = <JsonTextEncoding as Encodes<Vec<u32>>>::encode(&vec![1, 2]).unwrap();
        assert_eq!(&bytes[..], b"[1,2]");
        let back: Vec<u32> = <JsonTextEncoding as Decodes<Vec<u32>>>::decode(bytes).unwrap();
        assert_eq!(back, vec![1, 2]);
    }

    #[test]
    fn text_that_is_not_utf8_or_json_is_an_error_not_a_panic() {
        assert!(<JsonTextEncoding as Decodes<Vec<u32>>>::decode(Bytes::from_static(b"\xff[1]")).is_err());
        assert!(<JsonTextEncoding as Decodes<Vec<u32>>>::decode(Bytes::from_static(b"[1,")).is_err());
    }
}
