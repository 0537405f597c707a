-- compose only: the development passwords its DATABASE_URLs use (set real ones anywhere else).
ALTER ROLE tasks PASSWORD 'tasks';
ALTER ROLE meetings PASSWORD 'meetings';
ALTER ROLE clipboard PASSWORD 'clipboard';
