-- What the services need from a superuser, once per database: one role and one schema per
-- service, each role able to touch only its own schemas. Idempotent: compose runs it when its
-- Postgres volume is created (docker-entrypoint-initdb.d), the k8s `postgres-init` Job on every
-- apply (infra/k8s/base/postgres-init.sql is a copy written by `npm run generate`).
-- Passwords are not set here: compose's dev-passwords.sql and the k8s Job (from the services'
-- DATABASE_URLs) set them.

-- Extensions the services' migrations ask for (a service role may not create them).
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;

REVOKE CREATE ON SCHEMA public FROM PUBLIC;

DO $$
DECLARE
  svc text;
BEGIN
  EXECUTE format('REVOKE ALL ON DATABASE %I FROM PUBLIC', current_database());
  FOREACH svc IN ARRAY ARRAY[%{namesQuoted}] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = svc) THEN
      EXECUTE format('CREATE ROLE %I LOGIN', svc);
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), svc);
    -- The shared extensions' functions and operators live in public: usage only, no create.
    EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', svc);
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', svc, svc);
    -- The service's webhook delivery queue (graphile-worker) lives beside its schema; the service
    -- installs its tables there (it may not create schemas itself).
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', svc || '_worker', svc);
  END LOOP;
END $$;
