-- Each call's input files without their content (`inputType`, `itemReferenceId`, as the input
-- names them), kept beside the input: a page of 100 listed calls read every input whole (base64 files, a connector's
-- up to 50 MB each) and every plan (up to 4 MiB) only to show each file's type.
ALTER TABLE calls ADD COLUMN input_summary TEXT;
UPDATE calls SET input_summary = (
    SELECT json_group_array(json_object(
        'inputType', json_extract(f.value, '$.inputType'),
        'itemReferenceId', json_extract(f.value, '$.itemReferenceId')))
    FROM json_each(calls.input) AS f)
WHERE json_valid(input);
