//! Where a document first names each of some surfaces: the first of its texts (sections or
//! pages, in reading order) that contains it, in any case.
//!
//! One pass over the texts for all the surfaces together (Aho–Corasick): a run links up to a
//! thousand mentions of a text of up to 32 MiB, and looking for each surface on its own read
//! (and lower-cased) the whole text once per mention.

use aho_corasick::AhoCorasick;

/// For each surface, the index of the first text naming it (any case), if one does.
pub fn first_places<'a>(surfaces: &[&str], texts: impl IntoIterator<Item = &'a str>) -> Vec<Option<usize>> {
    let mut places = vec![None; surfaces.len()];
    let wanted: Vec<String> = surfaces.iter().map(|s| s.to_lowercase()).collect();
    if wanted.iter().any(String::is_empty) {
        // An empty surface is in every text; none is looked for (linking trims them away).
        return places;
    }
    let Ok(matcher) = AhoCorasick::new(&wanted) else { return places };
    let mut left = surfaces.len();
    for (index, text) in texts.into_iter().enumerate() {
        for found in matcher.find_overlapping_iter(&text.to_lowercase()) {
            let place = &mut places[found.pattern().as_usize()];
            if place.is_none() {
                *place = Some(index);
                left -= 1;
            }
        }
        if left == 0 {
            break;
        }
    }
    places
}

#[cfg(test)]
mod tests {
    use super::first_places;

    #[test]
    fn each_surface_is_placed_in_the_first_text_naming_it_in_any_case() {
        let texts = ["Invoice INV-1", "Terms of ACME Corp.", "acme corp again, and Initech"];
        let places = first_places(&["acme corp.", "Initech", "INV-1", "Nowhere Ltd", "acme"], texts);
        assert_eq!(places, vec![Some(1), Some(2), Some(0), None, Some(1)]);
    }

    #[test]
    fn a_surface_named_twice_or_inside_another_keeps_its_first_place() {
        let places = first_places(&["Acme", "Acme Corp"], ["x Acme Corp", "Acme"]);
        assert_eq!(places, vec![Some(0), Some(0)]);
    }
}
