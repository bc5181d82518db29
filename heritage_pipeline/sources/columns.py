"""Registry columns -> LinkML slots without per-file configuration: header synonyms confirmed by value patterns.

A registry nobody configured in ``configs/csv_mappings.yaml`` is mapped column by column (:func:`infer_mapping`):

1. **Header**: the header cell is normalised (:func:`normalise_header`: accents and case folded, a leading ``?``/``#``
   of SPARQL/comment-style exports dropped, camelCase split, ``_ - . / : ( )`` and runs of spaces made one space) and
   looked up in multilingual synonyms (nl/en/fr/de, :data:`SYNONYMS`): the whole header (score 1.0, rule
   ``synonym``), else one of its words or word pairs, so that prefixes and qualifiers are ignored
   (``postadres_plaats``, ``nom_officiel_du_musee``: 0.8, ``token``), else an abbreviation (``LIBNAME`` ends in
   ``name``, ``LONGITUD`` starts ``longitude``, ``CNTY``, ``PLZ``: 0.6, ``abbreviation``).
2. **Values** (a sample of up to :data:`SAMPLE_ROWS` rows): each slot has a value check (:data:`VALUE_CHECKS`:
   the ISIL pattern of ISO 15511, Wikidata QIDs, GND ids, URLs, e-mail, telephone numbers, postcodes, latitude /
   longitude, dates, numeric codes, or "text with letters" for names and places). A header candidate is kept only
   when the share of non-empty values passing its check reaches :data:`CONFIRM_SHARE`; the share is its evidence.
   Identifier columns whose header says nothing (and every column of a headerless file) are mapped by values alone
   when :data:`VALUES_ONLY_SHARE` of the values pass (rule ``values``).
3. **Assignment**: candidates are taken best first (score, then value share, then column order); a single-valued
   slot (:data:`UNIQUE_SLOTS`: name, place, type, coordinates...) goes to one column only; code slots may collect
   several columns (their values are joined with ``; `` by the registry parser).

Headerless files (:func:`looks_headerless`): the first row is data when one of its cells passes a strict value
check (ISIL, URL, e-mail, a number...) and no cell is a known header synonym. Their columns are named
``column_<n>`` (1-based) and mapped by values only; a text column of many distinct values holding type words is
the name, a text column of few distinct values holding type words is the custodian type, country names (Babel's
CLDR territory names in nl/en/fr/de) make ``country``, and the remaining short text column of the most distinct
values is the settlement.

Custodian type words (:func:`type_code`) come from :mod:`heritage_pipeline.enrich.names` (museum, archief,
bibliothèque...) plus the words here that names.py lacks (Bücherei, Mediathek, Japanese 図書館...), matched on
folded words, so ``musée municipal`` in any case and ``Stadtbücherei`` are museum and library.

Why not a library: header-matching tools on PyPI (e.g. csvkit, frictionless) infer *types* of columns, not domain
slots; there is no multilingual heritage column matcher to reuse. Value checks use ``re`` patterns taken from the
standards (ISO 15511 ISIL, Wikidata QID, GND) rather than a validator package, none of which is installed here.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Callable, Iterable

from heritage_pipeline.enrich.names import COMPOUND_SUFFIXES, keyword_type, name_tokens

SAMPLE_ROWS = 200
CONFIRM_SHARE = 0.5
VALUES_ONLY_SHARE = 0.8

# ------------------------------------------------------------------------------------------------ slots
# Slot order in the record text: name, type, place, identifiers, then the rest (SPEC §2 ``slot: value`` lines).
SLOT_ORDER: tuple[str, ...] = (
    "preferred_label", "alternative_label", "custodian_type",
    "settlement", "postal_code", "street_address", "subregion", "region", "country",
    "isil_code", "wikidata_id", "gnd_id", "viaf_id", "dbs_id", "registration_number", "local_id",
    "website", "email", "telephone", "latitude", "longitude", "coordinates",
    "registration_date", "aggregator_membership", "provenance_note", "description",
)
IDENTIFIER_SLOTS = frozenset({"isil_code", "wikidata_id", "gnd_id", "viaf_id", "dbs_id", "registration_number",
                              "local_id"})
# Long administrative codes: kept as slots in metadata (``meta.extra["slot:<slot>"]``) but left out of the text.
CODE_SLOTS = frozenset({"tax_id", "statistical_code"})
UNIQUE_SLOTS = frozenset({"preferred_label", "alternative_label", "custodian_type", "settlement", "postal_code",
                          "street_address", "region", "subregion", "country", "latitude", "longitude", "coordinates",
                          "website", "email", "telephone", "isil_code", "wikidata_id", "local_id", "description",
                          "registration_date"})

_S = str.split
SYNONYMS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "preferred_label": ["name", "naam", "nom", "label", "itemlabel", "item label", "bezeichnung", "benennung",
                        "appellation", "denomination", "titel", "instelling", "institution", "institution name",
                        "instellingsnaam", "naam instelling", "naam organisatie", "organisatie", "organisation",
                        "organization", "organisation name", "organization name", "einrichtung", "libname",
                        "library name", "library", "bibliothek", "bibliotheque", "bibliotheek", "museum", "musee",
                        "museum name", "archive", "archief",
                        "archiv", "hochschule", "hochschule bibliothek", "official name", "raison sociale",
                        "nom de l etablissement", "etablissement", "custodian", "preferred label", "libelle"],
    "alternative_label": ["alternative name", "alt label", "altlabel", "alias", "aliases", "other names",
                          "alternatieve naam", "autre nom", "kurzname", "short name", "acronym", "afkorting", "sigle"],
    "custodian_type": ["type", "typ", "soort", "categorie", "category", "art", "kind", "institution type",
                       "type instelling", "soort instelling", "einrichtungstyp", "bibliothekstyp", "museumstyp",
                       "type de musee", "type d etablissement", "custodian type", "institution kind", "sector",
                       "sparte", "library type", "museum type", "instellingstype"],
    "settlement": ["plaats", "woonplaats", "vestigingsplaats", "plaatsnaam", "stad", "gemeente", "city", "town",
                   "locality", "place", "settlement", "municipality", "ville", "commune", "localite", "ort",
                   "stadt", "gemeinde", "sitz", "ortsname", "citta", "ciudad", "comune"],
    "postal_code": ["postcode", "zip", "zipcode", "zip code", "postal code", "postalcode", "code postal", "cp",
                    "plz", "postleitzahl", "post code"],
    "street_address": ["adres", "address", "adresse", "anschrift", "strasse", "street", "rue", "bezoekadres",
                       "postadres", "street address", "address line", "straat", "strasse und hausnummer"],
    "region": ["provincie", "province", "region", "bundesland", "state", "region administrative", "regio",
               "land region", "nomreg", "stabr", "state abbreviation"],
    "subregion": ["county", "cnty", "departement", "department", "kreis", "landkreis", "arrondissement",
                  "district", "nomdep", "bezirk"],
    "country": ["country", "land", "pays", "staat", "country code", "landcode", "code pays", "nation"],
    "isil_code": ["isil", "isil code", "isil nummer", "isil kennung", "code isil", "isil id", "isilcode", "sigel"],
    "wikidata_id": ["wikidata", "wikidata id", "qid", "item", "wikidata item", "wikidata qid", "wd"],
    "gnd_id": ["gnd", "gnd id", "gndid", "gnd nummer"],
    "viaf_id": ["viaf", "viaf id"],
    "dbs_id": ["dbs", "dbs id", "dbsid"],
    "registration_number": ["kvk", "kvk nummer", "kvk number", "registration number", "registratienummer",
                            "handelsregister", "siret", "siren", "rna"],
    "local_id": ["id", "identifier", "identifiant", "kennung", "code", "nummer", "libid", "library id",
                 "record id", "identificatie"],
    "website": ["website", "url", "homepage", "site", "site web", "sitweb", "webseite", "internetadresse",
                "internet", "web", "www", "webadres", "site internet"],
    "email": ["email", "e mail", "mail", "courriel", "e mailadres", "emailadres"],
    "telephone": ["telephone", "phone", "tel", "telefoon", "telefon", "telefonnummer", "telefoonnummer",
                  "phone number", "numero de telephone"],
    "latitude": ["latitude", "lat", "breitengrad", "breedtegraad", "y"],
    "longitude": ["longitude", "lon", "lng", "long", "langengrad", "lengtegraad", "x", "longitud"],
    "coordinates": ["coordinates", "coordonnees", "geolocalisation", "coords", "koordinaten", "coordinaten",
                    "geo", "location coordinates", "geopoint"],
    "registration_date": ["toegekend op", "registration date", "date attribution", "date d attribution",
                          "datum", "date", "vergeben am", "assigned"],
    "aggregator_membership": ["collectie nederland", "aggregator", "aggregators", "membership", "lidmaatschap",
                              "europeana", "deelnemer"],
    "provenance_note": ["opmerking", "opmerkingen", "remark", "remarks", "note", "notes", "bemerkung",
                        "anmerkung", "remarque"],
    "description": ["description", "beschrijving", "omschrijving", "beschreibung", "desc"],
    "tax_id": ["tax id", "ein", "vat", "btw nummer", "ust idnr", "steuernummer", "duns", "duns number", "fein"],
    "statistical_code": ["fips", "fips code", "incits", "incitsst", "incitsco", "gnis", "gnisplac", "census tract",
                         "centract", "cenblock", "cbsa", "cdcode", "insee", "code insee", "ags",
                         "gemeindeschlussel", "cbs code", "nis code"],
}.items()}
# abbreviations too short for the prefix/suffix rule, mapped explicitly (normalised header -> slot)
ABBREVIATIONS: dict[str, str] = {"adr": "street_address", "str": "street_address", "tel": "telephone",
                                 "ph": "telephone", "st": "region", "prov": "region", "gem": "settlement",
                                 "pc": "postal_code", "lat": "latitude", "lon": "longitude"}
# header words that name a slot only as the whole header or beside a word saying what was registered: "Date
# Visited", "Date Blend", "opened date" are dates of something else, not the registration date;
# "date_arrete_attribution_appellation" (Muséofile: the decree granting the label) is one
WHOLE_HEADER_ONLY = frozenset({"date", "datum"})
REGISTRATION_WORDS = frozenset(_S("attribution arrete registration registered toegekend toekenning vergeben vergabe "
                                  "assigned assignment enregistrement inscription erteilt"))
# header words that never carry a slot on their own inside a longer header ("ISIL-code": code is a qualifier)
_QUALIFIERS = frozenset(_S("code id nummer number nr no num officiel official du de des la le van het the of der die "
                           "das von und and et en postadres bezoek"))

# Header words that belong to one language only (normalised: accents and case folded), for a registry's language
# when its rows alone are too short to tell (:func:`header_language`); words shared by several languages (name,
# type, adresse, land, museum, categorie, telephone, description...) are left out on purpose.
HEADER_LANGUAGE_WORDS: dict[str, str] = {
    **dict.fromkeys(_S("naam plaats woonplaats vestigingsplaats plaatsnaam gemeente instelling instellingsnaam "
                       "organisatie opmerking opmerkingen soort straat huisnummer provincie telefoon telefoonnummer "
                       "beschrijving omschrijving toegekend bezoekadres postadres afkorting lidmaatschap breedtegraad "
                       "lengtegraad stad webadres emailadres archief bibliotheek deelnemer"), "nl"),
    **dict.fromkeys(_S("city town address street country county state phone notes remarks kind zip zipcode "
                       "postal library archive homepage label locality"), "en"),
    **dict.fromkeys(_S("nom ville commune pays remarque departement etablissement musee bibliotheque localite "
                       "courriel libelle appellation denomination raison sociale"), "fr"),
    **dict.fromkeys(_S("ort stadt gemeinde strasse bemerkung anmerkung bezeichnung benennung einrichtung bundesland "
                       "landkreis kreis postleitzahl plz bibliothek hochschule telefon anschrift kennung sparte "
                       "ortsname breitengrad langengrad webseite internetadresse"), "de"),
}


def header_language(header: list[str]) -> tuple[str | None, int]:
    """The language the header's words name (:data:`HEADER_LANGUAGE_WORDS`): the language of most known words,
    when it has more of them than all other languages together; ``(None, 0)`` otherwise.

    Args:
        header: the raw header cells.
    Returns:
        (ISO 639-1 code or None, number of header words of that language).
    """
    votes: dict[str, int] = {}
    for cell in header:
        for word in normalise_header(cell).split():
            lang = HEADER_LANGUAGE_WORDS.get(word)
            if lang:
                votes[lang] = votes.get(lang, 0) + 1
    if not votes:
        return None, 0
    lang, n = max(votes.items(), key=lambda kv: (kv[1], kv[0]))
    return (lang, n) if n > sum(votes.values()) - n else (None, 0)


# ------------------------------------------------------------------------------------------------ value checks
ISIL_RE = re.compile(r"^[A-Z]{1,4}-[A-Za-z0-9:/\-]{1,11}$")  # ISO 15511: prefix, hyphen, at most 16 characters
QID_RE = re.compile(r"^(?:https?://(?:www\.)?wikidata\.org/(?:entity|wiki)/)?Q[1-9]\d*$")
GND_RE = re.compile(r"^(?:\d{1,10}-[0-9X]|\d{8,9}[0-9X])$")
URL_RE = re.compile(r"^(?:https?://\S+|www\.\S+|[A-Za-z0-9][\w.-]*\.[a-z]{2,}(?:/\S*)?)$")
EMAIL_RE = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
PHONE_RE = re.compile(r"^\+?\(?\d[\d\s().\-/]{5,}\d")
POSTCODE_RE = re.compile(r"^(?:\d{4,5}(?:-\d{4})?|\d{4}\s?[A-Z]{2}|\d{3}-\d{4}|[A-Z]\d[A-Z]\s?\d[A-Z]\d|"
                         r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]{1,2}-\d{4,5})$")
DATE_RE = re.compile(r"^(?:\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4})$")
CODE_RE = re.compile(r"^[0-9A-Z][0-9A-Z\-.]*$")
NUMBER_RE = re.compile(r"^-?\d+(?:[.,]\d+)?$")
_LETTER = re.compile(r"[^\W\d_]")


def _float(v: str) -> float | None:
    try:
        return float(v.replace(",", "."))
    except ValueError:
        return None


def _is_lat(v: str) -> bool:
    f = _float(v)
    return f is not None and "." in v.replace(",", ".") and -90 <= f <= 90


def _is_lon(v: str) -> bool:
    f = _float(v)
    return f is not None and "." in v.replace(",", ".") and -180 <= f <= 180


def _is_coords(v: str) -> bool:
    parts = re.split(r"\s*[,; ]\s*", v.strip().strip("()[]"))
    return len(parts) == 2 and _is_lat(parts[0]) and _is_lon(parts[1])


def _strict_phone(v: str) -> bool:
    """A telephone number without a header to say so: digits grouped by separators or led by ``+``/``0``."""
    m = PHONE_RE.match(v)
    return bool(m) and m.end() >= 0.55 * len(v) and sum(ch.isdigit() for ch in v) >= 6 and (
        v[0] in "+0(" or bool(re.search(r"\d[\s.\-/]\d", v)))


def _is_year(v: str) -> bool:
    return bool(re.match(r"^(?:1[5-9]|20)\d{2}$", v))


def _all_parts(v: str, rx: re.Pattern) -> bool:
    parts = [p for p in re.split(r"[,;\s]+", v) if p]
    return bool(parts) and all(rx.match(p) for p in parts)


def _is_text(v: str) -> bool:
    return bool(_LETTER.search(v)) and not URL_RE.match(v) and not EMAIL_RE.match(v)


VALUE_CHECKS: dict[str, Callable[[str], bool]] = {
    "isil_code": lambda v: bool(ISIL_RE.match(v)),
    "wikidata_id": lambda v: bool(QID_RE.match(v)),
    "gnd_id": lambda v: bool(GND_RE.match(v)),
    "viaf_id": lambda v: v.isdigit() or "viaf.org" in v,
    "dbs_id": lambda v: bool(re.match(r"^[A-Z]{0,2}\d{3,6}$", v)),
    "registration_number": lambda v: bool(re.match(r"^[\dA-Z][\d\sA-Z.\-/]{3,}$", v)),
    "local_id": lambda v: bool(CODE_RE.match(v)),
    "website": lambda v: _all_parts(v, URL_RE),  # one URL, or several separated by , ; or spaces
    "email": lambda v: bool(EMAIL_RE.match(v)),
    "telephone": lambda v: bool(PHONE_RE.match(v)) and sum(ch.isdigit() for ch in v) >= 6,
    "postal_code": lambda v: bool(POSTCODE_RE.match(v)),
    "latitude": _is_lat,
    "longitude": _is_lon,
    "coordinates": _is_coords,
    "registration_date": lambda v: bool(DATE_RE.match(v)),
    "tax_id": lambda v: sum(ch.isdigit() for ch in v) >= 5,
    "statistical_code": lambda v: bool(re.match(r"^-?[\d.]+$", v)),
    # a type column's values name custodian types (museum, Bibliothek, 図書館...): a column of subjects (Street Art,
    # Photography), of governance codes (LAL, CL) or of Wikipedia categories (Historic house, Theatre) is not one
    "custodian_type": lambda v: type_code(v) is not None,
    "preferred_label": _is_text, "alternative_label": _is_text, "settlement": _is_text,
    "street_address": _is_text, "region": _is_text, "subregion": _is_text, "country": _is_text,
    "aggregator_membership": lambda v: bool(v), "provenance_note": _is_text, "description": _is_text,
}
# slots mapped from values alone (a header that says nothing, or no header): patterns too specific to be chance
VALUE_ONLY_SLOTS = ("isil_code", "wikidata_id", "email")
# ...and in a headerless file also these (a headered URL column may be an API endpoint, not the website)
HEADERLESS_VALUE_SLOTS = ("website", "coordinates")
# checks strict enough to tell a data row from a header row
_STRICT_CHECKS = ("isil_code", "wikidata_id", "email", "website", "telephone", "coordinates")

# ------------------------------------------------------------------------------------------------ type words
# Type words that enrich/names.py does not list (folded); names.py's TYPE_KEYWORDS and compounds are tried first.
EXTRA_TYPE_WORDS: dict[str, str] = {
    **dict.fromkeys(_S("bucherei buchereien mediathek mediatheken stadtbucherei gemeindebucherei ludotheque "
                       "bibliothekar bibliotheekvestiging bookmobile mediatheques bibliotecas libreria"), "L"),
    **dict.fromkeys(_S("ecomusee ecomuseum museum's musees museen heimatmuseum freilichtmuseum gedenkstatte "
                       "memorial"), "M"),
    **dict.fromkeys(_S("archiefdienst stadtarchiv staatsarchiv landesarchiv kreisarchiv archivio"), "A"),
}
EXTRA_COMPOUNDS: dict[str, str] = {"bucherei": "L", "mediathek": "L", "bibliotheque": "L", "museen": "M",
                                   "archive": "A"}
# CJK type words are matched as substrings (no word boundaries in Japanese/Chinese)
CJK_TYPE_WORDS: dict[str, str] = {"図書館": "L", "図書室": "L", "文庫": "L", "博物館": "M", "美術館": "G",
                                  "資料館": "M", "文書館": "A", "公文書館": "A", "档案馆": "A", "图书馆": "L",
                                  "博物馆": "M", "アーカイブ": "A", "ミュージアム": "M", "ライブラリ": "L",
                                  "ギャラリー": "G"}  # katakana loanwords: archive(s), museum, library, gallery


def type_code(value: str) -> str | None:
    """GLAMORCUBESFIXPHDNT code of the first custodian type word in ``value`` (any case, accents, nl/en/fr/de and
    Japanese/Chinese), e.g. ``musée municipal`` -> ``M``, ``Stadtbücherei`` -> ``L``; None when no type word.

    Args:
        value: a type-column cell or an institution name (never a place name: the caller decides the column).
    Returns:
        One code letter or None.
    """
    if not value:
        return None
    code = keyword_type(value)
    if code:
        return code
    for tok, _, _ in name_tokens(value):
        if tok in EXTRA_TYPE_WORDS:
            return EXTRA_TYPE_WORDS[tok]
        for suffix, c in {**COMPOUND_SUFFIXES, **EXTRA_COMPOUNDS}.items():
            if tok.endswith(suffix) and len(tok) > len(suffix) + 2:
                return c
    for word, c in CJK_TYPE_WORDS.items():
        if word in value:
            return c
    return None


@lru_cache(maxsize=1)
def country_names() -> dict[str, str]:
    """Folded country names in nl/en/fr/de (Babel's CLDR territory names) and ISO 3166 alpha-2 codes -> alpha-2."""
    from babel import Locale

    out: dict[str, str] = {}
    for lang in ("en", "nl", "fr", "de"):
        for code, name in Locale(lang).territories.items():
            if len(code) == 2 and code.isalpha():
                out[_fold(name)] = code
    for code in list(out.values()):
        out.setdefault(code.casefold(), code)
    for name, code in COUNTRY_SHORT_FORMS.items():
        out.setdefault(name, code)
    return out


# Common short forms CLDR's territory names lack ("London, UK", "Chicago, USA"): UK is not an ISO 3166 code.
COUNTRY_SHORT_FORMS = {"uk": "GB", "u.k.": "GB", "great britain": "GB", "england": "GB", "scotland": "GB",
                       "wales": "GB", "usa": "US", "u.s.a.": "US", "u.s.": "US", "the netherlands": "NL",
                       "holland": "NL"}


# The 16 German federal states (Länder): ISO 3166-2:DE codes (with and without the ``DE-`` prefix), German and
# English names, and the usual short forms. A German file's "Land" column often holds them, and BY, BE, SN, TH, ST,
# SH, NI, SL are also ISO 3166 country codes (Belarus, Belgium, Senegal...): a column of these values is a region,
# not a country. (Written out here: Babel, the territory-name library in use, has no subdivisions, and a library
# for 16 stable names is not worth a dependency.)
_GERMAN_STATE_CODES = ("BW", "BY", "BE", "BB", "HB", "HH", "HE", "MV", "NI", "NW", "RP", "SL", "SN", "ST", "SH", "TH")
_GERMAN_STATE_NAMES = (
    "Baden-Württemberg", "Bayern", "Bavaria", "Freistaat Bayern", "Berlin", "Brandenburg", "Bremen",
    "Freie Hansestadt Bremen", "Hamburg", "Freie und Hansestadt Hamburg", "Hessen", "Hesse", "Mecklenburg-Vorpommern",
    "Mecklenburg-Western Pomerania", "Niedersachsen", "Lower Saxony", "Nordrhein-Westfalen", "NRW",
    "North Rhine-Westphalia", "Rheinland-Pfalz", "Rhineland-Palatinate", "Saarland", "Sachsen", "Saxony",
    "Freistaat Sachsen", "Sachsen-Anhalt", "Saxony-Anhalt", "Schleswig-Holstein", "Thüringen", "Thuringia",
    "Freistaat Thüringen")


def _state_key(v: str) -> str:
    return re.sub(r"[\s\-]+", " ", v.strip().casefold().replace("ß", "ss")).strip()


GERMAN_STATES = frozenset(_state_key(unicodedata.normalize("NFKD", n).encode("ascii", "ignore").decode()) for n in
                          _GERMAN_STATE_NAMES + _GERMAN_STATE_CODES + tuple(f"DE-{c}" for c in _GERMAN_STATE_CODES))


def is_german_state(value: str) -> bool:
    """Whether ``value`` names a German federal state (:data:`GERMAN_STATES`: ISO 3166-2:DE code with or without
    ``DE-``, German or English name; case, accents, hyphens and spaces ignored).

    Args:
        value: a cell value.

    Returns:
        True for ``BY``, ``de-by``, ``Bayern``, ``Thüringen``, ``Nordrhein Westfalen``; False otherwise.
    """
    folded = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return _state_key(folded) in GERMAN_STATES


# ------------------------------------------------------------------------------------------------ headers
def _fold(s: str) -> str:
    d = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in d if not unicodedata.combining(ch)).casefold().replace("ß", "ss")


