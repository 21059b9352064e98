// Whether a run's output was linked already: a resumed call must not link it twice.
MATCH (m:Mention {transformationID: $transformationID})
USING INDEX SEEK m:Mention(transformationID)
WHERE m.accountID = $accountID AND m.environment = $environment
RETURN count(m) AS linked
