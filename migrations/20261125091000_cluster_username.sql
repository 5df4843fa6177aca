-- How the cluster names each user: session RoleBindings bind this, not the
-- email Berth shows (which a provider may report unverified). Set at login
-- from the claim the API server takes usernames from (--cluster-username-claim);
-- never replaced by an unverified email. Users signed in so far were bound
-- by their email, so they keep it until their next login says otherwise.
ALTER TABLE app_user ADD COLUMN cluster_username text;
UPDATE app_user SET cluster_username = email WHERE oidc_issuer IS NOT NULL;

-- The name a session binds for a user: the cluster's name for them; a user
-- who never signed in through the identity provider (the development login,
-- an API-token user) is known to the cluster by email. NULL: bind nobody.
CREATE FUNCTION cluster_user(u app_user) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(u.cluster_username, CASE WHEN u.oidc_issuer IS NULL THEN u.email END) $$;
