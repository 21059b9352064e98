-- Each function version's output schema beside its body: a view's columns are checked
-- against the schemas of its functions' versions on every table or chart read, and reading
-- them out of the bodies (up to 2 MB each, every version) parsed them all each time.
ALTER TABLE function_versions ADD COLUMN output_schema TEXT;
UPDATE function_versions SET output_schema = NULLIF(CAST(CAST(REPLACE(body, '\u0000', '\ufffd') AS json) -> 'outputSchema' AS TEXT), 'null');
-- PostgreSQL's JSON functions refuse the escape of a NUL character (`\u0000`), even in a key
-- they only pass over; it is read as U+FFFD here (an escape of the same shape, so the text
-- stays JSON whatever precedes it). Versions written from now on keep it as written.
