-- compose only: the development passwords its DATABASE_URLs use (set real ones anywhere else).
%{each}
ALTER ROLE %{name} PASSWORD '%{name}';
%{end}