def normalise_header(header: str) -> str:
    """Header cell -> comparison form: camelCase split, accents and case folded, ``ß`` -> ``ss``, a leading
    ``?``/``#``/``@`` dropped, ``_ - . / : ( ) '`` and whitespace runs made one space (``?itemLabel`` ->
    ``item label``, ``Wikidata-ID`` -> ``wikidata id``, ``nom_officiel_du_musée`` -> ``nom officiel du musee``)."""
    h = header.strip().lstrip("?#@\ufeff")
    h = re.sub(r"(?<=[a-z])(?=[A-Z][a-z])", " ", h)
    h = _fold(h)
    h = re.sub(r"[\s_\-./:()'’\[\]]+", " ", h)
    return h.strip()


def header_candidates(header: str) -> list[tuple[str, float, str]]:
    """Slots a header may name, as ``(slot, score, rule)`` best first (rules: ``synonym`` 1.0, ``token`` 0.8,
    ``abbreviation`` 0.6). Empty when the header names no known slot.

    Args:
        header: the raw header cell.
    Returns:
        Candidate list (possibly empty), one entry per slot with its best rule.
    """
    h = normalise_header(header)
    if not h:
        return []
    found: dict[str, tuple[float, str]] = {}

    def add(slot: str, score: float, rule: str) -> None:
        if slot not in found or found[slot][0] < score:
            found[slot] = (score, rule)

    for slot, syns in SYNONYMS.items():
        if h in syns:
            add(slot, 1.0, "synonym")
    if h in ABBREVIATIONS:
        add(ABBREVIATIONS[h], 0.9, "abbreviation")
    words = h.split()
    if len(words) > 1:
        grams = [" ".join(words[i:i + 2]) for i in range(len(words) - 1)] + [w for w in words if w not in _QUALIFIERS]
        # the last content word is the head of a snake_case compound (postadres_plaats): it scores a little higher
        content = [w for w in words if w not in _QUALIFIERS]
        for g in grams:
            if g in WHOLE_HEADER_ONLY and not REGISTRATION_WORDS & set(words):
                continue
            for slot, syns in SYNONYMS.items():
                if g in syns:
                    bonus = 0.05 if content and g == content[-1] else 0.0
                    add(slot, 0.8 + bonus if " " not in g else 0.85, "token")
    compact = h.replace(" ", "")
    if not found and len(compact) >= 3:
        for slot, syns in SYNONYMS.items():
            for s in syns:
                s_c = s.replace(" ", "")
                if len(s_c) < 3 or (s in _QUALIFIERS and compact != s_c):
                    # "lsoa_code", "authority_id": a header ending in a qualifier is the code *of* something else
                    continue
                # LIBNAME ends in name; LONGITUD is the start of longitude; ZIP4 starts with zip
                if (len(s_c) >= 4 and compact.endswith(s_c)) or (len(compact) >= 4 and s_c.startswith(compact)) \
                        or (compact.startswith(s_c) and len(compact) - len(s_c) <= 2 and len(s_c) >= 3):
                    add(slot, 0.6, "abbreviation")
    return sorted(((s, sc, r) for s, (sc, r) in found.items()), key=lambda t: -t[1])


