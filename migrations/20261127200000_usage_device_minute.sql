-- Issue 48: charts per GPU or MIG instance of a live session. The sampler
-- writes each device's minute beside the booking's (`usage_minute` keeps
-- the mean over its devices): engine busy (GR_ENGINE_ACTIVE, else
-- GPU_UTIL / 100) and memory used. Kept as long as the minutes (14 days).
CREATE TABLE usage_device_minute (
    booking_id      uuid NOT NULL REFERENCES booking (id) ON DELETE CASCADE,
    device          text NOT NULL,
    minute          timestamptz NOT NULL,
    busy            real NOT NULL CONSTRAINT usage_device_minute_busy_fraction CHECK (busy >= 0 AND busy <= 1),
    memory_used_mib real NOT NULL,
    PRIMARY KEY (booking_id, device, minute)
);
CREATE INDEX usage_device_minute_by_minute ON usage_device_minute (minute);
