-- Each function version's output schema beside its body: a view's columns are checked
-- against the schemas of its functions' versions on every table or chart read, and reading
-- them out of the bodies (up to 2 MB each, every version) parsed them all each time.
ALTER TABLE function_versions ADD COLUMN output_schema TEXT;
UPDATE function_versions SET output_schema = NULLIF(CAST(CAST(body AS jsonb) -> 'outputSchema' AS TEXT), 'null');