# ------------------------------------------------------------------------------------------------ mapping
@dataclass
class ColumnEvidence:
    """Why one column got (or did not get) a slot: header rule and score, share of values passing the check."""

    column: str
    index: int
    slot: str | None
    rule: str  # synonym | token | abbreviation | values | headerless:<what> | none | rejected:<slot>
    header_score: float = 0.0
    value_share: float | None = None
    non_empty: int = 0


@dataclass
class InferredMapping:
    """A registry's column -> slot mapping inferred from header and values, with per-column evidence."""

    columns: dict[str, str]
    evidence: list[ColumnEvidence] = field(default_factory=list)
    headerless: bool = False

    def summary(self) -> dict:
        """JSON-ready evidence: ``{"headerless", "columns": {col: slot}, "evidence": [...]}``."""
        return {"headerless": self.headerless, "columns": dict(self.columns),
                "evidence": [asdict(e) for e in self.evidence]}


def _share(values: list[str], check: Callable[[str], bool]) -> float:
    return sum(1 for v in values if check(v)) / len(values) if values else 0.0


def column_values(rows: Iterable[list[str]], n_cols: int, limit: int = SAMPLE_ROWS) -> list[list[str]]:
    """Non-empty stripped cell values per column from the first ``limit`` rows."""
    cols: list[list[str]] = [[] for _ in range(n_cols)]
    for k, row in enumerate(rows):
        if k >= limit:
            break
        for i in range(min(n_cols, len(row))):
            v = row[i].strip()
            if v:
                cols[i].append(v)
    return cols


