//! Noise in names: words of a name field that are not the name. Company names as exported
//! carry addresses, postcodes, countries and legal forms ("sanofi 54 rue la boetie 75008
//! france"); such a word is common across unrelated names or rare only because it is an
//! address, and either way says nothing about which organisation a name is. They weigh as
//! what they are: never as the rare word two names share (see [`super::rarity`]); a shared
//! postcode is no more evidence that two names are one organisation than a shared country.
//!
//! The lists are small and built in, lower case and accent-free as names normalise:
//! - street words: the commonest of the USPS Publication 28 street suffixes (appendix C1)
//!   and secondary unit designators (C2), and their everyday French, German, Spanish,
//!   Italian, Portuguese and Dutch counterparts;
//! - street names written as one word, known by the street word they end in (German
//!   'kitzmannallee', Dutch 'merlesingel', Swedish 'grangatan', Finnish 'elimaentie'): how
//!   most streets of those countries are named, and what few company names end in;
//! - postcodes: 4 to 6 digits, and the Dutch four digits and two letters ('3814aq');
//! - countries: ISO 3166-1 English short names that are one word, the usual native
//!   one-word names of the larger economies, and common abbreviations;
//! - legal forms: the abbreviations of the ISO 20275 entity legal forms most often met
//!   ([`crate::graph::legal_forms`], canon's one list).

use crate::graph::legal_forms;

/// What a word of a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Name,
    /// Digits only, up to 3 (a house number, a floor).
    Number,
    /// Digits only, 4 to 6 (most countries' postcodes), or four digits and two letters (the
    /// Netherlands').
    Postcode,
    Street,
    Country,
    Legal,
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Name => "name",
            Kind::Number => "number",
            Kind::Postcode => "postcode",
            Kind::Street => "street",
            Kind::Country => "country",
            Kind::Legal => "legal form",
        }
    }
}

const STREET: &[&str] = &[
    // USPS Publication 28, C1 and C2 (the commonest).
    "street",
    "st",
    "road",
    "rd",
    "avenue",
    "ave",
    "av",
    "boulevard",
    "blvd",
    "lane",
    "ln",
    "drive",
    "dr",
    "court",
    "ct",
    "place",
    "pl",
    "square",
    "sq",
    "highway",
    "hwy",
    "parkway",
    "pkwy",
    "terrace",
    "ter",
    "plaza",
    "suite",
    "ste",
    "floor",
    "fl",
    "building",
    "bldg",
    "unit",
    "apt",
    "room",
    "rm",
    "po",
    "box",
    // French, German, Spanish, Italian, Portuguese, Dutch.
    "rue",
    "allee",
    "chemin",
    "quai",
    "cours",
    "impasse",
    "strasse",
    "str",
    "platz",
    "weg",
    "gasse",
    "ring",
    "calle",
    "avenida",
    "paseo",
    "carrer",
    "via",
    "viale",
    "piazza",
    "corso",
    "largo",
    "rua",
    "praca",
    "straat",
    "laan",
    "plein",
    "gracht",
    "cedex",
    "travessa",
];

/// The street words that end one-word street names (German, Dutch, Swedish, Finnish, Danish
/// and Norwegian), each with the letters a word so ending must have before it. English words
/// end in some of them too ('brigade', 'renegade', 'sweetie', and 'ring' of 'engineering',
/// which is not here): only words longer than those count.
const STREET_ENDINGS: &[(&str, usize)] = &[
    ("strasse", 4),
    ("allee", 4),
    ("platz", 4),
    ("gasse", 4),
    ("weg", 4),
    ("damm", 4),
    ("straat", 4),
    ("laan", 4),
    ("plein", 4),
    ("gracht", 4),
    ("singel", 4),
    ("kade", 4),
    ("steeg", 4),
    ("dreef", 4),
    ("gatan", 4),
    ("vagen", 4),
    ("torget", 4),
    ("katu", 4),
    ("kuja", 4),
    ("tie", 5),
    ("vej", 4),
    ("gade", 5),
    ("veien", 4),
    ("gata", 4),
];

