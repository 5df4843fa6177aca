"""Parses an ICS feed (stdin) with PyPI `icalendar` and prints what a
calendar client would take from it, as JSON. Exits non-zero on any
component error the parser reports."""

import json
import sys

import icalendar

calendar = icalendar.Calendar.from_ical(sys.stdin.buffer.read())
errors = [(c.name, c.errors) for c in calendar.walk() if getattr(c, "errors", None)]
if errors:
    sys.exit(f"component errors: {errors}")


def when(value):
    dt = value.dt
    return {
        "iso": dt.isoformat(),
        "utc": dt.tzinfo is not None and dt.utcoffset().total_seconds() == 0,
        "tzid": value.params.get("TZID"),
    }


refresh = calendar.get("REFRESH-INTERVAL")
events = []
for event in calendar.walk("VEVENT"):
    events.append(
        {
            "uid": str(event["UID"]),
            "dtstamp": when(event["DTSTAMP"]),
            "dtstart": when(event["DTSTART"]),
            "dtend": when(event["DTEND"]),
            "sequence": int(event.get("SEQUENCE", 0)),
            "status": str(event["STATUS"]),
            "summary": str(event["SUMMARY"]),
            "description": str(event["DESCRIPTION"]),
        }
    )
print(
    json.dumps(
        {
            "version": str(calendar["VERSION"]),
            "prodid": str(calendar["PRODID"]),
            "method": str(calendar["METHOD"]) if "METHOD" in calendar else None,
            "refresh_interval": refresh.to_ical().decode() if refresh is not None else None,
            "refresh_value": refresh.params.get("VALUE") if refresh is not None else None,
            "published_ttl": str(calendar["X-PUBLISHED-TTL"]) if "X-PUBLISHED-TTL" in calendar else None,
            "time_zone": str(calendar["X-WR-TIMEZONE"]) if "X-WR-TIMEZONE" in calendar else None,
            "events": events,
        }
    )
)
