-- API keys, shared by every server on the database. Store-wide (a key may span spaces):
-- a reference table when the schema is distributed by space. Only the SHA-256 of a token
-- is stored.
CREATE TABLE api_keys(
    id text COLLATE "C" PRIMARY KEY,
    hash bytea NOT NULL,
    spaces text[] NOT NULL,
    read_only boolean NOT NULL,
    label text,
    created_at text NOT NULL,
    revoked_at text);
