//! Email deliveries over SMTP (`--smtp-url`: `smtp://host:port` plain,
//! `smtp://host:587?tls=required` for STARTTLS, `smtps://host` for TLS,
//! credentials as `smtp://user:pass@host`). Plain text with an HTML
//! alternative; the delivery's id is the `Message-ID` and the
//! `X-Berth-Delivery` header, so a resend is recognisably the same mail.

use super::message::Message;
use lettre::message::header::{Header, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

#[derive(Clone)]
pub struct Mail {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The portal's host, for Message-IDs.
    host: String,
}

#[derive(Clone)]
struct DeliveryHeader(String);

impl Header for DeliveryHeader {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("X-Berth-Delivery")
    }

    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Self(s.into()))
    }

    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), self.0.clone())
    }
}

impl Mail {
    /// Refused with the flag at fault and why.
    pub fn new(url: &str, from: &str, host: &str) -> Result<Self, String> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| format!("--smtp-url: {e}"))?
            .timeout(Some(std::time::Duration::from_secs(20)))
            .build();
        let from: Mailbox = from.parse().map_err(|e| format!("--smtp-from: `{from}` is not an address: {e}"))?;
        Ok(Self { transport, from, host: host.to_string() })
    }

    pub async fn send(&self, to: &str, to_name: &str, delivery: uuid::Uuid, message: &Message) -> Result<(), String> {
        let to = Mailbox::new(Some(to_name.to_string()), to.parse().map_err(|_| format!("`{to}` is not an address"))?);
        let email = lettre::Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(&message.subject)
            .message_id(Some(format!("<{delivery}@{}>", self.host)))
            .header(DeliveryHeader(delivery.to_string()))
            .multipart(MultiPart::alternative_plain_html(message.text.clone(), message.html.clone()))
            .map_err(|e| e.to_string())?;
        self.transport.send(email).await.map(|_| ()).map_err(|e| e.to_string())
    }
}
