//! Every Cypher statement the graph services run, one file each under `cypher/`.

macro_rules! cypher {
    ($($name:ident => $file:literal),* $(,)?) => {
        $( pub const $name: &str = include_str!(concat!("../../cypher/", $file, ".cypher")); )*
    };
}

cypher! {
    BUCKET_ENSURE_DEFAULT => "bucket_ensure_default",
    BUCKET_CREATE => "bucket_create",
    BUCKET_GET => "bucket_get",
    BUCKET_LIST_AFTER => "bucket_list_after",
    BUCKET_LIST_BEFORE => "bucket_list_before",
    BUCKET_COUNT => "bucket_count",
    BUCKET_UPDATE => "bucket_update",
    BUCKET_DELETE => "bucket_delete",
    BUCKET_DELETE_BLOCKERS => "bucket_delete_blockers",
    ENTITY_TYPE_CREATE => "entity_type_create",
    ENTITY_TYPE_GET => "entity_type_get",
    ENTITY_TYPE_LIST_AFTER => "entity_type_list_after",
    ENTITY_TYPE_LIST_BEFORE => "entity_type_list_before",
    ENTITY_TYPE_COUNT => "entity_type_count",
    ENTITY_TYPE_ANCESTORS => "entity_type_ancestors",
    ENTITY_TYPE_UPDATE => "entity_type_update",
    ENTITY_TYPE_DELETE => "entity_type_delete",
}
