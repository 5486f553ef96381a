-- Who a bearer token is (organization, plan, scopes, validity) is cached for a few seconds by each
-- API node (src/mcp/auth.ts). Every change that can alter or end that answer notifies channel
-- auth_changed when its transaction commits, and every node clears its cache on it: revoking a key
-- or a token, revoking a grant, changing a plan or deleting a member reaches every node at once.
-- Only the columns that matter fire (api_keys.last_used_at and organizations.credits change all
-- the time and must not).
CREATE OR REPLACE FUNCTION notify_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('auth_changed', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_auth_changed AFTER UPDATE OF revoked_at, expires_at, scopes, org_id OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
--> statement-breakpoint
CREATE TRIGGER organizations_auth_changed AFTER UPDATE OF plan OR DELETE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
--> statement-breakpoint
CREATE TRIGGER oauth_tokens_auth_changed AFTER UPDATE OF revoked_at, expires_at, scopes OR DELETE ON oauth_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
--> statement-breakpoint
CREATE TRIGGER oauth_grants_auth_changed AFTER UPDATE OF revoked_at, scopes, org_id, member_id OR DELETE ON oauth_grants
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
--> statement-breakpoint
CREATE TRIGGER members_auth_changed AFTER UPDATE OF org_id OR DELETE ON members
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