def looks_headerless(header: list[str], rows: list[list[str]]) -> bool:
    """True when the first row is data, not a header: one of its cells passes a strict value check (ISIL, QID,
    URL, e-mail, telephone with separators, coordinates: no column name looks like that), or is a number in a
    column whose other values are numbers too.

    Args:
        header: the first row's cells.
        rows: the following rows (a sample is enough).
    """
    cols = column_values(rows, len(header), 50)
    for i, h in enumerate(header):
        h = h.strip()
        if not h or any(score >= 0.8 for _, score, _ in header_candidates(h)):  # "ISIL-code" is a header
            continue
        if any(VALUE_CHECKS[s](h) for s in _STRICT_CHECKS if s != "telephone") or _strict_phone(h):
            return True
        if NUMBER_RE.match(h) and cols[i] and _share(cols[i], lambda v: bool(NUMBER_RE.match(v))) >= 0.8:
            return True
    return False


def infer_mapping(header: list[str], rows: list[list[str]], *, headerless: bool = False) -> InferredMapping:
    """Map columns to slots from the header confirmed by values (module docstring).

    Args:
        header: column names (for a headerless file, ``column_1..n``; pass ``headerless=True``).
        rows: data rows (only the first :data:`SAMPLE_ROWS` are read).
        headerless: the file has no header row: map by values only.
    Returns:
        :class:`InferredMapping` with ``columns`` (column name -> slot, unmapped columns absent) and the evidence.
    """
    cols = column_values(rows, len(header))
    cands: list[tuple[float, float, int, str, str]] = []  # (score, share, index, slot, rule)
    evidence = {i: ColumnEvidence(h, i, None, "none", non_empty=len(cols[i])) for i, h in enumerate(header)}
    for i, h in enumerate(header):
        vals = cols[i]
        if not vals:  # no value to confirm with: a clear header (synonym or word) is enough for an empty column
            best = header_candidates(h) if not headerless else []
            if best and best[0][1] >= 0.8:
                cands.append((best[0][1], 0.0, i, best[0][0], f"{best[0][2]} (no values)"))
            continue
        if not headerless:
            for slot, score, rule in header_candidates(h):
                if slot == "country" and (state_share := _share(vals, is_german_state)) >= VALUES_ONLY_SHARE:
                    # "Land" in a German file: federal states (BY is Bavaria here, not Belarus) -> region
                    slot, rule = "region", f"{rule}; values are German federal states ({state_share:.0%})"
                share = _share(vals, VALUE_CHECKS[slot])
                if share >= CONFIRM_SHARE:
                    cands.append((score, share, i, slot, rule))
                elif evidence[i].rule == "none":
                    evidence[i].rule, evidence[i].value_share = f"rejected:{slot}", round(share, 3)
        for slot in VALUE_ONLY_SLOTS + (HEADERLESS_VALUE_SLOTS if headerless else ()):
            share = _share(vals, VALUE_CHECKS[slot])
            if share >= VALUES_ONLY_SHARE:
                # nearly all values ISILs / QIDs: stronger than any header word (a column "code" or "id" of ISILs)
                strong = share >= 0.95 and slot in ("isil_code", "wikidata_id")
                cands.append((1.05 if strong else 0.5, share, i, slot, "values"))
    if headerless:
        cands.extend(_headerless_candidates(cols))
    cands.sort(key=lambda t: (-t[0], -t[1], t[2]))
    columns: dict[str, str] = {}
    taken_cols: set[int] = set()
    taken_slots: set[str] = set()
    for score, share, i, slot, rule in cands:
        if i in taken_cols or (slot in UNIQUE_SLOTS and slot in taken_slots):
            continue
        taken_cols.add(i)
        taken_slots.add(slot)
        columns[header[i]] = slot
        ev = evidence[i]
        ev.slot, ev.rule, ev.header_score, ev.value_share = slot, rule, round(score, 3), round(share, 3)
    return InferredMapping(columns, [evidence[i] for i in range(len(header))], headerless)


