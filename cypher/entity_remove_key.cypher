// Soft-deletes a customer_defined or sme_approved synonym: the key is released (so the name
// can resolve elsewhere) and kept as formerKey.
MATCH (k:Key {id: $synonymID, entityID: $entityID, accountID: $accountID, environment: $environment})
USING INDEX SEEK k:Key(id)
WHERE k.key IS NOT NULL AND k.source IN ['customer_defined', 'sme_approved']
SET k.formerKey = k.key, k.key = null, k.deletedAt = $now
RETURN k.id AS synonymID, k.text AS text
