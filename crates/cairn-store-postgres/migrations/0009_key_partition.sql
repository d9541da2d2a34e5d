-- A key pinned to an end-user partition: the canonical JSON of its partition keys and
-- values (`{"user_id":"u1"}`); every request through the key is held inside it. NULL: the
-- key sees its spaces whole.
ALTER TABLE api_keys ADD COLUMN partition text;