def _headerless_candidates(cols: list[list[str]]) -> list[tuple[float, float, int, str, str]]:
    """Value-only candidates for a headerless file: telephone, postal code, type, name, country, settlement,
    address and numeric local ids (module docstring)."""
    out: list[tuple[float, float, int, str, str]] = []
    countries = country_names()
    text_cols = []
    for i, vals in enumerate(cols):
        if not vals:
            continue
        distinct = len(set(vals)) / len(vals)
        share = _share(vals, _strict_phone)
        if share >= VALUES_ONLY_SHARE:
            out.append((0.45, share, i, "telephone", "headerless:telephone"))
        share = _share(vals, lambda v: VALUE_CHECKS["postal_code"](v) and not _is_year(v))
        if share >= VALUES_ONLY_SHARE:
            out.append((0.45, share, i, "postal_code", "headerless:postal_code"))
        if _share(vals, lambda v: v.isdigit()) >= 0.95 and distinct >= 0.95:
            out.append((0.3, distinct, i, "local_id", "headerless:distinct numbers"))
        if _share(vals, _is_text) < 0.9:
            continue
        share_country = _share(vals, lambda v: _fold(v) in countries)
        if share_country >= VALUES_ONLY_SHARE:
            out.append((0.45, share_country, i, "country", "headerless:country names"))
            continue
        typed = _share(vals, lambda v: type_code(v) is not None)
        avg_words = sum(len(v.split()) for v in vals) / len(vals)
        has_digits = _share(vals, lambda v: any(ch.isdigit() for ch in v))
        text_cols.append((i, distinct, typed, avg_words, has_digits))
    # the name: many distinct values with type words (or the most distinct long text); the type: few distinct
    # values with type words; an address: text with digits; the settlement: short text, most distinct of the rest
    names = sorted((t for t in text_cols if t[1] >= 0.5), key=lambda t: (-(t[2] >= 0.3), -t[1] * (1 + t[3]), t[0]))
    if names:
        i, distinct, typed, _, _ = names[0]
        out.append((0.4, distinct, i, "preferred_label", "headerless:distinct text with type words"))
    for i, distinct, typed, avg_words, has_digits in text_cols:
        if names and i == names[0][0]:
            continue
        if typed >= 0.8 and distinct < 0.5:
            out.append((0.4, typed, i, "custodian_type", "headerless:repeated type words"))
        elif has_digits >= 0.8:
            out.append((0.35, has_digits, i, "street_address", "headerless:text with numbers"))
        elif avg_words <= 3 and has_digits < 0.2 and typed < 0.3 and distinct <= 0.9:  # places repeat
            out.append((0.3, distinct, i, "settlement", "headerless:short place-like text"))
    return out


