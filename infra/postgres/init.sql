-- Runs once, as the superuser, when the compose Postgres volume is created.
-- One role and one schema per service; each role can touch only its own schema.
-- Passwords come from the compose file's defaults (override them in any real deployment).

-- Extensions the services' migrations ask for (a service role may not create them).
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;

REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE ALL ON DATABASE product FROM PUBLIC;

CREATE ROLE tasks LOGIN PASSWORD 'tasks';
CREATE ROLE meetings LOGIN PASSWORD 'meetings';
CREATE ROLE clipboard LOGIN PASSWORD 'clipboard';

GRANT CONNECT ON DATABASE product TO tasks, meetings, clipboard;
-- The shared extension's functions and operators live in public: usage only, no create.
GRANT USAGE ON SCHEMA public TO tasks, meetings, clipboard;

CREATE SCHEMA tasks AUTHORIZATION tasks;
CREATE SCHEMA meetings AUTHORIZATION meetings;
CREATE SCHEMA clipboard AUTHORIZATION clipboard;

-- Each service's webhook delivery queue (graphile-worker) lives beside its schema; the service
-- installs its tables there at start-up (it may not create schemas itself).
CREATE SCHEMA tasks_worker AUTHORIZATION tasks;
CREATE SCHEMA meetings_worker AUTHORIZATION meetings;
CREATE SCHEMA clipboard_worker AUTHORIZATION clipboard;
