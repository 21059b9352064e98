"""Company names as a registry or a CRM exports them: a real company's name with its address,
postcode, city, country and legal form run into the one name field ("acme 12 rue de la paix
75002 paris france"), several such rows per company. The noise is generated, the names are
real.

- Names: the 2,000 companies of names.csv (vendor/companies, from company-graph) that most
  profiles link, each by the name most of them typed (lower case, as the package wrote it;
  ASCII, three characters or more).
- Each company gets a seat: a country of ten, one of that country's larger cities (a short
  built-in list: companies of one country share cities, as real ones do) and a street
  address and postcode from the PyPI package Faker (MIT) in that country's locale.
- Each company has 1 to 8 rows (a third have one: nothing to find, only to keep apart). A row
  is the name and, each by chance: the country's legal form (0.5), the seat's street (0.35),
  its postcode (0.5 with a street, 0.25 without), the city (0.5), the country's name (0.6);
  one row in ten is written at another site of the company (another street, postcode and
  city of the same country), one in ten has a typing slip (two letters swapped or one
  dropped in the name), one in twenty drops the name's last word when it has several.
- Written as people's exports are: lower case, accents and punctuation dropped.

The rows are the same on every run (one seeded generator). Writes CSV `name,company` to
stdout.

Usage: company-addresses.py names.csv > addresses.csv (Faker importable, e.g. its wheel on
PYTHONPATH)
"""

import csv
import random
import sys
import unicodedata
from collections import Counter

from faker import Faker

COUNTRIES = {
    # locale: (names written for the country, legal forms, larger cities)
    "fr_FR": (["france", "fr"], ["sa", "sas", "se"], ["paris", "lyon", "marseille", "courbevoie", "toulouse", "lille"]),
    "de_DE": (["germany", "deutschland", "de"], ["ag", "gmbh", "se", "kgaa"], ["muenchen", "berlin", "frankfurt", "hamburg", "stuttgart", "duesseldorf"]),
    "it_IT": (["italy", "italia", "it"], ["spa", "srl"], ["milano", "roma", "torino", "bologna", "napoli"]),
    "es_ES": (["spain", "espana", "es"], ["sa", "sl"], ["madrid", "barcelona", "bilbao", "valencia", "sevilla"]),
    "nl_NL": (["netherlands", "nederland", "nl"], ["nv", "bv"], ["amsterdam", "rotterdam", "den haag", "utrecht", "eindhoven"]),
    "en_GB": (["united kingdom", "uk", "england"], ["plc", "ltd", "limited"], ["london", "manchester", "birmingham", "leeds", "edinburgh"]),
    "fi_FI": (["finland", "suomi", "fi"], ["oyj", "oy"], ["helsinki", "espoo", "tampere", "oulu"]),
    "sv_SE": (["sweden", "sverige", "se"], ["ab", "publ ab"], ["stockholm", "goeteborg", "malmoe", "uppsala"]),
    "en_US": (["united states", "usa", "us"], ["inc", "corp", "llc", "co"], ["new york", "san jose", "chicago", "boston", "austin", "seattle"]),
    "pt_PT": (["portugal", "pt"], ["sa", "lda"], ["lisboa", "porto", "braga"]),
}
LOCALES = sorted(COUNTRIES)


def plain(text):
    """Lower case, accents and punctuation dropped, spaces single."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = "".join(c if c.isalnum() else " " for c in text.lower())
    return " ".join(text.split())


def best_names(path, count):
    """The `count` companies most profiles link, each with its most typed ASCII name."""
    total, best = Counter(), {}
    with open(path, newline="") as f:
        for name, company, n in list(csv.reader(f))[1:]:
            n = int(n)
            total[company] += n
            name = plain(name)
            if name.isascii() and len(name) >= 3 and (company not in best or n > best[company][1]):
                best[company] = (name, n)
    picked = [c for c, _ in total.most_common() if c in best][:count]
    return [(c, best[c][0]) for c in picked]


def site(rng, fake, locale):
    street = plain(fake.street_address())
    postcode = plain(fake.postcode())
    return street, postcode, rng.choice(COUNTRIES[locale][2])


def slip(rng, name):
    """Two neighbouring letters swapped or one dropped, in a word of three letters or more."""
    words = name.split()
    long = [i for i, w in enumerate(words) if len(w) >= 3]
    if not long:
        return name
    i = rng.choice(long)
    w = words[i]
    j = rng.randrange(1, len(w) - 1)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :] if rng.random() < 0.5 else w[:j] + w[j + 1 :]
    return " ".join(words)


def rows_of(rng, fake, locale, name):
    countries, forms, _ = COUNTRIES[locale]
    seat = site(rng, fake, locale)
    form = rng.choice(forms)
    count = rng.choice([1, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8])
    for _ in range(count):
        street, postcode, city = site(rng, fake, locale) if rng.random() < 0.1 else seat
        words = name
        if rng.random() < 0.1:
            words = slip(rng, words)
        if rng.random() < 0.05 and len(words.split()) > 1:
            words = " ".join(words.split()[:-1])
        parts = [words]
        if rng.random() < 0.5:
            parts.append(form)
        has_street = rng.random() < 0.35
        if has_street:
            parts.append(street)
        if rng.random() < (0.5 if has_street else 0.25):
            parts.append(postcode)
        if rng.random() < 0.5:
            parts.append(city)
        if rng.random() < 0.6:
            parts.append(rng.choice(countries))
        yield " ".join(parts)


def main():
    rng = random.Random(20261202)
    fakers = {}
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["name", "company"])
    for company, name in best_names(sys.argv[1], 2000):
        locale = rng.choice(LOCALES)
        fake = fakers.setdefault(locale, Faker(locale))
        fake.seed_instance(rng.randrange(2**32))
        for row in rows_of(rng, fake, locale, name):
            out.writerow([row, company])


main()