_CODE_VALUE = re.compile(r"^[0-9A-Z][0-9A-Z_\-./]*$")
_DECIMAL = re.compile(r"^-?\d+[.,]\d+$")
CODE_COLUMN_SHARE = 0.8


def is_code_value(value: str) -> bool:
    """An administrative code or flag rather than a word or a quantity: upper-case letters, digits and ``_ - . /``
    only, with a digit, and either a letter or separator beside it (``E01000010``, ``DE123456789``, ``12-3456789``,
    ``R_19``, ``AK0001``), a leading zero (``06037``, ``08``, ``002``) or at least five digits with a separator;
    never a decimal number, a date or a plain number (a measurement, a price, a count, a year or a date is read by
    people: ``250000``, ``2019``, ``19.0``, ``6/27/14``), nor a bare word (``LAL``, ``Y``).

    Args:
        value: one stripped cell value.
    Returns:
        True for a code, False for anything else.
    """
    if not _CODE_VALUE.match(value) or not any(ch.isdigit() for ch in value) or _DECIMAL.match(value) \
            or DATE_RE.match(value):
        return False
    if value.isdigit():
        return len(value) >= 2 and value.startswith("0")
    return True


def code_columns(header: list[str], rows: Iterable[list[str]], columns: dict[str, str]) -> list[str]:
    """The unmapped columns of codes (tax ids, census-area and statistical codes, imputation flags the header
    synonyms did not name): at least :data:`CODE_COLUMN_SHARE` of the non-empty values in the first :data:`SAMPLE_ROWS` rows are
    :func:`is_code_value`. Their values stay in ``meta.extra`` but out of the record text (issue 12); every other
    unmapped column is human-readable and shown in the text after the mapped slots.

    Args:
        header: column names (``column_<n>`` for a headerless file).
        rows: data rows (a sample is enough).
        columns: the mapping used (column -> slot); mapped columns are never code columns here (mapped code slots
            are :data:`CODE_SLOTS`).
    Returns:
        Column names, in header order.
    """
    cols = column_values(rows, len(header))
    return [h for h, vals in zip(header, cols)
            if h not in columns and vals and _share(vals, is_code_value) >= CODE_COLUMN_SHARE]


def slot_sort_key(slot: str) -> tuple[int, str]:
    """Order of ``slot: value`` lines in the record text (:data:`SLOT_ORDER`, unknown slots after, by name)."""
    try:
        return (SLOT_ORDER.index(slot), "")
    except ValueError:
        return (len(SLOT_ORDER), slot)
