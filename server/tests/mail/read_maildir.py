"""Reads the Maildir that aiosmtpd's Mailbox handler filled and prints each
message as a mail client would show it, as JSON: recipients, subject (RFC
2047 decoded), X-Berth-Delivery, Message-ID, the plain-text part and
whether an HTML alternative came with it."""

import email
import email.policy
import json
import mailbox
import sys

messages = []
for message in mailbox.Maildir(sys.argv[1], factory=None, create=False):
    parsed = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    text = parsed.get_body(preferencelist=("plain",))
    html = parsed.get_body(preferencelist=("html",))
    messages.append(
        {
            "from": str(parsed["From"]),
            "to": [a.addr_spec for a in parsed["To"].addresses],
            "subject": str(parsed["Subject"]),
            "delivery": str(parsed["X-Berth-Delivery"]),
            "message_id": str(parsed["Message-ID"]),
            "text": text.get_content() if text else "",
            "html": html is not None and "<a href=" in html.get_content(),
        }
    )
print(json.dumps(messages))
