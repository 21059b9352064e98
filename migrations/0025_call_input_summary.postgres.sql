-- Each call's input files without their content (`inputType`, `itemReferenceId`, as the input
-- names them), kept beside the input: a page of 100 listed calls read every input whole (base64 files, a connector's
-- up to 50 MB each) and every plan (up to 4 MiB) only to show each file's type.
ALTER TABLE calls ADD COLUMN input_summary TEXT;
UPDATE calls SET input_summary = (
    SELECT COALESCE(json_agg(json_build_object(
        'inputType', f.value -> 'inputType',
        'itemReferenceId', f.value -> 'itemReferenceId') ORDER BY f.n), '[]'::json)::text
    FROM json_array_elements(CAST(REPLACE(calls.input, '\u0000', '\ufffd') AS json)) WITH ORDINALITY AS f(value, n));
