-- Issue 60: a kept home and model cache are a person's in one tenant. Kept
-- per person across tenants, a co-owner of a booking in tenant B read the
-- files its owner made in tenant A. Each kept volume now names its tenant,
-- and a session is offered only its owner's volumes of the session's
-- tenant. Existing ones take the tenant of the last session that bound
-- them, else their owner's first tenant; one with neither (NULL) is
-- offered to no session and goes at the end of its retention.
ALTER TABLE home ADD COLUMN tenant_id uuid REFERENCES tenant (id) ON DELETE CASCADE;
UPDATE home h SET tenant_id = coalesce(
    (SELECT b.tenant_id FROM session_home s JOIN booking b ON b.id = s.booking_id
      WHERE s.volume = h.volume ORDER BY b.ends_at DESC LIMIT 1),
    (SELECT m.tenant_id FROM membership m JOIN tenant t ON t.id = m.tenant_id
      WHERE m.user_id = h.user_id ORDER BY t.created_at, t.slug LIMIT 1));
DROP INDEX home_one_per_person;
CREATE UNIQUE INDEX home_one_per_person
    ON home (cluster_id, user_id, tenant_id, storage_class, purpose) WHERE gone_at IS NULL;