const COUNTRY: &[&str] = &[
    "afghanistan",
    "albania",
    "algeria",
    "andorra",
    "angola",
    "argentina",
    "armenia",
    "australia",
    "austria",
    "azerbaijan",
    "bahrain",
    "bangladesh",
    "belarus",
    "belgium",
    "bolivia",
    "brazil",
    "bulgaria",
    "cambodia",
    "cameroon",
    "canada",
    "chile",
    "china",
    "colombia",
    "croatia",
    "cuba",
    "cyprus",
    "czechia",
    "denmark",
    "ecuador",
    "egypt",
    "estonia",
    "ethiopia",
    "finland",
    "france",
    "georgia",
    "germany",
    "ghana",
    "greece",
    "guatemala",
    "hungary",
    "iceland",
    "india",
    "indonesia",
    "iran",
    "iraq",
    "ireland",
    "israel",
    "italy",
    "jamaica",
    "japan",
    "jordan",
    "kazakhstan",
    "kenya",
    "kuwait",
    "latvia",
    "lebanon",
    "lithuania",
    "luxembourg",
    "malaysia",
    "malta",
    "mexico",
    "moldova",
    "monaco",
    "mongolia",
    "morocco",
    "nepal",
    "netherlands",
    "nigeria",
    "norway",
    "oman",
    "pakistan",
    "panama",
    "paraguay",
    "peru",
    "philippines",
    "poland",
    "portugal",
    "qatar",
    "romania",
    "russia",
    "serbia",
    "singapore",
    "slovakia",
    "slovenia",
    "spain",
    "sweden",
    "switzerland",
    "taiwan",
    "tanzania",
    "thailand",
    "tunisia",
    "turkey",
    "turkiye",
    "ukraine",
    "uruguay",
    "uzbekistan",
    "venezuela",
    "vietnam",
    "zambia",
    "zimbabwe",
    // Native names and abbreviations.
    "deutschland",
    "espana",
    "italia",
    "nederland",
    "schweiz",
    "suisse",
    "svizzera",
    "osterreich",
    "belgique",
    "belgie",
    "sverige",
    "norge",
    "danmark",
    "suomi",
    "polska",
    "brasil",
    "nippon",
    "usa",
    "uk",
    "uae",
];

/// What a (normalised) word of a name is.
pub fn kind(word: &str) -> Kind {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_digit()) {
        return if (4..=6).contains(&word.len()) { Kind::Postcode } else { Kind::Number };
    }
    if is_dutch_postcode(word) {
        return Kind::Postcode;
    }
    if STREET.contains(&word) || is_street_name(word) {
        Kind::Street
    } else if COUNTRY.contains(&word) {
        Kind::Country
    } else if legal_forms::is_legal_word(word) {
        Kind::Legal
    } else {
        Kind::Name
    }
}

/// Countries whose English short names are two words, the first of which is a name word
/// alone ('united', 'new', 'south').
const TWO_WORD_COUNTRIES: &[(&str, &str)] = &[
    ("united", "states"),
    ("united", "kingdom"),
    ("united", "arab"),
    ("new", "zealand"),
    ("south", "africa"),
    ("south", "korea"),
    ("hong", "kong"),
    ("saudi", "arabia"),
    ("czech", "republic"),
    ("costa", "rica"),
];

/// Whether `first` and `second`, in this order, name a country ('united kingdom').
pub fn is_two_word_country(first: &str, second: &str) -> bool {
    TWO_WORD_COUNTRIES.contains(&(first, second))
}

/// '3814aq': four digits, then two letters.
fn is_dutch_postcode(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() == 6
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4..].iter().all(u8::is_ascii_lowercase)
}

/// A one-word street name: a word ending in a street word of [`STREET_ENDINGS`] after as
/// many letters as it says or more.
fn is_street_name(word: &str) -> bool {
    STREET_ENDINGS
        .iter()
        .any(|(ending, before)| word.len() >= ending.len() + before && word.ends_with(ending))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_country_and_legal_words_are_told_from_name_words() {
        let words: Vec<(&str, Kind)> =
            "sanofi 54 rue la boetie 75008 france sa".split_whitespace().map(|w| (w, kind(w))).collect();
        assert_eq!(
            words,
            vec![
                ("sanofi", Kind::Name),
                ("54", Kind::Number),
                ("rue", Kind::Street),
                ("la", Kind::Name),
                ("boetie", Kind::Name),
                ("75008", Kind::Postcode),
                ("france", Kind::Country),
                ("sa", Kind::Legal),
            ]
        );
        assert_eq!(kind("3m"), Kind::Name, "letters and digits together are a name");
        assert_eq!(kind("3814aq"), Kind::Postcode, "a Dutch postcode");
        for street in ["kitzmannallee", "merlesingel", "grangatan", "bjorkvagen", "elimaentie", "lyngbyvej"] {
            assert_eq!(kind(street), Kind::Street, "{street}");
        }
        for name in ["engineering", "sweetie", "brigade", "renegade", "norweg", "necktie", "volkswagen"] {
            assert_ne!(kind(name), Kind::Street, "{name}");
        }
    }
}
