//! A number or a flag of a form flattened into a server fn's arguments.
//! A form posts text, and a flattened query string stays text (serde_qs
//! cannot tell "2" from a word once flattened); a call from the app or a
//! JSON body sends the value itself. Both are read here, so a form's type
//! can keep its numbers and flags.

use serde::{Deserialize, Deserializer};

#[derive(Deserialize)]
#[serde(untagged)]
enum Sent<T> {
    Value(T),
    Text(String),
}

/// A whole number, written as one or sent as one.
pub fn whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i32, D::Error> {
    match Sent::<i32>::deserialize(deserializer)? {
        Sent::Value(n) => Ok(n),
        Sent::Text(text) => text.trim().parse().map_err(|_| serde::de::Error::custom("must be a whole number")),
    }
}

/// A flag: `true` (a hidden field's value), `on` (a ticked checkbox's) or
/// `1` are set; empty, `false`, `off` and `0` are not.
pub fn flag<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    match Sent::<bool>::deserialize(deserializer)? {
        Sent::Value(b) => Ok(b),
        Sent::Text(text) => match text.trim() {
            "true" | "on" | "1" => Ok(true),
            "" | "false" | "off" | "0" => Ok(false),
            _ => Err(serde::de::Error::custom("must be true or false")),
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::model::BookingForm;
    use serde::Deserialize;

    /// How a flattened server fn's arguments hold the form.
    #[derive(Deserialize)]
    struct Flattened {
        #[serde(flatten)]
        form: BookingForm,
        #[serde(default)]
        idempotency_key: String,
    }

    const POSTED: &str = "pool_id=6f1c2b9e-0000-4000-8000-000000000000&kind=nvidia.com%2Fgpu&quantity=2\
        &start=2026-12-01T09%3A00&end=2026-12-01T10%3A00&tz=Europe%2FBerlin&mode=interactive";

    #[test]
    fn a_posted_form_reads_its_numbers_and_flags_when_flattened() {
        let read: Flattened = serde_qs::from_str(&format!("{POSTED}&waitlist=true&idempotency_key=k")).unwrap();
        assert_eq!((read.form.quantity, read.form.waitlist, read.idempotency_key.as_str()), (2, true, "k"));
        let read: Flattened = serde_qs::from_str(POSTED).unwrap();
        assert!(!read.form.waitlist, "left out: not waiting");
        let typed = POSTED.replace("quantity=2", "quantity=two");
        let refused = serde_qs::from_str::<Flattened>(&typed).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused.contains("must be a whole number"), "{refused}");
    }

    #[test]
    fn json_sends_the_values_themselves() {
        let form: BookingForm = serde_json::from_value(serde_json::json!({
            "pool_id": "6f1c2b9e-0000-4000-8000-000000000000", "kind": "nvidia.com/gpu", "quantity": 3,
            "start": "2026-12-01T09:00", "end": "2026-12-01T10:00", "tz": "UTC", "mode": "interactive",
            "waitlist": false
        }))
        .unwrap();
        assert_eq!((form.quantity, form.waitlist), (3, false));
    }
}
