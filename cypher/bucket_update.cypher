// Renames and/or re-describes a live bucket; a name taken by another live bucket of the
// tenant fails on the liveNameKey constraint.
MATCH (b:Bucket {id: $id, accountID: $accountID, environment: $environment})
USING INDEX SEEK b:Bucket(id)
WHERE b.deletedAt IS NULL
SET b.name = coalesce($name, b.name),
    b.liveNameKey = coalesce($liveNameKey, b.liveNameKey),
    b.description = coalesce($description, b.description),
    b.updatedAt = $now
RETURN b.id AS bucketID, b.name AS name, b.description AS description, b.isDefault AS isDefault, b.createdAt AS createdAt, b.updatedAt AS updatedAt
