"""Builds data/eval/ner/ner_sample.jsonl: passages of real documents (docs, legal, FAQ) from /work/shared/data with
hand-written gold entities. The passages are cut by line range and stored with their character offsets into the
source file, so each one can be traced back; the gold lists below were written by reading the passages (issue 5),
before the rules were tuned, following data/eval/ner/README.md. Re-run to rebuild the JSONL from the sources."""

from __future__ import annotations

import json
import sys
from pathlib import Path

SHARED = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "data"
OUT = Path(__file__).resolve().parents[1] / "data" / "eval" / "ner" / "ner_sample.jsonl"
CP = "legal_fr/raw/code-du-patrimoine/partie-legislative/"
CC = "legal_fr/raw/code-civil/livre-iii-des-differentes-manieres-dont-on-acquiert-la-propriete/titre-iii-des-contrats-ou-des-obligations-conventionnelles-en-general/"

# (id, split, domain, path, first line, last line (1-based, inclusive; 0 = to the end), gold)
PASSAGES = [
    ("docs-features-1", "dev", "docs", "docs/fastapi/en/features.md", 1, 64, {
        "PRODUCT": ["FastAPI", "OpenAPI", "JSON Schema", "Swagger UI", "ReDoc", "Python", "Pydantic"],
        "FUNC": ["main"], "CLASS": ["User"]}),
    ("docs-first-steps", "dev", "docs", "docs/fastapi/en/tutorial/first-steps.md", 229, 330, {
        "CLASS": ["FastAPI", "Starlette"], "PRODUCT": ["FastAPI", "Python", "Starlette", "OpenAPI"],
        "API": ["GET /", "/items/foo"]}),
    ("docs-release-0.119", "dev", "docs", "docs/fastapi/en/release-notes.md", 1569, 1601, {
        "PRODUCT": ["FastAPI", "Pydantic", "Python"], "CLASS": ["Item", "ItemV2"], "FUNC": ["create_item"],
        "API": ["POST /items/"]}),
    ("faq-connected-systems", "dev", "faq", "faq/gbif_grscicoll/en/connected-systems.md", 18, 113, {
        "PRODUCT": ["GRSciColl", "Index Herbariorum", "Wikidata", "OpenRefine", "Research Organization Registry", "ROR",
                    "NCBI BioCollection", "GitHub", "UK Natural Sciences Collections Portal", "GBIF hosted portal"],
        "ORG": ["GBIF", "Royal Belgian Institute of Natural Sciences", "iDigBio"],
        "API": ["https://api.gbif.org/v1/enumeration/basic/IdentifierType", "GRSciColl API", "GRSciColl lookup service"],
        "FUNC": ["fetchAndDisplayIdentifiers"]}),
    ("legal-l544-3", "dev", "legal", CP + "livre-v-archeologie/titre-iv-dispositions-diverses/chapitre-4-dispositions-penales/section-1-dispositions-relatives-a-larcheologie-terrestre-et-subaquatique/l544-3.md", 1, 0, {
        "LAW": ["article L. 531-14"]}),
    ("legal-l522-3", "dev", "legal", CP + "livre-v-archeologie/titre-ii-archeologie-preventive/chapitre-2-repartition-des-competences-etat-et-collectivites-territoriales/section-1-role-de-letat/l522-3.md", 1, 0, {
        "LAW": ["article L. 524-2"]}),
    ("legal-l114-5", "dev", "legal", CP + "livre-ier-dispositions-communes-a-lensemble-du-patrimoine-culturel/titre-ier-protection-des-biens-culturels/chapitre-4-dispositions-penales/l114-5.md", 1, 0, {
        "LAW": ["article L. 114-4"]}),
    ("legal-l141-1", "dev", "legal", CP + "livre-ier-dispositions-communes-a-lensemble-du-patrimoine-culturel/titre-iv-institutions-relatives-au-patrimoine-culturel/chapitre-1er-centre-des-monuments-nationaux/l141-1.md", 1, 0, {
        "LAW": ["article L. 621-29-2"], "ORG": ["Centre des monuments nationaux", "Conseil d'Etat", "Cour des comptes"]}),
    ("legal-l123-4", "dev", "legal", CP + "livre-ier-dispositions-communes-a-lensemble-du-patrimoine-culturel/titre-ii-acquisition-de-biens-culturels/chapitre-3-preemption-des-uvres-dart/l123-4.md", 1, 0, {
        "LAW": ["articles L. 123-1 à L. 123-3", "article 9", "ordonnance n° 2017-1134 du 5 juillet 2017"],
        "ORG": ["Conseil d'Etat"]}),
    ("legal-1158", "dev", "legal", CC + "sous-titre-ier-le-contrat/chapitre-ii-la-formation-du-contrat/section-2-de-la-capacite-des-parties-contractantes/sous-section-2-la-capacite-et-la-representation/paragraphe-2-la-representation/1158.md", 1, 0, {
        "LAW": ["article 9", "ordonnance n° 2016-131 du 10 février 2016"]}),
    # ------------------------------------------------------------------ held out: never looked at while tuning
    ("docs-features-2", "holdout", "docs", "docs/fastapi/en/features.md", 65, 201, {
        "PRODUCT": ["Python", "FastAPI", "Visual Studio Code", "PyCharm", "Pydantic", "OpenAPI", "OAuth2", "JWT",
                    "Starlette", "NodeJS", "Go", "HTTPX", "JSON Schema", "mypy"],
        "CLASS": ["User", "FastAPI", "Starlette", "List", "Dict"]}),
    ("docs-python-types", "holdout", "docs", "docs/fastapi/en/python-types.md", 1, 110, {
        "PRODUCT": ["Python", "FastAPI"], "FUNC": ["title", "upper", "uppercase", "first_uppercase", "capitalize"]}),
    ("docs-release-0.115", "holdout", "docs", "docs/fastapi/en/release-notes.md", 2630, 2705, {
        "PRODUCT": ["Pydantic"], "CLASS": ["FilterParams", "CommonHeaders", "Cookies", "Query", "Header", "Cookie"],
        "FUNC": ["read_items"], "API": ["GET /items/"]}),
    ("faq-faq", "holdout", "faq", "faq/gbif_grscicoll/en/faq.md", 57, 148, {
        "PRODUCT": ["GRSciColl", "Darwin Core", "Latimer core", "GBIF.org", "wikidata", "ROR", "GBIF Registry",
                    "Index Herbariorum"],
        "ORG": ["GBIF"]}),
    ("faq-api", "holdout", "faq", "faq/gbif_grscicoll/en/api.md", 18, 39, {
        "PRODUCT": ["GRSciColl"], "ORG": ["GBIF", "GBIF Data Use Club"], "API": ["GRSciColl API", "GBIF API"]}),
    ("legal-l760-4", "holdout", "legal", CP + "livre-vii-dispositions-relatives-a-loutre-mer/titre-vi-dispositions-applicables-dans-les-iles-wallis-et-futuna/l760-4.md", 1, 0, {
        "LAW": ["articles L. 510-1, L. 532-1 à L. 532-14 et L. 544-5 à L. 544-11"]}),
    ("legal-l541-4", "holdout", "legal", CP + "livre-v-archeologie/titre-iv-dispositions-diverses/chapitre-1er-regime-de-propriete-des-vestiges-immobiliers/section-2-biens-archeologiques-mobiliers/sous-section-1-propriete/l541-4.md", 1, 0, {
        "LAW": ["articles 552 et 716", "code civil", "loi n° 2016-925 du 7 juillet 2016", "article L. 531-14"]}),
    ("legal-l541-5", "holdout", "legal", CP + "livre-v-archeologie/titre-iv-dispositions-diverses/chapitre-1er-regime-de-propriete-des-vestiges-immobiliers/section-2-biens-archeologiques-mobiliers/sous-section-1-propriete/l541-5.md", 1, 0, {
        "LAW": ["loi n° 2016-925 du 7 juillet 2016"]}),
    ("legal-l541-2", "holdout", "legal", CP + "livre-v-archeologie/titre-iv-dispositions-diverses/chapitre-1er-regime-de-propriete-des-vestiges-immobiliers/section-1-biens-archeologiques-immobiliers/l541-2.md", 1, 0, {
        "LAW": ["loi n° 2001-44 du 17 janvier 2001", "article L. 621-7"]}),
    ("legal-1112-1", "holdout", "legal", CC + "sous-titre-ier-le-contrat/chapitre-ii-la-formation-du-contrat/section-1-du-consentement/sous-section-1-les-negociations/1112-1.md", 1, 0, {
        "LAW": ["articles 1130 et suivants"]}),
    ("legal-l212-1-1", "holdout", "legal", CP + "livre-ii-archives/titre-ier-regime-general-des-archives/chapitre-2-collecte-conservation-et-protection/section-1-archives-publiques/sous-section-1-dispositions-generales/l212-1-1.md", 1, 0, {
        "LAW": ["article 21", "loi n° 2018-727 du 10 août 2018"], "ORG": ["Conseil d'Etat"]}),
    ("legal-l641-3", "holdout", "legal", CP + "livre-vi-monuments-historiques-sites-et-espaces-proteges/titre-iv-espaces-proteges/chapitre-1er-secteurs-sauvegardes/l641-3.md", 1, 0, {
        "LAW": ["article L. 641-2"]}),
]


def main() -> None:
    rows = []
    for pid, split, domain, rel, first, last, gold in PASSAGES:
        raw = (SHARED / rel).read_text(encoding="utf-8")
        lines = raw.splitlines(keepends=True)
        start = sum(len(x) for x in lines[: first - 1])
        end = sum(len(x) for x in lines[: (last if last else len(lines))])
        rows.append({"id": pid, "split": split, "domain": domain, "source": rel, "char_start": start, "char_end": end,
                     "text": raw[start:end], "entities": gold})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    n = {s: sum(len(v) for r in rows if r["split"] == s for v in r["entities"].values()) for s in ("dev", "holdout")}
    print(f"{len(rows)} passages, {sum(n.values())} gold entities (dev {n['dev']}, holdout {n['holdout']}) -> {OUT}")


if __name__ == "__main__":
    main()
